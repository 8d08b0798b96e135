/* Sandbox lifecycle operations shared by the API and the lifecycle thread:
 * create, kill, lifetime, the info JSON, and recovery after a restart. */
#ifndef LZ_SANDBOXES_H
#define LZ_SANDBOXES_H

#include <jansson.h>
#include "daemon.h"

struct volume_request;

/* Sandbox ids are "sb_" + this many random characters. */
#define SANDBOX_ID_CHARS 20

struct sandbox_request {
    const char *project_id; /* resolved project id */
    const char *template_name;
    int64_t timeout_ms;      /* 0 = no expiry */
    const char *size;        /* NULL = default */
    int cpu_count;           /* 0 = from size */
    int memory_mb;           /* 0 = from size */
    json_t *env;             /* borrowed, may be NULL */
    json_t *metadata;        /* borrowed, may be NULL */
    const char *layers;      /* snapshot layer ids, topmost first, ':'-joined; NULL = none */
    const char *snapshot_id; /* the snapshot it starts from, NULL = none */
    int pooled;              /* a warm-pool copy: no cap, no deadline, status pooled */
    const struct volume_request *volumes; /* volumes.h; checked by the API */
    int nvolumes;
};

/* The API's answer to a failed operation. */
struct api_failure {
    int status;
    const char *code;
    char message[256];
    int retry_after; /* seconds, for 503 */
};
/* Fill *f; returns -1. */
int api_failure_set(struct api_failure *f, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Under the create lock: run fn if the project is under its running-sandbox
 * cap and the host under its limit; else fill *fail (429/503). Returns fn's
 * result or -1. */
int sandbox_with_capacity(struct lizardd *d, const char *project_id,
                          int (*fn)(void *arg, struct api_failure *fail), void *arg,
                          struct api_failure *fail);

/* 1 for rows that are no user's sandbox (any more): stopping, and warm-pool
 * copies (pooling, pooled). They answer 404. */
int sandbox_hidden(const struct sandbox_record *r);

int sandbox_create(struct lizardd *d, const struct sandbox_request *rq, struct sandbox_record *out,
                   struct api_failure *fail);
/* Kill and forget a sandbox (idempotent). */
int sandbox_kill(struct lizardd *d, const char *id, const char *why);
/* New deadline = now + timeout_ms (0 = none). */
int sandbox_set_timeout(struct lizardd *d, struct sandbox_record *r, int64_t timeout_ms,
                        lz_error *err);
json_t *sandbox_info_json(struct lizardd *d, const struct sandbox_record *r);
const struct size_class *sandbox_size_find(struct lizardd *d, const char *name);
int sandbox_template_exists(struct lizardd *d, const char *name);

/* At start-up: finish interrupted creates/kills, forget dead sandboxes,
 * stop the ones whose deadline passed while lizardd was down. */
void sandboxes_recover(struct lizardd *d);
/* The lifecycle thread: expiry at the deadline and noticing dead sandboxes. */
int sandboxes_watch_start(struct lizardd *d, lz_error *err);
/* Tell the lifecycle thread that a deadline changed. */
void sandboxes_watch_poke(void);

#endif
