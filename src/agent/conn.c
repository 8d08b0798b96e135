/* One connection: HELLO, then a poll() loop that demultiplexes frames onto
 * streams and drives every stream's fds, until the peer closes. Runs in its
 * own forked process, so a crash here cannot take PID 1 down. */
#include "agent.h"
#include "../common/cleanup.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONN_MAX_STREAMS 1024

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *errno_code(int errnum)
{
    switch (errnum) {
    case ENOENT:
        return "not_found";
    case EACCES:
    case EPERM:
    case EROFS:
        return "permission_denied";
    case EEXIST:
        return "exists";
    case ENOTDIR:
        return "not_directory";
    case EISDIR:
        return "is_directory";
    case ENOTEMPTY:
        return "not_empty";
    case ENOSPC:
    case EDQUOT:
        return "no_space";
    case EBUSY:
    case ETXTBSY:
        return "busy";
    case EINVAL:
    case ENAMETOOLONG:
    case ELOOP:
    case EXDEV:
        return "invalid";
    default:
        return "io";
    }
}

void conn_send(struct conn *c, uint8_t type, uint32_t id, const void *buf, size_t len)
{
    if (c->dead)
        return;
    /* A failed write means the peer is gone; the loop then winds down. */
    if (proto_write_frame(c->fd, type, id, buf, len) < 0)
        c->dead = true;
}

void conn_send_json(struct conn *c, uint8_t type, uint32_t id, json_t *j)
{
    cleanup_free char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    static const char oom[] = "{\"code\":\"io\",\"message\":\"out of memory\"}";
    if (s == NULL)
        conn_send(c, PROTO_ERROR, id, oom, sizeof(oom) - 1); /* not via jansson again */
    else if (strlen(s) > PROTO_MAX_PAYLOAD)
        conn_send_error(c, id, "io", "answer larger than a frame (%zu bytes)", strlen(s));
    else
        conn_send(c, type, id, s, strlen(s));
}

void conn_send_error(struct conn *c, uint32_t id, const char *code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    conn_send_json(c, PROTO_ERROR, id, json_pack("{s:s,s:s}", "code", code, "message", msg));
}

struct stream *conn_stream_new(struct conn *c, uint32_t id, enum stream_kind kind)
{
    struct stream *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->id = id;
    s->kind = kind;
    s->out_fd = s->err_fd = s->in_fd = s->fd = -1;
    s->next = c->streams;
    c->streams = s;
    return s;
}

