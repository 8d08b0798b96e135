/* The port proxy (docs/ports.md). Each proxied connection runs in the HTTP
 * server's connection thread: check the sandbox and the token, connect
 * inside the sandbox's network namespace, send the request head without the
 * token, then splice bytes both ways with poll() until both directions end.
 * Buffers are bounded (PROXY_BUF each way): a slow reader stops us reading
 * from the other side, so memory per connection stays fixed and nothing is
 * ever buffered whole. Keep-alive, chunked bodies, server-sent events and
 * WebSocket upgrades are just bytes to this loop. The client side goes
 * through http_io (plain or TLS); with TLS, bytes OpenSSL already decrypted
 * count as readable although poll() cannot see them. */
#include "proxy.h"
#include "daemon.h"
#include "http_io.h"
#include "ports.h"
#include "proxy_parse.h"
#include "../common/cleanup.h"
#include "../common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROXY_BUF (64 * 1024)
#define PROXY_IDLE_MS (300 * 1000)     /* nothing moved either way */
#define PROXY_HALF_IDLE_MS (30 * 1000) /* one side finished, the other silent */
/* Nothing listening yet: retry this long before answering 502, so a server
 * started just before the request (the quickstart starts one with `nohup
 * ... &` and fetches at once) gets the moment it needs to bind. */
#define PROXY_CONNECT_WAIT_MS 3000
#define PROXY_CONNECT_RETRY_MS 25

/* ---- the registry of live connections (for pause and kill) ---- */

