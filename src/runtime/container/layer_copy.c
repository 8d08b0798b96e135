/* Two-pass copy of an overlay upper directory; see layer_copy.h. */
#include "layer_copy.h"
#include "../../common/cleanup.h"
#include "../../common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

struct mentry {
    char *path; /* relative to the layer root; "" is the root */
    struct timespec ctime;
    ino_t ino;
    mode_t type;
};

struct layer_manifest {
    void *root; /* tsearch tree of struct mentry, by path */
};

struct link_entry {
    ino_t ino;
    char *rel; /* where this pass put the inode's first name, under dst */
};

struct pass {
    struct layer_manifest *m;
    void *links; /* tsearch tree of struct link_entry: hard links in this pass */
    int dst_root;
    struct layer_copy_stats *st;
    char rel[PATH_MAX];
    size_t rel_len;
};

static int mentry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mentry *)a)->path, ((const struct mentry *)b)->path);
}

static int link_cmp(const void *a, const void *b)
{
    ino_t x = ((const struct link_entry *)a)->ino, y = ((const struct link_entry *)b)->ino;
    return x < y ? -1 : x > y;
}

static void mentry_free(void *p)
{
    struct mentry *e = p;
    free(e->path);
    free(e);
}

static void link_free(void *p)
{
    struct link_entry *e = p;
    free(e->rel);
    free(e);
}

void layer_manifest_free(struct layer_manifest *m)
{
    if (m == NULL)
        return;
    tdestroy(m->root, mentry_free);
    free(m);
}

static struct mentry *manifest_find(struct layer_manifest *m, const char *path)
{
    struct mentry key = {.path = (char *)path};
    void *n = tfind(&key, &m->root, mentry_cmp);
    return n ? *(struct mentry **)n : NULL;
}

static int manifest_put(struct pass *p, const struct stat *st, lz_error *err)
{
    struct mentry *e = manifest_find(p->m, p->rel);
    if (e == NULL) {
        e = calloc(1, sizeof(*e));
        if (e == NULL || (e->path = strdup(p->rel)) == NULL) {
            free(e);
            return lz_error_set(err, ENOMEM, "layer manifest");
        }
        if (tsearch(e, &p->m->root, mentry_cmp) == NULL) {
            mentry_free(e);
            return lz_error_set(err, ENOMEM, "layer manifest");
        }
    }
    e->ctime = st->st_ctim;
    e->ino = st->st_ino;
    e->type = st->st_mode & S_IFMT;
    return 0;
}

/* p->rel += "/name" (no slash at the root); returns the old length. */
static size_t rel_push(struct pass *p, const char *name, lz_error *err)
{
    size_t old = p->rel_len;
    int n = snprintf(p->rel + old, sizeof(p->rel) - old, "%s%s", old ? "/" : "", name);
    if (n < 0 || (size_t)n >= sizeof(p->rel) - old) {
        lz_error_set(err, ENAMETOOLONG, "path too long in the layer: %s...", p->rel);
        return (size_t)-1;
    }
    p->rel_len += (size_t)n;
    return old;
}

static void rel_pop(struct pass *p, size_t old)
{
    p->rel_len = old;
    p->rel[old] = '\0';
}

/* Source entries may vanish or change type while the sandbox runs (pass
 * one): such an entry is skipped, and the frozen pass copies its final state. */
static int vanished(int e)
{
    return e == ENOENT || e == ELOOP || e == ENOTDIR || e == ENXIO;
}

/* Every xattr of sfd onto dfd, after removing dfd's own (a sync must also
 * drop an opaque mark the sandbox removed). Only overlay's own attributes
 * must arrive; others (security.*, user.*) are best effort. */
