#include "json_util.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdint.h>

static int field_error(char *errbuf, size_t errlen, const char *key, const char *what)
{
    snprintf(errbuf, errlen, "field '%s' %s", key, what);
    return -1;
}

int json_opt_string(json_t *obj, const char *key, const char **out, char *errbuf, size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return field_error(errbuf, errlen, key, "must be a string");
    if (strlen(json_string_value(v)) != json_string_length(v))
        return field_error(errbuf, errlen, key, "must not contain NUL characters");
    *out = json_string_value(v);
    return 1;
}

int json_req_string(json_t *obj, const char *key, const char **out, char *errbuf, size_t errlen)
{
    int r = json_opt_string(obj, key, out, errbuf, errlen);
    if (r == 0)
        return field_error(errbuf, errlen, key, "is required");
    return r;
}

int json_opt_int(json_t *obj, const char *key, int64_t min, int64_t max, int64_t *out, char *errbuf,
                 size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 0;
    int64_t n;
    if (json_is_integer(v))
        n = json_integer_value(v);
    else if (json_is_real(v) && json_real_value(v) == (double)(int64_t)json_real_value(v))
        n = (int64_t)json_real_value(v); /* JavaScript clients may send 300000.0 */
    else
        return field_error(errbuf, errlen, key, "must be an integer");
    if (n < min || n > max)
        goto range;
    *out = n;
    return 1;
range:
    snprintf(errbuf, errlen, "field '%s' must be between %lld and %lld", key, (long long)min,
             (long long)max);
    return -1;
}

int json_opt_bool(json_t *obj, const char *key, int *out, char *errbuf, size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return field_error(errbuf, errlen, key, "must be true or false");
    *out = json_is_true(v);
    return 1;
}

int json_opt_string_map(json_t *obj, const char *key, size_t max_keys, json_t **out, char *errbuf,
                        size_t errlen)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return field_error(errbuf, errlen, key, "must be an object of strings");
    if (json_object_size(v) > max_keys) {
        snprintf(errbuf, errlen, "field '%s' has more than %zu entries", key, max_keys);
        return -1;
    }
    const char *k;
    json_t *val;
    json_object_foreach(v, k, val)
    {
        if (!json_is_string(val) || strlen(json_string_value(val)) != json_string_length(val)) {
            snprintf(errbuf, errlen, "field '%s.%s' must be a string", key, k);
            return -1;
        }
    }
    *out = v;
    return 1;
}

void format_iso8601_ms(int64_t ms, char out[32])
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03uZ", (unsigned)(ms % 1000) % 1000u);
}

json_t *json_time_or_null(int64_t ms, int zero_is_null)
{
    if (ms == 0 && zero_is_null)
        return json_null();
    char buf[32];
    format_iso8601_ms(ms, buf);
    return json_string(buf);
}
