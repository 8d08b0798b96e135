/* The store: every durable fact of lizardd. SQLite (WAL) today, PostgreSQL
 * later, so the SQL stays portable (TEXT/INTEGER columns, no SQLite-only
 * syntax in queries) and nothing outside store.c sees SQL. Every write is
 * committed before the function returns: callers acknowledge only after.
 * Functions are thread-safe (one connection, serialized by a mutex). */
#ifndef LZ_STORE_H
#define LZ_STORE_H

#include <stdint.h>
#include <sys/types.h>
#include "../common/error.h"

#define STORE_NOT_FOUND (-2) /* returned by lookups that found nothing */

struct store;

struct project_record {
    char id[64];
    char name[128];
    char slug[128];
    int64_t created_ms;
};

struct key_record {
    char id[64];
    char name[128];
    char project_id[64]; /* "" for admin keys */
    int admin;
    char hash[65];   /* hex sha256 of the secret */
    char prefix[32]; /* first characters of the key, for listings */
    int64_t created_ms;
};

struct sandbox_record {
    char id[64];
    char project_id[64];
    char template_name[64];
    char status[16]; /* "running", "paused", ... (lifecycle.h) */
    char runtime[16];
    char size[16];
    int cpu_count;
    int memory_mb;
    int64_t disk_mb;
    char host[64];
    int64_t created_ms;
    int64_t expires_ms;   /* 0 = never */
    int64_t remaining_ms; /* lifetime left while paused; -1 = no expiry */
    char *metadata_json;  /* malloc'd, "{}" if none */
    char *env_json;       /* malloc'd, "{}" if none */
    pid_t init_pid;
    uint64_t init_start_time;
    char last_error[256]; /* why the last pause/resume failed, "" if it did not */
    char layers[1024];    /* snapshot ids of the layers below its own, ':'-joined */
    char snapshot_id[64]; /* the snapshot it started from, "" if none */
    int64_t price_micros; /* hourly price of its size at create, in millionths */
};

struct store *store_open(const char *path, lz_error *err);
void store_close(struct store *s);

/* projects */
int store_project_insert(struct store *s, const struct project_record *p, lz_error *err);
/* ref = id, slug or name. */
int store_project_find(struct store *s, const char *ref, struct project_record *out, lz_error *err);
/* Calls fn for each; returns count or -1. */
int store_project_list(struct store *s, void (*fn)(const struct project_record *, void *),
                       void *arg, lz_error *err);

/* keys */
int store_key_insert(struct store *s, const struct key_record *k, lz_error *err);
int store_key_get(struct store *s, const char *id, struct key_record *out, lz_error *err);
/* project_id NULL = all keys. */
int store_key_list(struct store *s, const char *project_id,
                   void (*fn)(const struct key_record *, void *), void *arg, lz_error *err);
int store_key_delete(struct store *s, const char *id, lz_error *err);
int store_key_count(struct store *s, lz_error *err);

/* sandboxes */
int store_sandbox_insert(struct store *s, const struct sandbox_record *r, lz_error *err);
int store_sandbox_get(struct store *s, const char *id, struct sandbox_record *out, lz_error *err);
int store_sandbox_update(struct store *s, const struct sandbox_record *r, lz_error *err);
int store_sandbox_delete(struct store *s, const char *id, lz_error *err);
/* project_id / status may be NULL (no filter). */
int store_sandbox_list(struct store *s, const char *project_id, const char *status,
                       void (*fn)(const struct sandbox_record *, void *), void *arg, lz_error *err);
int store_sandbox_count_running(struct store *s, const char *project_id, lz_error *err);
/* Frees the malloc'd members (not the struct). */
void sandbox_record_clear(struct sandbox_record *r);

/* exposed ports: one row per (sandbox, port); the access token is derived
 * from nonce (ports.h), so the store never holds a usable token. */
struct port_record {
    char sandbox_id[64];
    int port;
    char nonce[65];
    int64_t created_ms;
};
/* A second insert of the same (sandbox, port) fails with err->errnum EEXIST. */
int store_port_insert(struct store *s, const struct port_record *p, lz_error *err);
int store_port_get(struct store *s, const char *sandbox_id, int port, struct port_record *out,
                   lz_error *err);
int store_port_list(struct store *s, const char *sandbox_id,
                    void (*fn)(const struct port_record *, void *), void *arg, lz_error *err);
/* port 0: every port of the sandbox (on kill). */
int store_port_delete(struct store *s, const char *sandbox_id, int port, lz_error *err);

