/* /v1/sandboxes and /v1/templates. Exec, processes and files live in
 * api_exec.c and api_files.c. */
#include "api.h"
#include "api_sandbox_io.h"
#include "lifecycle.h"
#include "sandboxes.h"
#include "snapshots.h"
#include "volumes.h"
#include "../common/ids.h"
#include "../common/json_util.h"
#include "../common/log.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_TIMEOUT_MS (24LL * 3600 * 1000)
#define DEFAULT_TIMEOUT_MS 300000

void api_respond_failure(struct api_call *call, const struct api_failure *f)
{
    if (f->retry_after > 0) {
        char secs[16];
        snprintf(secs, sizeof(secs), "%d", f->retry_after);
        http_add_header(call->req, "Retry-After", secs);
    }
    http_respond_error(call->req, f->status, f->code, "%s", f->message);
}

static int bad_request(struct api_call *call, const char *msg)
{
    http_respond_error(call->req, 400, "bad_request", "%s", msg);
    return -1;
}

int api_parse_lifetime(struct api_call *call, json_t *body, int64_t *timeout_ms, json_t **env,
                       json_t **metadata)
{
    char msg[256];
    *timeout_ms = DEFAULT_TIMEOUT_MS;
    if (json_opt_int(body, "timeoutMs", 0, MAX_TIMEOUT_MS, timeout_ms, msg, sizeof(msg)) < 0 ||
        json_opt_string_map(body, "env", 256, env, msg, sizeof(msg)) < 0 ||
        json_opt_string_map(body, "metadata", 64, metadata, msg, sizeof(msg)) < 0)
        return bad_request(call, msg);
    const char *k;
    json_t *v;
    json_object_foreach(*env, k, v)
    {
        if (*k == '\0' || strchr(k, '=') != NULL || strlen(k) > 255)
            return bad_request(call, "field 'env' has a key that is not a variable name");
    }
    return 0;
}

/* Parse and check a create body; responds itself on failure. */
static int parse_create(struct api_call *call, json_t *body, struct sandbox_request *rq,
                        struct volume_request vols[VOLUMES_MAX], struct project_record *project)
{
    char msg[256];
    const char *project_ref = NULL, *project_id_ref = NULL;
    int64_t timeout = DEFAULT_TIMEOUT_MS, cpus = 0, mem = 0;
    rq->template_name = "base";
    if (api_parse_lifetime(call, body, &timeout, &rq->env, &rq->metadata) < 0)
        return -1;
    if (json_opt_string(body, "template", &rq->template_name, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "project", &project_ref, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "projectId", &project_id_ref, msg, sizeof(msg)) < 0 ||
        json_opt_string(body, "size", &rq->size, msg, sizeof(msg)) < 0 ||
        json_opt_int(body, "cpuCount", 1, 64, &cpus, msg, sizeof(msg)) < 0 ||
        json_opt_int(body, "memoryMB", 64, 1 << 20, &mem, msg, sizeof(msg)) < 0 ||
        volume_requests_parse(body, vols, &rq->nvolumes, msg, sizeof(msg)) < 0)
        return bad_request(call, msg);
    rq->volumes = vols;
    rq->timeout_ms = timeout;
    rq->cpu_count = (int)cpus;
    rq->memory_mb = (int)mem;
    if (api_resolve_project(call, project_ref ? project_ref : project_id_ref, project) < 0)
        return -1;
    rq->project_id = project->id;
    return 0;
}

static void create_sandbox(struct api_call *call)
{
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    struct sandbox_request rq = {0};
    struct project_record project;
    struct sandbox_record r;
    struct api_failure fail = {0};
    struct volume_request vols[VOLUMES_MAX];
    struct snapshot_record snap;
    if (parse_create(call, body, &rq, vols, &project) == 0) {
        /* A template that is not built in may name one of the project's
         * snapshots: a straight create on its layers (not from the pool). */
        int from_snapshot = !sandbox_template_exists(call->d, rq.template_name);
        if (from_snapshot && snapshot_fill_request(call->d, rq.project_id, rq.template_name, &rq,
                                                   &snap, &fail) < 0) {
            api_respond_failure(call, &fail);
        } else if (sandbox_create(call->d, &rq, &r, &fail) < 0) {
            api_respond_failure(call, &fail);
        } else {
            http_respond_json(call->req, 201, sandbox_info_json(call->d, &r));
            sandbox_record_clear(&r);
        }
    }
    json_decref(body);
}

struct list_ctx {
    json_t *list;
    struct lizardd *d;
};

static void add_sandbox(const struct sandbox_record *r, void *arg)
{
    struct list_ctx *c = arg;
    /* Rows being created or stopped are not sandboxes a user can use yet/any more. */
    if (strcmp(r->status, "creating") == 0 || strcmp(r->status, "stopping") == 0 ||
        strcmp(r->status, "pooling") == 0 || strcmp(r->status, "pooled") == 0)
        return;
    json_array_append_new(c->list, sandbox_info_json(c->d, r));
}

static void list_sandboxes(struct api_call *call)
{
    char status[32] = "";
    struct project_record project;
    const char *project_id;
    if (http_request_query(call->req, "status", status, sizeof(status)) < 0) {
        bad_request(call, "malformed query string");
        return;
    }
    enum sandbox_status st;
    if (status[0] && lifecycle_status_parse(status, &st) < 0) {
        bad_request(call, "unknown status filter");
        return;
    }
    if (api_list_scope(call, &project, &project_id) < 0)
        return;
    struct list_ctx c = {json_array(), call->d};
    lz_error err;
    if (store_sandbox_list(call->d->store, project_id, status[0] ? status : NULL, add_sandbox, &c,
                           &err) < 0) {
        json_decref(c.list);
        http_respond_error(call->req, 503, "unavailable", "store: %s", err.msg);
        return;
    }
    http_respond_json(call->req, 200, json_pack("{s:o}", "sandboxes", c.list));
}

