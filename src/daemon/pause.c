/* Pause and resume: the API call flips the status (running -> pausing,
 * paused -> resuming) and returns 202; a detached worker thread freezes or
 * thaws the sandbox's cgroup and records the outcome. Every status change
 * wakes the long-polls of GET /v1/sandboxes/{id}/status. */
#include "pause.h"
#include "lifecycle.h"
#include "proxy.h"
#include "../common/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t status_cond = PTHREAD_COND_INITIALIZER;
static uint64_t status_gen;

void sandboxes_status_changed(void)
{
    pthread_mutex_lock(&status_lock);
    status_gen++;
    pthread_cond_broadcast(&status_cond);
    pthread_mutex_unlock(&status_lock);
}

/* ---- per-sandbox operation lock ---- */

#define OP_SLOTS 128

static pthread_mutex_t op_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t op_cond = PTHREAD_COND_INITIALIZER;
static char op_busy[OP_SLOTS][64];

static int op_slot(const char *id)
{
    for (int i = 0; i < OP_SLOTS; i++)
        if (strcmp(op_busy[i], id) == 0)
            return i;
    return -1;
}

void sandbox_op_lock(const char *id)
{
    pthread_mutex_lock(&op_mutex);
    int free_slot;
    while (op_slot(id) >= 0 || (free_slot = op_slot("")) < 0)
        pthread_cond_wait(&op_cond, &op_mutex);
    snprintf(op_busy[free_slot], sizeof(op_busy[free_slot]), "%s", id);
    pthread_mutex_unlock(&op_mutex);
}

void sandbox_op_unlock(const char *id)
{
    pthread_mutex_lock(&op_mutex);
    int i = op_slot(id);
    if (i >= 0)
        op_busy[i][0] = '\0';
    pthread_cond_broadcast(&op_cond);
    pthread_mutex_unlock(&op_mutex);
}

/* ---- lifetime while paused ---- */

/* remaining_ms while paused: the lifetime left at the pause, -1 for none. */
static int64_t remaining_at(int64_t expires_ms, int64_t now)
{
    if (expires_ms == 0)
        return -1;
    /* At least 1 ms: a sandbox paused at its deadline still expires at once
     * after resume, never gets "no expiry". */
    return expires_ms - now > 0 ? expires_ms - now : 1;
}

static int64_t deadline_from(int64_t remaining_ms, int64_t now)
{
    return remaining_ms < 0 ? 0 : now + remaining_ms;
}

int64_t sandbox_shown_deadline(const struct sandbox_record *r)
{
    if (strcmp(r->status, "paused") == 0 || strcmp(r->status, "resuming") == 0)
        return deadline_from(r->remaining_ms, now_ms());
    return r->expires_ms;
}

/* ---- the worker ---- */

struct pause_job {
    struct lizardd *d;
    char id[64];
    int resume;
};

/* Record the outcome, only if the row is still in `from` (a kill wins). */
static void finish(struct lizardd *d, struct sandbox_record *r, const char *from,
                   enum sandbox_status to, const char *error)
{
    lz_error err;
    snprintf(r->status, sizeof(r->status), "%s", lifecycle_status_name(to));
    snprintf(r->last_error, sizeof(r->last_error), "%s", error ? error : "");
    if (store_sandbox_update_from(d->store, r, from, &err) < 0)
        log_error("sandbox %s: recording '%s': %s", r->id, r->status, err.msg);
    sandboxes_status_changed();
    sandboxes_watch_poke();
}

/* Freeze or thaw r (status pausing/resuming) and record the outcome. */
static void pause_or_resume(struct lizardd *d, struct sandbox_record *r, int resume)
{
    lz_error err;
    const char *from = resume ? "resuming" : "pausing";
    char msg[600];
    if (!resume) {
        if (d->runtime->pause(&d->rcfg, r->id, &err) < 0) {
            snprintf(msg, sizeof(msg), "pause failed: %s", err.msg);
            log_warn("sandbox %s: %s", r->id, msg);
            finish(d, r, from, SB_RUNNING, msg);
            return;
        }
        /* SPEC: pausing closes open connections to the sandbox. */
        proxy_close_sandbox(r->id);
        int64_t now = now_ms();
        r->remaining_ms = remaining_at(r->expires_ms, now);
        r->expires_ms = 0;
        finish(d, r, from, SB_PAUSED, NULL);
        return;
    }
    if (d->runtime->resume(&d->rcfg, r->id, &err) < 0) {
        snprintf(msg, sizeof(msg), "resume failed: %s", err.msg);
        log_warn("sandbox %s: %s", r->id, msg);
        finish(d, r, from, SB_PAUSED, msg);
        return;
    }
    r->expires_ms = deadline_from(r->remaining_ms, now_ms());
    r->remaining_ms = 0;
    finish(d, r, from, SB_RUNNING, NULL);
}

static void *pause_worker(void *arg)
{
    struct pause_job *job = arg;
    struct sandbox_record r;
    /* The lock before reading the row: a snapshot of this sandbox may be
     * freezing it right now, and must see its status stay put. */
    sandbox_op_lock(job->id);
    if (store_sandbox_get(job->d->store, job->id, &r, NULL) == 0) {
        if (strcmp(r.status, job->resume ? "resuming" : "pausing") == 0)
            pause_or_resume(job->d, &r, job->resume);
        sandbox_record_clear(&r);
    }
    sandbox_op_unlock(job->id);
    free(job);
    return NULL;
}

struct status_cas {
    struct lizardd *d;
    const char *id, *from, *to;
};

/* Compare-and-set of the status: of two racing calls one gets 202, the
 * other 409. */
