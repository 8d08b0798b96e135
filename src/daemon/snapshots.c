/* Snapshots and warm pools.
 *
 * Snapshot: a worker copies the sandbox's writable layer into
 * DATA/snapshots/.tmp-ID (runtime->snapshot: copy while it runs, freeze only
 * for the final sync), syncs it to disk, renames it to DATA/snapshots/ID and
 * only then marks the row ready. A crash before that leaves a "creating" row
 * that recovery deletes with its directories: a snapshot is complete or gone.
 *
 * Pool: one thread keeps poolSize "pooled" sandboxes per ready snapshot,
 * kills copies whose snapshot is gone, and removes layer directories that
 * neither a snapshot row nor a sandbox row lists among its layers. */
#include "snapshots.h"
#include "lifecycle.h"
#include "pause.h"
#include "../common/fsutil.h"
#include "../common/ids.h"
#include "../common/json_util.h"
#include "../common/log.h"
#include "../common/wakeup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct wakeup pool_wakeup = WAKEUP_INIT;

static void layer_dir(struct lizardd *d, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/snapshots/%s", d->data_dir, name);
}

int snapshot_lowerdir(struct lizardd *d, const char *layers, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = layers; p && *p;) {
        size_t len = strcspn(p, ":");
        int r =
            snprintf(out + o, n - o, "%s%s/snapshots/%.*s", o ? ":" : "", d->data_dir, (int)len, p);
        if (r < 0 || (size_t)r >= n - o)
            return -1;
        o += (size_t)r;
        p += len;
        if (*p == ':')
            p++;
    }
    return 0;
}

json_t *snapshot_json(struct lizardd *d, const struct snapshot_record *s)
{
    int ready = store_sandbox_count_pool(d->store, s->id, 1, NULL);
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:b, s:i, s:i, s:I, s:s, s:i, s:i, s:s, s:s, "
                     "s:I, s:o}",
                     "id", s->id, "name", s->name, "project", s->project_id, "status", s->status,
                     "error", s->error[0] ? json_string(s->error) : json_null(), "memory", 0,
                     "poolSize", s->pool_size, "poolReady", ready < 0 ? 0 : ready, "sizeBytes",
                     (json_int_t)s->size_bytes, "size", s->size, "cpuCount", s->cpu_count,
                     "memoryMB", s->memory_mb,
                     "sourceSandboxId", s->source_sandbox_id, "template", s->template_name,
                     "freezeMs", (json_int_t)s->freeze_ms, "createdAt",
                     json_time_or_null(s->created_ms, 0));
}

/* ---- taking a snapshot ---- */

struct snap_job {
    struct lizardd *d;
    struct snapshot_record s;
};

/* fsync a directory or the file system under it. */
static int sync_path(const char *path, int whole_fs, lz_error *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return lz_error_sys(err, "open %s", path);
    int r = whole_fs ? syncfs(fd) : fsync(fd);
    close(fd);
    return r < 0 ? lz_error_sys(err, "sync %s", path) : 0;
}

/* Copy, make durable, publish. The rename is the commit point of the
 * directory; the store's "ready" is the commit point of the snapshot. */