static int copy_xattrs(int sfd, int dfd, const char *what, lz_error *err)
{
    char names[8192], value[65536];
    ssize_t n = flistxattr(dfd, names, sizeof(names));
    for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(names + i) + 1)
        fremovexattr(dfd, names + i);
    n = flistxattr(sfd, names, sizeof(names));
    if (n < 0)
        return errno == ENOTSUP ? 0 : lz_error_sys(err, "list xattrs of %s", what);
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1) {
        const char *name = names + i;
        ssize_t len = fgetxattr(sfd, name, value, sizeof(value));
        int must = strncmp(name, "trusted.overlay.", 16) == 0;
        if (len < 0 || fsetxattr(dfd, name, value, (size_t)len, 0) < 0) {
            if (must)
                return lz_error_sys(err, "copy xattr %s of %s", name, what);
        }
    }
    return 0;
}

/* Owner first: chown clears set-id bits, which the chmod then restores. */
static int copy_meta_fd(int sfd, int dfd, const struct stat *st, const char *what, lz_error *err)
{
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (fchown(dfd, st->st_uid, st->st_gid) < 0 || fchmod(dfd, st->st_mode & 07777) < 0)
        return lz_error_sys(err, "set owner/mode of %s", what);
    if (copy_xattrs(sfd, dfd, what, err) < 0)
        return -1;
    if (futimens(dfd, times) < 0)
        return lz_error_sys(err, "set times of %s", what);
    return 0;
}