static int status_cas_run(void *arg, struct api_failure *fail)
{
    struct status_cas *c = arg;
    lz_error err;
    int n = store_sandbox_set_status(c->d->store, c->id, c->from, c->to, "", &err);
    if (n < 0)
        return api_failure_set(fail, 503, "unavailable", "store: %s", err.msg);
    if (n == 0)
        return api_failure_set(fail, 409, "conflict", "sandbox %s changed state meanwhile; retry",
                               c->id);
    return 0;
}

int sandbox_pause_request(struct lizardd *d, const struct sandbox_record *r, int resume,
                          struct api_failure *fail)
{
    const char *from = resume ? "paused" : "running", *to = resume ? "resuming" : "pausing";
    if (strcmp(r->status, from) != 0)
        return api_failure_set(fail, 409, "conflict", "sandbox %s is %s; %s needs a %s sandbox",
                               r->id, r->status, resume ? "resume" : "pause", from);
    struct status_cas cas = {d, r->id, from, to};
    /* A paused sandbox takes no room in the project's running cap, so a
     * resume claims room again, under the same lock creates use. */
    if ((resume ? sandbox_with_capacity(d, r->project_id, status_cas_run, &cas, fail)
                : status_cas_run(&cas, fail)) < 0)
        return -1;
    sandboxes_status_changed();
    struct pause_job *job = calloc(1, sizeof(*job));
    pthread_t t;
    if (job != NULL) {
        job->d = d;
        job->resume = resume;
        snprintf(job->id, sizeof(job->id), "%s", r->id);
    }
    if (job == NULL || pthread_create(&t, NULL, pause_worker, job) != 0) {
        free(job);
        store_sandbox_set_status(d->store, r->id, to, from, "no thread for the operation", NULL);
        sandboxes_status_changed();
        return api_failure_set(fail, 503, "unavailable", "out of threads; retry");
    }
    pthread_detach(t);
    return 0;
}

/* ---- waiting ---- */

static json_t *status_answer(const struct sandbox_record *r, int reached)
{
    json_t *error = json_null();
    if (r->last_error[0])
        error = json_pack("{s:s, s:s}", "code",
                          strcmp(r->status, "paused") == 0 ? "resume_failed" : "pause_failed",
                          "message", r->last_error);
    return json_pack("{s:s, s:b, s:o}", "status", r->status, "reached", reached, "error", error);
}

/* A transition that has ended without reaching `want`: the last pause or
 * resume failed, and nothing is in progress. */
static int failed_for(const struct sandbox_record *r, const char *want)
{
    return r->last_error[0] && strcmp(r->status, want) != 0 && strcmp(r->status, "pausing") != 0 &&
           strcmp(r->status, "resuming") != 0;
}

json_t *sandbox_wait_status(struct lizardd *d, const char *id, const char *want, int64_t timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    struct timespec ts = {.tv_sec = deadline / 1000, .tv_nsec = (deadline % 1000) * 1000000};
    for (;;) {
        /* The generation first, then the row: a change after the read
         * bumps it and the wait below returns at once. */
        pthread_mutex_lock(&status_lock);
        uint64_t gen = status_gen;
        pthread_mutex_unlock(&status_lock);
        struct sandbox_record r;
        int found = store_sandbox_get(d->store, id, &r, NULL) == 0;
        if (!found || strcmp(r.status, "stopping") == 0) {
            if (found)
                sandbox_record_clear(&r);
            return NULL;
        }
        int reached = strcmp(r.status, want) == 0;
        if (reached || failed_for(&r, want) || now_ms() >= deadline) {
            json_t *answer = status_answer(&r, reached);
            sandbox_record_clear(&r);
            return answer;
        }
        sandbox_record_clear(&r);
        pthread_mutex_lock(&status_lock);
        while (gen == status_gen) {
            if (pthread_cond_timedwait(&status_cond, &status_lock, &ts) == ETIMEDOUT)
                break;
        }
        pthread_mutex_unlock(&status_lock);
    }
}

/* ---- recovery ---- */

static void collect_transitional(const struct sandbox_record *r, void *arg)
{
    if (strcmp(r->status, "pausing") == 0 || strcmp(r->status, "resuming") == 0) {
        struct sandbox_record **list = arg;
        size_t n = 0;
        while ((*list) && (*list)[n].id[0])
            n++;
        struct sandbox_record *p = realloc(*list, (n + 2) * sizeof(*p));
        if (p == NULL)
            return;
        memset(&p[n], 0, 2 * sizeof(*p));
        memcpy(&p[n], r, sizeof(*p));
        p[n].metadata_json = p[n].env_json = NULL; /* owned by the store's loop */
        *list = p;
    }
}

void pause_recover(struct lizardd *d)
{
    struct sandbox_record *list = NULL;
    store_sandbox_list(d->store, NULL, NULL, collect_transitional, &list, NULL);
    for (size_t i = 0; list && list[i].id[0]; i++) {
        struct sandbox_record *r = &list[i];
        lz_error err;
        if (strcmp(r->status, "pausing") == 0) {
            /* Roll back: the freeze may or may not have happened, and the
             * lifetime was not stopped yet. Thawing is idempotent. */
            if (d->runtime->resume(&d->rcfg, r->id, &err) < 0)
                log_warn("recover %s: thaw: %s", r->id, err.msg);
            finish(d, r, "pausing", SB_RUNNING,
                   "pause failed: lizardd restarted during the pause; the sandbox kept running");
            log_info("sandbox %s: interrupted pause rolled back (running)", r->id);
        } else {
            /* Finish: thaw again (idempotent) and restart the clock. */
            pause_or_resume(d, r, 1);
            log_info("sandbox %s: interrupted resume finished (%s)", r->id, r->status);
        }
    }
    free(list);
}