static int take(struct lizardd *d, struct snapshot_record *s, lz_error *err)
{
    char tmp[PATH_MAX], final[PATH_MAX], parent[PATH_MAX], name[80];
    snprintf(name, sizeof(name), ".tmp-%s", s->id);
    layer_dir(d, name, tmp, sizeof(tmp));
    layer_dir(d, s->id, final, sizeof(final));
    snprintf(parent, sizeof(parent), "%s/snapshots", d->data_dir);
    struct runtime_snapshot_stats st = {0};
    sandbox_op_lock(s->source_sandbox_id);
    struct sandbox_record sb;
    int r = store_sandbox_get(d->store, s->source_sandbox_id, &sb, err);
    if (r != 0) {
        sandbox_op_unlock(s->source_sandbox_id);
        return lz_error_set(err, ENOENT, "the sandbox is gone");
    }
    /* Under the op lock no pause/resume runs: paused and resuming rows are
     * frozen, running and pausing ones are not. */
    int frozen = strcmp(sb.status, "paused") == 0 || strcmp(sb.status, "resuming") == 0;
    sandbox_record_clear(&sb);
    r = d->runtime->snapshot(&d->rcfg, s->source_sandbox_id, tmp, frozen, &st, err);
    sandbox_op_unlock(s->source_sandbox_id);
    if (r < 0)
        return -1;
    log_info("snapshot %s of %s: %llu bytes, %llu entries, copy %lld ms, frozen %lld ms", s->id,
             s->source_sandbox_id, (unsigned long long)st.bytes, (unsigned long long)st.entries,
             (long long)st.copy_ms, (long long)st.freeze_ms);
    if (sync_path(tmp, 1, err) < 0 || rename(tmp, final) < 0 || sync_path(parent, 0, err) < 0)
        return err->msg[0] ? -1 : lz_error_sys(err, "rename %s", tmp);
    s->size_bytes = (int64_t)st.bytes;
    s->freeze_ms = st.freeze_ms;
    return 0;
}

static void *snapshot_worker(void *arg)
{
    struct snap_job *job = arg;
    struct lizardd *d = job->d;
    struct snapshot_record *s = &job->s;
    lz_error err = {0};
    char tmp[PATH_MAX], name[80];
    if (take(d, s, &err) == 0) {
        snprintf(s->status, sizeof(s->status), "ready");
    } else {
        log_warn("snapshot %s of %s failed: %s", s->id, s->source_sandbox_id, err.msg);
        snprintf(s->status, sizeof(s->status), "failed");
        snprintf(s->error, sizeof(s->error), "%.200s", err.msg);
        snprintf(name, sizeof(name), ".tmp-%s", s->id);
        layer_dir(d, name, tmp, sizeof(tmp));
        rm_rf(tmp, NULL);
    }
    /* Deleted while it was being taken: the pool thread's GC removes the
     * directory (no row lists it). */
    if (store_snapshot_finish(d->store, s, &err) == -1)
        log_error("snapshot %s: %s", s->id, err.msg);
    snapshots_pool_poke();
    free(job);
    return NULL;
}

static int name_ok(struct lizardd *d, const char *name, struct api_failure *fail)
{
    size_t n = strlen(name);
    int ok = n > 0 && n <= 48;
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_';
    if (!ok)
        return api_failure_set(fail, 400, "bad_request",
                               "field 'name' must be 1-48 characters of a-z, 0-9, '-', '_'");
    /* Names are template names too, and must never look like an id. */
    if (strncmp(name, "snap_", 5) == 0)
        return api_failure_set(fail, 400, "bad_request", "field 'name' must not start with snap_");
    if (sandbox_template_exists(d, name))
        return api_failure_set(fail, 409, "conflict", "'%s' is a built-in template", name);
    return 0;
}

