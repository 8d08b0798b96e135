#include "fsutil.h"
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mkdir_p(const char *path, mode_t mode, lz_error *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return lz_error_set(err, ENAMETOOLONG, "mkdir %s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
            return lz_error_sys(err, "mkdir %s", buf);
        *p = '/';
    }
    if (mkdir(buf, mode) < 0 && errno != EEXIST)
        return lz_error_sys(err, "mkdir %s", buf);
    return 0;
}

static int rm_rf_dev(int dirfd, const char *name, dev_t dev, lz_error *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : lz_error_sys(err, "stat %s", name);
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
            return lz_error_sys(err, "unlink %s", name);
        return 0;
    }
    if (st.st_dev != dev)
        return lz_error_set(err, EBUSY, "refusing to remove %s: a mount point", name);
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return lz_error_sys(err, "open %s", name);
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return lz_error_sys(err, "opendir %s", name);
    }
    int ret = 0;
    struct dirent *de;
    while (ret == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        ret = rm_rf_dev(fd, de->d_name, dev, err);
    }
    closedir(d);
    if (ret == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return lz_error_sys(err, "rmdir %s", name);
    return ret;
}

int rm_rf(const char *path, lz_error *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : lz_error_sys(err, "stat %s", path);
    return rm_rf_dev(AT_FDCWD, path, st.st_dev, err);
}

int rm_rf_at(int dirfd, const char *name, lz_error *err)
{
    struct stat st;
    if (fstat(dirfd, &st) < 0)
        return lz_error_sys(err, "stat a directory");
    return rm_rf_dev(dirfd, name, st.st_dev, err);
}

int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

ssize_t read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int write_file(const char *path, const char *content, mode_t mode, lz_error *err)
{
    cleanup_close int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return lz_error_sys(err, "open %s", path);
    if (write_all(fd, content, strlen(content)) < 0)
        return lz_error_sys(err, "write %s", path);
    return 0;
}

int write_file_atomic(const char *path, const char *content, mode_t mode, lz_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return lz_error_set(err, ENAMETOOLONG, "path %s", path);
    cleanup_close int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return lz_error_sys(err, "open %s", tmp);
    if (write_all(fd, content, strlen(content)) < 0 || fsync(fd) < 0)
        return lz_error_sys(err, "write %s", tmp);
    if (rename(tmp, path) < 0)
        return lz_error_sys(err, "rename %s", tmp);
    return 0;
}

int read_file(const char *path, size_t max, char **out, lz_error *err)
{
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return lz_error_sys(err, "open %s", path);
    cleanup_free char *buf = malloc(max + 1);
    if (buf == NULL)
        return lz_error_set(err, ENOMEM, "read %s", path);
    ssize_t n = read_all(fd, buf, max + 1);
    if (n < 0)
        return lz_error_sys(err, "read %s", path);
    if ((size_t)n > max)
        return lz_error_set(err, EFBIG, "read %s: larger than %zu bytes", path, max);
    buf[n] = '\0';
    *out = steal_ptr(&buf);
    return 0;
}
