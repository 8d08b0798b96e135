/* lizard projects create|ls */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char projects_usage[] =
    "usage: lizard projects create NAME [--slug S]   make a project (admin key)\n"
    "       lizard projects ls                       list projects\n";

static int projects_create(int argc, char **argv)
{
    static const struct option opts[] = {
        {"slug", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'}, {0}};
    const char *slug = NULL;
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":s:h", opts, NULL)) != -1) {
        if (c == 's')
            slug = optarg;
        else if (c == 'h')
            return cli_group_usage(projects_usage, 1);
        else
            return cli_opt_error("projects", c, argv);
    }
    if (argc - optind != 1)
        return cli_usage("projects", "projects create takes one NAME");
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    json_t *body = cli_obj(), *out = NULL;
    json_object_set_new(body, "name", json_string(argv[optind]));
    if (slug)
        json_object_set_new(body, "slug", json_string(slug));
    lz_error err = {0};
    int st = lizard_request(cl, "POST", "/v1/projects", body, &out, &err);
    json_decref(body);
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    if (cli_json)
        out_json(out);
    else
        printf("%s\n", json_string_value(json_object_get(out, "id")));
    json_decref(out);
    return 0;
}

static int projects_ls(int argc, char **argv)
{
    if (argc > 1)
        return strcmp(argv[1], "--help") == 0
                   ? cli_group_usage(projects_usage, 1)
                   : cli_usage("projects", "projects ls takes no arguments");
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    json_t *out = NULL;
    lz_error err = {0};
    int st = lizard_request(cl, "GET", "/v1/projects", NULL, &out, &err);
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    if (cli_json) {
        out_json(out);
        json_decref(out);
        return 0;
    }
    static const char *const hdr[] = {"ID", "NAME", "SLUG", "CREATED"};
    struct table *t = table_new(4, hdr);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(out, "projects"), i, p)
    {
        char b[4][64];
        const char *row[] = {
            out_field(p, "id", b[0], 64), out_field(p, "name", b[1], 64),
            out_field(p, "slug", b[2], 64),
            out_time(json_string_value(json_object_get(p, "createdAt")), b[3], 64)};
        table_add(t, row);
    }
    table_print_free(t);
    json_decref(out);
    return 0;
}

int cmd_projects(int argc, char **argv)
{
    static const struct cli_command table[] = {
        {"create", NULL, projects_create}, {"ls", "list", projects_ls}, {0}};
    return cli_dispatch("projects", projects_usage, table, argc, argv);
}