int snapshot_start(struct lizardd *d, const struct sandbox_record *sb, const char *name,
                   int pool_size, struct snapshot_record *out, struct api_failure *fail)
{
    if (name_ok(d, name, fail) < 0)
        return -1;
    if (strcmp(sb->status, "running") != 0 && strcmp(sb->status, "paused") != 0)
        return api_failure_set(fail, 409, "conflict",
                               "sandbox %s is %s; snapshots need a running or paused sandbox",
                               sb->id, sb->status);
    memset(out, 0, sizeof(*out));
    if (random_id(out->id, sizeof(out->id), "snap_", 20) < 0)
        return api_failure_set(fail, 503, "unavailable", "no randomness");
    /* Its own layer on top of the ones the sandbox started from. */
    if (snprintf(out->layers, sizeof(out->layers), "%s%s%s", out->id, sb->layers[0] ? ":" : "",
                 sb->layers) >= (int)sizeof(out->layers))
        return api_failure_set(fail, 409, "conflict",
                               "too many snapshot levels: snapshot the original sandbox instead");
    snprintf(out->project_id, sizeof(out->project_id), "%s", sb->project_id);
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->status, sizeof(out->status), "creating");
    snprintf(out->source_sandbox_id, sizeof(out->source_sandbox_id), "%s", sb->id);
    snprintf(out->template_name, sizeof(out->template_name), "%s", sb->template_name);
    snprintf(out->size, sizeof(out->size), "%s", sb->size);
    out->cpu_count = sb->cpu_count;
    out->memory_mb = sb->memory_mb;
    out->pool_size = pool_size;
    out->created_ms = now_ms();
    lz_error err;
    if (store_snapshot_insert(d->store, out, &err) < 0)
        return err.errnum == EEXIST
                   ? api_failure_set(fail, 409, "conflict",
                                     "a snapshot named '%s' exists in this project", name)
                   : api_failure_set(fail, 503, "unavailable", "store: %s", err.msg);
    struct snap_job *job = calloc(1, sizeof(*job));
    pthread_t t;
    if (job != NULL) {
        job->d = d;
        job->s = *out;
    }
    if (job == NULL || pthread_create(&t, NULL, snapshot_worker, job) != 0) {
        free(job);
        store_snapshot_delete(d->store, out->id, NULL);
        return api_failure_set(fail, 503, "unavailable", "out of threads; retry");
    }
    pthread_detach(t);
    return 0;
}

/* ---- restoring ---- */

struct claim {
    struct lizardd *d;
    const char *snapshot_id;
    struct sandbox_record *want;
    char id[64];
};

static int claim_pooled(void *arg, struct api_failure *fail)
{
    struct claim *c = arg;
    lz_error err;
    int r = store_sandbox_claim_pooled(c->d->store, c->snapshot_id, c->want, c->id, &err);
    if (r == -1)
        return api_failure_set(fail, 503, "unavailable", "store: %s", err.msg);
    if (r == STORE_NOT_FOUND) {
        fail->retry_after = 1;
        return api_failure_set(fail, 503, "unavailable",
                               "no ready copy of snapshot %s: its pool is refilling, retry shortly",
                               c->snapshot_id);
    }
    return 0;
}

int snapshot_restore(struct lizardd *d, const struct snapshot_record *s, int64_t timeout_ms,
                     json_t *metadata, json_t *env, struct sandbox_record *out,
                     struct api_failure *fail)
{
    if (strcmp(s->status, "ready") != 0)
        return api_failure_set(fail, 409, "conflict", "snapshot %s is %s, not ready", s->id,
                               s->status);
    struct sandbox_record want = {0};
    snprintf(want.project_id, sizeof(want.project_id), "%s", s->project_id);
    want.metadata_json = metadata ? json_dumps(metadata, JSON_COMPACT) : NULL;
    want.env_json = env ? json_dumps(env, JSON_COMPACT) : NULL;
    want.created_ms = now_ms();
    want.expires_ms = lifecycle_deadline(want.created_ms, timeout_ms);
    struct claim c = {d, s->id, &want, ""};
    int r = sandbox_with_capacity(d, s->project_id, claim_pooled, &c, fail);
    sandbox_record_clear(&want);
    snapshots_pool_poke(); /* refill, whatever happened */
    if (r < 0)
        return -1;
    sandboxes_status_changed();
    sandboxes_watch_poke();
    lz_error err;
    if (store_sandbox_get(d->store, c.id, out, &err) != 0)
        return api_failure_set(fail, 503, "unavailable", "the restored sandbox vanished");
    log_info("sandbox %s restored from snapshot %s (pool)", c.id, s->id);
    return 0;
}

