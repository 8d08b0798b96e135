/* Foreground exec: a child in its own session, stdout/stderr streamed as
 * frames, stdin fed from DATA frames, a deadline, and a RESPONSE once the
 * program is done. */
#include "agent.h"
#include "../common/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long to wait for the output pipes after the main process exited: a
 * background child (`nohup server &`) may hold them open forever. */
#define EXEC_PIPE_GRACE_MS 100
/* DATA for stdin is buffered when the child does not read; past this the
 * rest is dropped (the protocol has no backpressure for stdin). */
#define EXEC_STDIN_MAX (64u << 20)

extern char **environ;

struct spawn_status {
    int stage; /* index into stage_names */
    int errnum;
};
static const char *stage_names[] = {"setsid", "stdio", "setgroups", "setgid", "setuid", "cwd"};
enum { STAGE_SETSID, STAGE_STDIO, STAGE_SETGROUPS, STAGE_SETGID, STAGE_SETUID, STAGE_CWD };

static void env_set(char **env, size_t *n, const char *kv)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < *n; i++)
        if (strncmp(env[i], kv, klen) == 0 && env[i][klen] == '=') {
            env[i] = (char *)kv;
            return;
        }
    env[(*n)++] = (char *)kv;
}

/* The fixed base environment, then the request's overrides. The strings
 * live in `storage` (or in req) until the caller frees the array. */
