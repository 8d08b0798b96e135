/* Routing and the checks every call shares: authentication, project
 * visibility, JSON bodies. */
#include "api.h"
#include "auth.h"
#include "sandboxes.h"
#include "proxy.h"
#include "proxy_parse.h"
#include "../common/ids.h"
#include "../common/log.h"

#include <stdio.h>
#include <string.h>

void api_method_not_allowed(struct api_call *call)
{
    http_respond_error(call->req, 405, "method_not_allowed", "%s is not allowed on %s",
                       call->req->method, call->req->path);
}

int api_require_admin(struct api_call *call)
{
    if (call->admin)
        return 0;
    http_respond_error(call->req, 403, "forbidden", "this call needs an admin API key");
    return -1;
}

json_t *api_read_object(struct api_call *call)
{
    int status = 0;
    char msg[256] = "";
    json_t *body = http_read_json(call->req, API_MAX_JSON_BODY, &status, msg, sizeof(msg));
    if (body == NULL && status != 0) {
        http_respond_error(call->req, status, status == 413 ? "too_large" : "bad_request", "%s",
                           msg);
        return NULL;
    }
    if (body == NULL)
        return json_object();
    if (!json_is_object(body)) {
        json_decref(body);
        http_respond_error(call->req, 400, "bad_request", "the request body must be a JSON object");
        return NULL;
    }
    return body;
}

int api_resolve_project(struct api_call *call, const char *ref, struct project_record *out)
{
    lz_error err;
    int r = store_project_find(call->d->store, ref ? ref : call->project_id, out, &err);
    if (r == -1) {
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
        return -1;
    }
    /* Another project's id answers exactly like a missing one. */
    if (r == STORE_NOT_FOUND || (!call->admin && strcmp(out->id, call->project_id) != 0)) {
        http_respond_error(call->req, 404, "not_found", "project '%s' not found",
                           ref ? ref : call->project_id);
        return -1;
    }
    return 0;
}

int api_list_scope(struct api_call *call, struct project_record *buf, const char **project_id)
{
    char ref[128] = "";
    if (http_request_query(call->req, "project", ref, sizeof(ref)) < 0) {
        http_respond_error(call->req, 400, "bad_request", "malformed query string");
        return -1;
    }
    *project_id = call->admin ? NULL : call->project_id;
    if (ref[0] == '\0')
        return 0;
    if (api_resolve_project(call, ref, buf) < 0)
        return -1;
    *project_id = buf->id;
    return 0;
}

int api_find_running_sandbox(struct api_call *call, const char *id, struct sandbox_record *out)
{
    lz_error err;
    int r =
        id_is_valid(id, "sb_") ? store_sandbox_get(call->d->store, id, out, &err) : STORE_NOT_FOUND;
    if (r == -1) {
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
        return -1;
    }
    /* A sandbox being stopped is already gone for its users: 404 like GET. */
    if (r == STORE_NOT_FOUND || sandbox_hidden(out) ||
        (!call->admin && strcmp(out->project_id, call->project_id) != 0)) {
        if (r == 0)
            sandbox_record_clear(out);
        http_respond_error(call->req, 404, "not_found", "sandbox '%s' not found", id);
        return -1;
    }
    if (strcmp(out->status, "paused") == 0 || strcmp(out->status, "pausing") == 0 ||
        strcmp(out->status, "resuming") == 0) {
        http_respond_error(call->req, 409, "paused",
                           "sandbox %s is %s: resume it first (POST .../resume, then wait for "
                           "status running)",
                           id, out->status);
        sandbox_record_clear(out);
        return -1;
    }
    if (strcmp(out->status, "running") != 0) {
        http_respond_error(call->req, 409, "conflict", "sandbox %s is %s, not running", id,
                           out->status);
        sandbox_record_clear(out);
        return -1;
    }
    return 0;
}

