/* lizard template ls|build */
#include "cli.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"
#include "../common/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_TEMPLATE_DIR "/var/lib/lizard/templates"

static const char template_usage[] =
    "usage: lizard template ls                           built templates\n"
    "       lizard template build NAME [--dir TEMPLATE_DIR]   (re)build one (root)\n"
    "  The cache is LIZARD_TEMPLATE_DIR (default " DEFAULT_TEMPLATE_DIR "); recipes\n"
    "  are NAME/build.sh in LIZARD_SHARE_DIR, else ../templates next to the lizard binary.\n";

static const char *template_dir(void)
{
    const char *d = getenv("LIZARD_TEMPLATE_DIR");
    return d && *d ? d : DEFAULT_TEMPLATE_DIR;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* NAME/build.sh among the recipes: $LIZARD_SHARE_DIR/NAME (or its
 * templates/NAME, for a share dir laid out like /usr/share/lizard), else the
 * repository's templates/ when lizard runs as build/lizard. */
static int find_recipe(const char *name, char *out, size_t n, lz_error *err)
{
    char dir[4096];
    const char *share = getenv("LIZARD_SHARE_DIR");
    if (share && *share) {
        if (snprintf(out, n, "%s/%s/build.sh", share, name) >= (int)n)
            return lz_error_set(err, ENAMETOOLONG, "LIZARD_SHARE_DIR");
        if (is_file(out))
            return 0;
        if (snprintf(dir, sizeof(dir), "%s/templates", share) >= (int)sizeof(dir))
            return lz_error_set(err, ENAMETOOLONG, "LIZARD_SHARE_DIR");
    } else {
        char exe_dir[4000];
        if (cli_exe_dir(exe_dir, sizeof(exe_dir), err) < 0)
            return -1;
        if (snprintf(dir, sizeof(dir), "%s/../templates", exe_dir) >= (int)sizeof(dir))
            return lz_error_set(err, ENAMETOOLONG, "template recipes");
    }
    if (snprintf(out, n, "%s/%s/build.sh", dir, name) >= (int)n)
        return lz_error_set(err, ENAMETOOLONG, "template recipe");
    if (is_file(out))
        return 0;
    return lz_error_set(err, 0, "no template recipe '%s' (looked for %s)", name, out);
}

static int template_build(int argc, char **argv)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'}, {0}};
    const char *dir = NULL;
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, ":d:h", opts, NULL)) != -1) {
        if (c == 'd')
            dir = optarg;
        else if (c == 'h')
            return cli_group_usage(template_usage, 1);
        else
            return cli_opt_error("template", c, argv);
    }
    if (argc - optind != 1)
        return cli_usage("template", "template build takes one NAME");
    const char *name = argv[optind];
    if (name[0] == '\0' || name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-")] != '\0')
        return cli_usage("template", "'%s' is not a template name ([a-z0-9_-])", name);
    char script[4200];
    lz_error err = {0};
    if (find_recipe(name, script, sizeof(script), &err) < 0)
        return cli_fail(&err);
    char env_dir[4200];
    snprintf(env_dir, sizeof(env_dir), "LIZARD_TEMPLATE_DIR=%s", dir ? dir : template_dir());
    const char *const args[] = {"/bin/bash", script, NULL};
    const char *const env[] = {env_dir, NULL};
    /* The recipe prints its own "[NAME] step (i/n)..." progress lines. */
    int rc = spawn_run(args, env, &err);
    if (rc < 0)
        return cli_fail(&err);
    if (rc != 0)
        return cli_failf("building template %s failed (exit %d)", name, rc);
    return 0;
}

/* The local cache as {templates: [meta...]}, the shape GET /v1/templates has. */
static json_t *local_templates(const char *dir)
{
    json_t *list = json_array();
    cleanup_closedir DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ".NAME.tmp-PID": builds in progress */
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s/meta.json", dir, de->d_name);
        json_t *meta = json_load_file(path, 0, NULL);
        if (json_is_object(meta))
            json_array_append(list, meta);
        json_decref(meta);
    }
    json_t *out = cli_obj();
    json_object_set_new(out, "templates", list);
    return out;
}

static int cmp_name(const void *a, const void *b)
{
    json_t *const *x = a, *const *y = b;
    const char *nx = json_string_value(json_object_get(*x, "name"));
    const char *ny = json_string_value(json_object_get(*y, "name"));
    return strcmp(nx ? nx : "", ny ? ny : "");
}

static void print_templates(json_t *out)
{
    json_t *list = json_object_get(out, "templates");
    size_t n = json_array_size(list), i;
    json_t **items = calloc(n + 1, sizeof(json_t *));
    if (items == NULL)
        abort();
    for (i = 0; i < n; i++)
        items[i] = json_array_get(list, i);
    qsort(items, n, sizeof(json_t *), cmp_name);
    static const char *const hdr[] = {"NAME", "SIZE", "BUILT", "BUILD-TIME"};
    struct table *t = table_new(4, hdr);
    for (i = 0; i < n; i++) {
        char b[4][64];
        json_t *size = json_object_get(items[i], "sizeBytes");
        json_t *secs = json_object_get(items[i], "buildSeconds");
        if (json_is_number(secs))
            snprintf(b[3], 64, "%.1fs", json_number_value(secs));
        const char *row[] = {
            out_field(items[i], "name", b[0], 64),
            json_is_number(size) ? out_bytes(json_number_value(size), b[1], 64) : NULL,
            out_time(json_string_value(json_object_get(items[i], "builtAt")), b[2], 64),
            json_is_number(secs) ? b[3] : NULL,
        };
        table_add(t, row);
    }
    table_print_free(t);
    free(items);
}

static int template_ls(int argc, char **argv)
{
    if (argc > 1)
        return strcmp(argv[1], "--help") == 0
                   ? cli_group_usage(template_usage, 1)
                   : cli_usage("template", "template ls takes no arguments");
    lz_error err = {0};
    json_t *out = NULL;
    int st = -1;
    lizard_client *cl = cli_client_try(&err);
    if (cl) {
        st = lizard_request(cl, "GET", "/v1/templates", NULL, &out, &err);
        lizard_client_free(cl);
    }
    /* A server that answered with an error (401...) is reported; no server
     * at all (or no key) falls back to what is built on this machine. */
    if (st < -1)
        return cli_fail(&err);
    if (st < 0) {
        if (!cli_json)
            fprintf(stderr, "lizard: no server answered (%s); listing the local cache %s\n",
                    err.msg, template_dir());
        out = local_templates(template_dir());
    }
    if (cli_json)
        out_json(out);
    else
        print_templates(out);
    json_decref(out);
    return 0;
}

int cmd_template(int argc, char **argv)
{
    static const struct cli_command table[] = {
        {"build", NULL, template_build}, {"ls", "list", template_ls}, {0}};
    return cli_dispatch("template", template_usage, table, argc, argv);
}
