/* SQLite implementation of store.h. One connection, one mutex: lizardd's
 * write rate is a few hundred rows a second at most, and a single writer is
 * what SQLite wants anyway. Statements are prepared per call; they are cheap
 * next to the fsync-free WAL commit. */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store {
    sqlite3 *db;
    pthread_mutex_t lock;
};

static const char *schema_sql =
    "CREATE TABLE IF NOT EXISTS projects ("
    "  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, slug TEXT NOT NULL UNIQUE,"
    "  created_ms INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS api_keys ("
    "  id TEXT PRIMARY KEY, name TEXT NOT NULL, project_id TEXT NOT NULL,"
    "  admin INTEGER NOT NULL, hash TEXT NOT NULL, prefix TEXT NOT NULL,"
    "  created_ms INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS sandboxes ("
    "  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, template TEXT NOT NULL,"
    "  status TEXT NOT NULL, runtime TEXT NOT NULL, size TEXT NOT NULL,"
    "  cpu_count INTEGER NOT NULL, memory_mb INTEGER NOT NULL, disk_mb INTEGER NOT NULL,"
    "  host TEXT NOT NULL, created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,"
    "  remaining_ms INTEGER NOT NULL, metadata TEXT NOT NULL, env TEXT NOT NULL,"
    "  init_pid INTEGER NOT NULL, init_start_time INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS sandboxes_project ON sandboxes(project_id, status);";

static int db_error(struct store *s, lz_error *err, const char *what)
{
    return lz_error_set(err, 0, "store: %s: %s", what, sqlite3_errmsg(s->db));
}

struct store *store_open(const char *path, lz_error *err)
{
    struct store *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        lz_error_set(err, ENOMEM, "store");
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK) {
        lz_error_set(err, 0, "open %s: %s", path, sqlite3_errmsg(s->db));
        store_close(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 5000);
    /* WAL + synchronous=NORMAL: a commit is in the WAL file before we return,
     * so it survives a SIGKILL of lizardd (the contract); only a power loss
     * can drop the last commits, and that also ends every sandbox. */
    char *msg = NULL;
    if (sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
                     &msg) != SQLITE_OK ||
        sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK) {
        lz_error_set(err, 0, "store schema: %s", msg ? msg : "?");
        sqlite3_free(msg);
        store_close(s);
        return NULL;
    }
    return s;
}

void store_close(struct store *s)
{
    if (s == NULL)
        return;
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Prepare and bind text/int64 parameters described by `types` ('t' text,
 * 'i' int64). */
static sqlite3_stmt *prepare(struct store *s, const char *sql, const char *types, va_list ap,
                             lz_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_error(s, err, "prepare");
        return NULL;
    }
    for (int i = 0; types[i]; i++) {
        int rc;
        if (types[i] == 't')
            rc = sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
        else
            rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        if (rc != SQLITE_OK) {
            db_error(s, err, "bind");
            sqlite3_finalize(st);
            return NULL;
        }
    }
    return st;
}

/* Run a statement that returns no rows. Returns changes(), or -1.
 * A UNIQUE violation sets err->errnum = EEXIST. */
static int exec_sql(struct store *s, lz_error *err, const char *sql, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *st = prepare(s, sql, types, ap, err);
    int ret = -1;
    if (st != NULL) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
            ret = sqlite3_changes(s->db);
        else if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE ||
                 sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_PRIMARYKEY)
            lz_error_set(err, EEXIST, "already exists");
        else
            db_error(s, err, "write");
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->lock);
    va_end(ap);
    return ret;
}

typedef void (*row_fn)(sqlite3_stmt *st, void *arg);

/* Run a query, calling fn for each row. Returns the row count, or -1. */
static int query(struct store *s, lz_error *err, row_fn fn, void *arg, const char *sql,
                 const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *st = prepare(s, sql, types, ap, err);
    int n = -1;
    if (st != NULL) {
        int rc;
        n = 0;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            fn(st, arg);
            n++;
        }
        if (rc != SQLITE_DONE)
            n = db_error(s, err, "read");
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->lock);
    va_end(ap);
    return n;
}

static void copy_col(sqlite3_stmt *st, int col, char *out, size_t outsz)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, outsz, "%s", t ? (const char *)t : "");
}

static char *dup_col(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return strdup(t ? (const char *)t : "{}");
}

/* ---- projects ---- */

#define PROJECT_COLS "id, name, slug, created_ms"

