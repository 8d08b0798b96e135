/* /v1/projects and /v1/keys. */
#include "api.h"
#include "auth.h"
#include "../common/ids.h"
#include "../common/json_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static json_t *project_json(const struct project_record *p)
{
    return json_pack("{s:s, s:s, s:s, s:o}", "id", p->id, "name", p->name, "slug", p->slug,
                     "createdAt", json_time_or_null(p->created_ms, 0));
}

/* "My Project" -> "my-project". Returns -1 when nothing usable is left. */
static int slugify(const char *name, char *out, size_t outsz)
{
    size_t n = 0;
    int dash = 0;
    for (const char *p = name; *p && n + 1 < outsz; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && n > 0)
                out[n++] = '-';
            dash = 0;
            if (n + 1 < outsz)
                out[n++] = c;
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
    return n > 0 ? 0 : -1;
}

static int valid_slug(const char *s)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
    return n > 0 && n <= 64 && s[n] == '\0';
}

static int valid_name(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20)
            return 0;
    return 1;
}

int daemon_project_create(struct lizardd *d, const char *name, const char *slug,
                          struct project_record *out, lz_error *err)
{
    memset(out, 0, sizeof(*out));
    if (random_id(out->id, sizeof(out->id), "proj_", 16) < 0)
        return lz_error_sys(err, "random");
    snprintf(out->name, sizeof(out->name), "%s", name);
    if (slug)
        snprintf(out->slug, sizeof(out->slug), "%s", slug);
    else if (slugify(name, out->slug, sizeof(out->slug)) < 0)
        snprintf(out->slug, sizeof(out->slug), "%s", out->id);
    out->created_ms = now_ms();
    return store_project_insert(d->store, out, err);
}

static void create_project(struct api_call *call)
{
    if (api_require_admin(call) < 0)
        return;
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    const char *name = NULL, *slug = NULL;
    char msg[256];
    struct project_record p;
    lz_error err;
    if (json_req_string(body, "name", &name, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "slug", &slug, msg, sizeof(msg)) < 0)
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
    else if (!valid_name(name, 100))
        http_respond_error(call->req, 400, "bad_request",
                           "field 'name' must be 1-100 printable characters");
    else if (slug && !valid_slug(slug))
        http_respond_error(call->req, 400, "bad_request",
                           "field 'slug' may hold only a-z, 0-9 and '-'");
    else if (daemon_project_create(call->d, name, slug, &p, &err) < 0)
        http_respond_error(call->req, err.errnum == EEXIST ? 409 : 503,
                           err.errnum == EEXIST ? "conflict" : "unavailable", "%s",
                           err.errnum == EEXIST ? "a project with that name or slug exists"
                                                : err.msg);
    else
        http_respond_json(call->req, 201, project_json(&p));
    json_decref(body);
}

static void add_project(const struct project_record *p, void *arg)
{
    json_array_append_new(arg, project_json(p));
}

static void list_projects(struct api_call *call)
{
    json_t *list = json_array();
    if (call->admin) {
        store_project_list(call->d->store, add_project, list, NULL);
    } else {
        struct project_record p;
        if (store_project_find(call->d->store, call->project_id, &p, NULL) == 0)
            add_project(&p, list);
    }
    http_respond_json(call->req, 200, json_pack("{s:o}", "projects", list));
}

void api_projects(struct api_call *call, const char *rest)
{
    if (*rest != '\0') {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
        return;
    }
    if (strcmp(call->req->method, "POST") == 0)
        create_project(call);
    else if (strcmp(call->req->method, "GET") == 0)
        list_projects(call);
    else
        api_method_not_allowed(call);
}

/* ---- keys ---- */

static json_t *key_json(const struct key_record *k)
{
    return json_pack("{s:s, s:s, s:s, s:b, s:s, s:o}", "id", k->id, "name", k->name, "project",
                     k->project_id, "admin", k->admin, "prefix", k->prefix, "createdAt",
                     json_time_or_null(k->created_ms, 0));
}

int daemon_key_create(struct lizardd *d, const char *name, const char *project_id, int admin,
                      struct key_record *out, char key_text[AUTH_KEY_MAX], lz_error *err)
{
    memset(out, 0, sizeof(*out));
    if (auth_key_generate(out, key_text, err) < 0)
        return -1;
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->project_id, sizeof(out->project_id), "%s", project_id);
    out->admin = admin;
    out->created_ms = now_ms();
    return store_key_insert(d->store, out, err);
}

static void create_key(struct api_call *call)
{
    if (api_require_admin(call) < 0)
        return;
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    const char *name = NULL, *project = NULL;
    int admin = 0;
    char msg[256];
    struct project_record p;
    struct key_record k;
    char key_text[AUTH_KEY_MAX];
    lz_error err;
    if (json_req_string(body, "name", &name, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "project", &project, msg, sizeof(msg)) < 0 ||
        json_opt_bool(body, "admin", &admin, msg, sizeof(msg)) < 0)
        http_respond_error(call->req, 400, "bad_request", "%s", msg);
    else if (!valid_name(name, 100))
        http_respond_error(call->req, 400, "bad_request",
                           "field 'name' must be 1-100 printable characters");
    else if (api_resolve_project(call, project, &p) < 0)
        ; /* responded */
    else if (daemon_key_create(call->d, name, p.id, admin, &k, key_text, &err) < 0)
        http_respond_error(call->req, 503, "unavailable", "%s", err.msg);
    else {
        json_t *j = key_json(&k);
        json_object_set_new(j, "key", json_string(key_text));
        http_respond_json(call->req, 201, j);
    }
    json_decref(body);
}

static void add_key(const struct key_record *k, void *arg)
{
    json_array_append_new(arg, key_json(k));
}

static void list_keys(struct api_call *call)
{
    json_t *list = json_array();
    store_key_list(call->d->store, call->admin ? NULL : call->project_id, add_key, list, NULL);
    http_respond_json(call->req, 200, json_pack("{s:o}", "keys", list));
}

static void delete_key(struct api_call *call, const char *id)
{
    struct key_record k;
    int r = id_is_valid(id, "key_") ? store_key_get(call->d->store, id, &k, NULL) : -2;
    /* Project keys may revoke keys of their own project, not admin keys. */
    if (r != 0 || (!call->admin && (k.admin || strcmp(k.project_id, call->project_id) != 0))) {
        http_respond_error(call->req, 404, "not_found", "key '%s' not found", id);
        return;
    }
    store_key_delete(call->d->store, id, NULL);
    http_respond_raw(call->req, 204, NULL, NULL, 0);
}

void api_keys(struct api_call *call, const char *rest)
{
    const char *m = call->req->method;
    if (*rest == '\0' && strcmp(m, "POST") == 0)
        create_key(call);
    else if (*rest == '\0' && strcmp(m, "GET") == 0)
        list_keys(call);
    else if (rest[0] == '/' && strchr(rest + 1, '/') == NULL && strcmp(m, "DELETE") == 0)
        delete_key(call, rest + 1);
    else if (*rest == '\0' || (rest[0] == '/' && strchr(rest + 1, '/') == NULL))
        api_method_not_allowed(call);
    else
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
}
