/* Snapshots of container sandboxes (files only) and their warm pools.
 * Layers live in DATA/snapshots/ID; rows in the store's snapshots table.
 * See docs/pause-snapshots.md. */
#ifndef LZ_SNAPSHOTS_H
#define LZ_SNAPSHOTS_H

#include <jansson.h>
#include "daemon.h"
#include "sandboxes.h"

#define SNAPSHOT_POOL_DEFAULT 5
#define SNAPSHOT_POOL_MAX 10

/* Register snapshot `name` of sandbox sb (running or paused) and start
 * copying it in the background; *out is the "creating" row. */
int snapshot_start(struct lizardd *d, const struct sandbox_record *sb, const char *name,
                   int pool_size, struct snapshot_record *out, struct api_failure *fail);
/* A pooled copy of snapshot s becomes the caller's sandbox at once (*out);
 * 503 + Retry-After when none is ready. */
int snapshot_restore(struct lizardd *d, const struct snapshot_record *s, int64_t timeout_ms,
                     json_t *metadata, json_t *env, struct sandbox_record *out,
                     struct api_failure *fail);
/* Delete the row and its pooled copies; the layer stays while restored
 * sandboxes (or snapshots of them) still use it. */
int snapshot_delete(struct lizardd *d, const struct snapshot_record *s, lz_error *err);
/* For a create whose template is not a built-in one: if `ref` names a
 * snapshot of the project, fill rq (template, layers, size) from it and
 * return 0; 1 when it is no snapshot; -1 with *fail. `snap` must outlive rq. */
int snapshot_fill_request(struct lizardd *d, const char *project_id, const char *ref,
                          struct sandbox_request *rq, struct snapshot_record *snap,
                          struct api_failure *fail);
/* "a:b" (snapshot ids) -> "DATA/snapshots/a:DATA/snapshots/b" for overlayfs. */
int snapshot_lowerdir(struct lizardd *d, const char *layers, char *out, size_t n);
json_t *snapshot_json(struct lizardd *d, const struct snapshot_record *s);

/* At start-up: drop snapshots a crash interrupted (and thaw their source
 * sandboxes), then start the pool thread (refill, orphan copies, layer GC). */
void snapshots_recover(struct lizardd *d);
int snapshots_pool_start(struct lizardd *d, lz_error *err);
/* Wake the pool thread (a copy was handed out, a snapshot became ready...). */
void snapshots_pool_poke(void);

#endif