static void project_row(sqlite3_stmt *st, struct project_record *p)
{
    copy_col(st, 0, p->id, sizeof(p->id));
    copy_col(st, 1, p->name, sizeof(p->name));
    copy_col(st, 2, p->slug, sizeof(p->slug));
    p->created_ms = sqlite3_column_int64(st, 3);
}

int store_project_insert(struct store *s, const struct project_record *p, lz_error *err)
{
    return exec_sql(s, err, "INSERT INTO projects (" PROJECT_COLS ") VALUES (?, ?, ?, ?)",
                    "ttti", p->id, p->name, p->slug, (int64_t)p->created_ms) < 0
               ? -1
               : 0;
}

static void project_one(sqlite3_stmt *st, void *arg)
{
    project_row(st, arg);
}

int store_project_find(struct store *s, const char *ref, struct project_record *out,
                       lz_error *err)
{
    /* Exact id first, then slug, then name: ids can never look like each other. */
    int n = query(s, err, project_one, out,
                  "SELECT " PROJECT_COLS " FROM projects WHERE id = ? OR slug = ? OR name = ?"
                  " ORDER BY (id = ?) DESC, (slug = ?) DESC LIMIT 1",
                  "ttttt", ref, ref, ref, ref, ref);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

struct list_ctx {
    void *fn;
    void *arg;
};

static void project_each(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct project_record p;
    project_row(st, &p);
    ((void (*)(const struct project_record *, void *))c->fn)(&p, c->arg);
}

int store_project_list(struct store *s, void (*fn)(const struct project_record *, void *),
                       void *arg, lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    return query(s, err, project_each, &c,
                 "SELECT " PROJECT_COLS " FROM projects ORDER BY created_ms, id", "");
}

/* ---- keys ---- */

#define KEY_COLS "id, name, project_id, admin, hash, prefix, created_ms"

static void key_row(sqlite3_stmt *st, struct key_record *k)
{
    copy_col(st, 0, k->id, sizeof(k->id));
    copy_col(st, 1, k->name, sizeof(k->name));
    copy_col(st, 2, k->project_id, sizeof(k->project_id));
    k->admin = sqlite3_column_int(st, 3);
    copy_col(st, 4, k->hash, sizeof(k->hash));
    copy_col(st, 5, k->prefix, sizeof(k->prefix));
    k->created_ms = sqlite3_column_int64(st, 6);
}

int store_key_insert(struct store *s, const struct key_record *k, lz_error *err)
{
    return exec_sql(s, err, "INSERT INTO api_keys (" KEY_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?)",
                    "tttitti", k->id, k->name, k->project_id, (int64_t)k->admin, k->hash,
                    k->prefix, (int64_t)k->created_ms) < 0
               ? -1
               : 0;
}

static void key_one(sqlite3_stmt *st, void *arg)
{
    key_row(st, arg);
}

