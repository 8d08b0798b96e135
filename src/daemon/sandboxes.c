#include "sandboxes.h"
#include "lifecycle.h"
#include "pause.h"
#include "snapshots.h"
#include "volumes.h"
#include "proxy.h"
#include "../common/ids.h"
#include "../common/json_util.h"
#include "../common/log.h"
#include "../common/wakeup.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct wakeup watch_wakeup = WAKEUP_INIT;

/* Reservation lock: the cap check and the "creating" row insert must be one
 * step, or concurrent creates could all pass the check. */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const struct size_class *sandbox_size_find(struct lizardd *d, const char *name)
{
    for (int i = 0; i < d->nsizes; i++)
        if (strcmp(d->sizes[i].name, name) == 0)
            return &d->sizes[i];
    return NULL;
}

static int template_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 48)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            return 0;
    return 1;
}

int sandbox_template_exists(struct lizardd *d, const char *name)
{
    if (!template_name_valid(name))
        return 0;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/meta.json", d->rcfg.template_dir, name);
    return access(path, R_OK) == 0;
}

int api_failure_set(struct api_failure *f, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    f->status = status;
    f->code = code;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof(f->message), fmt, ap);
    va_end(ap);
    return -1;
}
/* The short name used throughout this file. */
#define fail_set api_failure_set

static char *json_dump_or_empty(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    return s ? s : strdup("{}");
}

int sandbox_hidden(const struct sandbox_record *r)
{
    return strcmp(r->status, "stopping") == 0 || strcmp(r->status, "pooling") == 0 ||
           strcmp(r->status, "pooled") == 0;
}

int sandbox_with_capacity(struct lizardd *d, const char *project_id,
                          int (*fn)(void *arg, struct api_failure *fail), void *arg,
                          struct api_failure *fail)
{
    lz_error err;
    pthread_mutex_lock(&create_lock);
    int in_project = store_sandbox_count_running(d->store, project_id, &err);
    int on_host = store_sandbox_count_running(d->store, NULL, &err);
    int ret = -1;
    if (in_project < 0 || on_host < 0)
        fail_set(fail, 503, "unavailable", "store unavailable: %s", err.msg);
    else if (in_project >= d->max_running_per_project)
        fail_set(fail, 429, "rate_limited",
                 "project has %d running sandboxes, the limit is %d; kill or pause one first",
                 in_project, d->max_running_per_project);
    else if (on_host >= d->max_sandboxes_per_host) {
        fail_set(fail, 503, "unavailable", "this host is at capacity (%d sandboxes); retry later",
                 on_host);
        fail->retry_after = 5;
    } else
        ret = fn(arg, fail);
    pthread_mutex_unlock(&create_lock);
    return ret;
}

struct new_row {
    struct lizardd *d;
    struct sandbox_record *r;
};

static int insert_row(void *arg, struct api_failure *fail)
{
    struct new_row *n = arg;
    lz_error err;
    if (store_sandbox_insert(n->d->store, n->r, &err) < 0)
        return fail_set(fail, 503, "unavailable", "store: %s", err.msg);
    return 0;
}

/* Insert the "creating" row if the project and the host have room; a
 * warm-pool copy ("pooling") is no user's sandbox and takes no room. */
static int reserve(struct lizardd *d, struct sandbox_record *r, struct api_failure *fail)
{
    struct new_row n = {d, r};
    if (strcmp(r->status, lifecycle_status_name(SB_POOLING)) == 0)
        return insert_row(&n, fail);
    return sandbox_with_capacity(d, r->project_id, insert_row, &n, fail);
}

