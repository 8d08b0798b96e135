/* lizard keys create|ls|rm */
#include "cli.h"
#include "args.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char keys_usage[] =
    "usage: lizard keys create NAME [--project P] [--admin]   make a key (shown once)\n"
    "       lizard keys ls                                   list keys\n"
    "       lizard keys rm ID                                revoke a key\n";

static int keys_create(int argc, char **argv)
{
    static const struct option opts[] = {{"project", required_argument, NULL, 'p'},
                                         {"admin", no_argument, NULL, 'a'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    const char *project = NULL;
    int admin = 0, c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":p:h", opts, NULL)) != -1) {
        if (c == 'p')
            project = optarg;
        else if (c == 'a')
            admin = 1;
        else if (c == 'h')
            return cli_group_usage(keys_usage, 1);
        else
            return cli_opt_error("keys", c, argv);
    }
    if (argc - optind != 1)
        return cli_usage("keys", "keys create takes one NAME");
    if (admin && project)
        return cli_usage("keys", "--admin keys belong to no project; drop --project");
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    json_t *body = cli_obj(), *out = NULL;
    json_object_set_new(body, "name", json_string(argv[optind]));
    if (project)
        json_object_set_new(body, "project", json_string(project));
    if (admin)
        json_object_set_new(body, "admin", json_true());
    lz_error err = {0};
    int st = lizard_request(cl, "POST", "/v1/keys", body, &out, &err);
    json_decref(body);
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    if (cli_json) {
        out_json(out);
    } else {
        const char *key = json_string_value(json_object_get(out, "key"));
        /* The secret alone on stdout, so KEY=$(lizard keys create x) works. */
        fprintf(stderr, "created key %s (%s); it is shown only this once:\n",
                json_string_value(json_object_get(out, "id")),
                admin ? "admin" : json_string_value(json_object_get(out, "project")));
        printf("%s\n", key ? key : "");
    }
    json_decref(out);
    return 0;
}

static int keys_ls(int argc, char **argv)
{
    if (argc > 1)
        return strcmp(argv[1], "--help") == 0 ? cli_group_usage(keys_usage, 1)
                                              : cli_usage("keys", "keys ls takes no arguments");
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    json_t *out = NULL;
    lz_error err = {0};
    int st = lizard_request(cl, "GET", "/v1/keys", NULL, &out, &err);
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    if (cli_json) {
        out_json(out);
        json_decref(out);
        return 0;
    }
    static const char *const hdr[] = {"ID", "NAME", "PROJECT", "ADMIN", "PREFIX", "CREATED"};
    struct table *t = table_new(6, hdr);
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(out, "keys"), i, k)
    {
        char b[6][64];
        const char *row[] = {
            out_field(k, "id", b[0], 64),
            out_field(k, "name", b[1], 64),
            out_field(k, "project", b[2], 64),
            out_field(k, "admin", b[3], 64),
            out_field(k, "prefix", b[4], 64),
            out_time(json_string_value(json_object_get(k, "createdAt")), b[5], 64)};
        table_add(t, row);
    }
    table_print_free(t);
    json_decref(out);
    return 0;
}

static int keys_rm(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--help") == 0)
        return cli_group_usage(keys_usage, 1);
    if (argc != 2)
        return cli_usage("keys", "keys rm takes one key ID");
    if (!args_is_id(argv[1]))
        return cli_usage("keys", "'%s' is not a key id", argv[1]);
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    char path[256];
    snprintf(path, sizeof(path), "/v1/keys/%s", argv[1]);
    lz_error err = {0};
    int st = lizard_request(cl, "DELETE", path, NULL, NULL, &err);
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    if (!cli_json)
        printf("revoked %s\n", argv[1]);
    return 0;
}

int cmd_keys(int argc, char **argv)
{
    static const struct cli_command table[] = {
        {"create", NULL, keys_create}, {"ls", "list", keys_ls}, {"rm", "revoke", keys_rm}, {0}};
    return cli_dispatch("keys", keys_usage, table, argc, argv);
}