static int copy_data(int sfd, int dfd, uint64_t *bytes, const char *what, lz_error *err)
{
    /* copy_file_range lets the kernel move pages without a trip through
     * user space; tmpfs to ext4 falls back inside the kernel. */
    for (;;) {
        ssize_t n = copy_file_range(sfd, NULL, dfd, NULL, 1 << 30, 0);
        if (n == 0)
            return 0;
        if (n > 0) {
            *bytes += (uint64_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
            return lz_error_sys(err, "copy %s", what);
        break;
    }
    /* Heap, not TLS or stack: daemon threads have small stacks. */
    size_t bufsz = 1 << 20;
    cleanup_free char *buf = malloc(bufsz);
    if (buf == NULL)
        return lz_error_set(err, ENOMEM, "copy %s", what);
    for (;;) {
        ssize_t n = read(sfd, buf, bufsz);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return lz_error_sys(err, "read %s", what);
        if (n == 0)
            return 0;
        if (write_all(dfd, buf, (size_t)n) < 0)
            return lz_error_sys(err, "write %s", what);
        *bytes += (uint64_t)n;
    }
}

static int copy_dir(struct pass *p, int sfd, int dfd, lz_error *err);

static int copy_regular(struct pass *p, int sdir, int ddir, const char *name, const struct stat *st,
                        lz_error *err)
{
    if (st->st_nlink > 1) {
        struct link_entry key = {.ino = st->st_ino};
        void *n = tfind(&key, &p->links, link_cmp);
        if (n && linkat(p->dst_root, (*(struct link_entry **)n)->rel, ddir, name, 0) == 0)
            return manifest_put(p, st, err);
    }
    cleanup_close int sfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (sfd < 0)
        return vanished(errno) ? 1 : lz_error_sys(err, "open %s", p->rel);
    /* The stat of the open file, taken before its data is read: a write
     * after this point changes ctime, so the next pass copies it again. */
    struct stat fst;
    if (fstat(sfd, &fst) < 0)
        return lz_error_sys(err, "stat %s", p->rel);
    if (!S_ISREG(fst.st_mode))
        return 1;
    cleanup_close int dfd =
        openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (dfd < 0)
        return lz_error_sys(err, "create %s", p->rel);
    if (copy_data(sfd, dfd, &p->st->bytes, p->rel, err) < 0 ||
        copy_meta_fd(sfd, dfd, &fst, p->rel, err) < 0)
        return -1;
    if (fst.st_nlink > 1) {
        struct link_entry *e = calloc(1, sizeof(*e));
        if (e && (e->rel = strdup(p->rel)) != NULL) {
            e->ino = fst.st_ino;
            if (tsearch(e, &p->links, link_cmp) != NULL)
                e = NULL;
        }
        if (e)
            link_free(e); /* only hard links are lost when memory is short */
    }
    return manifest_put(p, &fst, err);
}

static int copy_special(struct pass *p, int sdir, int ddir, const char *name, const struct stat *st,
                        lz_error *err)
{
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);
        if (n < 0)
            return vanished(errno) || errno == EINVAL ? 1
                                                      : lz_error_sys(err, "readlink %s", p->rel);
        target[n] = '\0';
        if (symlinkat(target, ddir, name) < 0)
            return lz_error_sys(err, "symlink %s", p->rel);
    } else {
        /* Whiteouts (0/0 character devices), FIFOs, sockets, devices. The
         * node is inert on the host: nothing opens it there. */
        if (mknodat(ddir, name, st->st_mode, st->st_rdev) < 0)
            return lz_error_sys(err, "mknod %s", p->rel);
        if (fchmodat(ddir, name, st->st_mode & 07777, 0) < 0)
            return lz_error_sys(err, "chmod %s", p->rel);
    }
    if (fchownat(ddir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
        utimensat(ddir, name, times, AT_SYMLINK_NOFOLLOW) < 0)
        return lz_error_sys(err, "set owner/times of %s", p->rel);
    return manifest_put(p, st, err);
}

static int open_dir_at(int dirfd, const char *name)
{
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Copy one entry (a whole subtree for a directory); dst must not have it.
 * Returns 0, 1 when the source entry vanished (skipped), -1 on error. */
static int copy_entry(struct pass *p, int sdir, int ddir, const char *name, const struct stat *st,
                      lz_error *err)
{
    p->st->entries++;
    if (S_ISREG(st->st_mode))
        return copy_regular(p, sdir, ddir, name, st, err);
    if (!S_ISDIR(st->st_mode))
        return copy_special(p, sdir, ddir, name, st, err);
    cleanup_close int sfd = open_dir_at(sdir, name);
    if (sfd < 0)
        return vanished(errno) ? 1 : lz_error_sys(err, "open %s", p->rel);
    struct stat fst;
    if (fstat(sfd, &fst) < 0)
        return lz_error_sys(err, "stat %s", p->rel);
    if (mkdirat(ddir, name, 0700) < 0)
        return lz_error_sys(err, "mkdir %s", p->rel);
    cleanup_close int dfd = open_dir_at(ddir, name);
    if (dfd < 0)
        return lz_error_sys(err, "open %s", p->rel);
    if (copy_dir(p, sfd, dfd, err) < 0)
        return -1;
    /* After the children: creating them changed the directory's mtime. */
    if (copy_meta_fd(sfd, dfd, &fst, p->rel, err) < 0)
        return -1;
    return manifest_put(p, &fst, err);
}

typedef int (*entry_fn)(struct pass *p, int sfd, int dfd, const char *name, lz_error *err);

/* Calls fn for every entry of the directory `listfd` (not . and ..). */
static int each_entry(struct pass *p, int listfd, int sfd, int dfd, entry_fn fn, lz_error *err)
{
    int fd = dup(listfd);
    if (fd < 0)
        return lz_error_sys(err, "dup");
    cleanup_closedir DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return lz_error_sys(err, "opendir %s", p->rel);
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        size_t old = rel_push(p, de->d_name, err);
        if (old == (size_t)-1)
            return -1;
        int r = fn(p, sfd, dfd, de->d_name, err);
        rel_pop(p, old);
        if (r < 0)
            return -1;
    }
    return 0;
}

static int copy_one(struct pass *p, int sfd, int dfd, const char *name, lz_error *err)
{
    struct stat st;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return vanished(errno) ? 0 : lz_error_sys(err, "stat %s", p->rel);
    return copy_entry(p, sfd, dfd, name, &st, err) < 0 ? -1 : 0;
}

static int copy_dir(struct pass *p, int sfd, int dfd, lz_error *err)
{
    return each_entry(p, sfd, sfd, dfd, copy_one, err);
}

static int same_entry(const struct mentry *m, const struct stat *st)
{
    return m && m->ino == st->st_ino && m->type == (st->st_mode & S_IFMT) &&
           m->ctime.tv_sec == st->st_ctim.tv_sec && m->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static int sync_dir(struct pass *p, int sfd, int dfd, const struct stat *st, int changed,
                    lz_error *err);

static int sync_one(struct pass *p, int sfd, int dfd, const char *name, lz_error *err)
{
    struct stat st, dst;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return vanished(errno) ? 0 : lz_error_sys(err, "stat %s", p->rel);
    int have = fstatat(dfd, name, &dst, AT_SYMLINK_NOFOLLOW) == 0;
    int same_type = have && (dst.st_mode & S_IFMT) == (st.st_mode & S_IFMT);
    int unchanged = same_type && same_entry(manifest_find(p->m, p->rel), &st);
    if (S_ISDIR(st.st_mode) && same_type) {
        /* A directory is walked even when it did not change itself: a
         * change deep inside does not touch its ctime. */
        cleanup_close int s2 = open_dir_at(sfd, name);
        cleanup_close int d2 = open_dir_at(dfd, name);
        if (s2 < 0 || d2 < 0)
            return lz_error_sys(err, "open %s", p->rel);
        return sync_dir(p, s2, d2, &st, !unchanged, err);
    }
    if (unchanged)
        return 0;
    if (have && rm_rf_at(dfd, name, err) < 0)
        return -1;
    return copy_entry(p, sfd, dfd, name, &st, err) < 0 ? -1 : 0;
}

static int sync_remove(struct pass *p, int sfd, int dfd, const char *name, lz_error *err)
{
    struct stat st;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
        return 0;
    p->st->removed++;
    return rm_rf_at(dfd, name, err);
}

static int sync_dir(struct pass *p, int sfd, int dfd, const struct stat *st, int changed,
                    lz_error *err)
{
    if (each_entry(p, sfd, sfd, dfd, sync_one, err) < 0 ||
        each_entry(p, dfd, sfd, dfd, sync_remove, err) < 0)
        return -1;
    if (changed) {
        p->st->entries++;
        if (manifest_put(p, st, err) < 0)
            return -1;
        return copy_meta_fd(sfd, dfd, st, p->rel[0] ? p->rel : "/", err);
    }
    /* Only the times: adding or removing children changed them. */
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (futimens(dfd, times) < 0)
        return lz_error_sys(err, "set times of %s", p->rel);
    return 0;
}

static int open_roots(const char *src, const char *dst, int *sfd, int *dfd, struct stat *st,
                      lz_error *err)
{
    *sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*sfd < 0)
        return lz_error_sys(err, "open %s", src);
    if (fstat(*sfd, st) < 0)
        return lz_error_sys(err, "stat %s", src);
    *dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*dfd < 0)
        return lz_error_sys(err, "open %s", dst);
    return 0;
}

