#include "args.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int args_kv_add(json_t *obj, const char *kv, lz_error *err)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return lz_error_set(err, 0, "expected KEY=VALUE, got '%s'", kv);
    size_t klen = (size_t)(eq - kv);
    char key[256];
    if (klen >= sizeof(key))
        return lz_error_set(err, 0, "key too long in '%.40s...'", kv);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    json_t *v = json_string(eq + 1);
    if (v == NULL)
        return lz_error_set(err, 0, "'%s' is not valid UTF-8", kv);
    if (json_object_set_new(obj, key, v) < 0)
        return lz_error_set(err, 0, "bad key in '%s'", kv);
    return 0;
}

int args_parse_ms(const char *s, int64_t *out, lz_error *err)
{
    static const struct {
        const char *suffix;
        int64_t mul;
    } units[] = {{"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return lz_error_set(err, 0, "'%s' is not a duration (milliseconds, or 30s, 5m, 2h)", s);
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return lz_error_set(err, 0, "'%s' is too large", s);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) != 0)
            continue;
        if (v > INT64_MAX / units[i].mul)
            return lz_error_set(err, 0, "'%s' is too large", s);
        *out = v * units[i].mul;
        return 0;
    }
    return lz_error_set(err, 0, "'%s' is not a duration (milliseconds, or 30s, 5m, 2h)", s);
}

int args_check_listen(const char *s, lz_error *err)
{
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s)
        return lz_error_set(err, 0, "--listen wants ADDR:PORT, got '%s'", s);
    if (s[0] == '[' && colon[-1] != ']')
        return lz_error_set(err, 0, "--listen wants [V6ADDR]:PORT, got '%s'", s);
    if (s[0] != '[' && memchr(s, ':', (size_t)(colon - s)))
        return lz_error_set(err, 0, "--listen: write IPv6 addresses as [ADDR]:PORT, got '%s'", s);
    const char *p = colon + 1;
    size_t n = strspn(p, "0123456789");
    if (n == 0 || n > 5 || p[n] != '\0' || atol(p) > 65535)
        return lz_error_set(err, 0, "--listen: bad port in '%s'", s);
    return 0;
}

json_t *args_exec_cmd(int argc, char *const argv[])
{
    if (argc <= 0)
        return NULL;
    if (argc == 1)
        return json_string(argv[0]);
    json_t *a = json_array();
    for (int i = 0; a && i < argc; i++) {
        json_t *s = json_string(argv[i]);
        if (s == NULL || json_array_append_new(a, s) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int args_take_flag(int *argc, char *argv[], const char *flag)
{
    int found = 0, k = 0, i;
    for (i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], flag) == 0) {
            found = 1;
            continue;
        }
        argv[k++] = argv[i];
    }
    for (; i < *argc; i++)
        argv[k++] = argv[i];
    argv[k] = NULL;
    *argc = k;
    return found;
}

int args_is_id(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
    return n > 0 && n <= 128 && s[n] == '\0';
}

int args_volume_add(json_t *list, const char *spec, lz_error *err)
{
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n == 0 || (colon && colon[1] == '\0'))
        return lz_error_set(err, EINVAL, "'%s' is not NAME or NAME:/mount/path", spec);
    json_t *v = json_pack("{s:s%}", "volume", spec, n);
    if (colon)
        json_object_set_new(v, "mountPath", json_string(colon + 1));
    return json_array_append_new(list, v) == 0 ? 0 : lz_error_set(err, ENOMEM, "volume");
}
