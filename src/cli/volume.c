/* lizard volume create|ls|rm */
#include "cli.h"
#include "args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char volume_usage[] =
    "usage: lizard volume create NAME --size MB [--project P]   make an empty volume\n"
    "       lizard volume ls [--project P]                     list volumes\n"
    "       lizard volume rm ID|NAME [--project P]             delete one and its data\n"
    "Attach at create: lizard sandbox create TEMPLATE --volume NAME[:/mount/path]\n";

/* An id or name as one URL path segment (names are [A-Za-z0-9._-]). */
static int is_ref(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= 64 && s[0] != '.' &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* --project, --size and --help; the rest stays in argv[optind..]. Returns
 * 1 when the command is over (--help, a bad option) with its exit code in *rc. */
static int parse_opts(int argc, char **argv, const char **project, const char **size, int *rc)
{
    static const struct option opts[] = {{"project", required_argument, NULL, 'p'},
                                         {"size", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":p:s:h", opts, NULL)) != -1) {
        if (c == 'p')
            *project = optarg;
        else if (c == 's' && size)
            *size = optarg;
        else if (c == 'h')
            return *rc = cli_group_usage(volume_usage, 1), 1;
        else
            return *rc = cli_opt_error("volume", c, argv), 1;
    }
    return 0;
}

static void print_table(json_t *list)
{
    static const char *const hdr[] = {"ID", "NAME", "SIZE", "ATTACHED TO", "CREATED"};
    struct table *t = table_new(5, hdr);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        char b[5][64];
        json_int_t mb = json_integer_value(json_object_get(v, "sizeMB"));
        const char *row[] = {
            out_field(v, "id", b[0], 64), out_field(v, "name", b[1], 64),
            out_bytes((double)mb * 1048576.0, b[2], 64), out_field(v, "attachedTo", b[3], 64),
            out_time(json_string_value(json_object_get(v, "createdAt")), b[4], 64)};
        table_add(t, row);
    }
    table_print_free(t);
}

/* One request; prints the answer (table of `list`, or JSON). */
static int request(const char *method, const char *path, json_t *body, int show)
{
    lizard_client *cl = cli_client();
    if (cl == NULL)
        return EXIT_FAIL;
    json_t *out = NULL;
    lz_error err = {0};
    int st = lizard_request(cl, method, path, body, &out, &err);
    lizard_client_free(cl);
    if (st < 0)
        return cli_fail(&err);
    if (cli_json && out)
        out_json(out);
    else if (show && json_is_array(json_object_get(out, "volumes")))
        print_table(json_object_get(out, "volumes"));
    else if (show) {
        json_t *one = json_pack("[O]", out);
        print_table(one);
        json_decref(one);
    }
    json_decref(out);
    return 0;
}

static int volume_create(int argc, char **argv)
{
    const char *project = NULL, *size = NULL;
    int r;
    if (parse_opts(argc, argv, &project, &size, &r))
        return r;
    if (argc - optind != 1)
        return cli_usage("volume", "volume create takes one NAME");
    char *end;
    long long mb = size ? strtoll(size, &end, 10) : 0;
    if (size == NULL || *end != '\0' || mb <= 0)
        return cli_usage("volume", "volume create needs --size MB (a positive number)");
    json_t *body = cli_obj();
    json_object_set_new(body, "name", json_string(argv[optind]));
    json_object_set_new(body, "sizeMB", json_integer(mb));
    if (project)
        json_object_set_new(body, "project", json_string(project));
    r = request("POST", "/v1/volumes", body, 1);
    json_decref(body);
    return r;
}

static int volume_ls_rm(int argc, char **argv, int rm)
{
    const char *project = NULL;
    int r;
    if (parse_opts(argc, argv, &project, NULL, &r))
        return r;
    if (argc - optind != (rm ? 1 : 0))
        return cli_usage("volume",
                         rm ? "volume rm takes one ID or NAME" : "volume ls takes no arguments");
    if (rm && !is_ref(argv[optind]))
        return cli_usage("volume", "'%s' is not a volume id or name", argv[optind]);
    if (project && !is_ref(project))
        return cli_usage("volume", "'%s' is not a project", project);
    char path[256];
    snprintf(path, sizeof(path), "/v1/volumes%s%s%s%s", rm ? "/" : "", rm ? argv[optind] : "",
             project ? "?project=" : "", project ? project : "");
    r = request(rm ? "DELETE" : "GET", path, NULL, !rm);
    if (r == 0 && rm && !cli_json)
        printf("deleted %s\n", argv[optind]);
    return r;
}

static int volume_ls(int argc, char **argv)
{
    return volume_ls_rm(argc, argv, 0);
}

static int volume_rm(int argc, char **argv)
{
    return volume_ls_rm(argc, argv, 1);
}

int cmd_volume(int argc, char **argv)
{
    static const struct cli_command table[] = {{"create", NULL, volume_create},
                                               {"ls", "list", volume_ls},
                                               {"rm", "delete", volume_rm},
                                               {0}};
    return cli_dispatch("volume", volume_usage, table, argc, argv);
}
