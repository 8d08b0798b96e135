#include "request.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    enum request_op op;
} ops[] = {
    {"ping", OP_PING},
    {"exec", OP_EXEC},
    {"proc.list", OP_PROC_LIST},
    {"proc.signal", OP_PROC_SIGNAL},
    {"proc.stdin", OP_PROC_STDIN},
    {"proc.output", OP_PROC_OUTPUT},
    {"file.read", OP_FILE_READ},
    {"file.write", OP_FILE_WRITE},
    {"file.list", OP_FILE_LIST},
    {"file.stat", OP_FILE_STAT},
    {"file.mkdir", OP_FILE_MKDIR},
    {"file.remove", OP_FILE_REMOVE},
    {"file.rename", OP_FILE_RENAME},
};

bool request_path_ok(const char *path, size_t len)
{
    if (len == 0 || len > REQUEST_MAX_PATH || path[0] != '/' || memchr(path, '\0', len))
        return false;
    /* Walk components; only an exact ".." is refused ("..a" is a name). */
    const char *p = path, *end = path + len;
    while (p < end) {
        while (p < end && *p == '/')
            p++;
        const char *c = p;
        while (p < end && *p != '/')
            p++;
        if (p - c == 2 && c[0] == '.' && c[1] == '.')
            return false;
    }
    return true;
}

/* A JSON string without embedded NUL (jansson allows \u0000). */
static const char *plain_string(json_t *v, size_t max)
{
    if (!json_is_string(v))
        return NULL;
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (n > max || memchr(s, '\0', n))
        return NULL;
    return s;
}

static int get_string(json_t *o, const char *key, size_t max, bool required, const char **out,
                      lz_error *err)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return lz_error_set(err, 0, "missing field \"%s\"", key);
        return 0;
    }
    const char *s = plain_string(v, max);
    if (s == NULL)
        return lz_error_set(err, 0, "field \"%s\" must be a string (at most %zu bytes, no NUL)",
                            key, max);
    *out = s;
    return 0;
}

static int get_bool(json_t *o, const char *key, bool *out, lz_error *err)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return lz_error_set(err, 0, "field \"%s\" must be a boolean", key);
    *out = json_is_true(v);
    return 0;
}

/* Integers only (1.0 is refused), within [min, max]. */
static int get_uint(json_t *o, const char *key, uint64_t min, uint64_t max, bool required,
                    uint64_t *out, lz_error *err)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return lz_error_set(err, 0, "missing field \"%s\"", key);
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) < min ||
        (uint64_t)json_integer_value(v) > max)
        return lz_error_set(err, 0, "field \"%s\" must be an integer in [%llu, %llu]", key,
                            (unsigned long long)min, (unsigned long long)max);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_path(json_t *o, const char *key, const char **out, lz_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return lz_error_set(err, 0, "field \"%s\" must be a string", key);
    if (!request_path_ok(json_string_value(v), json_string_length(v)))
        return lz_error_set(err, 0, "field \"%s\" must be an absolute path without '..'", key);
    *out = json_string_value(v);
    return 0;
}

static bool user_name_ok(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s == ':' || *s == '\n' || *s == '/')
            return false;
    return true;
}

static int parse_argv(struct request *req, json_t *argv, lz_error *err)
{
    size_t n = json_array_size(argv);
    if (!json_is_array(argv) || n == 0 || n > REQUEST_MAX_ARGV)
        return lz_error_set(err, 0, "\"argv\" must be a non-empty array of strings");
    req->argv = calloc(n + 1, sizeof(char *));
    if (req->argv == NULL)
        return lz_error_set(err, ENOMEM, "argv");
    for (size_t i = 0; i < n; i++) {
        req->argv[i] = plain_string(json_array_get(argv, i), 1u << 20);
        if (req->argv[i] == NULL)
            return lz_error_set(err, 0, "\"argv\"[%zu] must be a string without NUL", i);
    }
    if (req->argv[0][0] == '\0')
        return lz_error_set(err, 0, "\"argv\"[0] must not be empty");
    req->cmd = req->argv[0];
    return 0;
}

static int parse_env(struct request *req, json_t *env, lz_error *err)
{
    if (env == NULL || json_is_null(env))
        return 0;
    size_t n = json_object_size(env);
    if (!json_is_object(env) || n > REQUEST_MAX_ENV)
        return lz_error_set(err, 0, "\"env\" must be an object of strings");
    req->env = calloc(n + 1, sizeof(char *));
    if (req->env == NULL)
        return lz_error_set(err, ENOMEM, "env");
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v)
    {
        const char *s = plain_string(v, 1u << 20);
        if (s == NULL)
            return lz_error_set(err, 0, "\"env\".%s must be a string without NUL", k);
        if (*k == '\0' || strchr(k, '='))
            return lz_error_set(err, 0, "\"env\" names must be non-empty and without '='");
        char *kv;
        if (asprintf(&kv, "%s=%s", k, s) < 0)
            return lz_error_set(err, ENOMEM, "env");
        req->env[i++] = kv;
    }
    return 0;
}

