/* lizard sandbox pause|resume|snapshot|restore and lizard snapshot ls|rm.
 * pause, resume and snapshot are queued by the server; the CLI waits until
 * they are done (or failed), so a script can go on with the next command. */
#include "cli.h"
#include "args.h"
#include "../common/cleanup.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char snapshot_usage[] =
    "usage: lizard sandbox pause ID | resume ID       wait until paused / running\n"
    "       lizard sandbox snapshot ID --name NAME [--pool-size K]   prints the snapshot id\n"
    "       lizard sandbox restore SNAPSHOT [--timeout MS]   prints the new sandbox id\n"
    "       lizard snapshot ls [--project P]\n"
    "       lizard snapshot rm SNAPSHOT\n"
    "  SNAPSHOT is an id (snap_...) or a name in the key's project. Snapshots keep\n"
    "  files, not processes; K (1-10, default 5) ready copies make restore instant.\n";

/* An id or name as one URL path segment. */
static int is_ref(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static int pause_resume(const char *sub, int argc, char **argv)
{
    if (argc != 2)
        return cli_usage("sandbox", "sandbox %s takes one sandbox ID", sub);
    if (!args_is_id(argv[1]))
        return cli_usage("sandbox", "'%s' is not a sandbox id", argv[1]);
    const char *want = strcmp(sub, "pause") == 0 ? "paused" : "running";
    char path[256];
    json_t *out = NULL;
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/%s", argv[1], sub);
    if (cli_call("POST", path, NULL, &out) < 0)
        return EXIT_FAIL;
    json_decref(out);
    out = NULL;
    snprintf(path, sizeof(path), "/v1/sandboxes/%s/status?wait=%s&timeoutMs=60000", argv[1], want);
    if (cli_call("GET", path, NULL, &out) < 0)
        return EXIT_FAIL;
    json_t *error = json_object_get(out, "error");
    int reached = json_is_true(json_object_get(out, "reached"));
    int rc = 0;
    if (!reached && json_is_object(error))
        rc = cli_failf("%s", json_string_value(json_object_get(error, "message")));
    else if (!reached)
        rc = cli_failf("sandbox %s did not become %s within 60 s", argv[1], want);
    else if (cli_json)
        out_json(out);
    else
        printf("%s %s\n", argv[1], want);
    json_decref(out);
    return rc;
}

/* Poll GET /v1/snapshots/ID until it is ready or failed. */
static int wait_ready(const char *id, json_t **out)
{
    char path[256];
    snprintf(path, sizeof(path), "/v1/snapshots/%s", id);
    for (int i = 0; i < 6000; i++) {
        if (cli_call("GET", path, NULL, out) < 0)
            return EXIT_FAIL;
        const char *st = json_string_value(json_object_get(*out, "status"));
        if (st && strcmp(st, "ready") == 0)
            return 0;
        if (st && strcmp(st, "failed") == 0)
            return cli_failf("snapshot %s failed: %s", id,
                             json_string_value(json_object_get(*out, "error")));
        json_decref(*out);
        *out = NULL;
        struct timespec ts = {0, 100 * 1000000};
        nanosleep(&ts, NULL);
    }
    return cli_failf("snapshot %s is not ready after 10 minutes", id);
}

static int sandbox_snapshot(int argc, char **argv)
{
    static const struct option opts[] = {{"name", required_argument, NULL, 'n'},
                                         {"pool-size", required_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    json_t *body = cli_obj();
    int c, rc = 0;
    optind = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":n:k:h", opts, NULL)) != -1) {
        char *end;
        long k;
        if (c == 'n') {
            json_object_set_new(body, "name", json_string(optarg));
        } else if (c == 'k') {
            k = strtol(optarg, &end, 10);
            if (*end || k < 1 || k > 10)
                rc = cli_usage("sandbox", "--pool-size must be 1..10");
            json_object_set_new(body, "poolSize", json_integer(k));
        } else if (c == 'h') {
            rc = cli_group_usage(snapshot_usage, 1) - 1;
        } else {
            rc = cli_opt_error("sandbox", c, argv);
        }
    }
    if (rc == 0 && (argc - optind != 1 || !json_object_get(body, "name")))
        rc = cli_usage("sandbox", "sandbox snapshot takes an ID and --name NAME");
    if (rc == 0 && !args_is_id(argv[optind]))
        rc = cli_usage("sandbox", "'%s' is not a sandbox id", argv[optind]);
    json_t *out = NULL;
    char path[256], id[80] = "";
    if (rc == 0) {
        snprintf(path, sizeof(path), "/v1/sandboxes/%s/snapshots", argv[optind]);
        if (cli_call("POST", path, body, &out) < 0)
            rc = EXIT_FAIL;
        else
            snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(out, "id")));
        json_decref(out);
        out = NULL;
    }
    json_decref(body);
    if (rc == 0)
        rc = wait_ready(id, &out);
    if (rc == 0 && cli_json)
        out_json(out);
    else if (rc == 0)
        printf("%s\n", id);
    json_decref(out);
    return rc < 0 ? 0 : rc;
}

