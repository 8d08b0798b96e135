/* lizard sandbox create|ls|info|kill|exec|timeout */
#include "cli.h"
#include "args.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_TIMED_OUT 124 /* like timeout(1) */

static const char sandbox_usage[] =
    "usage: lizard sandbox create [TEMPLATE] [--timeout MS] [--project P] [--size S]\n"
    "                             [--env K=V]... [--metadata K=V]...   prints the new id\n"
    "                             [--volume NAME[:/mount/path]]...   (default /workspace)\n"
    "       lizard sandbox ls [--project P] [--status S]\n"
    "       lizard sandbox info ID\n"
    "       lizard sandbox kill ID\n"
    "       lizard sandbox timeout ID MS          new lifetime from now (0 = no expiry)\n"
    "       lizard sandbox pause|resume ID | snapshot ID --name N | restore SNAPSHOT\n"
    "       lizard sandbox expose ID PORT         prints the port's private URL\n"
    "       lizard sandbox exec ID [--user U] [--cwd DIR] [--env K=V]... [--timeout MS]\n"
    "                              -- CMD [ARGS...]\n"
    "  exec: one CMD word runs through /bin/sh -c, several run as argv; output\n"
    "  streams live and lizard exits with the command's exit code (124: timed out).\n"
    "  MS also takes 30s, 5m, 2h.\n";

static void print_info(json_t *info)
{
    static const char *const keys[] = {"sandboxId", "project", "template", "status",
                                       "runtime",   "size",    "cpuCount", "memoryMB",
                                       "diskMB",    "region",  "host",     "createdAt"};
    char buf[64];
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *v = out_field(info, keys[i], buf, sizeof(buf));
        if (v)
            printf("%-10s %s\n", keys[i], v);
    }
    const char *exp = json_string_value(json_object_get(info, "expiresAt"));
    printf("%-10s %s\n", "expiresAt", exp ? exp : "never");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(info, "metadata"), k, v)
        printf("%-10s %s=%s\n", "metadata", k, json_is_string(v) ? json_string_value(v) : "?");
}

static int sandbox_create(int argc, char **argv)
{
    static const struct option opts[] = {
        {"timeout", required_argument, NULL, 't'},  {"project", required_argument, NULL, 'p'},
        {"size", required_argument, NULL, 's'},     {"env", required_argument, NULL, 'e'},
        {"metadata", required_argument, NULL, 'm'}, {"volume", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},           {0}};
    json_t *body = cli_obj(), *env = cli_obj(), *meta = cli_obj(), *vols = json_array();
    lz_error err = {0};
    int c, rc = 0;
    optind = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":t:p:s:e:m:v:h", opts, NULL)) != -1) {
        if (c == 't')
            rc = cli_opt_timeout(body, "sandbox", optarg);
        else if (c == 'p' || c == 's')
            json_object_set_new(body, c == 'p' ? "project" : "size", json_string(optarg));
        else if ((c == 'e' || c == 'm') && args_kv_add(c == 'e' ? env : meta, optarg, &err) < 0)
            rc = cli_usage("sandbox", "--%s: %s", c == 'e' ? "env" : "metadata", err.msg);
        else if (c == 'v' && args_volume_add(vols, optarg, &err) < 0)
            rc = cli_usage("sandbox", "--volume: %s", err.msg);
        else if (c == 'h')
            rc = cli_group_usage(sandbox_usage, 1) - 1; /* -1: stop, exit 0 below */
        else if (c != 'e' && c != 'm' && c != 'v')
            rc = cli_opt_error("sandbox", c, argv);
    }
    if (rc == 0 && argc - optind > 1)
        rc = cli_usage("sandbox", "sandbox create takes at most one TEMPLATE");
    if (rc == 0 && argc - optind == 1)
        json_object_set_new(body, "template", json_string(argv[optind]));
    if (json_object_size(env))
        json_object_set(body, "env", env);
    if (json_object_size(meta))
        json_object_set(body, "metadata", meta);
    if (json_array_size(vols))
        json_object_set(body, "volumes", vols);
    json_decref(env);
    json_decref(meta);
    json_decref(vols);
    json_t *out = NULL;
    if (rc == 0 && cli_call("POST", "/v1/sandboxes", body, &out) < 0)
        rc = EXIT_FAIL;
    json_decref(body);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (cli_json)
        out_json(out);
    else
        printf("%s\n", json_string_value(json_object_get(out, "sandboxId")));
    json_decref(out);
    return 0;
}