int snapshot_fill_request(struct lizardd *d, const char *project_id, const char *ref,
                          struct sandbox_request *rq, struct snapshot_record *snap,
                          struct api_failure *fail)
{
    lz_error err;
    int r = store_snapshot_find(d->store, project_id, ref, snap, &err);
    if (r == STORE_NOT_FOUND || (r == 0 && strcmp(snap->project_id, project_id) != 0))
        return 1;
    if (r < 0)
        return api_failure_set(fail, 503, "unavailable", "store: %s", err.msg);
    if (strcmp(snap->status, "ready") != 0)
        return api_failure_set(fail, 409, "conflict", "snapshot '%s' is %s, not ready", ref,
                               snap->status);
    rq->template_name = snap->template_name;
    rq->layers = snap->layers;
    rq->snapshot_id = snap->id;
    /* The size of the sandbox it came from (name, so the price too, and its
     * exact cpu/memory), unless the create names one. */
    if (rq->size == NULL && rq->cpu_count == 0 && rq->memory_mb == 0) {
        rq->size = snap->size;
        rq->cpu_count = snap->cpu_count;
        rq->memory_mb = snap->memory_mb;
    }
    return 0;
}

/* ---- deleting ---- */

static void collect_pooled(const struct sandbox_record *r, void *arg)
{
    char **ids = arg;
    if (strcmp(r->status, "pooled") != 0)
        return;
    size_t n = *ids ? strlen(*ids) : 0;
    char *p = realloc(*ids, n + strlen(r->id) + 2);
    if (p == NULL)
        return;
    snprintf(p + n, strlen(r->id) + 2, "%s ", r->id);
    *ids = p;
}

/* Kill the pooled copies of snapshot `id` (NULL: of every snapshot that
 * no longer exists). */
static void kill_pool(struct lizardd *d, const char *id)
{
    char *ids = NULL;
    store_sandbox_list(d->store, NULL, "pooled", collect_pooled, &ids, NULL);
    for (char *tok = ids ? strtok(ids, " ") : NULL; tok; tok = strtok(NULL, " ")) {
        struct sandbox_record r;
        struct snapshot_record s;
        if (store_sandbox_get(d->store, tok, &r, NULL) != 0)
            continue;
        int orphan =
            id ? strcmp(r.snapshot_id, id) == 0
               : store_snapshot_find(d->store, NULL, r.snapshot_id, &s, NULL) == STORE_NOT_FOUND;
        if (orphan && strcmp(r.status, "pooled") == 0)
            sandbox_kill(d, r.id, "its snapshot was deleted");
        sandbox_record_clear(&r);
    }
    free(ids);
}

int snapshot_delete(struct lizardd *d, const struct snapshot_record *s, lz_error *err)
{
    if (store_snapshot_delete(d->store, s->id, err) == -1)
        return -1;
    kill_pool(d, s->id);
    snapshots_pool_poke(); /* GC the layer if nothing uses it */
    log_info("snapshot %s (%s) deleted", s->id, s->name);
    return 0;
}

/* ---- the pool thread ---- */

struct snap_list {
    struct snapshot_record *v;
    size_t n;
};

static void collect_snapshot(const struct snapshot_record *s, void *arg)
{
    struct snap_list *l = arg;
    void *p = realloc(l->v, (l->n + 1) * sizeof(*l->v));
    if (p == NULL)
        return;
    l->v = p;
    l->v[l->n++] = *s;
}

static void refill(struct lizardd *d, const struct snapshot_record *s)
{
    int have = store_sandbox_count_pool(d->store, s->id, 0, NULL);
    for (; have >= 0 && have < s->pool_size; have++) {
        struct sandbox_request rq = {
            .project_id = s->project_id,
            .template_name = s->template_name,
            .size = s->size,
            .cpu_count = s->cpu_count,
            .memory_mb = s->memory_mb,
            .layers = s->layers,
            .snapshot_id = s->id,
            .pooled = 1,
        };
        struct sandbox_record r;
        struct api_failure fail = {0};
        if (sandbox_create(d, &rq, &r, &fail) < 0) {
            log_warn("pool of %s: %s", s->id, fail.message);
            return; /* next pass */
        }
        sandboxes_status_changed();
        sandbox_record_clear(&r);
    }
}

