/* Helpers every command file of `lizard` uses: errors, server discovery. */
#include "cli.h"
#include "args.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_URL "http://127.0.0.1:7400"

int cli_json;

static int vfail(const char *fmt, va_list ap)
{
    fputs("lizard: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return EXIT_FAIL;
}

int cli_failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(fmt, ap);
    va_end(ap);
    return EXIT_FAIL;
}

int cli_fail(const lz_error *err)
{
    return cli_failf("%s", err->msg[0] ? err->msg : "unknown error");
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Run 'lizard %s --help' for usage.\n", cmd);
    return EXIT_USAGE;
}

int cli_opt_error(const char *cmd, int c, char **argv)
{
    const char *opt = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        return cli_usage(cmd, "option '%s' needs a value", opt);
    return cli_usage(cmd, "unknown option '%s'", opt);
}

int cli_group_usage(const char *text, int ok)
{
    fputs(text, ok ? stdout : stderr);
    return ok ? 0 : EXIT_USAGE;
}

json_t *cli_obj(void)
{
    json_t *o = json_object();
    if (o == NULL)
        abort();
    return o;
}

const char *cli_data_dir(void)
{
    const char *d = getenv("LIZARD_DATA_DIR");
    return d && *d ? d : DEFAULT_DATA_DIR;
}

int cli_exe_dir(char *buf, size_t n, lz_error *err)
{
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (l < 0)
        return lz_error_sys(err, "readlink /proc/self/exe");
    exe[l] = '\0';
    if (snprintf(buf, n, "%s", dirname(exe)) >= (int)n)
        return lz_error_set(err, ENAMETOOLONG, "executable path");
    return 0;
}

/* A one-line file of the data dir, without the newline; NULL if absent. */
static char *read_data_file(const char *name)
{
    char path[4096];
    char *s = NULL;
    snprintf(path, sizeof(path), "%s/%s", cli_data_dir(), name);
    if (read_file(path, 4096, &s, NULL) < 0)
        return NULL;
    s[strcspn(s, "\r\n")] = '\0';
    return s;
}

lizard_client *cli_client_try(lz_error *err)
{
    cleanup_free char *url_file = NULL, *key_file = NULL;
    const char *url = getenv("LIZARD_API_URL"), *key = getenv("LIZARD_API_KEY");
    if (url == NULL || *url == '\0')
        url = (url_file = read_data_file("api-url")) ? url_file : DEFAULT_URL;
    if (key == NULL || *key == '\0')
        key = key_file = read_data_file("admin-key");
    if (key == NULL) {
        lz_error_set(err, 0,
                     "no API key: set LIZARD_API_KEY (or run on the server host as a user who "
                     "can read %s/admin-key)",
                     cli_data_dir());
        return NULL;
    }
    return lizard_client_new(url, key, err);
}

lizard_client *cli_client(void)
{
    lz_error err = {0};
    lizard_client *c = cli_client_try(&err);
    if (c == NULL)
        cli_fail(&err);
    return c;
}

int cli_call(const char *method, const char *path, json_t *body, json_t **out)
{
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return -1;
    lz_error err = {0};
    int st = lizard_request(cl, method, path, body, out, &err);
    lizard_client_free(cl);
    if (st < 0)
        cli_fail(&err);
    return st;
}

int cli_dispatch(const char *group, const char *usage, const struct cli_command *table, int argc,
                 char **argv)
{
    if (argc < 2)
        return cli_group_usage(usage, 0);
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0)
        return cli_group_usage(usage, 1);
    for (const struct cli_command *c = table; c->name; c++) {
        if (strcmp(sub, c->name) == 0 || (c->alias && strcmp(sub, c->alias) == 0))
            return c->run(argc - 1, argv + 1);
    }
    return cli_usage(group, "unknown %s command '%s'", group, sub);
}

int cli_opt_timeout(json_t *body, const char *cmd, const char *value)
{
    lz_error err = {0};
    int64_t ms;
    if (args_parse_ms(value, &ms, &err) < 0)
        return cli_usage(cmd, "--timeout: %s", err.msg);
    json_object_set_new(body, "timeoutMs", json_integer(ms));
    return 0;
}