/* One pass: make dst equal to src, judging "changed" by manifest m. */
static int run_pass(const char *src, const char *dst, struct layer_manifest *m,
                    struct layer_copy_stats *stats, lz_error *err)
{
    cleanup_close int sfd = -1, dfd = -1;
    struct stat st;
    struct pass p = {.m = m, .st = stats};
    int r = open_roots(src, dst, &sfd, &dfd, &st, err);
    if (r == 0) {
        p.dst_root = dfd;
        r = sync_dir(&p, sfd, dfd, &st, !same_entry(manifest_find(m, ""), &st), err);
    }
    tdestroy(p.links, link_free);
    return r;
}

int layer_copy(const char *src, const char *dst, struct layer_manifest **out,
               struct layer_copy_stats *stats, lz_error *err)
{
    struct layer_manifest *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return lz_error_set(err, ENOMEM, "layer manifest");
    /* A sync against an empty manifest into a new directory is a copy. */
    if (mkdir(dst, 0700) < 0) {
        free(m);
        return lz_error_sys(err, "mkdir %s", dst);
    }
    if (run_pass(src, dst, m, stats, err) < 0) {
        layer_manifest_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

int layer_sync(const char *src, const char *dst, struct layer_manifest *m,
               struct layer_copy_stats *stats, lz_error *err)
{
    return run_pass(src, dst, m, stats, err);
}
