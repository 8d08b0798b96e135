/* The server config file: strict JSON parsing into struct lizard_config.
 * Every problem is a start-up error naming the key, so a typo never turns
 * into a silently ignored setting. */
#include "config.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void config_defaults(struct lizard_config *c)
{
    /* "default" is what a create without a size gets: the template's
     * 4 vCPU / 4 GiB (SPEC "Resources and limits"). */
    static const struct size_class sizes[] = {
        {"small", 1, 1024, 0.025},
        {"medium", 2, 2048, 0.05},
        {"large", 4, 4096, 0.10},
        {"default", 4, 4096, 0.10},
    };
    memset(c, 0, sizeof(*c));
    c->nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    memcpy(c->sizes, sizes, sizeof(sizes));
    c->volume_price_per_gb_month = 0.10;
    c->max_running_per_project = 100;
    c->max_sandboxes_per_host = 1000;
    c->disk_mb = 10240;
}

/* Fail unless every key of obj is one of `known` (NULL-terminated). */
static int check_keys(json_t *obj, const char *where, const char *const *known, lz_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        int ok = 0;
        for (int i = 0; known[i] && !ok; i++)
            ok = strcmp(key, known[i]) == 0;
        if (!ok)
            return lz_error_set(err, 0, "unknown key '%s'%s%s", key, where[0] ? " in " : "", where);
    }
    return 0;
}

/* An integer in [min, max] at obj.key; absent leaves *out alone. */
static int get_int(json_t *obj, const char *key, const char *where, int64_t min, int64_t max,
                   int required, int64_t *out, lz_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return required
                   ? lz_error_set(err, 0, "%s%s needs '%s'", where, where[0] ? "" : "config", key)
                   : 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return lz_error_set(err, 0, "'%s'%s%s must be an integer from %lld to %lld", key,
                            where[0] ? " in " : "", where, (long long)min, (long long)max);
    *out = json_integer_value(v);
    return 0;
}

/* A price: a finite number >= 0 (integers allowed). */
static int get_price(json_t *obj, const char *key, const char *where, int required, double *out,
                     lz_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return required ? lz_error_set(err, 0, "%s needs '%s'", where, key) : 0;
    double p = json_number_value(v);
    if (!json_is_number(v) || !isfinite(p) || p < 0 || p > 1e9)
        return lz_error_set(err, 0, "'%s'%s%s must be a number >= 0", key, where[0] ? " in " : "",
                            where);
    *out = p;
    return 0;
}

/* Size names go into sandbox rows and URLs: [a-z0-9_-], 1-15 characters. */
static int size_name_valid(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n < sizeof(((struct size_class *)0)->name) &&
           strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static int parse_size(json_t *v, size_t i, struct size_class *out, lz_error *err)
{
    static const char *const known[] = {"name", "cpuCount", "memoryMB", "pricePerHour", NULL};
    char where[32];
    snprintf(where, sizeof(where), "sizes[%zu]", i);
    if (!json_is_object(v))
        return lz_error_set(err, 0, "%s must be an object", where);
    const char *name = json_string_value(json_object_get(v, "name"));
    if (name == NULL || !size_name_valid(name))
        return lz_error_set(err, 0, "%s needs a 'name' of 1-15 characters a-z 0-9 _ -", where);
    int64_t cpus = 0, mem = 0;
    if (check_keys(v, where, known, err) < 0 ||
        get_int(v, "cpuCount", where, 1, 1024, 1, &cpus, err) < 0 ||
        get_int(v, "memoryMB", where, 16, 16 << 20, 1, &mem, err) < 0 ||
        get_price(v, "pricePerHour", where, 1, &out->price_per_hour, err) < 0)
        return -1;
    snprintf(out->name, sizeof(out->name), "%s", name);
    out->cpu_count = (int)cpus;
    out->memory_mb = (int)mem;
    return 0;
}

static int parse_sizes(json_t *arr, struct lizard_config *c, lz_error *err)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > CONFIG_MAX_SIZES)
        return lz_error_set(err, 0, "'sizes' must be an array of 1 to %d sizes", CONFIG_MAX_SIZES);
    int have_default = 0;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (parse_size(v, i, &c->sizes[i], err) < 0)
            return -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->sizes[j].name, c->sizes[i].name) == 0)
                return lz_error_set(err, 0, "size '%s' appears twice in 'sizes'", c->sizes[i].name);
        have_default |= strcmp(c->sizes[i].name, "default") == 0;
    }
    if (!have_default)
        return lz_error_set(err, 0,
                            "'sizes' needs an entry named \"default\" (what a create without a "
                            "size gets)");
    c->nsizes = (int)json_array_size(arr);
    return 0;
}

static int apply(json_t *root, struct lizard_config *c, lz_error *err)
{
    static const char *const known[] = {
        "sizes", "volumePricePerGBMonth", "maxRunningPerProject", "maxSandboxesPerHost", "diskMB",
        NULL};
    if (!json_is_object(root))
        return lz_error_set(err, 0, "the config must be a JSON object");
    int64_t running = c->max_running_per_project, host = c->max_sandboxes_per_host;
    if (check_keys(root, "", known, err) < 0 ||
        get_price(root, "volumePricePerGBMonth", "", 0, &c->volume_price_per_gb_month, err) < 0 ||
        get_int(root, "maxRunningPerProject", "", 1, 1000000, 0, &running, err) < 0 ||
        get_int(root, "maxSandboxesPerHost", "", 1, 1000000, 0, &host, err) < 0 ||
        get_int(root, "diskMB", "", 16, (int64_t)1 << 30, 0, &c->disk_mb, err) < 0)
        return -1;
    c->max_running_per_project = (int)running;
    c->max_sandboxes_per_host = (int)host;
    json_t *sizes = json_object_get(root, "sizes");
    return sizes ? parse_sizes(sizes, c, err) : 0;
}

int config_parse(const char *text, struct lizard_config *c, lz_error *err)
{
    json_error_t je;
    /* Two values for one key would leave the reader guessing which wins. */
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL)
        return lz_error_set(err, 0, "line %d column %d: %s", je.line, je.column, je.text);
    /* Work on a copy: a half-applied config must never be used. */
    struct lizard_config tmp = *c;
    int r = apply(root, &tmp, err);
    json_decref(root);
    if (r == 0)
        *c = tmp;
    return r;
}

int config_load(const char *path, struct lizard_config *c, lz_error *err)
{
    cleanup_free char *text = NULL;
    if (read_file(path, 1 << 20, &text, err) < 0 || config_parse(text, c, err) < 0)
        return lz_error_prefix(err, "config %s", path);
    return 0;
}
