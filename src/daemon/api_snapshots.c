/* POST /v1/sandboxes/{id}/snapshots and /v1/snapshots[/{id}[/restore]].
 * {id} may be a snapshot's id or its name in the caller's project. */
#include "api.h"
#include "snapshots.h"
#include "../common/json_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int api_sandbox_snapshot(struct api_call *call, const struct sandbox_record *r, const char *sub)
{
    if (strcmp(sub, "/snapshots") != 0)
        return 0;
    if (strcmp(call->req->method, "POST") != 0) {
        api_method_not_allowed(call);
        return 1;
    }
    json_t *body = api_read_object(call);
    if (body == NULL)
        return 1;
    char msg[256];
    const char *name = NULL;
    int64_t pool = SNAPSHOT_POOL_DEFAULT;
    struct snapshot_record s;
    struct api_failure fail = {0};
    if (json_req_string(body, "name", &name, msg, sizeof(msg)) < 0 ||
        json_opt_int(body, "poolSize", 1, SNAPSHOT_POOL_MAX, &pool, msg, sizeof(msg)) < 0)
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
    else if (snapshot_start(call->d, r, name, (int)pool, &s, &fail) < 0)
        api_respond_failure(call, &fail);
    else
        http_respond_json(call->req, 202, snapshot_json(call->d, &s));
    json_decref(body);
    return 1;
}

/* A snapshot the caller may see: ids of any project for admin keys, names
 * in the caller's project. Responds 404 itself. */
static int find_snapshot(struct api_call *call, const char *ref, struct snapshot_record *s)
{
    lz_error err;
    int r = store_snapshot_find(call->d->store, call->project_id, ref, s, &err);
    if (r == STORE_NOT_FOUND && call->admin)
        r = store_snapshot_find(call->d->store, NULL, ref, s, &err);
    if (r == -1) {
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
        return -1;
    }
    if (r == STORE_NOT_FOUND || (!call->admin && strcmp(s->project_id, call->project_id) != 0)) {
        http_respond_error(call->req, 404, "not_found", "snapshot '%s' not found", ref);
        return -1;
    }
    return 0;
}

struct list_ctx {
    struct snapshot_record *v;
    size_t n;
};

/* Collected first, turned into JSON after: snapshot_json asks the store
 * again, which it cannot do from inside a listing's callback. */
static void add_snapshot(const struct snapshot_record *s, void *arg)
{
    struct list_ctx *c = arg;
    void *p = realloc(c->v, (c->n + 1) * sizeof(*c->v));
    if (p == NULL)
        return;
    c->v = p;
    c->v[c->n++] = *s;
}

static void list_snapshots(struct api_call *call)
{
    struct project_record project;
    const char *project_id;
    if (api_list_scope(call, &project, &project_id) < 0)
        return;
    struct list_ctx c = {NULL, 0};
    lz_error err;
    if (store_snapshot_list(call->d->store, project_id, NULL, add_snapshot, &c, &err) < 0) {
        free(c.v);
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
        return;
    }
    json_t *list = json_array();
    for (size_t i = 0; i < c.n; i++)
        json_array_append_new(list, snapshot_json(call->d, &c.v[i]));
    free(c.v);
    http_respond_json(call->req, 200, json_pack("{s:o}", "snapshots", list));
}

static void restore(struct api_call *call, const struct snapshot_record *s)
{
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    int64_t timeout;
    json_t *env = NULL, *meta = NULL;
    struct sandbox_record r;
    struct api_failure fail = {0};
    if (api_parse_lifetime(call, body, &timeout, &env, &meta) == 0) {
        if (snapshot_restore(call->d, s, timeout, meta, env, &r, &fail) < 0) {
            api_respond_failure(call, &fail);
        } else {
            http_respond_json(call->req, 201, sandbox_info_json(call->d, &r));
            sandbox_record_clear(&r);
        }
    }
    json_decref(body);
}

void api_snapshots(struct api_call *call, const char *rest)
{
    const char *m = call->req->method;
    if (*rest == '\0') {
        if (strcmp(m, "GET") == 0)
            list_snapshots(call);
        else
            api_method_not_allowed(call);
        return;
    }
    char ref[80];
    const char *start = rest + 1, *sub;
    size_t n = strcspn(start, "/");
    sub = start + n;
    if (n == 0 || n >= sizeof(ref) || (*sub && strcmp(sub, "/restore") != 0)) {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
        return;
    }
    memcpy(ref, start, n);
    ref[n] = '\0';
    struct snapshot_record s;
    if (find_snapshot(call, ref, &s) < 0)
        return;
    lz_error err;
    if (*sub && strcmp(m, "POST") == 0)
        restore(call, &s);
    else if (*sub)
        api_method_not_allowed(call);
    else if (strcmp(m, "GET") == 0)
        http_respond_json(call->req, 200, snapshot_json(call->d, &s));
    else if (strcmp(m, "DELETE") != 0)
        api_method_not_allowed(call);
    else if (snapshot_delete(call->d, &s, &err) < 0)
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
    else
        http_respond_raw(call->req, 204, NULL, NULL, 0);
}
