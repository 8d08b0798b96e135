/* lizard usage: metering per project (GET /v1/usage). */
#include "cli.h"
#include "../common/cleanup.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage_usage[] =
    "usage: lizard usage [--project P] [--from DATE] [--to DATE] [--json]\n"
    "Compute seconds, volume GB-months and cost per project over [from, to);\n"
    "default: this calendar month (UTC) so far. DATE: 2024-05-01 or\n"
    "2024-05-01T10:00:00Z. A project key sees its own project, the admin key all.\n";

static void add_row(struct table *t, const char *project, const char *item, const char *qty,
                    double cost)
{
    char c[32];
    snprintf(c, sizeof(c), "%.6f", cost);
    const char *row[] = {project, item, qty, c};
    table_add(t, row);
}

static double num(json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

/* A project's rows: compute per size, volumes, total. */
static void project_rows(struct table *t, json_t *p)
{
    const char *id = json_string_value(json_object_get(p, "project"));
    json_t *compute = json_object_get(p, "compute"), *vols = json_object_get(p, "volumes");
    const char *size;
    json_t *v;
    char item[64], qty[64];
    json_object_foreach(json_object_get(compute, "bySize"), size, v)
    {
        snprintf(item, sizeof(item), "compute %s", size);
        snprintf(qty, sizeof(qty), "%.3f s", num(v, "seconds"));
        add_row(t, id, item, qty, num(v, "cost"));
    }
    snprintf(qty, sizeof(qty), "%.6f GB-months", num(vols, "gbMonths"));
    add_row(t, id, "volumes", qty, num(vols, "cost"));
    add_row(t, id, "total", "", num(p, "total"));
}

/* "&name=VALUE" (escaped) onto path when value is set. */
static void add_query(char *path, size_t n, const char *name, const char *value)
{
    if (value == NULL)
        return;
    cleanup_free char *e = lizard_url_escape(value);
    size_t len = strlen(path);
    snprintf(path + len, n - len, "%c%s=%s", strchr(path, '?') ? '&' : '?', name, e ? e : "");
}

int cmd_usage(int argc, char **argv)
{
    static const struct option opts[] = {{"project", required_argument, NULL, 'p'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *project = NULL, *from = NULL, *to = NULL;
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":p:f:t:h", opts, NULL)) != -1) {
        if (c == 'p')
            project = optarg;
        else if (c == 'f')
            from = optarg;
        else if (c == 't')
            to = optarg;
        else if (c == 'h')
            return cli_group_usage(usage_usage, 1);
        else
            return cli_opt_error("usage", c, argv);
    }
    if (optind != argc)
        return cli_usage("usage", "usage takes no arguments");
    char path[1024] = "/v1/usage";
    add_query(path, sizeof(path), "project", project);
    add_query(path, sizeof(path), "from", from);
    add_query(path, sizeof(path), "to", to);
    json_t *out = NULL;
    if (cli_call("GET", path, NULL, &out) < 0)
        return EXIT_FAIL;
    if (cli_json) {
        out_json(out);
    } else {
        static const char *const hdr[] = {"PROJECT", "ITEM", "QUANTITY", "COST"};
        struct table *t = table_new(4, hdr);
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(out, "projects"), i, p) project_rows(t, p);
        printf("%s .. %s\n", json_string_value(json_object_get(out, "from")),
               json_string_value(json_object_get(out, "to")));
        table_print_free(t);
    }
    json_decref(out);
    return 0;
}
