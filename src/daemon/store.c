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
#include <time.h>

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
    "CREATE INDEX IF NOT EXISTS sandboxes_project ON sandboxes(project_id, status);"
    /* Volumes (issue 5): attached_to is the sandbox holding it, '' when free;
     * a value naming no sandbox row (a crash between destroy and release)
     * counts as free everywhere, see VOLUME_ATTACHED. */
    "CREATE TABLE IF NOT EXISTS volumes ("
    "  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, name TEXT NOT NULL,"
    "  size_mb INTEGER NOT NULL, created_ms INTEGER NOT NULL, attached_to TEXT NOT NULL,"
    "  UNIQUE (project_id, name));"
    "CREATE INDEX IF NOT EXISTS volumes_attached ON volumes(attached_to);"
    /* Exposed ports (issue 4): the token is derived from `nonce` (ports.c),
     * never stored. */
    "CREATE TABLE IF NOT EXISTS ports ("
    "  sandbox_id TEXT NOT NULL, port INTEGER NOT NULL, nonce TEXT NOT NULL,"
    "  created_ms INTEGER NOT NULL, PRIMARY KEY (sandbox_id, port));";

/* Columns added after the first release, for stores made before them:
 * ADD COLUMN fails with "duplicate column" once it is there, which is fine. */
static const char *const added_columns[] = {
    /* issue 5: why the last pause/resume failed; snapshot layers below the
     * sandbox's own (ids, topmost first, ':'-joined); its snapshot */
    "ALTER TABLE sandboxes ADD COLUMN last_error TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE sandboxes ADD COLUMN layers TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE sandboxes ADD COLUMN snapshot_id TEXT NOT NULL DEFAULT ''",
    /* metering: the hourly price of its size when it was made, millionths */
    "ALTER TABLE sandboxes ADD COLUMN price_micros INTEGER NOT NULL DEFAULT 0",
    NULL,
};

static const char *snapshot_schema_sql =
    "CREATE TABLE IF NOT EXISTS snapshots ("
    "  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, name TEXT NOT NULL,"
    "  status TEXT NOT NULL, error TEXT NOT NULL, source_sandbox_id TEXT NOT NULL,"
    "  template TEXT NOT NULL, layers TEXT NOT NULL, cpu_count INTEGER NOT NULL,"
    "  memory_mb INTEGER NOT NULL, pool_size INTEGER NOT NULL, size_bytes INTEGER NOT NULL,"
    "  freeze_ms INTEGER NOT NULL, created_ms INTEGER NOT NULL,"
    "  size TEXT NOT NULL DEFAULT 'default', UNIQUE (project_id, name));"
    "CREATE INDEX IF NOT EXISTS sandboxes_snapshot ON sandboxes(snapshot_id, status);"
    /* Metering: one row per stretch of time a sandbox was "running" (end_ms
     * NULL while it still is), written in the same transaction as the
     * status change (sandbox_write). Rows outlive their sandbox. */
    "CREATE TABLE IF NOT EXISTS usage ("
    "  sandbox_id TEXT NOT NULL, project_id TEXT NOT NULL, size TEXT NOT NULL,"
    "  price_micros INTEGER NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER);"
    "CREATE INDEX IF NOT EXISTS usage_sandbox ON usage(sandbox_id, end_ms);"
    "CREATE INDEX IF NOT EXISTS usage_start ON usage(start_ms);"
    /* ... and per volume, from its creation to its deletion. */
    "CREATE TABLE IF NOT EXISTS volume_usage ("
    "  volume_id TEXT NOT NULL, project_id TEXT NOT NULL, size_mb INTEGER NOT NULL,"
    "  start_ms INTEGER NOT NULL, end_ms INTEGER);"
    "CREATE INDEX IF NOT EXISTS volume_usage_volume ON volume_usage(volume_id, end_ms);"
    /* Volumes made before metering existed accrue from their creation. */
    "INSERT INTO volume_usage (volume_id, project_id, size_mb, start_ms, end_ms)"
    "  SELECT id, project_id, size_mb, created_ms, NULL FROM volumes"
    "  WHERE id NOT IN (SELECT volume_id FROM volume_usage);";

/* Columns added to tables made by snapshot_schema_sql, run after it. */
static const char *const added_snapshot_columns[] = {
    /* the source sandbox's size name, so restores keep its size and price */
    "ALTER TABLE snapshots ADD COLUMN size TEXT NOT NULL DEFAULT 'default'",
    NULL,
};

