/* Small file-system helpers used by the daemon, runtime and CLI. */
#ifndef LZ_FSUTIL_H
#define LZ_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>
#include "error.h"

/* mkdir -p with the given mode for created directories. */
int mkdir_p(const char *path, mode_t mode, lz_error *err);
/* rm -rf that does not cross mount points and never follows symlinks. */
int rm_rf(const char *path, lz_error *err);
/* rm -rf of `name` relative to the directory fd `dirfd`, with the same
 * rules (stays on dirfd's file system, never follows symlinks). */
int rm_rf_at(int dirfd, const char *name, lz_error *err);
/* Write the whole string to path (O_CREAT|O_TRUNC, mode), as one write. */
int write_file(const char *path, const char *content, mode_t mode, lz_error *err);
/* Write content to path.tmp, fsync, rename to path: readers see old or new. */
int write_file_atomic(const char *path, const char *content, mode_t mode, lz_error *err);
/* Read a whole (small, < max bytes) file into a NUL-terminated malloc'd buffer. */
int read_file(const char *path, size_t max, char **out, lz_error *err);
/* Full write/read loops on fds that retry on EINTR and short counts. */
int write_all(int fd, const void *buf, size_t n);
/* Returns bytes read (< n only at EOF), or -1. */
ssize_t read_all(int fd, void *buf, size_t n);

#endif