struct proxy_conn {
    char sandbox_id[64];
    int port;
    int client_fd, upstream_fd; /* -1 until known */
    int closed;                 /* proxy_close_* ran: do not start */
    struct proxy_conn *prev, *next;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct proxy_conn *registry;

static void registry_add(struct proxy_conn *c)
{
    pthread_mutex_lock(&registry_lock);
    c->next = registry;
    if (registry)
        registry->prev = c;
    registry = c;
    pthread_mutex_unlock(&registry_lock);
}

/* Must run before either fd is closed: proxy_close_* may use them until then. */
static void registry_remove(struct proxy_conn *c)
{
    pthread_mutex_lock(&registry_lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        registry = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&registry_lock);
}

/* Record the upstream fd; 0, or -1 when the connection was closed meanwhile. */
static int registry_set_upstream(struct proxy_conn *c, int fd)
{
    pthread_mutex_lock(&registry_lock);
    c->upstream_fd = fd;
    int closed = c->closed;
    pthread_mutex_unlock(&registry_lock);
    return closed ? -1 : 0;
}

void proxy_close_port(const char *sandbox_id, int port)
{
    pthread_mutex_lock(&registry_lock);
    for (struct proxy_conn *c = registry; c != NULL; c = c->next) {
        if (strcmp(c->sandbox_id, sandbox_id) != 0 || (port != 0 && c->port != port))
            continue;
        /* shutdown, not close: the owning thread sees EOF/errors and ends,
         * then closes its fds itself. */
        c->closed = 1;
        if (c->client_fd >= 0)
            shutdown(c->client_fd, SHUT_RDWR);
        if (c->upstream_fd >= 0)
            shutdown(c->upstream_fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&registry_lock);
}

void proxy_close_sandbox(const char *sandbox_id)
{
    proxy_close_port(sandbox_id, 0);
}

/* ---- splicing ---- */

/* One direction: bytes read from `from` wait in buf until `to` takes them. */
struct flow {
    struct http_io *from, *to;
    char *buf;
    size_t start, len;
    int eof;  /* `from` ended: shut `to` down for writing once buf is empty */
    int done; /* finished (forwarded the end, or `to` failed) */
};

static int set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Write what is buffered. -1 when `to` is broken. */
static int flow_write(struct flow *f)
{
    while (f->len > 0) {
        ssize_t w = http_io_write(f->to, f->buf + f->start, f->len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (w <= 0)
            return -1;
        f->start += w;
        f->len -= w;
    }
    f->start = 0;
    return 0;
}

/* Read into free space. -1 when `from` is broken (reset). */
static int flow_read(struct flow *f)
{
    if (f->start > 0 && f->len > 0)
        memmove(f->buf, f->buf + f->start, f->len);
    f->start = 0;
    /* TLS hands out one record (16 KiB) per read: take what it holds. */
    do {
        ssize_t r = http_io_read(f->from, f->buf + f->len, PROXY_BUF - f->len);
        if (r < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        if (r == 0)
            f->eof = 1;
        f->len += r;
    } while (!f->eof && f->len < PROXY_BUF && http_io_pending(f->from) > 0);
    return 0;
}

/* Advance one direction after poll said something about its fds. */
static void flow_step(struct flow *f, short from_ev, short to_ev)
{
    if (f->done)
        return;
    int readable =
        (from_ev & (f->from->read_wait | POLLHUP | POLLERR)) || http_io_pending(f->from) > 0;
    if (readable && !f->eof && f->len < PROXY_BUF && flow_read(f) < 0)
        f->eof = 1; /* a reset reader is an end too; what we hold still goes out */
    if ((f->len > 0 || (to_ev & (POLLERR | POLLHUP))) && flow_write(f) < 0) {
        f->done = 1; /* nobody left to deliver to */
        f->len = 0;
        return;
    }
    if (f->eof && f->len == 0) {
        /* Half-close: pass the end on, keep the other direction running
         * (a client may finish its upload and still read the answer). */
        http_io_shutdown_write(f->to);
        f->done = 1;
    }
}

static int flow_wants_read(const struct flow *f)
{
    return !f->done && !f->eof && f->len < PROXY_BUF;
}

static short flow_events_from(const struct flow *f)
{
    return flow_wants_read(f) ? f->from->read_wait : 0;
}

static short flow_events_to(const struct flow *f)
{
    return !f->done && f->len > 0 ? f->to->write_wait : 0;
}

/* Splice until both directions are done, one side is broken, or the
 * connection has been idle too long. up starts with the request head. */
static void splice_loop(struct flow *up, struct flow *down)
{
    while (!up->done || !down->done) {
        struct pollfd p[2] = {
            {up->from->fd, flow_events_from(up) | flow_events_to(down), 0},
            {up->to->fd, flow_events_from(down) | flow_events_to(up), 0},
        };
        int timeout = up->done || down->done ? PROXY_HALF_IDLE_MS : PROXY_IDLE_MS;
        /* Decrypted bytes waiting inside TLS: poll() only to see what else is ready. */
        if (flow_wants_read(up) && http_io_pending(up->from) > 0)
            timeout = 0;
        int r = poll(p, 2, timeout);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || (r == 0 && timeout > 0))
            return; /* idle timeout (or a poll failure): close both */
        if ((p[0].revents | p[1].revents) & POLLNVAL)
            return;
        flow_step(up, p[0].revents, p[1].revents);
        flow_step(down, p[1].revents, p[0].revents);
        /* The client cannot take more bytes: nothing left to do. (When
         * only the sandbox stops taking the upload, its answer still comes.) */
        if (down->done && !down->eof)
            return;
    }
}

/* ---- the request ---- */

/* Errors from the proxy itself end the connection: after one, the client's
 * next bytes may be anything (e.g. a body we did not read). */
#define proxy_error(req, status, code, ...)                                                        \
    do {                                                                                           \
        (req)->keep_alive = 0;                                                                     \
        http_respond_error((req), (status), (code), __VA_ARGS__);                                  \
    } while (0)

/* 0 when the sandbox may be reached; otherwise responds and returns -1. */
static int check_sandbox(struct lizardd *d, struct http_request *req, const char *id,
                         struct sandbox_record *sb)
{
    lz_error err;
    int r = store_sandbox_get(d->store, id, sb, &err);
    if (r == -1) {
        proxy_error(req, 503, "unavailable", "store: %s", err.msg);
        return -1;
    }
    if (r == STORE_NOT_FOUND || strcmp(sb->status, "stopping") == 0) {
        if (r == 0)
            sandbox_record_clear(sb);
        proxy_error(req, 404, "not_found", "sandbox %s not found (stopped or never existed)", id);
        return -1;
    }
    return 0;
}

/* 0 when the request carries a token for this port; else responds 401/503. */
static int check_token(struct lizardd *d, struct http_request *req, const char *id, int port,
                       const char **from)
{
    char token[PROXY_TOKEN_MAX];
    int r = proxy_request_token(&req->head, req->head.target, port, token, sizeof(token), from);
    if (r <= 0) {
        proxy_error(req, 401, "unauthorized",
                    "missing access token (X-Lizard-Access-Token header, lizard_token "
                    "parameter or cookie)");
        return -1;
    }
    lz_error err;
    r = ports_token_valid(d, id, port, token, &err);
    if (r < 0)
        proxy_error(req, 503, "unavailable", "store: %s", err.msg);
    else if (r == 0)
        proxy_error(req, 401, "unauthorized", "invalid access token for port %d", port);
    return r == 1 ? 0 : -1;
}

/* A browser visit with ?lizard_token=: move the token into a cookie for this
 * host and send the browser back to the same URL without it. */
static void redirect_with_cookie(struct http_request *req, int port)
{
    char target[HTTP_MAX_HEAD], cookie[256], name[PROXY_COOKIE_NAME_MAX], token[PROXY_TOKEN_MAX];
    const char *from;
    proxy_cookie_name(port, name);
    proxy_request_token(&req->head, req->head.target, port, token, sizeof(token), &from);
    if (proxy_target_strip(req->head.target, target, sizeof(target)) <= 0)
        snprintf(target, sizeof(target), "/");
    /* No Domain attribute: the cookie goes back to this exact host only. */
    snprintf(cookie, sizeof(cookie), "%s=%s; HttpOnly; SameSite=Lax; Path=/", name, token);
    http_add_header(req, "Location", target);
    http_add_header(req, "Set-Cookie", cookie);
    http_add_header(req, "Cache-Control", "no-store");
    http_respond_raw(req, 302, "text/plain", "redirecting\n", 12);
}

/* Connect inside the sandbox; responds 404/409/502 and returns -1 on failure. */
static int connect_upstream(struct lizardd *d, struct http_request *req,
                            const struct sandbox_record *sb, int port)
{
    if (strcmp(sb->status, "running") != 0) {
        if (strcmp(sb->status, "paused") == 0 || strcmp(sb->status, "pausing") == 0)
            proxy_error(req, 409, "conflict", "sandbox is paused");
        else
            proxy_error(req, 409, "conflict", "sandbox %s is %s, not running", sb->id, sb->status);
        return -1;
    }
    lz_error err;
    struct runtime_handle h = {sb->init_pid, sb->init_start_time};
    int fd;
    for (int waited = 0;; waited += PROXY_CONNECT_RETRY_MS) {
        fd = d->runtime->connect_port(&d->rcfg, &h, port, &err);
        if (fd >= 0)
            return fd;
        if (err.errnum != ECONNREFUSED || waited >= PROXY_CONNECT_WAIT_MS)
            break;
        struct timespec ts = {0, PROXY_CONNECT_RETRY_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (err.errnum == ECONNREFUSED)
        proxy_error(req, 502, "bad_gateway",
                    "nothing is listening on port %d in sandbox %s (start a server on "
                    "0.0.0.0:%d or 127.0.0.1:%d)",
                    port, sb->id, port, port);
    else if (err.errnum == ESRCH)
        proxy_error(req, 404, "not_found", "sandbox %s is not running", sb->id);
    else
        proxy_error(req, 502, "bad_gateway", "cannot reach port %d in sandbox %s: %s", port, sb->id,
                    err.msg);
    return -1;
}

/* The head for the sandbox, then whatever the client sent after it. */
static int fill_request(struct http_request *req, int port, struct flow *up)
{
    char target[HTTP_MAX_HEAD];
    if (proxy_target_strip(req->head.target, target, sizeof(target)) < 0)
        return -1;
    long n = proxy_build_head(&req->head, target, port, up->buf, PROXY_BUF);
    if (n < 0)
        return -1;
    const void *rest;
    size_t restlen;
    http_request_hijack(req, &rest, &restlen);
    /* The server's read-ahead buffer is HTTP_MAX_HEAD, the head at most
     * that much again: both fit in PROXY_BUF. */
    memcpy(up->buf + n, rest, restlen);
    up->len = (size_t)n + restlen;
    return 0;
}

static void splice_request(struct http_request *req, struct proxy_conn *pc, int upstream)
{
    cleanup_free char *bufs = malloc(2 * PROXY_BUF);
    struct http_io *client = http_request_io(req), sandbox;
    http_io_plain(&sandbox, upstream);
    struct flow up = {.from = client, .to = &sandbox, .buf = bufs};
    struct flow down = {.from = &sandbox, .to = client, .buf = bufs + PROXY_BUF};
    if (bufs == NULL) {
        proxy_error(req, 503, "unavailable", "out of memory");
        return;
    }
    if (fill_request(req, pc->port, &up) < 0) {
        proxy_error(req, 431, "too_large", "request head too large to forward");
        return;
    }
    if (set_nonblocking(req->fd) < 0)
        return;
    splice_loop(&up, &down);
}

void proxy_handle(struct lizardd *d, struct http_request *req, int port, const char *sandbox_id)
{
    struct proxy_conn pc = {.port = port, .client_fd = req->fd, .upstream_fd = -1};
    snprintf(pc.sandbox_id, sizeof(pc.sandbox_id), "%s", sandbox_id);
    /* Registered before the status is read: a pause that changes the status
     * after our read still finds this connection and closes it. */
    registry_add(&pc);
    struct sandbox_record sb;
    const char *from = "";
    if (check_sandbox(d, req, sandbox_id, &sb) < 0) {
        registry_remove(&pc);
        return;
    }
    cleanup_close int upstream = -1;
    if (check_token(d, req, sandbox_id, port, &from) == 0) {
        int is_get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
        if (strcmp(from, "query") == 0 && is_get)
            redirect_with_cookie(req, port);
        else if ((upstream = connect_upstream(d, req, &sb, port)) >= 0 &&
                 registry_set_upstream(&pc, upstream) == 0)
            splice_request(req, &pc, upstream);
        else if (upstream >= 0)
            proxy_error(req, 409, "conflict", "sandbox is paused");
    }
    sandbox_record_clear(&sb);
    registry_remove(&pc);
}