/* Find a sandbox the caller may see, in any state but stopping. */
static int find_visible(struct api_call *call, const char *id, struct sandbox_record *r)
{
    int found = id_is_valid(id, "sb_") && store_sandbox_get(call->d->store, id, r, NULL) == 0;
    if (found &&
        (sandbox_hidden(r) || (!call->admin && strcmp(r->project_id, call->project_id) != 0))) {
        sandbox_record_clear(r);
        found = 0;
    }
    if (!found)
        http_respond_error(call->req, 404, "not_found", "sandbox '%s' not found", id);
    return found ? 0 : -1;
}

static void set_timeout(struct api_call *call, struct sandbox_record *r)
{
    json_t *body = api_read_object(call);
    if (body == NULL)
        return;
    int64_t timeout = -1;
    char msg[256];
    lz_error err;
    if (json_opt_int(body, "timeoutMs", 0, MAX_TIMEOUT_MS, &timeout, msg, sizeof(msg)) < 0)
        bad_request(call, msg);
    else if (timeout < 0)
        bad_request(call, "field 'timeoutMs' is required");
    else if (sandbox_set_timeout(call->d, r, timeout, &err) < 0)
        http_respond_error(call->req, 404, "not_found", "sandbox '%s' not found", r->id);
    else
        http_respond_json(call->req, 200, sandbox_info_json(call->d, r));
    json_decref(body);
}

/* /v1/sandboxes/{id}[/sub[/...]] */
static void one_sandbox(struct api_call *call, const char *id, const char *sub)
{
    const char *m = call->req->method;
    if (strncmp(sub, "/ports", 6) == 0 && (sub[6] == '\0' || sub[6] == '/')) {
        api_ports(call, id, sub + 6);
        return;
    }
    if (strcmp(sub, "/exec") == 0 || strncmp(sub, "/processes", 10) == 0 ||
        strncmp(sub, "/files", 6) == 0) {
        if (strcmp(sub, "/exec") == 0 && strcmp(m, "POST") == 0)
            api_exec(call, id);
        else if (strcmp(sub, "/exec") == 0)
            api_method_not_allowed(call);
        else if (strncmp(sub, "/processes", 10) == 0 && (sub[10] == '\0' || sub[10] == '/'))
            api_processes(call, id, sub + 10);
        else if (strncmp(sub, "/files", 6) == 0 && (sub[6] == '\0' || sub[6] == '/'))
            api_files(call, id, sub + 6);
        else
            http_respond_error(call->req, 404, "not_found", "no such endpoint: %s",
                               call->req->path);
        return;
    }
    struct sandbox_record r;
    int lifecycle_sub = strcmp(sub, "/pause") == 0 || strcmp(sub, "/resume") == 0 ||
                        strcmp(sub, "/status") == 0 || strcmp(sub, "/snapshots") == 0;
    if (strcmp(sub, "") != 0 && strcmp(sub, "/timeout") != 0 && !lifecycle_sub) {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
        return;
    }
    if (find_visible(call, id, &r) < 0)
        return;
    if (lifecycle_sub) {
        if (!api_sandbox_pause(call, &r, sub))
            api_sandbox_snapshot(call, &r, sub);
    } else if (*sub == '\0' && strcmp(m, "GET") == 0) {
        http_respond_json(call->req, 200, sandbox_info_json(call->d, &r));
    } else if (*sub == '\0' && strcmp(m, "DELETE") == 0) {
        sandbox_kill(call->d, r.id, "killed through the API");
        http_respond_raw(call->req, 204, NULL, NULL, 0);
    } else if (strcmp(sub, "/timeout") == 0 && strcmp(m, "POST") == 0) {
        set_timeout(call, &r);
    } else {
        api_method_not_allowed(call);
    }
    sandbox_record_clear(&r);
}

void api_sandboxes(struct api_call *call, const char *rest)
{
    const char *m = call->req->method;
    if (*rest == '\0') {
        if (strcmp(m, "POST") == 0)
            create_sandbox(call);
        else if (strcmp(m, "GET") == 0)
            list_sandboxes(call);
        else
            api_method_not_allowed(call);
        return;
    }
    char id[80];
    const char *start = rest + 1;
    size_t n = strcspn(start, "/");
    if (n == 0 || n >= sizeof(id)) {
        http_respond_error(call->req, 404, "not_found", "sandbox not found");
        return;
    }
    memcpy(id, start, n);
    id[n] = '\0';
    one_sandbox(call, id, start + n);
}

/* ---- templates ---- */

static void add_template(struct api_call *call, json_t *list, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/meta.json", call->d->rcfg.template_dir, name);
    json_t *meta = json_load_file(path, 0, NULL);
    if (!json_is_object(meta)) {
        json_decref(meta);
        return;
    }
    json_object_set_new(meta, "name", json_string(name));
    json_array_append_new(list, meta);
}

void api_templates(struct api_call *call, const char *rest)
{
    if (*rest != '\0') {
        http_respond_error(call->req, 404, "not_found", "no such endpoint: %s", call->req->path);
        return;
    }
    if (strcmp(call->req->method, "GET") != 0) {
        api_method_not_allowed(call);
        return;
    }
    json_t *list = json_array();
    DIR *dir = opendir(call->d->rcfg.template_dir);
    struct dirent *de;
    while (dir && (de = readdir(dir)) != NULL) {
        if (de->d_name[0] != '.' && sandbox_template_exists(call->d, de->d_name))
            add_template(call, list, de->d_name);
    }
    if (dir)
        closedir(dir);
    http_respond_json(call->req, 200, json_pack("{s:o}", "templates", list));
}
