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
    char hash[65];       /* hex sha256 of the secret */
    char prefix[32];     /* first characters of the key, for listings */
    int64_t created_ms;
};

struct sandbox_record {
    char id[64];
    char project_id[64];
    char template_name[64];
    char status[16];  /* "running", "paused", ... (lifecycle.h) */
    char runtime[16];
    char size[16];
    int cpu_count;
    int memory_mb;
    int64_t disk_mb;
    char host[64];
    int64_t created_ms;
    int64_t expires_ms;   /* 0 = never */
    int64_t remaining_ms; /* lifetime left while paused (later issue) */
    char *metadata_json;  /* malloc'd, "{}" if none */
    char *env_json;       /* malloc'd, "{}" if none */
    pid_t init_pid;
    uint64_t init_start_time;
};

struct store *store_open(const char *path, lz_error *err);
void store_close(struct store *s);

/* projects */
int store_project_insert(struct store *s, const struct project_record *p, lz_error *err);
/* ref = id, slug or name. */
int store_project_find(struct store *s, const char *ref, struct project_record *out,
                       lz_error *err);
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
int store_sandbox_get(struct store *s, const char *id, struct sandbox_record *out,
                      lz_error *err);
int store_sandbox_update(struct store *s, const struct sandbox_record *r, lz_error *err);
int store_sandbox_delete(struct store *s, const char *id, lz_error *err);
/* project_id / status may be NULL (no filter). */
int store_sandbox_list(struct store *s, const char *project_id, const char *status,
                       void (*fn)(const struct sandbox_record *, void *), void *arg,
                       lz_error *err);
int store_sandbox_count_running(struct store *s, const char *project_id, lz_error *err);
/* Frees the malloc'd members (not the struct). */
void sandbox_record_clear(struct sandbox_record *r);

#endif