static int sandbox_ls(int argc, char **argv)
{
    static const struct option opts[] = {{"project", required_argument, NULL, 'p'},
                                         {"status", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *project = NULL, *status = NULL;
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":p:s:h", opts, NULL)) != -1) {
        if (c == 'p')
            project = optarg;
        else if (c == 's')
            status = optarg;
        else if (c == 'h')
            return cli_group_usage(sandbox_usage, 1);
        else
            return cli_opt_error("sandbox", c, argv);
    }
    if (optind != argc)
        return cli_usage("sandbox", "sandbox ls takes no arguments besides options");
    cleanup_free char *pe = project ? lizard_url_escape(project) : NULL;
    cleanup_free char *se = status ? lizard_url_escape(status) : NULL;
    char path[1024];
    snprintf(path, sizeof(path), "/v1/sandboxes%s%s%s%s%s", (pe || se) ? "?" : "",
             pe ? "project=" : "", pe ? pe : "", (pe && se) ? "&" : "", se ? "status=" : "");
    if (se)
        strncat(path, se, sizeof(path) - strlen(path) - 1);
    json_t *out = NULL;
    if (cli_call("GET", path, NULL, &out) < 0)
        return EXIT_FAIL;
    if (cli_json) {
        out_json(out);
        json_decref(out);
        return 0;
    }
    static const char *const hdr[] = {"ID",   "TEMPLATE", "STATUS", "PROJECT",
                                      "SIZE", "CREATED",  "EXPIRES"};
    struct table *t = table_new(7, hdr);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(out, "sandboxes"), i, s)
    {
        char b[7][64];
        const char *exp = json_string_value(json_object_get(s, "expiresAt"));
        const char *row[] = {
            out_field(s, "sandboxId", b[0], 64),
            out_field(s, "template", b[1], 64),
            out_field(s, "status", b[2], 64),
            out_field(s, "project", b[3], 64),
            out_field(s, "size", b[4], 64),
            out_time(json_string_value(json_object_get(s, "createdAt")), b[5], 64),
            exp ? out_time(exp, b[6], 64) : "never",
        };
        table_add(t, row);
    }
    table_print_free(t);
    json_decref(out);
    return 0;
}

/* info / kill: one ID, no options. */
static int sandbox_one(int argc, char **argv, const char *method)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return cli_group_usage(sandbox_usage, 1);
    if (argc != 2)
        return cli_usage("sandbox", "sandbox %s takes one sandbox ID", argv[0]);
    if (!args_is_id(argv[1]))
        return cli_usage("sandbox", "'%s' is not a sandbox id", argv[1]);
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s", argv[1]);
    json_t *out = NULL;
    if (cli_call(method, path, NULL, &out) < 0)
        return EXIT_FAIL;
    if (cli_json && out)
        out_json(out);
    else if (strcmp(method, "GET") == 0)
        print_info(out);
    else if (!cli_json)
        printf("killed %s\n", argv[1]);
    json_decref(out);
    return 0;
}

static int sandbox_timeout(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return cli_group_usage(sandbox_usage, 1);
    if (argc != 3)
        return cli_usage("sandbox", "sandbox timeout takes an ID and MS");
    if (!args_is_id(argv[1]))
        return cli_usage("sandbox", "'%s' is not a sandbox id", argv[1]);
    int64_t ms;
    lz_error err = {0};
    if (args_parse_ms(argv[2], &ms, &err) < 0)
        return cli_usage("sandbox", "%s", err.msg);
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/timeout", argv[1]);
    json_t *body = cli_obj(), *out = NULL;
    json_object_set_new(body, "timeoutMs", json_integer(ms));
    int st = cli_call("POST", path, body, &out);
    json_decref(body);
    if (st < 0)
        return EXIT_FAIL;
    if (cli_json) {
        out_json(out);
    } else {
        const char *exp = json_string_value(json_object_get(out, "expiresAt"));
        printf("%s %s%s\n", argv[1], exp ? "expires at " : "never expires", exp ? exp : "");
    }
    json_decref(out);
    return 0;
}

/* ---- exec ---- */

struct exec_state {
    int have_exit, exit_code, timed_out, truncated;
    char error[512];
};

static int exec__line(json_t *obj, void *ud)
{
    struct exec_state *s = ud;
    const char *type = json_string_value(json_object_get(obj, "type"));
    json_t *data = json_object_get(obj, "data");
    if (type == NULL && json_object_get(obj, "exitCode")) {
        /* A whole result instead of a stream (a server or proxy that
         * ignored the Accept header): same outcome, just not live. */
        json_t *out = json_object_get(obj, "stdout"), *errs = json_object_get(obj, "stderr");
        if (write_all(1, json_string_value(out) ? json_string_value(out) : "",
                      json_string_length(out)) < 0 ||
            write_all(2, json_string_value(errs) ? json_string_value(errs) : "",
                      json_string_length(errs)) < 0)
            return -1;
        type = "exit";
    }
    if (type == NULL)
        return 0; /* unknown line shapes are for newer clients */
    if ((strcmp(type, "stdout") == 0 || strcmp(type, "stderr") == 0) && json_is_string(data)) {
        /* write(2), not stdio: output must appear as it is produced. */
        if (write_all(type[3] == 'o' ? 1 : 2, json_string_value(data), json_string_length(data)) <
            0)
            return -1;
    } else if (strcmp(type, "exit") == 0) {
        s->have_exit = 1;
        s->exit_code = (int)json_integer_value(json_object_get(obj, "exitCode"));
        s->timed_out = json_is_true(json_object_get(obj, "timedOut"));
        s->truncated = json_is_true(json_object_get(obj, "truncated"));
    } else if (strcmp(type, "error") == 0) {
        const char *m =
            json_string_value(json_object_get(json_object_get(obj, "error"), "message"));
        snprintf(s->error, sizeof(s->error), "%s", m ? m : "exec failed");
    }
    return 0;
}