int api_connect_agent(struct api_call *call, const struct sandbox_record *sb)
{
    lz_error err;
    int fd = call->d->runtime->connect_agent(&call->d->rcfg, sb->id, &err);
    if (fd < 0)
        http_respond_error(call->req, 409, "sandbox_unavailable", "sandbox %s is not reachable: %s",
                           sb->id, err.msg);
    return fd;
}

static void api_healthz(struct http_request *req)
{
    http_respond_json(req, 200, json_pack("{s:s}", "status", "ok"));
}

struct metrics_ctx {
    int running, total;
};

static void metrics_count(const struct sandbox_record *r, void *arg)
{
    struct metrics_ctx *m = arg;
    m->total++;
    if (strcmp(r->status, "running") == 0)
        m->running++;
}

static void api_metrics(struct api_call *call)
{
    if (api_require_admin(call) < 0)
        return;
    struct metrics_ctx m = {0};
    store_sandbox_list(call->d->store, NULL, NULL, metrics_count, &m, NULL);
    char body[512];
    int n = snprintf(body, sizeof(body),
                     "# HELP lizard_sandboxes Sandboxes known to this host.\n"
                     "# TYPE lizard_sandboxes gauge\n"
                     "lizard_sandboxes{status=\"running\"} %d\n"
                     "lizard_sandboxes{status=\"any\"} %d\n",
                     m.running, m.total);
    http_respond_raw(call->req, 200, "text/plain; version=0.0.4", body, (size_t)n);
}

static int authenticate(struct http_request *req, struct lizardd *d, struct api_call *call)
{
    struct key_record key;
    if (auth_check(d->store, http_request_header(req, "Authorization"), &key) < 0) {
        http_respond_error(req, 401, "unauthorized",
                           "missing or invalid API key (send Authorization: Bearer KEY)");
        return -1;
    }
    memset(call, 0, sizeof(*call));
    call->d = d;
    call->req = req;
    call->admin = key.admin;
    snprintf(call->key_id, sizeof(call->key_id), "%s", key.id);
    snprintf(call->project_id, sizeof(call->project_id), "%s", key.project_id);
    return 0;
}

/* "/v1/sandboxes/x/y" with prefix "/v1/sandboxes" -> rest "/x/y"; NULL when
 * the path is not that resource. */
static const char *match_resource(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) != 0)
        return NULL;
    if (path[n] != '\0' && path[n] != '/')
        return NULL;
    return path + n;
}

void api_handle(struct http_request *req, void *ctx)
{
    struct lizardd *d = ctx;
    /* Host first: every path on PORT-ID.DOMAIN (its /healthz too) belongs
     * to the sandbox's server, and its callers carry no API key. */
    char sandbox_id[64];
    int port;
    if (proxy_parse_host(http_request_header(req, "Host"), d->domain, &port, sandbox_id,
                         sizeof(sandbox_id)) == 0) {
        proxy_handle(d, req, port, sandbox_id);
        return;
    }
    if (strcmp(req->path, "/healthz") == 0) {
        api_healthz(req);
        return;
    }
    struct api_call call;
    if (authenticate(req, d, &call) < 0)
        return;
    static const struct {
        const char *prefix;
        void (*fn)(struct api_call *, const char *);
    } routes[] = {
        {"/v1/projects", api_projects},   {"/v1/keys", api_keys},
        {"/v1/templates", api_templates}, {"/v1/sandboxes", api_sandboxes},
        {"/v1/snapshots", api_snapshots}, {"/v1/volumes", api_volumes},
        {"/v1/usage", api_usage},
    };
    if (strcmp(req->path, "/metrics") == 0) {
        api_metrics(&call);
        return;
    }
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        const char *rest = match_resource(req->path, routes[i].prefix);
        if (rest != NULL) {
            routes[i].fn(&call, rest);
            return;
        }
    }
    http_respond_error(req, 404, "not_found", "no such endpoint: %s %s", req->method, req->path);
}