int sandbox_create(struct lizardd *d, const struct sandbox_request *rq, struct sandbox_record *out,
                   struct api_failure *fail)
{
    const struct size_class *size = sandbox_size_find(d, rq->size ? rq->size : "default");
    if (size == NULL) {
        fail_set(fail, 400, "bad_request", "unknown size '%s'", rq->size);
        return -1;
    }
    if (!sandbox_template_exists(d, rq->template_name)) {
        fail_set(fail, 404, "not_found", "template '%s' not found (see GET /v1/templates)",
                 rq->template_name);
        return -1;
    }
    struct sandbox_record *r = out;
    memset(r, 0, sizeof(*r));
    if (random_id(r->id, sizeof(r->id), "sb_", SANDBOX_ID_CHARS) < 0) {
        fail_set(fail, 503, "unavailable", "no randomness: %s", strerror(errno));
        return -1;
    }
    snprintf(r->project_id, sizeof(r->project_id), "%s", rq->project_id);
    snprintf(r->template_name, sizeof(r->template_name), "%s", rq->template_name);
    snprintf(r->status, sizeof(r->status), "%s",
             lifecycle_status_name(rq->pooled ? SB_POOLING : SB_CREATING));
    snprintf(r->layers, sizeof(r->layers), "%s", rq->layers ? rq->layers : "");
    snprintf(r->snapshot_id, sizeof(r->snapshot_id), "%s", rq->snapshot_id ? rq->snapshot_id : "");
    snprintf(r->runtime, sizeof(r->runtime), "%s", d->runtime->name);
    snprintf(r->size, sizeof(r->size), "%s", size->name);
    r->price_micros = (int64_t)(size->price_per_hour * 1e6 + 0.5); /* prices are >= 0 */
    r->cpu_count = rq->cpu_count ? rq->cpu_count : size->cpu_count;
    r->memory_mb = rq->memory_mb ? rq->memory_mb : size->memory_mb;
    r->disk_mb = (int64_t)(d->default_disk_bytes >> 20);
    snprintf(r->host, sizeof(r->host), "%s", d->host_name);
    r->created_ms = now_ms();
    r->metadata_json = json_dump_or_empty(rq->metadata);
    r->env_json = json_dump_or_empty(rq->env);
    if (reserve(d, r, fail) < 0) {
        sandbox_record_clear(r);
        return -1;
    }
    /* After the reservation (the claim names this row) and before the
     * runtime mounts them: the store is what keeps a volume in one sandbox. */
    struct volume_attachments vols;
    if (volumes_attach(d, r->project_id, r->id, rq->volumes, rq->nvolumes, &vols, fail) < 0) {
        store_sandbox_delete(d->store, r->id, NULL);
        sandbox_record_clear(r);
        return -1;
    }

    char lowerdir[8192];
    if (snapshot_lowerdir(d, r->layers, lowerdir, sizeof(lowerdir)) < 0) {
        store_sandbox_delete(d->store, r->id, NULL);
        sandbox_record_clear(r);
        return fail_set(fail, 400, "bad_request", "too many snapshot layers");
    }
    struct sandbox_spec spec = {
        .id = r->id,
        .template_name = r->template_name,
        .cpu_count = r->cpu_count,
        .memory_mb = r->memory_mb,
        .pids_max = d->default_pids_max,
        .disk_bytes = d->default_disk_bytes,
        .nofile = d->default_nofile,
        .extra_lower = lowerdir,
        .volumes = vols.mounts,
        .nvolumes = vols.n,
    };
    struct runtime_handle h = {0};
    lz_error err;
    if (d->runtime->create(&d->rcfg, &spec, &h, &err) < 0) {
        log_error("create %s: %s", r->id, err.msg);
        d->runtime->destroy(&d->rcfg, r->id, &h, NULL);
        volumes_release(d, r->id);
        store_sandbox_delete(d->store, r->id, NULL);
        sandbox_record_clear(r);
        fail_set(fail, 503, "unavailable", "could not start the sandbox: %s", err.msg);
        fail->retry_after = 1;
        return -1;
    }
    /* The lifetime starts when the sandbox is up, not when the request came. */
    r->init_pid = h.init_pid;
    r->init_start_time = h.init_start_time;
    r->expires_ms = rq->pooled ? 0 : lifecycle_deadline(now_ms(), rq->timeout_ms);
    snprintf(r->status, sizeof(r->status), "%s",
             lifecycle_status_name(rq->pooled ? SB_POOLED : SB_RUNNING));
    if (store_sandbox_update(d->store, r, &err) < 0) {
        log_error("create %s: %s", r->id, err.msg);
        sandbox_kill(d, r->id, "store failure");
        sandbox_record_clear(r);
        fail_set(fail, 503, "unavailable", "store: %s", err.msg);
        return -1;
    }
    sandboxes_watch_poke();
    return 0;
}

