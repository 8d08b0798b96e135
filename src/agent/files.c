/* File ops. Each runs with the requesting user's fsuid/fsgid and groups, so
 * the kernel decides permissions and sets owners exactly as for a program
 * that user runs; the handler's real ids stay root between ops. */
#include "agent.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

/* Order matters: groups and fsgid are set while fsuid is still 0, and
 * fsuid last; going back, fsuid first so the rest is privileged again. */
static int as_user(const struct agent_user *u)
{
    if (setgroups((size_t)u->ngroups, u->groups) < 0)
        return -1;
    setfsgid(u->gid);
    setfsuid(u->uid);
    /* setfsuid/setfsgid report failure only by returning the old value. */
    if ((uid_t)setfsuid((uid_t)-1) != u->uid || (gid_t)setfsgid((gid_t)-1) != u->gid) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

static void as_root(void)
{
    int saved = errno;
    setfsuid(0);
    setfsgid(0);
    setgroups(0, NULL);
    errno = saved;
}

static void send_errno(struct conn *c, uint32_t id, int e, const char *what, const char *path)
{
    conn_send_error(c, id, errno_code(e), "%s %s: %s", what, path, strerror(e));
}

static const char *type_name(mode_t m)
{
    if (S_ISREG(m))
        return "file";
    if (S_ISDIR(m))
        return "dir";
    if (S_ISLNK(m))
        return "symlink";
    return "other";
}

static json_t *stat_json(int dirfd, const char *name, const char *path, const struct stat *st)
{
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    json_t *j = json_pack("{s:s,s:s,s:s,s:I,s:i,s:I,s:I,s:I}", "name", name ? name : base, "path",
                          path, "type", type_name(st->st_mode), "size", (json_int_t)st->st_size,
                          "mode", (int)(st->st_mode & 07777), "uid", (json_int_t)st->st_uid, "gid",
                          (json_int_t)st->st_gid, "mtime", (json_int_t)st->st_mtime);
    if (j && S_ISLNK(st->st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(dirfd, name ? name : path, target, sizeof(target) - 1);
        if (n >= 0) {
            target[n] = '\0';
            json_object_set_new(j, "target", json_stringn(target, (size_t)n));
        }
    }
    return j;
}

static void op_stat(struct conn *c, uint32_t id, const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return send_errno(c, id, errno, "stat", path);
    conn_send_json(c, PROTO_RESPONSE, id, stat_json(AT_FDCWD, NULL, path, &st));
}

static void op_list(struct conn *c, uint32_t id, const char *path)
{
    cleanup_closedir DIR *d = opendir(path);
    if (d == NULL)
        return send_errno(c, id, errno, "list", path);
    json_t *entries = json_array();
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* removed meanwhile */
        cleanup_free char *full = NULL;
        if (asprintf(&full, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", de->d_name) <
            0)
            continue;
        json_array_append_new(entries, stat_json(dirfd(d), de->d_name, full, &st));
    }
    conn_send_json(c, PROTO_RESPONSE, id, json_pack("{s:o}", "entries", entries));
}

static void op_mkdir(struct conn *c, uint32_t id, const char *path)
{
    lz_error err = {0};
    struct stat st;
    if (mkdir_p(path, 0755, &err) < 0)
        return send_errno(c, id, err.errnum, "mkdir", path);
    if (stat(path, &st) < 0)
        return send_errno(c, id, errno, "mkdir", path);
    if (!S_ISDIR(st.st_mode))
        return send_errno(c, id, EEXIST, "mkdir", path);
    conn_send(c, PROTO_RESPONSE, id, "{}", 2);
}

static void op_remove(struct conn *c, uint32_t id, const char *path, bool recursive)
{
    struct stat st;
    lz_error err = {0};
    if (lstat(path, &st) < 0)
        return send_errno(c, id, errno, "remove", path);
    if (S_ISDIR(st.st_mode) && recursive) {
        if (rm_rf(path, &err) < 0)
            return send_errno(c, id, err.errnum, "remove", path);
    } else if ((S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path)) < 0) {
        return send_errno(c, id, errno, "remove", path);
    }
    conn_send(c, PROTO_RESPONSE, id, "{}", 2);
}

static void op_rename(struct conn *c, uint32_t id, const char *from, const char *to)
{
    if (rename(from, to) < 0)
        return send_errno(c, id, errno, "rename", from);
    conn_send(c, PROTO_RESPONSE, id, "{}", 2);
}

static void op_read(struct conn *c, uint32_t id, const struct request *req)
{
    /* O_NONBLOCK so a FIFO cannot hang the handler in open(). */
    int fd = open(req->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return send_errno(c, id, errno, "read", req->path);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        bool other = e == 0 || !S_ISDIR(st.st_mode);
        close(fd);
        if (other)
            return conn_send_error(c, id, "invalid", "read %s: not a regular file", req->path);
        return send_errno(c, id, e, "read", req->path);
    }
    fcntl(fd, F_SETFL, 0);
    struct stream *s = conn_stream_new(c, id, ST_FILE_READ);
    if (s == NULL) {
        close(fd);
        return conn_send_error(c, id, "io", "out of memory");
    }
    s->fd = fd;
}

bool files_read_step(struct conn *c, struct stream *s)
{
    static char buf[PROTO_CHUNK];
    ssize_t n;
    do
        n = read(s->fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    if (n > 0) {
        conn_send(c, PROTO_DATA, s->id, buf, (size_t)n);
        s->size += (uint64_t)n;
        return true;
    }
    if (n < 0)
        send_errno(c, s->id, errno, "read", "file");
    else
        conn_send_json(c, PROTO_RESPONSE, s->id, json_pack("{s:I}", "size", (json_int_t)s->size));
    conn_stream_free(c, s);
    return false;
}

/* Split "/a/b/name" into a malloc'd parent and a pointer to the name. */
static char *parent_of(const char *path, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash + 1;
    if (**name == '\0' || strcmp(*name, ".") == 0)
        return NULL;
    return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

static void op_write(struct conn *c, uint32_t id, const struct request *req,
                     const struct agent_user *u)
{
    const char *name;
    cleanup_free char *dir = parent_of(req->path, &name);
    if (dir == NULL)
        return conn_send_error(c, id, "invalid", "write %s: not a file name", req->path);
    struct stat st;
    if (stat(req->path, &st) == 0 && S_ISDIR(st.st_mode))
        return send_errno(c, id, EISDIR, "write", req->path);
    lz_error err = {0};
    if (mkdir_p(dir, 0755, &err) < 0)
        return send_errno(c, id, err.errnum, "mkdir", dir);
    cleanup_free char *tmp = NULL;
    if (asprintf(&tmp, "%s/.%s.lizard-XXXXXX", strcmp(dir, "/") ? dir : "", name) < 0)
        return conn_send_error(c, id, "io", "out of memory");
    /* A temp file in the same directory, renamed over the target on EOF:
     * readers see the old or the new file, and a cancel keeps the old. */
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return send_errno(c, id, errno, "write", req->path);
    /* fchmod, unlike open's mode, is not filtered by the umask. */
    if (fchmod(fd, req->mode) < 0) {
        send_errno(c, id, errno, "chmod", req->path);
        unlink(tmp);
        close(fd);
        return;
    }
    struct stream *s = conn_stream_new(c, id, ST_FILE_WRITE);
    if (s == NULL || (s->path = strdup(req->path)) == NULL) {
        if (s)
            conn_stream_free(c, s);
        unlink(tmp);
        close(fd);
        return conn_send_error(c, id, "io", "out of memory");
    }
    s->fd = fd;
    s->tmp_path = steal_ptr(&tmp);
    s->user = *u; /* for the rename at EOF */
}

/* Drop the temp file as the user who created it. */
static void write_discard(struct stream *s)
{
    if (s->tmp_path && as_user(&s->user) == 0) {
        unlink(s->tmp_path);
        as_root();
    }
}

void files_write_data(struct conn *c, struct stream *s, const uint8_t *buf, size_t len)
{
    if (write_all(s->fd, buf, len) < 0) {
        send_errno(c, s->id, errno, "write", s->path);
        write_discard(s);
        conn_stream_free(c, s);
        return;
    }
    s->size += len;
}

void files_write_eof(struct conn *c, struct stream *s)
{
    int r = close(s->fd);
    s->fd = -1;
    if (r == 0 && as_user(&s->user) == 0) {
        r = rename(s->tmp_path, s->path);
        as_root();
    } else {
        r = -1;
    }
    if (r < 0) {
        send_errno(c, s->id, errno, "write", s->path);
        write_discard(s);
    } else {
        conn_send_json(c, PROTO_RESPONSE, s->id, json_pack("{s:I}", "size", (json_int_t)s->size));
    }
    conn_stream_free(c, s);
}

void files_abort(struct conn *c, struct stream *s)
{
    if (s->kind == ST_EXEC)
        return;
    if (s->kind == ST_FILE_WRITE)
        write_discard(s);
    conn_stream_free(c, s);
}

void files_handle(struct conn *c, uint32_t id, const struct request *req)
{
    struct agent_user u;
    lz_error err = {0};
    if (users_lookup(req->user, &u, &err) < 0)
        return conn_send_error(c, id, err.errnum == ENOENT ? "unknown_user" : "io", "%s", err.msg);
    if (as_user(&u) < 0)
        return conn_send_error(c, id, "io", "switch to user %s: %s", u.name, strerror(errno));
    switch (req->op) {
    case OP_FILE_READ:
        op_read(c, id, req);
        break;
    case OP_FILE_WRITE:
        op_write(c, id, req, &u);
        break;
    case OP_FILE_LIST:
        op_list(c, id, req->path);
        break;
    case OP_FILE_STAT:
        op_stat(c, id, req->path);
        break;
    case OP_FILE_MKDIR:
        op_mkdir(c, id, req->path);
        break;
    case OP_FILE_REMOVE:
        op_remove(c, id, req->path, req->recursive);
        break;
    case OP_FILE_RENAME:
        op_rename(c, id, req->path, req->to);
        break;
    default:
        conn_send_error(c, id, "invalid", "not a file op");
    }
    as_root();
}
