/* Pure argument parsing for the CLI (no I/O), unit-tested in
 * tests/unit/test_cli_args.c. */
#ifndef LZ_CLI_ARGS_H
#define LZ_CLI_ARGS_H

#include <stdint.h>
#include <jansson.h>
#include "../common/error.h"

/* "K=V" -> obj[K] = "V" (V may be empty or contain '='). */
int args_kv_add(json_t *obj, const char *kv, lz_error *err);
/* "NAME" or "NAME:/mount/path" -> append {volume, mountPath?} to list. */
int args_volume_add(json_t *list, const char *spec, lz_error *err);
/* A duration in milliseconds: "1500", "1500ms", "30s", "5m", "2h". >= 0. */
int args_parse_ms(const char *s, int64_t *out, lz_error *err);
/* "ADDR:PORT" or "[V6]:PORT" with a port in 0..65535. */
int args_check_listen(const char *s, lz_error *err);
/* The exec command: one word -> a string for /bin/sh -c, several -> argv. */
json_t *args_exec_cmd(int argc, char *const argv[]);
/* An id as it may appear in a URL path: 1..128 of [A-Za-z0-9_-]. */
int args_is_id(const char *s);
/* Remove every "--json" before a "--" from argv (argc updated, argv stays
 * NULL-terminated); returns 1 if one was found. Lets --json go anywhere. */
int args_take_flag(int *argc, char *argv[], const char *flag);

#endif