/* volumes: persistent ext4 images (volumes.c), at most one sandbox each. */
struct volume_record {
    char id[64];
    char project_id[64];
    char name[128];
    int64_t size_mb;
    int64_t created_ms;
    char attached_to[64]; /* the live sandbox holding it, "" when free */
};
/* A second name in the same project fails with err->errnum EEXIST. */
int store_volume_insert(struct store *s, const struct volume_record *v, lz_error *err);
/* ref = id, or name within project_id; project_id NULL = ids in any project. */
int store_volume_find(struct store *s, const char *project_id, const char *ref,
                      struct volume_record *out, lz_error *err);
/* project_id NULL = all. Returns count or -1. */
int store_volume_list(struct store *s, const char *project_id,
                      void (*fn)(const struct volume_record *, void *), void *arg, lz_error *err);
/* Attach if free: 1 attached, 0 attached elsewhere (or gone), -1 error. */
int store_volume_attach(struct store *s, const char *id, const char *sandbox_id, lz_error *err);
/* Free every volume of a sandbox (after its destroy). */
int store_volume_release(struct store *s, const char *sandbox_id, lz_error *err);
/* Delete if free: 1 deleted, 0 attached (or gone), -1 error. */
int store_volume_delete_free(struct store *s, const char *id, lz_error *err);

/* ---- pause/resume and warm pools (issue 5) ---- */

/* status from -> to (and last_error, "" clears it) only if it is `from`:
 * 1 changed, 0 it was not `from` (or is gone), -1 error. */
int store_sandbox_set_status(struct store *s, const char *id, const char *from, const char *to,
                             const char *last_error, lz_error *err);
/* status, expires_ms, remaining_ms, last_error of r, only if the row is in
 * status `from` (a kill meanwhile wins): 1 written, 0 not, -1 error. */
int store_sandbox_update_from(struct store *s, const struct sandbox_record *r, const char *from,
                              lz_error *err);
/* Hand out the oldest "pooled" sandbox of a snapshot: it becomes "running"
 * with want's project_id, metadata_json, env_json, expires_ms, created_ms.
 * 0 and its id, STORE_NOT_FOUND when none is ready, -1 error. */
int store_sandbox_claim_pooled(struct store *s, const char *snapshot_id,
                               const struct sandbox_record *want, char out_id[64], lz_error *err);
/* Pool rows of a snapshot: pooled (+ pooling unless ready_only). */
int store_sandbox_count_pool(struct store *s, const char *snapshot_id, int ready_only,
                             lz_error *err);
/* How many sandbox and snapshot rows have this snapshot among their layers. */
int store_layer_in_use(struct store *s, const char *snapshot_id, lz_error *err);

struct snapshot_record {
    char id[64];
    char project_id[64];
    char name[64];
    char status[16]; /* creating | ready | failed */
    char error[256];
    char source_sandbox_id[64];
    char template_name[64]; /* the built-in template at the bottom */
    char layers[1024];      /* its own id first, then the layers below, ':'-joined */
    char size[16]; /* the source sandbox's size name: restores keep it (and its price) */
    int cpu_count;
    int memory_mb;
    int pool_size;
    int64_t size_bytes;
    int64_t freeze_ms;
    int64_t created_ms;
};
/* A second name in the same project fails with err->errnum EEXIST. */
int store_snapshot_insert(struct store *s, const struct snapshot_record *r, lz_error *err);
/* ref = id, or name within project_id; project_id NULL = ids in any project. */
int store_snapshot_find(struct store *s, const char *project_id, const char *ref,
                        struct snapshot_record *out, lz_error *err);
/* project_id / status NULL = any. Returns count or -1. */
int store_snapshot_list(struct store *s, const char *project_id, const char *status,
                        void (*fn)(const struct snapshot_record *, void *), void *arg,
                        lz_error *err);
/* Record the outcome: status, error, size_bytes, freeze_ms. */
int store_snapshot_finish(struct store *s, const struct snapshot_record *r, lz_error *err);
int store_snapshot_delete(struct store *s, const char *id, lz_error *err);

/* ---- metering ----
 * Usage intervals are written by the store itself: a sandbox's while its
 * status is "running" (by every write that changes the status, in the same
 * transaction), a volume's from its insert to its delete. */
struct usage_interval {
    char project_id[64];
    char size[16];        /* sandbox intervals: its size name */
    int64_t price_micros; /* sandbox intervals: hourly price, millionths */
    int64_t size_mb;      /* volume intervals */
    int64_t start_ms;
    int64_t end_ms; /* 0 while open */
};
/* The intervals overlapping [from_ms, to_ms): sandboxes' (volumes = 0) or
 * volumes' (1), of project_id (NULL = all). Returns count or -1. */
int store_usage_list(struct store *s, int volumes, const char *project_id, int64_t from_ms,
                     int64_t to_ms, void (*fn)(const struct usage_interval *, void *), void *arg,
                     lz_error *err);

#endif