int sandbox_kill(struct lizardd *d, const char *id, const char *why)
{
    struct sandbox_record r;
    lz_error err;
    if (store_sandbox_get(d->store, id, &r, &err) != 0)
        return 0; /* already gone */
    /* Record "stopping" first: if lizardd dies during destroy, recovery
     * finishes it instead of resurrecting a half-destroyed sandbox. */
    snprintf(r.status, sizeof(r.status), "%s", lifecycle_status_name(SB_STOPPING));
    store_sandbox_update(d->store, &r, NULL);
    /* Tokens die with the sandbox (ids are never reused, but a row must not
     * outlive what it opens); open proxied connections end now. */
    store_port_delete(d->store, id, 0, NULL);
    proxy_close_sandbox(id);
    struct runtime_handle h = {r.init_pid, r.init_start_time};
    if (d->runtime->destroy(&d->rcfg, id, &h, &err) < 0) {
        log_warn("destroy %s: %s (will retry at next start)", id, err.msg);
    } else {
        /* Only once destroy has unmounted them may volumes go elsewhere. */
        volumes_release(d, id);
        store_sandbox_delete(d->store, id, NULL);
    }
    log_info("sandbox %s stopped (%s)", id, why);
    sandboxes_status_changed();
    if (r.layers[0])
        snapshots_pool_poke(); /* its snapshot layers may be unused now */
    sandbox_record_clear(&r);
    return 0;
}

int sandbox_set_timeout(struct lizardd *d, struct sandbox_record *r, int64_t timeout_ms,
                        lz_error *err)
{
    if (strcmp(r->status, "paused") == 0) {
        /* The clock is stopped: the new lifetime starts at resume. */
        r->remaining_ms = timeout_ms == 0 ? -1 : timeout_ms;
    } else {
        r->expires_ms = lifecycle_deadline(now_ms(), timeout_ms);
    }
    if (store_sandbox_update(d->store, r, err) != 0)
        return -1;
    sandboxes_watch_poke();
    return 0;
}

json_t *sandbox_info_json(struct lizardd *d, const struct sandbox_record *r)
{
    (void)d;
    json_t *meta = json_loads(r->metadata_json ? r->metadata_json : "{}", 0, NULL);
    json_t *env = json_loads(r->env_json ? r->env_json : "{}", 0, NULL);
    json_t *env_keys = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(env, k, v) json_array_append_new(env_keys, json_string(k));
    json_decref(env);
    json_t *info = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:s, s:s, s:o, s:o, s:o, s:o}", "sandboxId",
        r->id, "project", r->project_id, "template", r->template_name, "status", r->status,
        "runtime", r->runtime, "size", r->size, "cpuCount", r->cpu_count, "memoryMB", r->memory_mb,
        "diskMB", (json_int_t)r->disk_mb, "region", "local", "host", r->host, "createdAt",
        json_time_or_null(r->created_ms, 0), "expiresAt",
        json_time_or_null(sandbox_shown_deadline(r), 1), "metadata", meta ? meta : json_object(),
        "envKeys", env_keys);
    if (info && r->snapshot_id[0])
        json_object_set_new(info, "snapshotId", json_string(r->snapshot_id));
    return info;
}

/* ---- recovery and the lifecycle thread ---- */

struct id_list {
    char (*ids)[64];
    size_t n, cap;
    int64_t next_deadline;
};

static void id_list_add(struct id_list *l, const char *id)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        void *p = realloc(l->ids, cap * sizeof(*l->ids));
        if (p == NULL)
            return;
        l->ids = p;
        l->cap = cap;
    }
    snprintf(l->ids[l->n++], 64, "%s", id);
}

struct scan_ctx {
    struct lizardd *d;
    int64_t now;
    struct id_list expired, dead, unfinished;
    int64_t next_deadline;
};

