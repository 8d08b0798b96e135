/* What the command files of `lizard` share. */
#ifndef LZ_CLI_H
#define LZ_CLI_H

#include <stdint.h>
#include <jansson.h>
#include "../client/client.h"
#include "../common/error.h"

/* Exit codes: 0 ok, 1 failure (server or system), 2 bad usage. `sandbox
 * exec` exits with the command's own code (124 when it timed out). */
enum { EXIT_FAIL = 1, EXIT_USAGE = 2 };

#define DEFAULT_DATA_DIR "/var/lib/lizard"

extern int cli_json; /* --json: print the server's JSON instead of tables */

/* The API client from LIZARD_API_URL/LIZARD_API_KEY, else the local data dir's
 * api-url/admin-key. Prints the error and returns NULL on failure. */
lizard_client *cli_client(void);
/* The same without printing. */
lizard_client *cli_client_try(lz_error *err);
/* LIZARD_DATA_DIR or /var/lib/lizard. */
const char *cli_data_dir(void);
/* Directory of the running lizard executable (from /proc/self/exe). */
int cli_exe_dir(char *buf, size_t n, lz_error *err);

/* One API request; its JSON answer in *out (caller json_decref's). Returns
 * the HTTP status, or -1 after printing the error (server message). */
int cli_call(const char *method, const char *path, json_t *body, json_t **out);
/* "lizard: message" on stderr; return EXIT_FAIL. */
int cli_fail(const lz_error *err);
int cli_failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "lizard: message" + a hint to --help; return EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message for getopt_long's '?' / ':' returns (use optstring ":..."). */
int cli_opt_error(const char *cmd, int c, char **argv);
/* --timeout VALUE (ms, or with s/m/h): sets body.timeoutMs. Returns 0, or
 * the usage exit code after printing what is wrong. */
int cli_opt_timeout(json_t *body, const char *cmd, const char *value);
/* Print a group's usage: to stdout + exit 0 for --help, else stderr + 2. */
int cli_group_usage(const char *text, int ok);
/* One subcommand of a group ("lizard keys create ..."): `run` gets argv
 * starting at the subcommand's own name. */
struct cli_command {
    const char *name;
    const char *alias; /* another accepted name, or NULL */
    int (*run)(int argc, char **argv);
};
/* Run argv[1] from `table` (ended by a {NULL} entry), or print the group's
 * usage: no subcommand -> usage + EXIT_USAGE, --help -> usage + 0. */
int cli_dispatch(const char *group, const char *usage, const struct cli_command *table, int argc,
                 char **argv);
/* json_t for an integer/string pair, aborting on ENOMEM (the CLI cannot go on). */
json_t *cli_obj(void);

/* output.c */
void out_json(json_t *j);
struct table;
struct table *table_new(int ncols, const char *const headers[]);
/* Add a row of ncols strings (copied; NULL prints as "-"). */
void table_add(struct table *t, const char *const cells[]);
void table_print_free(struct table *t);
/* Field of an object as text for a table cell (strings as is, numbers,
 * booleans "yes"/"no", null/missing NULL). Returns buf or NULL. */
const char *out_field(json_t *obj, const char *key, char *buf, size_t n);
/* 1536 -> "1.5K"; "2026-11-29T10:00:00.000Z" -> "2026-11-29 10:00:00". */
const char *out_bytes(double bytes, char *buf, size_t n);
const char *out_time(const char *iso, char *buf, size_t n);

int cmd_up(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_projects(int argc, char **argv);
int cmd_sandbox(int argc, char **argv);
/* ports.c: lizard sandbox expose ID PORT */
int cmd_sandbox_expose(int argc, char **argv);
int cmd_template(int argc, char **argv);
/* snapshot.c: lizard snapshot ls|rm, and lizard sandbox pause|resume|snapshot|restore */
int cmd_snapshot(int argc, char **argv);
/* argv[0] is pause|resume|snapshot|restore */
int cmd_sandbox_lifecycle(int argc, char **argv);
int cmd_volume(int argc, char **argv);
/* usage.c: lizard usage */
int cmd_usage(int argc, char **argv);

#endif