static int exec__result(const struct exec_state *s)
{
    if (s->error[0])
        return cli_failf("%s", s->error);
    if (!s->have_exit)
        return cli_failf("the output stream ended without an exit status");
    if (s->truncated)
        fprintf(stderr, "lizard: output was truncated (over the per-stream cap)\n");
    if (s->timed_out) {
        fprintf(stderr, "lizard: the command timed out and was killed\n");
        return EXIT_TIMED_OUT;
    }
    return s->exit_code;
}

static int exec__run(const char *id, json_t *body)
{
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/exec", id);
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    lz_error err = {0};
    int st;
    struct exec_state s = {0};
    if (cli_json) {
        /* Scripts get the one result object, and still the exit code. */
        json_t *out = NULL;
        st = lizard_request(cl, "POST", path, body, &out, &err);
        if (st >= 0) {
            out_json(out);
            s.have_exit = 1;
            s.exit_code = (int)json_integer_value(json_object_get(out, "exitCode"));
            s.timed_out = json_is_true(json_object_get(out, "timedOut"));
        }
        json_decref(out);
    } else {
        st = lizard_request_ndjson(cl, "POST", path, body, exec__line, &s, &err);
    }
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    return exec__result(&s);
}

static int sandbox_exec(int argc, char **argv)
{
    static const struct option opts[] = {
        {"user", required_argument, NULL, 'u'}, {"cwd", required_argument, NULL, 'c'},
        {"env", required_argument, NULL, 'e'},  {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},       {0}};
    json_t *body = cli_obj(), *env = cli_obj();
    lz_error err = {0};
    int c, rc = 0;
    int64_t ms;
    optind = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":u:c:e:t:h", opts, NULL)) != -1) {
        if (c == 'u' || c == 'c')
            json_object_set_new(body, c == 'u' ? "user" : "cwd", json_string(optarg));
        else if (c == 'e' && args_kv_add(env, optarg, &err) < 0)
            rc = cli_usage("sandbox", "--env: %s", err.msg);
        else if (c == 't' && args_parse_ms(optarg, &ms, &err) == 0)
            json_object_set_new(body, "timeoutMs", json_integer(ms));
        else if (c == 't')
            rc = cli_usage("sandbox", "--timeout: %s", err.msg);
        else if (c == 'h')
            rc = cli_group_usage(sandbox_usage, 1) - 1;
        else if (c != 'e')
            rc = cli_opt_error("sandbox", c, argv);
    }
    /* getopt drops the "--" and leaves ID CMD ARGS... in order. */
    if (rc == 0 && argc - optind < 2)
        rc = cli_usage("sandbox", "sandbox exec needs an ID and a command: exec ID -- CMD");
    if (rc == 0 && !args_is_id(argv[optind]))
        rc = cli_usage("sandbox", "'%s' is not a sandbox id", argv[optind]);
    json_t *cmd = rc == 0 ? args_exec_cmd(argc - optind - 1, argv + optind + 1) : NULL;
    if (rc == 0 && cmd == NULL)
        rc = cli_usage("sandbox", "the command is not valid UTF-8");
    if (cmd)
        json_object_set_new(body, "cmd", cmd);
    if (json_object_size(env))
        json_object_set(body, "env", env);
    if (rc == 0)
        rc = exec__run(argv[optind], body);
    json_decref(env);
    json_decref(body);
    return rc < 0 ? 0 : rc;
}

static int sandbox_info(int argc, char **argv)
{
    return sandbox_one(argc, argv, "GET");
}

static int sandbox_kill(int argc, char **argv)
{
    return sandbox_one(argc, argv, "DELETE");
}

int cmd_sandbox(int argc, char **argv)
{
    static const struct cli_command table[] = {
        {"create", NULL, sandbox_create},
        {"ls", "list", sandbox_ls},
        {"info", NULL, sandbox_info},
        {"kill", "rm", sandbox_kill},
        {"exec", NULL, sandbox_exec},
        {"timeout", NULL, sandbox_timeout},
        {"pause", NULL, cmd_sandbox_lifecycle},
        {"resume", NULL, cmd_sandbox_lifecycle},
        {"snapshot", NULL, cmd_sandbox_lifecycle},
        {"restore", NULL, cmd_sandbox_lifecycle},
        {"expose", NULL, cmd_sandbox_expose},
        {0},
    };
    return cli_dispatch("sandbox", sandbox_usage, table, argc, argv);
}