/* Reap our own children without touching anyone else's: waitpid(-1) would
 * steal the exit status of programs started through spawn.h. */
static int sandbox_alive(struct lizardd *d, const struct sandbox_record *r)
{
    int status;
    if (r->init_pid > 0)
        waitpid(r->init_pid, &status, WNOHANG);
    struct runtime_handle h = {r->init_pid, r->init_start_time};
    return d->runtime->is_alive(&h);
}

static void scan_one(const struct sandbox_record *r, void *arg)
{
    struct scan_ctx *c = arg;
    enum sandbox_status st;
    if (lifecycle_status_parse(r->status, &st) < 0 || st == SB_STOPPING) {
        id_list_add(&c->unfinished, r->id);
        return;
    }
    if (st == SB_CREATING || st == SB_POOLING || st == SB_PAUSING || st == SB_RESUMING)
        return; /* in progress in another thread (recovery handles stale ones) */
    /* A frozen PID 1 is alive: paused sandboxes are checked like running
     * ones, but their clock is stopped. */
    if ((st == SB_PAUSED || st == SB_POOLED) && !sandbox_alive(c->d, r)) {
        id_list_add(&c->dead, r->id);
        return;
    }
    if (st == SB_RUNNING && lifecycle_expired(r->expires_ms, c->now)) {
        id_list_add(&c->expired, r->id);
        return;
    }
    if (st == SB_RUNNING && !sandbox_alive(c->d, r)) {
        id_list_add(&c->dead, r->id);
        return;
    }
    if (st == SB_RUNNING && r->expires_ms != 0 &&
        (c->next_deadline == 0 || r->expires_ms < c->next_deadline))
        c->next_deadline = r->expires_ms;
}

static void kill_all(struct lizardd *d, struct id_list *l, const char *why)
{
    for (size_t i = 0; i < l->n; i++)
        sandbox_kill(d, l->ids[i], why);
    free(l->ids);
    memset(l, 0, sizeof(*l));
}

static int64_t scan(struct lizardd *d)
{
    struct scan_ctx c = {.d = d, .now = now_ms()};
    lz_error err;
    if (store_sandbox_list(d->store, NULL, NULL, scan_one, &c, &err) < 0)
        log_error("lifecycle scan: %s", err.msg);
    kill_all(d, &c.expired, "lifetime ended");
    kill_all(d, &c.dead, "its init process exited");
    kill_all(d, &c.unfinished, "finishing an interrupted stop");
    return c.next_deadline;
}

static void collect_creating(const struct sandbox_record *r, void *arg)
{
    if (strcmp(r->status, lifecycle_status_name(SB_CREATING)) == 0 ||
        strcmp(r->status, lifecycle_status_name(SB_POOLING)) == 0)
        id_list_add(arg, r->id);
}

void sandboxes_recover(struct lizardd *d)
{
    struct id_list creating = {0};
    /* Snapshots first: one interrupted in its frozen sync has a source to
     * thaw. Then interrupted pauses/resumes, before the scan below judges
     * running and paused rows. */
    snapshots_recover(d);
    pause_recover(d);
    store_sandbox_list(d->store, NULL, NULL, collect_creating, &creating, NULL);
    kill_all(d, &creating, "lizardd stopped while creating it");
    scan(d);
}

void sandboxes_watch_poke(void)
{
    wakeup_poke(&watch_wakeup);
}

/* Liveness is checked at least this often; deadlines are met exactly. */
#define WATCH_INTERVAL_MS 1000

static void *watch_main(void *arg)
{
    struct lizardd *d = arg;
    for (;;) {
        int64_t next = scan(d);
        int64_t now = now_ms();
        int64_t wake = now + WATCH_INTERVAL_MS;
        if (next != 0 && next < wake)
            wake = next;
        wakeup_wait_until(&watch_wakeup, wake);
    }
    return NULL;
}

int sandboxes_watch_start(struct lizardd *d, lz_error *err)
{
    pthread_t t;
    int r = pthread_create(&t, NULL, watch_main, d);
    if (r != 0)
        return lz_error_set(err, r, "lifecycle thread");
    pthread_detach(t);
    return 0;
}
