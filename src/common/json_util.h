/* The one set of helpers for reading client JSON. Each getter checks the type
 * and, on a problem, writes a message naming the field into errbuf (for a 400)
 * and returns -1. Absent optional fields leave *out unchanged and return 0;
 * present ones return 1. JSON null counts as absent. */
#ifndef LZ_JSON_UTIL_H
#define LZ_JSON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

int json_opt_string(json_t *obj, const char *key, const char **out, char *errbuf, size_t errlen);
int json_req_string(json_t *obj, const char *key, const char **out, char *errbuf, size_t errlen);
/* Integer within [min, max]. */
int json_opt_int(json_t *obj, const char *key, int64_t min, int64_t max, int64_t *out, char *errbuf,
                 size_t errlen);
int json_opt_bool(json_t *obj, const char *key, int *out, char *errbuf, size_t errlen);
/* An object whose values are all strings (env, metadata); at most max_keys. */
int json_opt_string_map(json_t *obj, const char *key, size_t max_keys, json_t **out, char *errbuf,
                        size_t errlen);

/* ISO-8601 UTC with milliseconds ("2026-11-29T10:00:00.000Z") of a Unix ms time. */
void format_iso8601_ms(int64_t ms, char out[32]);
/* json string of it, or json null for 0 when zero_is_null. */
json_t *json_time_or_null(int64_t ms, int zero_is_null);

#endif