static int sandbox_restore(int argc, char **argv)
{
    static const struct option opts[] = {
        {"timeout", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'}, {0}};
    json_t *body = cli_obj();
    int c, rc = 0;
    optind = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":t:h", opts, NULL)) != -1) {
        if (c == 't')
            rc = cli_opt_timeout(body, "sandbox", optarg);
        else if (c == 'h')
            rc = cli_group_usage(snapshot_usage, 1) - 1;
        else
            rc = cli_opt_error("sandbox", c, argv);
    }
    if (rc == 0 && (argc - optind != 1 || !is_ref(argv[optind])))
        rc = cli_usage("sandbox", "sandbox restore takes one snapshot id or name");
    json_t *out = NULL;
    char path[256];
    if (rc == 0) {
        snprintf(path, sizeof(path), "/v1/snapshots/%s/restore", argv[optind]);
        if (cli_call("POST", path, body, &out) < 0)
            rc = EXIT_FAIL;
        else if (cli_json)
            out_json(out);
        else
            printf("%s\n", json_string_value(json_object_get(out, "sandboxId")));
    }
    json_decref(out);
    json_decref(body);
    return rc < 0 ? 0 : rc;
}

int cmd_sandbox_lifecycle(int argc, char **argv)
{
    const char *sub = argv[0];
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return cli_group_usage(snapshot_usage, 1);
    if (strcmp(sub, "pause") == 0 || strcmp(sub, "resume") == 0)
        return pause_resume(sub, argc, argv);
    if (strcmp(sub, "snapshot") == 0)
        return sandbox_snapshot(argc, argv);
    return sandbox_restore(argc, argv);
}

static int snapshot_ls(int argc, char **argv)
{
    const char *project = NULL;
    if (argc == 3 && strcmp(argv[1], "--project") == 0)
        project = argv[2];
    else if (argc != 1)
        return cli_usage("snapshot", "snapshot ls takes only --project P");
    cleanup_free char *pe = project ? lizard_url_escape(project) : NULL;
    char path[512];
    snprintf(path, sizeof(path), "/v1/snapshots%s%s", pe ? "?project=" : "", pe ? pe : "");
    json_t *out = NULL;
    if (cli_call("GET", path, NULL, &out) < 0)
        return EXIT_FAIL;
    if (cli_json) {
        out_json(out);
        json_decref(out);
        return 0;
    }
    static const char *const hdr[] = {"ID", "NAME", "STATUS", "POOL", "SIZE", "SOURCE", "CREATED"};
    struct table *t = table_new(7, hdr);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(out, "snapshots"), i, s)
    {
        char b[7][64];
        snprintf(b[3], 64, "%d/%d", (int)json_integer_value(json_object_get(s, "poolReady")),
                 (int)json_integer_value(json_object_get(s, "poolSize")));
        const char *row[] = {
            out_field(s, "id", b[0], 64),
            out_field(s, "name", b[1], 64),
            out_field(s, "status", b[2], 64),
            b[3],
            out_bytes((double)json_integer_value(json_object_get(s, "sizeBytes")), b[4], 64),
            out_field(s, "sourceSandboxId", b[5], 64),
            out_time(json_string_value(json_object_get(s, "createdAt")), b[6], 64),
        };
        table_add(t, row);
    }
    table_print_free(t);
    json_decref(out);
    return 0;
}

static int snapshot_rm(int argc, char **argv)
{
    if (argc != 2 || !is_ref(argv[1]))
        return cli_usage("snapshot", "snapshot rm takes one snapshot id or name");
    char path[256];
    json_t *out = NULL;
    snprintf(path, sizeof(path), "/v1/snapshots/%s", argv[1]);
    if (cli_call("DELETE", path, NULL, &out) < 0)
        return EXIT_FAIL;
    json_decref(out);
    if (!cli_json)
        printf("deleted %s\n", argv[1]);
    return 0;
}

int cmd_snapshot(int argc, char **argv)
{
    static const struct cli_command table[] = {
        {"ls", "list", snapshot_ls}, {"rm", "delete", snapshot_rm}, {0}};
    return cli_dispatch("snapshot", snapshot_usage, table, argc, argv);
}