static char **build_env(const struct request *req, const struct agent_user *u, char storage[5][600])
{
    size_t extra = 0;
    while (req->env && req->env[extra])
        extra++;
    char **env = calloc(7 + extra, sizeof(char *));
    if (env == NULL)
        return NULL;
    size_t n = 0;
    env[n++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    snprintf(storage[0], 600, "HOME=%s", u->home);
    snprintf(storage[1], 600, "USER=%s", u->name);
    snprintf(storage[2], 600, "LOGNAME=%s", u->name);
    snprintf(storage[3], 600, "SHELL=%s", u->shell);
    for (int i = 0; i < 4; i++)
        env[n++] = storage[i];
    env[n++] = "LANG=C.UTF-8";
    for (size_t i = 0; i < extra; i++)
        env_set(env, &n, req->env[i]);
    return env;
}

static void __attribute__((noreturn)) child_fail(int sp, int stage)
{
    struct spawn_status st = {stage, errno};
    if (write(sp, &st, sizeof(st)) < 0) {
        /* nothing left to tell anyone */
    }
    _exit(126);
}

static void __attribute__((noreturn))
child_exec(const struct request *req, const struct agent_user *u, int fds[3], int sp, char **env)
{
    /* The agent ignores SIGPIPE & co. and blocks SIGCHLD; an ignored
     * disposition and the mask would survive exec, so reset them. */
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (setsid() < 0)
        child_fail(sp, STAGE_SETSID);
    for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0)
            child_fail(sp, STAGE_STDIO);
    /* Every agent fd should be CLOEXEC already; this is the safety net
     * against leaking the connection socket into user programs. */
    syscall(SYS_close_range, 3, ~0u, CLOSE_RANGE_CLOEXEC);
    /* Groups and gid need privilege, so they go before setuid. */
    if (setgroups((size_t)u->ngroups, u->groups) < 0)
        child_fail(sp, STAGE_SETGROUPS);
    if (setgid(u->gid) < 0)
        child_fail(sp, STAGE_SETGID);
    if (setuid(u->uid) < 0)
        child_fail(sp, STAGE_SETUID);
    /* chdir after setuid, so the user's own permissions apply to cwd. */
    if (req->cwd) {
        if (chdir(req->cwd) < 0)
            child_fail(sp, STAGE_CWD);
    } else if (chdir(u->home) < 0 && chdir("/") < 0) {
        child_fail(sp, STAGE_CWD);
    }
    /* execvp searches the PATH of environ, which must be the new one. */
    environ = env;
    execvp(req->argv[0], (char *const *)req->argv);
    int e = errno;
    if (e == ENOENT)
        dprintf(2, "%s: command not found\n", req->argv[0]);
    else
        dprintf(2, "%s: %s\n", req->argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

pid_t exec_spawn(const struct request *req, const struct agent_user *u, int in_fd, int out_fd,
                 int err_fd, lz_error *err)
{
    char storage[5][600];
    cleanup_free char **env = build_env(req, u, storage);
    if (env == NULL)
        return lz_error_set(err, ENOMEM, "environment");
    int sp[2];
    if (pipe2(sp, O_CLOEXEC) < 0)
        return lz_error_sys(err, "pipe");
    pid_t pid = fork();
    if (pid < 0) {
        close(sp[0]);
        close(sp[1]);
        return lz_error_sys(err, "fork");
    }
    if (pid == 0) {
        int fds[3] = {in_fd, out_fd, err_fd};
        child_exec(req, u, fds, sp[1], env);
    }
    close(sp[1]);
    /* Wait until the child has exec'd (EOF via CLOEXEC) or reported what
     * failed; after this the child's session exists, so kill(-pid) works. */
    struct spawn_status st;
    ssize_t n;
    do
        n = read(sp[0], &st, sizeof(st));
    while (n < 0 && errno == EINTR);
    close(sp[0]);
    if (n != sizeof(st))
        return pid;
    waitpid(pid, NULL, 0);
    if (st.stage < 0 || st.stage > STAGE_CWD)
        st.stage = STAGE_STDIO;
    if (st.stage == STAGE_CWD)
        return lz_error_set(err, st.errnum, "cwd %s", req->cwd ? req->cwd : u->home);
    return lz_error_set(err, st.errnum, "%s", stage_names[st.stage]);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int make_pipe(int p[2], int nonblock_end)
{
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fcntl(p[nonblock_end], F_SETFL, O_NONBLOCK);
    return 0;
}

void exec_start(struct conn *c, uint32_t id, const struct request *req)
{
    struct agent_user u;
    lz_error err = {0};
    if (users_lookup(req->user, &u, &err) < 0) {
        conn_send_error(c, id, err.errnum == ENOENT ? "unknown_user" : "io", "%s", err.msg);
        return;
    }
    int out[2] = {-1, -1}, errp[2] = {-1, -1}, in[2] = {-1, -1};
    if (make_pipe(out, 0) < 0 || make_pipe(errp, 0) < 0 ||
        (req->stdin_pipe ? make_pipe(in, 1) : (in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC))) <
            0) {
        conn_send_error(c, id, "io", "pipe: %s", strerror(errno));
        goto out;
    }
    pid_t pid = exec_spawn(req, &u, in[0], out[1], errp[1], &err);
    if (pid < 0) {
        conn_send_error(c, id, errno_code(err.errnum), "%s", err.msg);
        goto out;
    }
    struct stream *s = conn_stream_new(c, id, ST_EXEC);
    if (s == NULL) {
        kill(-pid, SIGKILL);
        conn_send_error(c, id, "io", "out of memory");
        goto out;
    }
    s->pid = pid;
    s->out_fd = out[0];
    s->err_fd = errp[0];
    s->in_fd = in[1];
    out[0] = errp[0] = in[1] = -1;
    s->max_output = req->max_output;
    s->deadline_ms = req->timeout_ms ? now_ms() + (int64_t)req->timeout_ms : 0;
out:
    /* The child's ends (and ours on failure) close here. */
    for (int i = 0; i < 2; i++) {
        close_fd(&out[i]);
        close_fd(&errp[i]);
        close_fd(&in[i]);
    }
}

static void forward_output(struct conn *c, struct stream *s, int *fd, uint8_t type, uint64_t *sent)
{
    char buf[PROTO_CHUNK];
    ssize_t n = read(*fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        close_fd(fd);
        return;
    }
    /* Past maxOutput the bytes are still read, so the child never blocks
     * on a full pipe, but dropped. */
    uint64_t room = s->max_output - *sent;
    size_t take = (uint64_t)n < room ? (size_t)n : (size_t)room;
    if (take < (size_t)n)
        s->truncated = true;
    if (take > 0 && s->id != 0)
        conn_send(c, type, s->id, buf, take);
    *sent += take;
}

static void feed_stdin(struct stream *s)
{
    struct byte_queue *q = &s->in;
    while (q->off < q->len) {
        ssize_t w = write(s->in_fd, q->buf + q->off, q->len - q->off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            /* EPIPE: the child closed stdin; what is left has no reader. */
            q->off = q->len;
            close_fd(&s->in_fd);
            break;
        }
        q->off += (size_t)w;
    }
    q->off = q->len = 0;
    if (s->in_eof)
        close_fd(&s->in_fd);
}

void exec_on_fd(struct conn *c, struct stream *s, int fd, short revents)
{
    (void)revents;
    if (fd == s->out_fd)
        forward_output(c, s, &s->out_fd, PROTO_STDOUT, &s->sent_out);
    else if (fd == s->err_fd)
        forward_output(c, s, &s->err_fd, PROTO_STDERR, &s->sent_err);
    else if (fd == s->in_fd)
        feed_stdin(s);
}

void exec_on_data(struct conn *c, struct stream *s, const uint8_t *buf, size_t len)
{
    (void)c;
    struct byte_queue *q = &s->in;
    if (s->in_fd < 0 || s->in_eof || len == 0)
        return;
    if (q->off > 0 && q->off == q->len)
        q->off = q->len = 0;
    if (q->len - q->off + len > EXEC_STDIN_MAX)
        return;
    if (q->off > 0) {
        memmove(q->buf, q->buf + q->off, q->len - q->off);
        q->len -= q->off;
        q->off = 0;
    }
    char *nb = realloc(q->buf, q->len + len);
    if (nb == NULL)
        return;
    q->buf = nb;
    memcpy(q->buf + q->len, buf, len);
    q->len += len;
    /* Try right away; poll takes over if the pipe is full. */
    feed_stdin(s);
}

void exec_on_eof(struct conn *c, struct stream *s)
{
    (void)c;
    s->in_eof = true;
    if (s->in.off == s->in.len)
        close_fd(&s->in_fd);
}

void exec_on_signal(struct conn *c, struct stream *s, int sig)
{
    (void)c;
    /* The group outlives a reaped leader only while members remain, and
     * Linux does not reuse a pid that is still a live pgid: this is safe. */
    kill(-s->pid, sig);
}

void exec_on_cancel(struct conn *c, struct stream *s)
{
    if (!s->exited)
        kill(-s->pid, SIGKILL);
    conn_send_error(c, s->id, "cancelled", "cancelled");
    /* The stream lingers, id-less, until the child is reaped. */
    s->id = 0;
    close_fd(&s->out_fd);
    close_fd(&s->err_fd);
    close_fd(&s->in_fd);
}

void exec_on_exit(struct conn *c, pid_t pid, int status)
{
    for (struct stream *s = c->streams; s; s = s->next)
        if (s->kind == ST_EXEC && s->pid == pid && !s->exited) {
            s->exited = true;
            s->status = status;
            s->exited_ms = now_ms();
            return;
        }
}

static void exec_finish(struct conn *c, struct stream *s)
{
    int code = 0, sig = 0;
    if (WIFEXITED(s->status))
        code = WEXITSTATUS(s->status);
    else if (WIFSIGNALED(s->status))
        sig = WTERMSIG(s->status), code = 128 + sig;
    json_t *res = json_pack("{s:i,s:b,s:b}", "exitCode", code, "timedOut", s->timed_out,
                            "truncated", s->truncated);
    json_object_set_new(res, "signal", sig ? json_integer(sig) : json_null());
    conn_send_json(c, PROTO_RESPONSE, s->id, res);
}

int exec_tick(struct conn *c, struct stream *s, int64_t now)
{
    if (s->id == 0) {
        if (!s->exited)
            return -1;
        conn_stream_free(c, s);
        return -2;
    }
    if (s->exited) {
        int64_t grace_end = s->exited_ms + EXEC_PIPE_GRACE_MS;
        if ((s->out_fd >= 0 || s->err_fd >= 0) && now < grace_end)
            return (int)(grace_end - now);
        exec_finish(c, s);
        conn_stream_free(c, s);
        return -2;
    }
    if (s->deadline_ms == 0 || s->timed_out)
        return -1;
    if (now >= s->deadline_ms) {
        /* The whole group, so children of a shell die too. */
        kill(-s->pid, SIGKILL);
        s->timed_out = true;
        return -1;
    }
    int64_t left = s->deadline_ms - now;
    return left > (1 << 30) ? (1 << 30) : (int)left;
}

void exec_kill_all(struct conn *c)
{
    for (struct stream *s = c->streams; s; s = s->next)
        if (s->kind == ST_EXEC && !s->exited)
            kill(-s->pid, SIGKILL);
}