static int add_columns(struct store *s, const char *const *stmts, char **msg)
{
    for (int i = 0; stmts[i]; i++) {
        char *m = NULL;
        if (sqlite3_exec(s->db, stmts[i], NULL, NULL, &m) != SQLITE_OK &&
            (m == NULL || strstr(m, "duplicate column") == NULL)) {
            *msg = m;
            return -1;
        }
        sqlite3_free(m);
    }
    return 0;
}

static int migrate(struct store *s, char **msg)
{
    if (add_columns(s, added_columns, msg) < 0 ||
        sqlite3_exec(s->db, snapshot_schema_sql, NULL, NULL, msg) != SQLITE_OK)
        return -1;
    return add_columns(s, added_snapshot_columns, msg);
}

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
        sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK || migrate(s, &msg) < 0) {
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

/* Run a statement that returns no rows, with s->lock held. Returns
 * changes(), or -1. A UNIQUE violation sets err->errnum = EEXIST. */
static int exec_locked_v(struct store *s, lz_error *err, const char *sql, const char *types,
                         va_list ap)
{
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
    return ret;
}

static int exec_locked(struct store *s, lz_error *err, const char *sql, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int ret = exec_locked_v(s, err, sql, types, ap);
    va_end(ap);
    return ret;
}

/* exec_locked under the lock. */
static int exec_sql(struct store *s, lz_error *err, const char *sql, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    pthread_mutex_lock(&s->lock);
    int ret = exec_locked_v(s, err, sql, types, ap);
    pthread_mutex_unlock(&s->lock);
    va_end(ap);
    return ret;
}

typedef void (*row_fn)(sqlite3_stmt *st, void *arg);

/* Run a query with s->lock held, calling fn for each row. Returns the row
 * count, or -1. */
static int query_locked_v(struct store *s, lz_error *err, row_fn fn, void *arg, const char *sql,
                          const char *types, va_list ap)
{
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
    return n;
}

static int query_locked(struct store *s, lz_error *err, row_fn fn, void *arg, const char *sql,
                        const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    int n = query_locked_v(s, err, fn, arg, sql, types, ap);
    va_end(ap);
    return n;
}

/* query_locked under the lock. */
static int query(struct store *s, lz_error *err, row_fn fn, void *arg, const char *sql,
                 const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    pthread_mutex_lock(&s->lock);
    int n = query_locked_v(s, err, fn, arg, sql, types, ap);
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
    return exec_sql(s, err, "INSERT INTO projects (" PROJECT_COLS ") VALUES (?, ?, ?, ?)", "ttti",
                    p->id, p->name, p->slug, (int64_t)p->created_ms) < 0
               ? -1
               : 0;
}

static void project_one(sqlite3_stmt *st, void *arg)
{
    project_row(st, arg);
}

int store_project_find(struct store *s, const char *ref, struct project_record *out, lz_error *err)
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
                    "tttitti", k->id, k->name, k->project_id, (int64_t)k->admin, k->hash, k->prefix,
                    (int64_t)k->created_ms) < 0
               ? -1
               : 0;
}

static void key_one(sqlite3_stmt *st, void *arg)
{
    key_row(st, arg);
}