/* Layer directories no snapshot and no sandbox lists any more. */
static void gc_layers(struct lizardd *d)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/snapshots", d->data_dir);
    DIR *dir = opendir(path);
    struct dirent *de;
    while (dir && (de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue; /* ., .., and .tmp-* being written */
        struct snapshot_record s;
        if (store_snapshot_find(d->store, NULL, de->d_name, &s, NULL) != STORE_NOT_FOUND ||
            store_layer_in_use(d->store, de->d_name, NULL) != 0)
            continue;
        layer_dir(d, de->d_name, path, sizeof(path));
        lz_error err;
        if (rm_rf(path, &err) < 0)
            log_warn("snapshot layer %s: %s", de->d_name, err.msg);
        else
            log_info("snapshot layer %s removed (no longer used)", de->d_name);
    }
    if (dir)
        closedir(dir);
}

static void pool_pass(struct lizardd *d)
{
    struct snap_list l = {0};
    store_snapshot_list(d->store, NULL, "ready", collect_snapshot, &l, NULL);
    for (size_t i = 0; i < l.n; i++)
        refill(d, &l.v[i]);
    free(l.v);
    /* A copy made while its snapshot was being deleted. */
    kill_pool(d, NULL);
    gc_layers(d);
}

void snapshots_pool_poke(void)
{
    wakeup_poke(&pool_wakeup);
}

#define POOL_INTERVAL_MS 2000

static void *pool_main(void *arg)
{
    struct lizardd *d = arg;
    for (;;) {
        pool_pass(d);
        wakeup_wait_until(&pool_wakeup, now_ms() + POOL_INTERVAL_MS);
    }
    return NULL;
}

int snapshots_pool_start(struct lizardd *d, lz_error *err)
{
    pthread_t t;
    int r = pthread_create(&t, NULL, pool_main, d);
    if (r != 0)
        return lz_error_set(err, r, "pool thread");
    pthread_detach(t);
    return 0;
}

/* ---- recovery ---- */

void snapshots_recover(struct lizardd *d)
{
    char path[PATH_MAX], name[80];
    snprintf(path, sizeof(path), "%s/snapshots", d->data_dir);
    mkdir_p(path, 0700, NULL);
    struct snap_list l = {0};
    store_snapshot_list(d->store, NULL, "creating", collect_snapshot, &l, NULL);
    for (size_t i = 0; i < l.n; i++) {
        struct snapshot_record *s = &l.v[i];
        struct sandbox_record sb;
        /* lizardd may have died inside the frozen sync: a running source
         * must not stay frozen. Thawing a thawed cgroup is a no-op. */
        if (store_sandbox_get(d->store, s->source_sandbox_id, &sb, NULL) == 0) {
            if (strcmp(sb.status, "running") == 0 || strcmp(sb.status, "pausing") == 0)
                d->runtime->resume(&d->rcfg, sb.id, NULL);
            sandbox_record_clear(&sb);
        }
        snprintf(name, sizeof(name), ".tmp-%s", s->id);
        layer_dir(d, name, path, sizeof(path));
        rm_rf(path, NULL);
        layer_dir(d, s->id, path, sizeof(path));
        rm_rf(path, NULL);
        store_snapshot_delete(d->store, s->id, NULL);
        log_info("snapshot %s: interrupted by a restart, removed", s->id);
    }
    free(l.v);
    /* .tmp-* directories whose row is already gone */
    snprintf(path, sizeof(path), "%s/snapshots", d->data_dir);
    DIR *dir = opendir(path);
    struct dirent *de;
    while (dir && (de = readdir(dir)) != NULL) {
        if (strncmp(de->d_name, ".tmp-", 5) != 0)
            continue;
        char p2[PATH_MAX];
        layer_dir(d, de->d_name, p2, sizeof(p2));
        rm_rf(p2, NULL);
    }
    if (dir)
        closedir(dir);
}
