/* /v1/volumes: create, list, get, delete (docs/api.md "Volumes"). Images
 * and attachment are in volumes.c. */
#include "api.h"
#include "volumes.h"
#include "../common/ids.h"
#include "../common/json_util.h"
#include "../common/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

static json_t *volume_json(const struct volume_record *v)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:o, s:o}", "id", v->id, "name", v->name, "project",
                     v->project_id, "sizeMB", (json_int_t)v->size_mb, "createdAt",
                     json_time_or_null(v->created_ms, 0), "attachedTo",
                     v->attached_to[0] ? json_string(v->attached_to) : json_null());
}

/* Names are path- and shell-friendly, and never take the form of an id, so
 * `{id}` in a URL can be either without ambiguity. */
static int valid_volume_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 ||
        strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789._-") != n)
        return 0;
    return s[0] != '.' && s[0] != '-' && !id_is_valid(s, "vol_");
}

/* The project a call acts on: ?project= (or `project` in a body), else the
 * key's own. */
static int call_project(struct api_call *call, const char *ref, struct project_record *p)
{
    return api_resolve_project(call, ref && ref[0] ? ref : NULL, p);
}

/* Sparse images promise more than they take, but one volume larger than the
 * free space could never be filled: refuse it up front. */
static int host_has_room(struct api_call *call, int64_t size_mb)
{
    struct statvfs sv;
    if (statvfs(call->d->data_dir, &sv) < 0)
        return 1;
    uint64_t free_mb = ((uint64_t)sv.f_bavail * sv.f_frsize) >> 20;
    if ((uint64_t)size_mb <= free_mb)
        return 1;
    http_respond_error(call->req, 503, "unavailable",
                       "a %lld MB volume does not fit: this host has %llu MB free",
                       (long long)size_mb, (unsigned long long)free_mb);
    return 0;
}

static void create_volume_in(struct api_call *call, const char *name, int64_t size_mb,
                             const struct project_record *p)
{
    struct volume_record v = {0};
    lz_error err;
    if (store_volume_find(call->d->store, p->id, name, &v, &err) == 0) {
        http_respond_error(call->req, 409, "conflict", "a volume named '%s' exists", name);
        return;
    }
    if (!host_has_room(call, size_mb))
        return;
    if (random_id(v.id, sizeof(v.id), "vol_", 20) < 0) {
        http_respond_error(call->req, 503, "unavailable", "no randomness: %s", strerror(errno));
        return;
    }
    snprintf(v.project_id, sizeof(v.project_id), "%s", p->id);
    snprintf(v.name, sizeof(v.name), "%s", name);
    v.size_mb = size_mb;
    v.created_ms = now_ms();
    if (volume_image_create(call->d, v.id, size_mb, &err) < 0) {
        log_error("volume %s: %s", v.id, err.msg);
        http_respond_error(call->req, 503, "unavailable", "could not make the volume: %s", err.msg);
        return;
    }
    /* The insert decides a race between two creates of one name. */
    if (store_volume_insert(call->d->store, &v, &err) < 0) {
        volume_image_delete(call->d, v.id, NULL);
        int dup = err.errnum == EEXIST;
        http_respond_error(call->req, dup ? 409 : 503, dup ? "conflict" : "unavailable", "%s",
                           dup ? "a volume with that name exists" : err.msg);
        return;
    }
    http_respond_json(call->req, 201, volume_json(&v));
}

static void create_volume(struct api_call *call)
{
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    const char *name = NULL, *project_ref = NULL;
    int64_t size_mb = 0;
    char msg[256];
    struct project_record p;
    if (json_req_string(body, "name", &name, msg, sizeof(msg)) < 0 ||
        json_opt_int(body, "sizeMB", 1, VOLUME_MAX_MB, &size_mb, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "project", &project_ref, msg, sizeof(msg)) < 0)
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
    else if (size_mb == 0)
        http_respond_error(call->req, 400, "bad_request", "field 'sizeMB' is required");
    else if (!valid_volume_name(name))
        http_respond_error(call->req, 400, "bad_request",
                           "field 'name' must be 1-64 characters of a-z A-Z 0-9 . _ -, not "
                           "starting with . or - and not shaped like a volume id");
    else if (call_project(call, project_ref, &p) == 0)
        create_volume_in(call, name, size_mb, &p);
    json_decref(body);
}

static void add_volume(const struct volume_record *v, void *arg)
{
    json_array_append_new(arg, volume_json(v));
}

static void list_volumes(struct api_call *call)
{
    struct project_record p;
    const char *project_id;
    if (api_list_scope(call, &p, &project_id) < 0)
        return;
    json_t *list = json_array();
    lz_error err;
    if (store_volume_list(call->d->store, project_id, add_volume, list, &err) < 0) {
        json_decref(list);
        http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
        return;
    }
    http_respond_json(call->req, 200, json_pack("{s:o}", "volumes", list));
}

/* A volume the caller may see: by id in its project (admin: any project),
 * by name in ?project= or its own. Responds 404 itself. */
static int find_volume(struct api_call *call, const char *ref, struct volume_record *v)
{
    char project_ref[128] = "";
    struct project_record p;
    if (http_request_query(call->req, "project", project_ref, sizeof(project_ref)) < 0) {
        http_respond_error(call->req, 400, "bad_request", "malformed query string");
        return -1;
    }
    if (call_project(call, project_ref, &p) < 0)
        return -1;
    const char *scope = call->admin && id_is_valid(ref, "vol_") ? NULL : p.id;
    lz_error err;
    int r = store_volume_find(call->d->store, scope, ref, v, &err);
    if (r == -1)
        http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
    else if (r == STORE_NOT_FOUND)
        http_respond_error(call->req, 404, "not_found", "volume '%s' not found", ref);
    return r == 0 ? 0 : -1;
}

static void delete_volume(struct api_call *call, const struct volume_record *v)
{
    lz_error err;
    int r = store_volume_delete_free(call->d->store, v->id, &err);
    if (r < 0) {
        http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
        return;
    }
    if (r == 0) {
        http_respond_error(call->req, 409, "conflict",
                           "volume '%s' is attached to sandbox %s; kill the sandbox first", v->name,
                           v->attached_to[0] ? v->attached_to : "(another)");
        return;
    }
    /* After the row: a crash in between leaves an unreferenced file, never
     * a volume without its data. */
    if (volume_image_delete(call->d, v->id, &err) < 0)
        log_warn("volume %s: %s", v->id, err.msg);
    http_respond_raw(call->req, 204, NULL, NULL, 0);
}

void api_volumes(struct api_call *call, const char *rest)
{
    const char *m = call->req->method;
    if (*rest == '\0') {
        if (strcmp(m, "POST") == 0)
            create_volume(call);
        else if (strcmp(m, "GET") == 0)
            list_volumes(call);
        else
            api_method_not_allowed(call);
        return;
    }
    const char *ref = rest + 1;
    struct volume_record v;
    if (*ref == '\0' || strchr(ref, '/') != NULL || strlen(ref) > 64) {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
        return;
    }
    if (strcmp(m, "GET") != 0 && strcmp(m, "DELETE") != 0) {
        api_method_not_allowed(call);
        return;
    }
    if (find_volume(call, ref, &v) < 0)
        return;
    if (strcmp(m, "GET") == 0)
        http_respond_json(call->req, 200, volume_json(&v));
    else
        delete_volume(call, &v);
}