static int parse_exec(struct request *req, json_t *o, lz_error *err)
{
    json_t *argv = json_object_get(o, "argv"), *cmd = json_object_get(o, "cmd");
    if ((argv == NULL) == (cmd == NULL))
        return lz_error_set(err, 0, "exactly one of \"argv\" and \"cmd\" is required");
    if (argv) {
        if (parse_argv(req, argv, err) < 0)
            return -1;
    } else {
        if (get_string(o, "cmd", 1u << 20, true, &req->cmd, err) < 0)
            return -1;
        req->argv = calloc(4, sizeof(char *));
        if (req->argv == NULL)
            return lz_error_set(err, ENOMEM, "argv");
        req->argv[0] = "/bin/sh";
        req->argv[1] = "-c";
        req->argv[2] = req->cmd;
        req->shell = true;
    }
    req->max_output = REQUEST_DEFAULT_MAX_OUTPUT;
    if (get_string(o, "cwd", REQUEST_MAX_PATH, false, &req->cwd, err) < 0 ||
        get_uint(o, "timeoutMs", 0, UINT32_MAX * 1000ull, false, &req->timeout_ms, err) < 0 ||
        get_uint(o, "maxOutput", 0, REQUEST_LIMIT_MAX_OUTPUT, false, &req->max_output, err) < 0 ||
        get_bool(o, "stdin", &req->stdin_pipe, err) < 0 ||
        get_bool(o, "background", &req->background, err) < 0)
        return -1;
    if (req->cwd && !request_path_ok(req->cwd, strlen(req->cwd)))
        return lz_error_set(err, 0, "\"cwd\" must be an absolute path without '..'");
    return parse_env(req, json_object_get(o, "env"), err);
}

static int parse_pid(struct request *req, json_t *o, lz_error *err)
{
    uint64_t pid = 0;
    if (get_uint(o, "pid", 1, INT32_MAX, true, &pid, err) < 0)
        return -1;
    req->pid = (int)pid;
    return 0;
}

static int parse_op_fields(struct request *req, json_t *o, lz_error *err)
{
    uint64_t v = 0;
    switch (req->op) {
    case OP_PING:
    case OP_PROC_LIST:
        return 0;
    case OP_EXEC:
        return parse_exec(req, o, err);
    case OP_PROC_SIGNAL:
        if (parse_pid(req, o, err) < 0 || get_uint(o, "signal", 1, 64, true, &v, err) < 0)
            return -1;
        req->signal = (int)v;
        return 0;
    case OP_PROC_STDIN:
        if (parse_pid(req, o, err) < 0)
            return -1;
        return get_bool(o, "eof", &req->eof, err);
    case OP_PROC_OUTPUT:
        return parse_pid(req, o, err);
    case OP_FILE_WRITE:
        v = 0644;
        if (get_uint(o, "mode", 0, 07777, false, &v, err) < 0)
            return -1;
        req->mode = (unsigned)v;
        return get_path(o, "path", &req->path, err);
    case OP_FILE_REMOVE:
        if (get_bool(o, "recursive", &req->recursive, err) < 0)
            return -1;
        return get_path(o, "path", &req->path, err);
    case OP_FILE_RENAME:
        if (get_path(o, "from", &req->path, err) < 0)
            return -1;
        return get_path(o, "to", &req->to, err);
    case OP_FILE_READ:
    case OP_FILE_LIST:
    case OP_FILE_STAT:
    case OP_FILE_MKDIR:
        return get_path(o, "path", &req->path, err);
    }
    return lz_error_set(err, 0, "unknown op");
}

int request_parse(const uint8_t *payload, size_t len, struct request *req, lz_error *err)
{
    memset(req, 0, sizeof(*req));
    json_error_t jerr;
    req->root = json_loadb((const char *)payload, len, JSON_REJECT_DUPLICATES, &jerr);
    if (req->root == NULL)
        return lz_error_set(err, 0, "request is not JSON: %s", jerr.text);
    if (!json_is_object(req->root)) {
        request_free(req);
        return lz_error_set(err, 0, "request must be a JSON object");
    }
    const char *op = NULL;
    if (get_string(req->root, "op", 64, true, &op, err) < 0)
        goto fail;
    size_t i;
    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(ops[i].name, op) == 0)
            break;
    if (i == sizeof(ops) / sizeof(ops[0])) {
        lz_error_set(err, 0, "unknown op \"%s\"", op);
        goto fail;
    }
    req->op = ops[i].op;
    req->user = "root";
    if (get_string(req->root, "user", REQUEST_MAX_USER, false, &req->user, err) < 0)
        goto fail;
    if (!user_name_ok(req->user)) {
        lz_error_set(err, 0, "field \"user\" is not a valid user name");
        goto fail;
    }
    if (parse_op_fields(req, req->root, err) < 0)
        goto fail;
    return 0;
fail:
    request_free(req);
    return -1;
}

void request_free(struct request *req)
{
    if (req->env)
        for (size_t i = 0; req->env[i]; i++)
            free((char *)req->env[i]);
    free(req->env);
    free(req->argv);
    json_decref(req->root);
    memset(req, 0, sizeof(*req));
}

int request_parse_signal(const uint8_t *payload, size_t len, lz_error *err)
{
    json_t *o = json_loadb((const char *)payload, len, JSON_REJECT_DUPLICATES, NULL);
    uint64_t sig = 0;
    int r = -1;
    if (!json_is_object(o))
        lz_error_set(err, 0, "SIGNAL payload must be a JSON object");
    else if (get_uint(o, "signal", 1, 64, true, &sig, err) == 0)
        r = (int)sig;
    json_decref(o);
    return r;
}