int store_key_get(struct store *s, const char *id, struct key_record *out, lz_error *err)
{
    int n = query(s, err, key_one, out, "SELECT " KEY_COLS " FROM api_keys WHERE id = ?", "t",
                  id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void key_each(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct key_record k;
    key_row(st, &k);
    ((void (*)(const struct key_record *, void *))c->fn)(&k, c->arg);
}

int store_key_list(struct store *s, const char *project_id,
                   void (*fn)(const struct key_record *, void *), void *arg, lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    if (project_id == NULL)
        return query(s, err, key_each, &c,
                     "SELECT " KEY_COLS " FROM api_keys ORDER BY created_ms, id", "");
    return query(s, err, key_each, &c,
                 "SELECT " KEY_COLS " FROM api_keys WHERE project_id = ? AND admin = 0"
                 " ORDER BY created_ms, id",
                 "t", project_id);
}

int store_key_delete(struct store *s, const char *id, lz_error *err)
{
    int n = exec_sql(s, err, "DELETE FROM api_keys WHERE id = ?", "t", id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void count_one(sqlite3_stmt *st, void *arg)
{
    *(int *)arg = sqlite3_column_int(st, 0);
}

int store_key_count(struct store *s, lz_error *err)
{
    int count = 0;
    if (query(s, err, count_one, &count, "SELECT COUNT(*) FROM api_keys", "") < 0)
        return -1;
    return count;
}

/* ---- sandboxes ---- */

#define SANDBOX_COLS                                                                           \
    "id, project_id, template, status, runtime, size, cpu_count, memory_mb, disk_mb, host, "   \
    "created_ms, expires_ms, remaining_ms, metadata, env, init_pid, init_start_time"

static void sandbox_row(sqlite3_stmt *st, struct sandbox_record *r)
{
    copy_col(st, 0, r->id, sizeof(r->id));
    copy_col(st, 1, r->project_id, sizeof(r->project_id));
    copy_col(st, 2, r->template_name, sizeof(r->template_name));
    copy_col(st, 3, r->status, sizeof(r->status));
    copy_col(st, 4, r->runtime, sizeof(r->runtime));
    copy_col(st, 5, r->size, sizeof(r->size));
    r->cpu_count = sqlite3_column_int(st, 6);
    r->memory_mb = sqlite3_column_int(st, 7);
    r->disk_mb = sqlite3_column_int64(st, 8);
    copy_col(st, 9, r->host, sizeof(r->host));
    r->created_ms = sqlite3_column_int64(st, 10);
    r->expires_ms = sqlite3_column_int64(st, 11);
    r->remaining_ms = sqlite3_column_int64(st, 12);
    r->metadata_json = dup_col(st, 13);
    r->env_json = dup_col(st, 14);
    r->init_pid = (pid_t)sqlite3_column_int64(st, 15);
    r->init_start_time = (uint64_t)sqlite3_column_int64(st, 16);
}

void sandbox_record_clear(struct sandbox_record *r)
{
    free(r->metadata_json);
    free(r->env_json);
    r->metadata_json = r->env_json = NULL;
}

int store_sandbox_insert(struct store *s, const struct sandbox_record *r, lz_error *err)
{
    return exec_sql(s, err,
                    "INSERT INTO sandboxes (" SANDBOX_COLS ") VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    "ttttttiiitiiittii", r->id, r->project_id, r->template_name, r->status,
                    r->runtime, r->size, (int64_t)r->cpu_count, (int64_t)r->memory_mb,
                    (int64_t)r->disk_mb, r->host, (int64_t)r->created_ms,
                    (int64_t)r->expires_ms, (int64_t)r->remaining_ms,
                    r->metadata_json ? r->metadata_json : "{}",
                    r->env_json ? r->env_json : "{}", (int64_t)r->init_pid,
                    (int64_t)r->init_start_time) < 0
               ? -1
               : 0;
}

int store_sandbox_update(struct store *s, const struct sandbox_record *r, lz_error *err)
{
    int n = exec_sql(s, err,
                     "UPDATE sandboxes SET status = ?, expires_ms = ?, remaining_ms = ?,"
                     " init_pid = ?, init_start_time = ? WHERE id = ?",
                     "tiiiit", r->status, (int64_t)r->expires_ms, (int64_t)r->remaining_ms,
                     (int64_t)r->init_pid, (int64_t)r->init_start_time, r->id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void sandbox_one(sqlite3_stmt *st, void *arg)
{
    sandbox_row(st, arg);
}

int store_sandbox_get(struct store *s, const char *id, struct sandbox_record *out,
                      lz_error *err)
{
    memset(out, 0, sizeof(*out));
    int n = query(s, err, sandbox_one, out, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE id = ?",
                  "t", id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

int store_sandbox_delete(struct store *s, const char *id, lz_error *err)
{
    int n = exec_sql(s, err, "DELETE FROM sandboxes WHERE id = ?", "t", id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void sandbox_each(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct sandbox_record r;
    sandbox_row(st, &r);
    ((void (*)(const struct sandbox_record *, void *))c->fn)(&r, c->arg);
    sandbox_record_clear(&r);
}

int store_sandbox_list(struct store *s, const char *project_id, const char *status,
                       void (*fn)(const struct sandbox_record *, void *), void *arg,
                       lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    /* '' matches every row: one statement instead of four variants. */
    return query(s, err, sandbox_each, &c,
                 "SELECT " SANDBOX_COLS " FROM sandboxes WHERE (? = '' OR project_id = ?)"
                 " AND (? = '' OR status = ?) ORDER BY created_ms, id",
                 "tttt", project_id ? project_id : "", project_id ? project_id : "",
                 status ? status : "", status ? status : "");
}

int store_sandbox_count_running(struct store *s, const char *project_id, lz_error *err)
{
    int count = 0;
    /* "creating" rows count: they are reservations taken before the runtime
     * starts the sandbox, so concurrent creates cannot overshoot the cap. */
    if (query(s, err, count_one, &count,
              "SELECT COUNT(*) FROM sandboxes WHERE (? = '' OR project_id = ?)"
              " AND status IN ('creating', 'running', 'resuming')",
              "tt", project_id ? project_id : "", project_id ? project_id : "") < 0)
        return -1;
    return count;
}
