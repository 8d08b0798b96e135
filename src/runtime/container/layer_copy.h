/* Copying an overlay upper directory (a sandbox's writable layer) into a
 * snapshot layer, in two passes so the sandbox is frozen only briefly:
 *
 *   layer_copy(src, dst, &m)   while the sandbox runs: everything, and a
 *                              manifest of what was copied (path -> ctime, ino)
 *   layer_sync(src, dst, m)    while it is frozen: only what changed since
 *                              (ctime or inode differ, new, or deleted)
 *
 * ctime is the change detector because a sandbox can set mtime and size
 * back but cannot set ctime. Kept: file data, ownership, mode, mtime,
 * xattrs of files and directories (trusted.overlay.opaque marks opaque
 * directories), symlinks, hard links within one pass, and device nodes,
 * FIFOs and sockets (overlay whiteouts are 0/0 character devices).
 *
 * The source tree belongs to a sandbox: it is walked with *at() calls
 * relative to directory fds we opened, never following a symlink, so a
 * link planted inside cannot make the host copy its own files. */
#ifndef LZ_LAYER_COPY_H
#define LZ_LAYER_COPY_H

#include <stdint.h>
#include "../../common/error.h"

struct layer_manifest;

struct layer_copy_stats {
    uint64_t entries; /* entries copied (or re-copied) */
    uint64_t bytes;   /* file bytes copied */
    uint64_t removed; /* entries deleted from dst (sync) */
};

/* dst must not exist; it is created with src's metadata. *out receives the
 * manifest (free with layer_manifest_free) on success. */
int layer_copy(const char *src, const char *dst, struct layer_manifest **out,
               struct layer_copy_stats *stats, lz_error *err);
/* Make dst equal to src again, using the manifest of the previous pass. */
int layer_sync(const char *src, const char *dst, struct layer_manifest *m,
               struct layer_copy_stats *stats, lz_error *err);
void layer_manifest_free(struct layer_manifest *m);

#endif