int store_key_get(struct store *s, const char *id, struct key_record *out, lz_error *err)
{
    int n = query(s, err, key_one, out, "SELECT " KEY_COLS " FROM api_keys WHERE id = ?", "t", id);
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

/* ---- transactions and metering ---- */

/* Lock and BEGIN: the statements up to finish() commit together or not at all. */
static int begin(struct store *s, lz_error *err)
{
    pthread_mutex_lock(&s->lock);
    if (exec_locked(s, err, "BEGIN", "") >= 0)
        return 0;
    pthread_mutex_unlock(&s->lock);
    return -1;
}

/* COMMIT when n >= 0, else ROLLBACK; unlock. Returns n, or -1 when the
 * commit failed. */
static int finish(struct store *s, int n, lz_error *err)
{
    if (n >= 0 && exec_locked(s, err, "COMMIT", "") < 0)
        n = -1;
    if (n < 0)
        exec_locked(s, NULL, "ROLLBACK", "");
    pthread_mutex_unlock(&s->lock);
    return n;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What metering needs of a sandbox row. */
struct meter_row {
    int found;
    char status[16], project_id[64], size[16];
    int64_t price_micros, expires_ms;
};

static void meter_row_read(sqlite3_stmt *st, void *arg)
{
    struct meter_row *m = arg;
    m->found = 1;
    copy_col(st, 0, m->status, sizeof(m->status));
    copy_col(st, 1, m->project_id, sizeof(m->project_id));
    copy_col(st, 2, m->size, sizeof(m->size));
    m->price_micros = sqlite3_column_int64(st, 3);
    m->expires_ms = sqlite3_column_int64(st, 4);
}

static int meter_get(struct store *s, const char *id, struct meter_row *m, lz_error *err)
{
    memset(m, 0, sizeof(*m));
    return query_locked(s, err, meter_row_read, m,
                        "SELECT status, project_id, size, price_micros, expires_ms"
                        " FROM sandboxes WHERE id = ?",
                        "t", id);
}

/* Compute is billed exactly while the status is "running" (SPEC: paused,
 * pooled and stopped sandboxes are not). */
static int billed(const struct meter_row *m)
{
    return m->found && strcmp(m->status, "running") == 0;
}

/* After a write took the row from `was` to `is`: close its open interval
 * and/or open one when whether (or for whom) it is billed changed. An
 * interval ends now, or at the deadline when that has passed: a sandbox is
 * never billed past its lifetime, also when lizardd was down at that
 * moment and stops it only at recovery. */
static int meter_follow(struct store *s, const char *id, const struct meter_row *was,
                        const struct meter_row *is, lz_error *err)
{
    if (billed(was) == billed(is) && strcmp(was->project_id, is->project_id) == 0)
        return 0;
    int64_t now = wall_ms();
    int64_t end = was->expires_ms > 0 && was->expires_ms < now ? was->expires_ms : now;
    if (exec_locked(s, err,
                    "UPDATE usage SET end_ms = CASE WHEN start_ms > ? THEN start_ms ELSE ? END"
                    " WHERE sandbox_id = ? AND end_ms IS NULL",
                    "iit", end, end, id) < 0)
        return -1;
    if (billed(is) && exec_locked(s, err,
                                  "INSERT INTO usage (sandbox_id, project_id, size, price_micros,"
                                  " start_ms, end_ms) VALUES (?, ?, ?, ?, ?, NULL)",
                                  "tttii", id, is->project_id, is->size, is->price_micros, now) < 0)
        return -1;
    return 0;
}

/* Every write that can change a sandbox's status (or remove the row) goes
 * through here, so metering has one hook: the usage intervals change in the
 * same transaction as the status, and a crash never leaves one without the
 * other. Returns changes(), or -1. */
static int sandbox_write(struct store *s, lz_error *err, const char *id, const char *sql,
                         const char *types, ...)
{
    struct meter_row was, is;
    if (begin(s, err) < 0)
        return -1;
    va_list ap;
    va_start(ap, types);
    int n = meter_get(s, id, &was, err);
    if (n >= 0)
        n = exec_locked_v(s, err, sql, types, ap);
    va_end(ap);
    if (n > 0 && (meter_get(s, id, &is, err) < 0 || meter_follow(s, id, &was, &is, err) < 0))
        n = -1;
    return finish(s, n, err);
}

static void usage_row(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct usage_interval u;
    copy_col(st, 0, u.project_id, sizeof(u.project_id));
    copy_col(st, 1, u.size, sizeof(u.size));
    u.price_micros = sqlite3_column_int64(st, 2);
    u.size_mb = sqlite3_column_int64(st, 3);
    u.start_ms = sqlite3_column_int64(st, 4);
    u.end_ms = sqlite3_column_int64(st, 5);
    ((void (*)(const struct usage_interval *, void *))c->fn)(&u, c->arg);
}

int store_usage_list(struct store *s, int volumes, const char *project_id, int64_t from_ms,
                     int64_t to_ms, void (*fn)(const struct usage_interval *, void *), void *arg,
                     lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    const char *p = project_id ? project_id : "";
    if (volumes)
        return query(s, err, usage_row, &c,
                     "SELECT project_id, '', 0, size_mb, start_ms, COALESCE(end_ms, 0)"
                     " FROM volume_usage WHERE (? = '' OR project_id = ?) AND start_ms < ?"
                     " AND (end_ms IS NULL OR end_ms > ?)",
                     "ttii", p, p, to_ms, from_ms);
    return query(s, err, usage_row, &c,
                 "SELECT project_id, size, price_micros, 0, start_ms, COALESCE(end_ms, 0)"
                 " FROM usage WHERE (? = '' OR project_id = ?) AND start_ms < ?"
                 " AND (end_ms IS NULL OR end_ms > ?)",
                 "ttii", p, p, to_ms, from_ms);
}

/* ---- sandboxes ---- */

#define SANDBOX_COLS                                                                               \
    "id, project_id, template, status, runtime, size, cpu_count, memory_mb, disk_mb, host, "       \
    "created_ms, expires_ms, remaining_ms, metadata, env, init_pid, init_start_time, "             \
    "last_error, layers, snapshot_id, price_micros"

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
    copy_col(st, 17, r->last_error, sizeof(r->last_error));
    copy_col(st, 18, r->layers, sizeof(r->layers));
    copy_col(st, 19, r->snapshot_id, sizeof(r->snapshot_id));
    r->price_micros = sqlite3_column_int64(st, 20);
}

void sandbox_record_clear(struct sandbox_record *r)
{
    free(r->metadata_json);
    free(r->env_json);
    r->metadata_json = r->env_json = NULL;
}

int store_sandbox_insert(struct store *s, const struct sandbox_record *r, lz_error *err)
{
    return sandbox_write(
               s, err, r->id,
               "INSERT INTO sandboxes (" SANDBOX_COLS ") VALUES "
               "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               "ttttttiiitiiittiittti", r->id, r->project_id, r->template_name, r->status,
               r->runtime, r->size, (int64_t)r->cpu_count, (int64_t)r->memory_mb,
               (int64_t)r->disk_mb, r->host, (int64_t)r->created_ms, (int64_t)r->expires_ms,
               (int64_t)r->remaining_ms, r->metadata_json ? r->metadata_json : "{}",
               r->env_json ? r->env_json : "{}", (int64_t)r->init_pid, (int64_t)r->init_start_time,
               r->last_error, r->layers, r->snapshot_id, (int64_t)r->price_micros) < 0
               ? -1
               : 0;
}

int store_sandbox_update(struct store *s, const struct sandbox_record *r, lz_error *err)
{
    int n = sandbox_write(s, err, r->id,
                          "UPDATE sandboxes SET status = ?, expires_ms = ?, remaining_ms = ?,"
                          " init_pid = ?, init_start_time = ?, last_error = ? WHERE id = ?",
                          "tiiiitt", r->status, (int64_t)r->expires_ms, (int64_t)r->remaining_ms,
                          (int64_t)r->init_pid, (int64_t)r->init_start_time, r->last_error, r->id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void sandbox_one(sqlite3_stmt *st, void *arg)
{
    sandbox_row(st, arg);
}

int store_sandbox_get(struct store *s, const char *id, struct sandbox_record *out, lz_error *err)
{
    memset(out, 0, sizeof(*out));
    int n = query(s, err, sandbox_one, out, "SELECT " SANDBOX_COLS " FROM sandboxes WHERE id = ?",
                  "t", id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

int store_sandbox_delete(struct store *s, const char *id, lz_error *err)
{
    int n = sandbox_write(s, err, id, "DELETE FROM sandboxes WHERE id = ?", "t", id);
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
                       void (*fn)(const struct sandbox_record *, void *), void *arg, lz_error *err)
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

/* ---- exposed ports ---- */

#define PORT_COLS "sandbox_id, port, nonce, created_ms"

static void port_row(sqlite3_stmt *st, struct port_record *p)
{
    copy_col(st, 0, p->sandbox_id, sizeof(p->sandbox_id));
    p->port = sqlite3_column_int(st, 1);
    copy_col(st, 2, p->nonce, sizeof(p->nonce));
    p->created_ms = sqlite3_column_int64(st, 3);
}

static void port_one(sqlite3_stmt *st, void *arg)
{
    port_row(st, arg);
}

int store_port_insert(struct store *s, const struct port_record *p, lz_error *err)
{
    return exec_sql(s, err, "INSERT INTO ports (" PORT_COLS ") VALUES (?, ?, ?, ?)", "titi",
                    p->sandbox_id, (int64_t)p->port, p->nonce, (int64_t)p->created_ms) < 0
               ? -1
               : 0;
}

int store_port_get(struct store *s, const char *sandbox_id, int port, struct port_record *out,
                   lz_error *err)
{
    int n = query(s, err, port_one, out,
                  "SELECT " PORT_COLS " FROM ports WHERE sandbox_id = ? AND port = ?", "ti",
                  sandbox_id, (int64_t)port);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void port_each(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct port_record p;
    port_row(st, &p);
    ((void (*)(const struct port_record *, void *))c->fn)(&p, c->arg);
}

int store_port_list(struct store *s, const char *sandbox_id,
                    void (*fn)(const struct port_record *, void *), void *arg, lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    return query(s, err, port_each, &c,
                 "SELECT " PORT_COLS " FROM ports WHERE sandbox_id = ? ORDER BY port", "t",
                 sandbox_id);
}

int store_port_delete(struct store *s, const char *sandbox_id, int port, lz_error *err)
{
    int n = exec_sql(s, err, "DELETE FROM ports WHERE sandbox_id = ? AND (? = 0 OR port = ?)",
                     "tii", sandbox_id, (int64_t)port, (int64_t)port);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

/* ---- volumes ---- */

/* The sandbox a volume is attached to, or '' (see the schema comment). */
#define VOLUME_ATTACHED                                                                            \
    "(CASE WHEN attached_to IN (SELECT id FROM sandboxes) THEN attached_to ELSE '' END)"
#define VOLUME_COLS "id, project_id, name, size_mb, created_ms, " VOLUME_ATTACHED

static void volume_row(sqlite3_stmt *st, struct volume_record *v)
{
    copy_col(st, 0, v->id, sizeof(v->id));
    copy_col(st, 1, v->project_id, sizeof(v->project_id));
    copy_col(st, 2, v->name, sizeof(v->name));
    v->size_mb = sqlite3_column_int64(st, 3);
    v->created_ms = sqlite3_column_int64(st, 4);
    copy_col(st, 5, v->attached_to, sizeof(v->attached_to));
}

static void volume_one(sqlite3_stmt *st, void *arg)
{
    volume_row(st, arg);
}

int store_volume_insert(struct store *s, const struct volume_record *v, lz_error *err)
{
    /* The row and its metering interval commit together. */
    if (begin(s, err) < 0)
        return -1;
    int n = exec_locked(s, err,
                        "INSERT INTO volumes (id, project_id, name, size_mb, created_ms,"
                        " attached_to) VALUES (?, ?, ?, ?, ?, '')",
                        "tttii", v->id, v->project_id, v->name, (int64_t)v->size_mb,
                        (int64_t)v->created_ms);
    if (n >= 0)
        n = exec_locked(s, err,
                        "INSERT INTO volume_usage (volume_id, project_id, size_mb, start_ms,"
                        " end_ms) VALUES (?, ?, ?, ?, NULL)",
                        "ttii", v->id, v->project_id, (int64_t)v->size_mb, (int64_t)v->created_ms);
    return finish(s, n, err) < 0 ? -1 : 0;
}

int store_volume_find(struct store *s, const char *project_id, const char *ref,
                      struct volume_record *out, lz_error *err)
{
    const char *p = project_id ? project_id : "";
    /* An exact id first: names cannot take the form of an id (api_volumes.c). */
    int n = query(s, err, volume_one, out,
                  "SELECT " VOLUME_COLS " FROM volumes WHERE (id = ? OR (name = ? AND ? <> ''))"
                  " AND (? = '' OR project_id = ?) ORDER BY (id = ?) DESC LIMIT 1",
                  "tttttt", ref, ref, p, p, p, ref);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void volume_each(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct volume_record v;
    volume_row(st, &v);
    ((void (*)(const struct volume_record *, void *))c->fn)(&v, c->arg);
}

int store_volume_list(struct store *s, const char *project_id,
                      void (*fn)(const struct volume_record *, void *), void *arg, lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    const char *p = project_id ? project_id : "";
    return query(s, err, volume_each, &c,
                 "SELECT " VOLUME_COLS " FROM volumes WHERE (? = '' OR project_id = ?)"
                 " ORDER BY created_ms, id",
                 "tt", p, p);
}

int store_volume_attach(struct store *s, const char *id, const char *sandbox_id, lz_error *err)
{
    /* Check and claim in one statement: two creates racing for the same
     * volume cannot both win. */
    return exec_sql(s, err,
                    "UPDATE volumes SET attached_to = ? WHERE id = ? AND " VOLUME_ATTACHED " = ''",
                    "tt", sandbox_id, id);
}

int store_volume_release(struct store *s, const char *sandbox_id, lz_error *err)
{
    return exec_sql(s, err, "UPDATE volumes SET attached_to = '' WHERE attached_to = ?", "t",
                    sandbox_id) < 0
               ? -1
               : 0;
}

int store_volume_delete_free(struct store *s, const char *id, lz_error *err)
{
    if (begin(s, err) < 0)
        return -1;
    int n = exec_locked(s, err, "DELETE FROM volumes WHERE id = ? AND " VOLUME_ATTACHED " = ''",
                        "t", id);
    /* Its past usage stays reportable; it stops accruing now. */
    if (n > 0 && exec_locked(s, err,
                             "UPDATE volume_usage SET end_ms = ? WHERE volume_id = ?"
                             " AND end_ms IS NULL",
                             "it", wall_ms(), id) < 0)
        n = -1;
    return finish(s, n, err);
}

/* ---- pause/resume and warm pools (issue 5) ---- */

int store_sandbox_set_status(struct store *s, const char *id, const char *from, const char *to,
                             const char *last_error, lz_error *err)
{
    /* Compare-and-set: of two racing requests exactly one wins. */
    return sandbox_write(
        s, err, id, "UPDATE sandboxes SET status = ?, last_error = ? WHERE id = ? AND status = ?",
        "tttt", to, last_error ? last_error : "", id, from);
}

int store_sandbox_update_from(struct store *s, const struct sandbox_record *r, const char *from,
                              lz_error *err)
{
    return sandbox_write(s, err, r->id,
                         "UPDATE sandboxes SET status = ?, expires_ms = ?, remaining_ms = ?,"
                         " last_error = ? WHERE id = ? AND status = ?",
                         "tiittt", r->status, (int64_t)r->expires_ms, (int64_t)r->remaining_ms,
                         r->last_error, r->id, from);
}

int store_sandbox_claim_pooled(struct store *s, const char *snapshot_id,
                               const struct sandbox_record *want, char out_id[64], lz_error *err)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        char id[64] = "";
        struct sandbox_record r;
        memset(&r, 0, sizeof(r));
        int n = query(s, err, sandbox_one, &r,
                      "SELECT " SANDBOX_COLS " FROM sandboxes WHERE snapshot_id = ?"
                      " AND status = 'pooled' ORDER BY created_ms, id LIMIT 1",
                      "t", snapshot_id);
        if (n <= 0)
            return n < 0 ? -1 : STORE_NOT_FOUND;
        snprintf(id, sizeof(id), "%s", r.id);
        sandbox_record_clear(&r);
        n = sandbox_write(
            s, err, id,
            "UPDATE sandboxes SET status = 'running', project_id = ?, metadata = ?,"
            " env = ?, expires_ms = ?, created_ms = ? WHERE id = ? AND status = 'pooled'",
            "tttiit", want->project_id, want->metadata_json ? want->metadata_json : "{}",
            want->env_json ? want->env_json : "{}", (int64_t)want->expires_ms,
            (int64_t)want->created_ms, id);
        if (n < 0)
            return -1;
        if (n == 1) {
            snprintf(out_id, 64, "%s", id);
            return 0;
        }
        /* Someone else took that one between the two statements. */
    }
    return STORE_NOT_FOUND;
}

int store_sandbox_count_pool(struct store *s, const char *snapshot_id, int ready_only,
                             lz_error *err)
{
    int count = 0;
    if (query(s, err, count_one, &count,
              "SELECT COUNT(*) FROM sandboxes WHERE snapshot_id = ?"
              " AND (status = 'pooled' OR (? = 0 AND status = 'pooling'))",
              "ti", snapshot_id, (int64_t)ready_only) < 0)
        return -1;
    return count;
}

int store_layer_in_use(struct store *s, const char *snapshot_id, lz_error *err)
{
    int count = 0;
    /* Snapshot ids are random and fixed-length, so a substring match of
     * the ':'-joined lists is exact. */
    if (query(s, err, count_one, &count,
              "SELECT (SELECT COUNT(*) FROM sandboxes WHERE layers LIKE '%' || ? || '%')"
              " + (SELECT COUNT(*) FROM snapshots WHERE layers LIKE '%' || ? || '%')",
              "tt", snapshot_id, snapshot_id) < 0)
        return -1;
    return count;
}

#define SNAPSHOT_COLS                                                                              \
    "id, project_id, name, status, error, source_sandbox_id, template, layers, cpu_count, "        \
    "memory_mb, pool_size, size_bytes, freeze_ms, created_ms, size"

static void snapshot_row(sqlite3_stmt *st, struct snapshot_record *r)
{
    copy_col(st, 0, r->id, sizeof(r->id));
    copy_col(st, 1, r->project_id, sizeof(r->project_id));
    copy_col(st, 2, r->name, sizeof(r->name));
    copy_col(st, 3, r->status, sizeof(r->status));
    copy_col(st, 4, r->error, sizeof(r->error));
    copy_col(st, 5, r->source_sandbox_id, sizeof(r->source_sandbox_id));
    copy_col(st, 6, r->template_name, sizeof(r->template_name));
    copy_col(st, 7, r->layers, sizeof(r->layers));
    r->cpu_count = sqlite3_column_int(st, 8);
    r->memory_mb = sqlite3_column_int(st, 9);
    r->pool_size = sqlite3_column_int(st, 10);
    r->size_bytes = sqlite3_column_int64(st, 11);
    r->freeze_ms = sqlite3_column_int64(st, 12);
    r->created_ms = sqlite3_column_int64(st, 13);
    copy_col(st, 14, r->size, sizeof(r->size));
}

static void snapshot_one(sqlite3_stmt *st, void *arg)
{
    snapshot_row(st, arg);
}

int store_snapshot_insert(struct store *s, const struct snapshot_record *r, lz_error *err)
{
    return exec_sql(s, err,
                    "INSERT INTO snapshots (" SNAPSHOT_COLS ") VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    "ttttttttiiiiiit", r->id, r->project_id, r->name, r->status, r->error,
                    r->source_sandbox_id, r->template_name, r->layers, (int64_t)r->cpu_count,
                    (int64_t)r->memory_mb, (int64_t)r->pool_size, (int64_t)r->size_bytes,
                    (int64_t)r->freeze_ms, (int64_t)r->created_ms,
                    r->size[0] ? r->size : "default") < 0
               ? -1
               : 0;
}

int store_snapshot_find(struct store *s, const char *project_id, const char *ref,
                        struct snapshot_record *out, lz_error *err)
{
    const char *p = project_id ? project_id : "";
    /* Names cannot take the form of an id (api_snapshots.c), so an exact
     * id match is unambiguous. */
    int n = query(s, err, snapshot_one, out,
                  "SELECT " SNAPSHOT_COLS " FROM snapshots WHERE (id = ? OR (name = ? AND ? <> ''))"
                  " AND (? = '' OR project_id = ?) ORDER BY (id = ?) DESC LIMIT 1",
                  "tttttt", ref, ref, p, p, p, ref);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

static void snapshot_each(sqlite3_stmt *st, void *arg)
{
    struct list_ctx *c = arg;
    struct snapshot_record r;
    snapshot_row(st, &r);
    ((void (*)(const struct snapshot_record *, void *))c->fn)(&r, c->arg);
}

int store_snapshot_list(struct store *s, const char *project_id, const char *status,
                        void (*fn)(const struct snapshot_record *, void *), void *arg,
                        lz_error *err)
{
    struct list_ctx c = {(void *)fn, arg};
    const char *p = project_id ? project_id : "", *st = status ? status : "";
    return query(s, err, snapshot_each, &c,
                 "SELECT " SNAPSHOT_COLS " FROM snapshots WHERE (? = '' OR project_id = ?)"
                 " AND (? = '' OR status = ?) ORDER BY created_ms, id",
                 "tttt", p, p, st, st);
}

int store_snapshot_finish(struct store *s, const struct snapshot_record *r, lz_error *err)
{
    int n = exec_sql(s, err,
                     "UPDATE snapshots SET status = ?, error = ?, size_bytes = ?, freeze_ms = ?"
                     " WHERE id = ?",
                     "ttiit", r->status, r->error, (int64_t)r->size_bytes, (int64_t)r->freeze_ms,
                     r->id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}

int store_snapshot_delete(struct store *s, const char *id, lz_error *err)
{
    int n = exec_sql(s, err, "DELETE FROM snapshots WHERE id = ?", "t", id);
    return n < 0 ? -1 : n == 0 ? STORE_NOT_FOUND : 0;
}