void conn_stream_free(struct conn *c, struct stream *s)
{
    for (struct stream **pp = &c->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    int fds[] = {s->out_fd, s->err_fd, s->in_fd, s->fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(s->in.buf);
    free(s->path);
    free(s->tmp_path);
    free(s);
}

static struct stream *find_stream(struct conn *c, uint32_t id)
{
    for (struct stream *s = c->streams; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

static size_t count_streams(struct conn *c)
{
    size_t n = 0;
    for (struct stream *s = c->streams; s; s = s->next)
        n++;
    return n;
}

static void dispatch_request(struct conn *c, uint32_t id, const uint8_t *p, size_t len)
{
    if (find_stream(c, id)) {
        /* Reusing a live stream id is a daemon bug we cannot answer on
         * that id without confusing the stream; drop the connection. */
        c->dead = true;
        return;
    }
    if (count_streams(c) >= CONN_MAX_STREAMS) {
        conn_send_error(c, id, "busy", "too many streams on this connection");
        return;
    }
    struct request req;
    lz_error err = {0};
    if (request_parse(p, len, &req, &err) < 0) {
        conn_send_error(c, id, "invalid", "%s", err.msg);
        return;
    }
    switch (req.op) {
    case OP_PING:
        conn_send(c, PROTO_RESPONSE, id, "{}", 2);
        break;
    case OP_EXEC:
        if (req.background)
            bgproc_start(c, id, &req);
        else
            exec_start(c, id, &req);
        break;
    case OP_PROC_LIST:
        bgproc_list(c, id);
        break;
    case OP_PROC_SIGNAL:
        bgproc_signal(c, id, &req);
        break;
    case OP_PROC_STDIN:
        bgproc_stdin_start(c, id, &req);
        break;
    case OP_PROC_OUTPUT:
        bgproc_output(c, id, &req);
        break;
    default:
        files_handle(c, id, &req);
        break;
    }
    request_free(&req);
}

static void dispatch_data(struct conn *c, struct stream *s, const uint8_t *p, size_t len)
{
    if (s->kind == ST_EXEC)
        exec_on_data(c, s, p, len);
    else if (s->kind == ST_FILE_WRITE)
        files_write_data(c, s, p, len);
    else if (s->kind == ST_PROC_STDIN)
        bgproc_stdin_data(c, s, p, len);
}

static void dispatch_eof(struct conn *c, struct stream *s)
{
    if (s->kind == ST_EXEC)
        exec_on_eof(c, s);
    else if (s->kind == ST_FILE_WRITE)
        files_write_eof(c, s);
    else if (s->kind == ST_PROC_STDIN)
        bgproc_stdin_eof(c, s);
}

static void dispatch_cancel(struct conn *c, struct stream *s)
{
    if (s->kind == ST_EXEC) {
        exec_on_cancel(c, s);
        return;
    }
    uint32_t id = s->id;
    files_abort(c, s);
    conn_send_error(c, id, "cancelled", "cancelled");
}

static void dispatch_frame(struct conn *c, const struct proto_header *h, const uint8_t *p)
{
    if (h->type == PROTO_REQUEST) {
        dispatch_request(c, h->stream, p, h->length);
        return;
    }
    struct stream *s = find_stream(c, h->stream);
    /* Frames for finished streams race with our answer; ignore them. */
    if (s == NULL)
        return;
    switch (h->type) {
    case PROTO_DATA:
        dispatch_data(c, s, p, h->length);
        break;
    case PROTO_EOF:
        dispatch_eof(c, s);
        break;
    case PROTO_CANCEL:
        dispatch_cancel(c, s);
        break;
    case PROTO_SIGNAL:
        if (s->kind == ST_EXEC) {
            int sig = request_parse_signal(p, h->length, NULL);
            if (sig > 0)
                exec_on_signal(c, s, sig);
        }
        break;
    default:
        /* HELLO/STDOUT/RESPONSE/... only flow agent -> daemon. */
        c->dead = true;
    }
}

static void read_socket(struct conn *c)
{
    uint8_t buf[PROTO_CHUNK];
    ssize_t n = read(c->fd, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0 || proto_decoder_feed(&c->dec, buf, (size_t)n) < 0) {
        c->dead = true;
        return;
    }
    struct proto_header h;
    const uint8_t *p;
    int r;
    while (!c->dead && (r = proto_decoder_next(&c->dec, &h, &p, NULL)) == 1)
        dispatch_frame(c, &h, p);
    if (r < 0)
        c->dead = true; /* malformed frame: the stream of bytes is lost */
}

static void reap_children(struct conn *c)
{
    struct signalfd_siginfo si;
    while (read(c->sigfd, &si, sizeof(si)) == sizeof(si))
        ;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        exec_on_exit(c, pid, status);
}

/* pollfd slots: 0 = socket, 1 = signalfd, then stream fds. */
struct poll_set {
    struct pollfd *pfd;
    struct stream **owner;
    size_t n, cap;
};

static void poll_add(struct poll_set *ps, int fd, short events, struct stream *s)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 16;
        struct pollfd *p = realloc(ps->pfd, cap * sizeof(*p));
        struct stream **o = realloc(ps->owner, cap * sizeof(*o));
        if (p)
            ps->pfd = p;
        if (o)
            ps->owner = o;
        if (p == NULL || o == NULL)
            return;
        ps->cap = cap;
    }
    ps->pfd[ps->n] = (struct pollfd){.fd = fd, .events = events};
    ps->owner[ps->n++] = s;
}

/* Collect fds and the poll timeout; runs per-stream timers and file reads. */
static int prepare_poll(struct conn *c, struct poll_set *ps)
{
    int timeout = -1;
    int64_t now = now_ms();
    ps->n = 0;
    poll_add(ps, c->fd, POLLIN, NULL);
    poll_add(ps, c->sigfd, POLLIN, NULL);
    struct stream *next;
    for (struct stream *s = c->streams; s && !c->dead; s = next) {
        next = s->next; /* the stream may free itself below */
        int t = -1;
        if (s->kind == ST_EXEC) {
            t = exec_tick(c, s, now);
            if (t == -2)
                continue; /* finished and freed */
            if (s->out_fd >= 0)
                poll_add(ps, s->out_fd, POLLIN, s);
            if (s->err_fd >= 0)
                poll_add(ps, s->err_fd, POLLIN, s);
            if (s->in_fd >= 0 && s->in.len > s->in.off)
                poll_add(ps, s->in_fd, POLLOUT, s);
        } else if (s->kind == ST_FILE_READ) {
            /* One chunk per turn keeps other streams flowing meanwhile. */
            t = files_read_step(c, s) ? 0 : -1;
        }
        if (t >= 0 && (timeout < 0 || t < timeout))
            timeout = t;
    }
    return timeout;
}

static void serve_loop(struct conn *c)
{
    struct poll_set ps = {0};
    while (!c->dead) {
        int timeout = prepare_poll(c, &ps);
        if (c->dead)
            break;
        int r = poll(ps.pfd, ps.n, timeout);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (ps.pfd[1].revents)
            reap_children(c);
        /* Stream fds before the socket: a CANCEL read below may free a
         * stream whose fd is still in this poll set. */
        for (size_t i = 2; i < ps.n && !c->dead; i++)
            if (ps.pfd[i].revents)
                exec_on_fd(c, ps.owner[i], ps.pfd[i].fd, ps.pfd[i].revents);
        if (ps.pfd[0].revents && !c->dead)
            read_socket(c);
    }
    free(ps.pfd);
    free(ps.owner);
}

void conn_serve(int fd)
{
    struct conn c = {.fd = fd, .sigfd = -1};
    proto_decoder_init(&c.dec);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    /* SIGCHLD stays blocked (children unblock it before exec) and arrives
     * through the signalfd, so the poll loop sees exits without races. */
    sigprocmask(SIG_BLOCK, &mask, NULL);
    c.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (c.sigfd < 0)
        return;

    const char *sid = getenv("LIZARD_SANDBOX_ID");
    json_t *hello = json_pack("{s:i,s:s,s:s?}", "version", PROTO_VERSION, "agent", AGENT_VERSION,
                              "sandboxId", sid);
    conn_send_json(&c, PROTO_HELLO, 0, hello);
    serve_loop(&c);

    exec_kill_all(&c);
    while (c.streams) {
        if (c.streams->kind == ST_EXEC)
            conn_stream_free(&c, c.streams);
        else
            files_abort(&c, c.streams); /* drops a half-written temp file */
    }
    proto_decoder_free(&c.dec);
    close(c.sigfd);
}
