/* lizardd's HTTP/1.1 server. Why our own and not evhttp: see docs/http.md.
 *
 * One detached thread per connection with blocking sockets. SO_RCVTIMEO and
 * SO_SNDTIMEO bound every read and write, so a stalled peer only holds its
 * own thread, and only until the idle timeout; a cap on concurrent
 * connections bounds the threads. Each connection reads ahead into a small
 * buffer (rbuf); the parsed head is copied out of it (head) so handlers can
 * read the body without clobbering header strings. */
#include "http_server.h"
#include "http_io.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../common/cleanup.h"
#include "../common/log.h"

#define HTTP_DEFAULT_MAX_CONNS 1024
#define HTTP_DEFAULT_TIMEOUT 60
#define HTTP_DEFAULT_JSON_MAX (1024 * 1024)
#define HTTP_THREAD_STACK (256 * 1024)
/* Unread request body we read and discard to keep a connection alive;
 * beyond this closing is cheaper than reading. */
#define HTTP_DRAIN_LIMIT (1024 * 1024)
#define HTTP_MAX_EXTRA_HEADERS 8
#define HTTP_LINGER_SEC 5 /* see conn_linger */

struct http_server {
    struct http_server_config cfg;
    int listen_fd;
    int port;
    struct ssl_ctx_st *tls; /* NULL: plain HTTP */
    atomic_int stopping;
    atomic_int nconns;
    /* run()'s owner plus one per connection thread: the last one frees. */
    atomic_int refs;
};

struct extra_header {
    char name[64];
    char value[512];
};

struct http_conn {
    struct http_server *srv;
    struct http_io io;   /* the socket, plain or TLS */
    int dead;            /* a read or write failed: later I/O fails at once */
    int body_error;      /* malformed chunked body: reads fail, then close */
    int expect_continue; /* the client waits for "100 Continue" */
    int continue_sent;
    int stream_chunked;
    int hijacked;
    size_t rstart, rlen; /* unconsumed bytes in rbuf */
    struct http_chunked chunk;
    struct extra_header extra[HTTP_MAX_EXTRA_HEADERS];
    int nextra;
    struct http_request req;
    char head[HTTP_MAX_HEAD + 1];
    char rbuf[HTTP_MAX_HEAD];
};

static struct http_conn *conn_of(struct http_request *req)
{
    return req->server_private;
}

/* ---- socket I/O ---- */

/* > 0 bytes, 0 at EOF, -1 on error or timeout (SO_RCVTIMEO). */
static ssize_t conn_recv(struct http_conn *c, void *buf, size_t n)
{
    if (c->dead)
        return -1;
    for (;;) {
        ssize_t r = http_io_read(&c->io, buf, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            c->dead = 1;
        return r;
    }
}

/* Write all of buf through TLS, or mark the connection dead. */
static int conn_send_tls(struct http_conn *c, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t r = http_io_write(&c->io, buf, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            c->dead = 1;
            return -1;
        }
        buf += r;
        len -= r;
    }
    return 0;
}

/* TLS has no writev: gather the pieces into record-sized writes, so a head
 * and its body, or a chunk and its framing, share a record. A piece that
 * alone fills records goes out from the caller's memory. */
static int conn_sendv_tls(struct http_conn *c, const struct iovec *iov, int n)
{
    char buf[16384]; /* one TLS record */
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        const char *p = iov[i].iov_base;
        size_t len = iov[i].iov_len;
        while (len > 0) {
            if (used == 0 && len >= sizeof(buf)) {
                if (conn_send_tls(c, p, len) < 0)
                    return -1;
                break;
            }
            size_t k = len < sizeof(buf) - used ? len : sizeof(buf) - used;
            memcpy(buf + used, p, k);
            used += k;
            p += k;
            len -= k;
            if (used == sizeof(buf)) {
                if (conn_send_tls(c, buf, used) < 0)
                    return -1;
                used = 0;
            }
        }
    }
    return used > 0 ? conn_send_tls(c, buf, used) : 0;
}

/* Write everything or mark the connection dead. MSG_NOSIGNAL: a client
 * that hung up must give us EPIPE, not kill the daemon with SIGPIPE. */
static int conn_sendv(struct http_conn *c, struct iovec *iov, int n)
{
    if (c->dead)
        return -1;
    if (c->io.ssl)
        return conn_sendv_tls(c, iov, n);
    while (n > 0) {
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = n};
        ssize_t r = sendmsg(c->io.fd, &m, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            c->dead = 1;
            return -1;
        }
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= r;
        }
    }
    return 0;
}

static int conn_send(struct http_conn *c, const void *buf, size_t len)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    return conn_sendv(c, &iov, 1);
}

/* ---- responses ---- */

static const struct {
    int status;
    const char *reason;
} status_reasons[] = {
    {100, "Continue"},
    {101, "Switching Protocols"},
    {200, "OK"},
    {201, "Created"},
    {202, "Accepted"},
    {204, "No Content"},
    {206, "Partial Content"},
    {301, "Moved Permanently"},
    {302, "Found"},
    {304, "Not Modified"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {409, "Conflict"},
    {410, "Gone"},
    {411, "Length Required"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {417, "Expectation Failed"},
    {422, "Unprocessable Content"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
    {505, "HTTP Version Not Supported"},
};

static const char *status_reason(int status)
{
    for (size_t i = 0; i < sizeof(status_reasons) / sizeof(status_reasons[0]); i++)
        if (status_reasons[i].status == status)
            return status_reasons[i].reason;
    return "Unknown";
}

static int body_allowed(int status)
{
    return status >= 200 && status != 204 && status != 304;
}

/* Decide, before the response head goes out, whether this connection can
 * take another request: the head must say "Connection: close" if not. */
static void conn_settle_keep_alive(struct http_conn *c)
{
    struct http_request *req = &c->req;
    if (c->dead || c->body_error || c->hijacked || atomic_load(&c->srv->stopping))
        req->keep_alive = 0;
    if (req->body_done)
        return;
    /* The client waits for 100 Continue that will not come: it may or may
     * not send the body, so the next bytes cannot be trusted as a request. */
    if (c->expect_continue && !c->continue_sent)
        req->keep_alive = 0;
    else if (!req->chunked && req->content_length - req->body_read > HTTP_DRAIN_LIMIT)
        req->keep_alive = 0;
}

/* Status line and headers; body_len < 0 means no Content-Length. */
static int conn_send_head(struct http_conn *c, int status, const char *ctype, int64_t body_len,
                          int chunked, const void *body, size_t blen)
{
    struct http_request *req = &c->req;
    if (req->responded) {
        log_error("http: second response (%d) to %s %s ignored (bug)", status, req->method,
                  req->path);
        return -1;
    }
    req->responded = 1;
    conn_settle_keep_alive(c);
    /* Keeps the head within its buffer and free of injected lines. */
    if (ctype && (strlen(ctype) > 200 || strpbrk(ctype, "\r\n"))) {
        log_error("http: bad Content-Type from handler for %s (bug)", req->path);
        ctype = "application/octet-stream";
    }

    char head[4096 + HTTP_MAX_EXTRA_HEADERS * 600];
    char date[64];
    struct tm tm;
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
    int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nDate: %s\r\n", status,
                     status_reason(status), date);
    if (ctype)
        n += snprintf(head + n, sizeof(head) - n, "Content-Type: %s\r\n", ctype);
    if (body_len >= 0)
        n += snprintf(head + n, sizeof(head) - n, "Content-Length: %lld\r\n", (long long)body_len);
    if (chunked)
        n += snprintf(head + n, sizeof(head) - n, "Transfer-Encoding: chunked\r\n");
    if (!req->keep_alive)
        n += snprintf(head + n, sizeof(head) - n, "Connection: close\r\n");
    else if (req->head.minor_version == 0)
        n += snprintf(head + n, sizeof(head) - n, "Connection: keep-alive\r\n");
    for (int i = 0; i < c->nextra; i++)
        n +=
            snprintf(head + n, sizeof(head) - n, "%s: %s\r\n", c->extra[i].name, c->extra[i].value);
    n += snprintf(head + n, sizeof(head) - n, "\r\n");
    c->nextra = 0;

    struct iovec iov[2] = {{head, n}, {(void *)body, blen}};
    /* HEAD: the same headers as GET, never a body. */
    int with_body = body && blen > 0 && strcmp(req->method, "HEAD") != 0;
    return conn_sendv(c, iov, with_body ? 2 : 1);
}

int http_respond_raw(struct http_request *req, int status, const char *content_type,
                     const void *body, size_t len)
{
    struct http_conn *c = conn_of(req);
    if (!body_allowed(status))
        return conn_send_head(c, status, NULL, -1, 0, NULL, 0);
    return conn_send_head(c, status, content_type, (int64_t)len, 0, body, len);
}

int http_respond_json(struct http_request *req, int status, json_t *body_json)
{
    if (body_json == NULL)
        return http_respond_raw(req, status, NULL, NULL, 0);
    /* 15 significant digits: 1.017 prints as 1.017, not 1.0169999999999999
     * (usage seconds and costs are the API's only reals). */
    cleanup_free char *text = json_dumps(body_json, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(body_json);
    if (text == NULL)
        return http_respond_error(req, 500, "internal", "could not encode the response");
    return http_respond_raw(req, status, "application/json", text, strlen(text));
}

/* jansson refuses invalid UTF-8; messages may quote client input. */
static json_t *json_string_lossy(char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    for (char *p = s; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    return json_string(s);
}

int http_respond_error(struct http_request *req, int status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *body =
        json_pack("{s:{s:s,s:o}}", "error", "code", code, "message", json_string_lossy(msg));
    if (body == NULL) {
        static const char fallback[] = "{\"error\":{\"code\":\"internal\",\"message\":\"\"}}";
        return http_respond_raw(req, status, "application/json", fallback, sizeof(fallback) - 1);
    }
    return http_respond_json(req, status, body);
}

void http_add_header(struct http_request *req, const char *name, const char *value)
{
    struct http_conn *c = conn_of(req);
    /* No CR/LF: a value taken from a request must not inject headers. */
    if (c->nextra == HTTP_MAX_EXTRA_HEADERS || strpbrk(name, "\r\n: ") || strpbrk(value, "\r\n") ||
        strlen(name) >= sizeof(c->extra[0].name) || strlen(value) >= sizeof(c->extra[0].value)) {
        log_warn("http: dropping response header %.64s", name);
        return;
    }
    strcpy(c->extra[c->nextra].name, name);
    strcpy(c->extra[c->nextra].value, value);
    c->nextra++;
}

int http_stream_begin(struct http_request *req, int status, const char *content_type)
{
    struct http_conn *c = conn_of(req);
    /* HTTP/1.0 has no chunked coding: the end of the body is the close. */
    c->stream_chunked = req->head.minor_version >= 1;
    if (!c->stream_chunked)
        req->keep_alive = 0;
    if (c->req.responded)
        return conn_send_head(c, status, content_type, -1, 0, NULL, 0); /* logs the bug */
    req->streaming = 1;
    return conn_send_head(c, status, content_type, -1, c->stream_chunked, NULL, 0);
}

int http_stream_write(struct http_request *req, const void *data, size_t len)
{
    struct http_conn *c = conn_of(req);
    if (!req->streaming || c->dead)
        return -1;
    /* A zero-length chunk would end the body. */
    if (len == 0 || strcmp(req->method, "HEAD") == 0)
        return 0;
    if (!c->stream_chunked)
        return conn_send(c, data, len);
    char size[32];
    int n = snprintf(size, sizeof(size), "%zx\r\n", len);
    struct iovec iov[3] = {{size, n}, {(void *)data, len}, {"\r\n", 2}};
    return conn_sendv(c, iov, 3);
}

int http_stream_end(struct http_request *req)
{
    struct http_conn *c = conn_of(req);
    if (!req->streaming)
        return -1;
    req->streaming = 0;
    if (!c->stream_chunked || strcmp(req->method, "HEAD") == 0)
        return c->dead ? -1 : 0;
    return conn_send(c, "0\r\n\r\n", 5);
}

void http_request_hijack(struct http_request *req, const void **data, size_t *len)
{
    struct http_conn *c = conn_of(req);
    c->hijacked = 1;
    req->responded = 1;
    req->keep_alive = 0;
    *data = c->rbuf + c->rstart;
    *len = c->rlen;
    c->rstart = c->rlen = 0;
}

struct http_io *http_request_io(struct http_request *req)
{
    return &conn_of(req)->io;
}

/* ---- request bodies ---- */

static ssize_t body_read_length(struct http_conn *c, void *buf, size_t n)
{
    struct http_request *req = &c->req;
    int64_t left = req->content_length - req->body_read;
    if ((uint64_t)left < n)
        n = (size_t)left;
    ssize_t r;
    if (c->rlen > 0) {
        r = n < c->rlen ? (ssize_t)n : (ssize_t)c->rlen;
        memcpy(buf, c->rbuf + c->rstart, r);
        c->rstart += r;
        c->rlen -= r;
    } else {
        /* Nothing buffered: read straight into the caller's buffer, so big
         * uploads are copied once. */
        r = conn_recv(c, buf, n);
        if (r <= 0)
            return -1; /* EOF before Content-Length bytes is an error too */
    }
    req->body_read += r;
    if (req->body_read == req->content_length)
        req->body_done = 1;
    return r;
}

static ssize_t body_read_chunked(struct http_conn *c, void *buf, size_t n)
{
    struct http_request *req = &c->req;
    for (;;) {
        if (c->rlen == 0) {
            c->rstart = 0;
            ssize_t r = conn_recv(c, c->rbuf, sizeof(c->rbuf));
            if (r <= 0)
                return -1;
            c->rlen = r;
        }
        /* Decode in place in rbuf; output never exceeds the input fed, so
         * feeding at most n bytes bounds it by the caller's buffer. */
        size_t feed = c->rlen < n ? c->rlen : n, consumed;
        int done;
        const char *why;
        long out =
            http_chunked_decode(&c->chunk, c->rbuf + c->rstart, feed, &consumed, &done, &why);
        if (out < 0) {
            log_debug("http: bad chunked body: %s", why);
            c->body_error = 1;
            return -1;
        }
        memcpy(buf, c->rbuf + c->rstart, out);
        c->rstart += consumed;
        c->rlen -= consumed;
        req->body_read += out;
        if (done)
            req->body_done = 1;
        if (out > 0 || done)
            return out;
    }
}

ssize_t http_read_body(struct http_request *req, void *buf, size_t n)
{
    struct http_conn *c = conn_of(req);
    if (req->body_done || c->hijacked)
        return 0;
    if (c->dead || c->body_error)
        return -1;
    if (n == 0)
        return 0;
    if (c->expect_continue && !c->continue_sent) {
        c->continue_sent = 1;
        /* Only now: a handler that answers without reading (401, 413...)
         * spares the client sending a body we would discard. */
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (!req->responded && conn_send(c, cont, sizeof(cont) - 1) < 0)
            return -1;
    }
    return req->chunked ? body_read_chunked(c, buf, n) : body_read_length(c, buf, n);
}

static json_t *json_too_large(struct http_request *req, size_t max, int *status, char *errbuf,
                              size_t errlen)
{
    /* The rest of the body is not worth reading. */
    req->keep_alive = 0;
    *status = 413;
    snprintf(errbuf, errlen, "request body too large (limit %zu bytes)", max);
    return NULL;
}

json_t *http_read_json(struct http_request *req, size_t max, int *status, char *errbuf,
                       size_t errlen)
{
    struct http_conn *c = conn_of(req);
    *status = 0;
    if (errlen)
        errbuf[0] = '\0';
    if (max == 0)
        max = c->srv->cfg.max_json_body;
    if (req->content_length > 0 && (uint64_t)req->content_length > max)
        return json_too_large(req, max, status, errbuf, errlen);

    size_t cap = req->content_length > 0 ? (size_t)req->content_length : 4096, len = 0;
    if (cap > max + 1)
        cap = max + 1;
    cleanup_free char *buf = malloc(cap);
    if (buf == NULL) {
        *status = 500;
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    for (;;) {
        if (len == cap) {
            if (len > max)
                return json_too_large(req, max, status, errbuf, errlen);
            /* Chunked bodies have no announced size: grow up to max + 1,
             * one byte past the limit being enough to tell it was exceeded. */
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nbuf = realloc(buf, ncap);
            if (nbuf == NULL) {
                *status = 500;
                snprintf(errbuf, errlen, "out of memory");
                return NULL;
            }
            buf = nbuf;
            cap = ncap;
        }
        ssize_t r = http_read_body(req, buf + len, cap - len);
        if (r < 0) {
            *status = 400;
            snprintf(errbuf, errlen, "could not read the request body");
            return NULL;
        }
        if (r == 0)
            break;
        len += r;
    }
    if (len > max)
        return json_too_large(req, max, status, errbuf, errlen);
    if (len == 0)
        return NULL;
    json_error_t jerr;
    json_t *j = json_loadb(buf, len, 0, &jerr);
    if (j == NULL) {
        *status = 400;
        snprintf(errbuf, errlen, "malformed JSON: %s (line %d, column %d)", jerr.text, jerr.line,
                 jerr.column);
    }
    return j;
}

/* ---- per-request plumbing ---- */

const char *http_request_header(struct http_request *req, const char *name)
{
    return http_header_get(&req->head, name);
}

int http_request_query(struct http_request *req, const char *name, char *out, size_t outsz)
{
    return http_query_param(req->query, name, out, outsz);
}

/* Is TOKEN in any comma-separated header NAME ("Connection: keep-alive, Upgrade")? */
static int header_has_token(const struct http_head *h, const char *name, const char *token)
{
    size_t tlen = strlen(token);
    for (size_t i = 0; i < h->nheaders; i++) {
        if (strcasecmp(h->headers[i].name, name) != 0)
            continue;
        const char *p = h->headers[i].value;
        while (*p) {
            while (*p == ' ' || *p == '\t' || *p == ',')
                p++;
            size_t n = strcspn(p, ", \t");
            if (n == tlen && strncasecmp(p, token, n) == 0)
                return 1;
            p += n;
            while (*p && *p != ',')
                p++;
        }
    }
    return 0;
}

/* Answer a request we will not hand to the handler, then close. */
static int conn_reject(struct http_conn *c, int status, const char *why)
{
    static const char *codes[] = {[0] = "bad_request", [1] = "too_large"};
    c->req.keep_alive = 0;
    log_debug("http: rejecting request (%d): %s", status, why);
    http_respond_error(&c->req, status, codes[status == 413 || status == 431], "%s", why);
    return -1;
}

static int conn_prepare_request(struct http_conn *c, size_t head_len)
{
    struct http_request *req = &c->req;
    memset(req, 0, sizeof(*req));
    req->fd = c->io.fd;
    req->server_private = c;
    req->method = "";
    req->query = "";
    req->content_length = -1;
    req->head.minor_version = 1;
    c->nextra = 0;
    c->expect_continue = c->continue_sent = 0;
    c->stream_chunked = 0;

    const char *why = NULL;
    int r = http_parse_request_head(c->head, head_len, &req->head, &why);
    if (r < 0) {
        req->head.minor_version = 1;
        return conn_reject(c, -r, why);
    }
    req->method = req->head.method;
    if (http_body_framing(&req->head, &req->chunked, &req->content_length, &why) < 0)
        return conn_reject(c, 400, why);
    if (req->head.minor_version == 1)
        req->keep_alive = !header_has_token(&req->head, "Connection", "close");
    else
        req->keep_alive = header_has_token(&req->head, "Connection", "keep-alive");

    const char *target = req->head.target;
    const char *q = strchr(target, '?');
    size_t plen = q ? (size_t)(q - target) : strlen(target);
    req->query = q ? q + 1 : "";
    if (http_percent_decode(target, plen, req->path, sizeof(req->path), 0) < 0)
        return conn_reject(c, 400, "invalid or too long request path");

    req->body_done = !req->chunked && req->content_length <= 0;
    if (req->chunked)
        http_chunked_init(&c->chunk);
    const char *expect = http_header_get(&req->head, "Expect");
    if (expect && req->head.minor_version == 1) {
        if (strcasecmp(expect, "100-continue") != 0)
            return conn_reject(c, 417, "unsupported Expect header");
        c->expect_continue = !req->body_done;
    }
    return 0;
}

/* Read the rest of a body the handler left unread, so the next request
 * starts at the right byte; give up (and close) past HTTP_DRAIN_LIMIT. */
static void conn_drain_body(struct http_conn *c)
{
    struct http_request *req = &c->req;
    char scratch[8192];
    size_t total = 0;
    while (!req->body_done) {
        ssize_t r = http_read_body(req, scratch, sizeof(scratch));
        total += r > 0 ? r : 0;
        if (r < 0 || total > HTTP_DRAIN_LIMIT) {
            req->keep_alive = 0;
            return;
        }
    }
}

static void conn_finish_request(struct http_conn *c)
{
    struct http_request *req = &c->req;
    if (c->hijacked)
        return;
    if (!req->responded) {
        log_error("http: handler did not answer %s %s (bug)", req->method, req->path);
        http_respond_error(req, 500, "internal", "the server did not answer this request");
    } else if (req->streaming) {
        log_error("http: handler did not end the stream for %s %s (bug)", req->method, req->path);
        http_stream_end(req);
    }
    if (req->keep_alive && !c->dead)
        conn_drain_body(c);
}

static double monotonic_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read the next request head into c->head. Returns its length, 0 when the
 * connection should just close (EOF, idle timeout, slow head), or -431. */
static long conn_read_head(struct http_conn *c)
{
    int timeout = c->srv->cfg.idle_timeout_sec;
    double started = 0;
    size_t scanned = 0;
    memmove(c->rbuf, c->rbuf + c->rstart, c->rlen);
    c->rstart = 0;
    for (;;) {
        /* RFC 9112 2.2: ignore empty lines before a request line (some
         * clients send CRLF after a POST body). */
        while (c->rlen > 0 && (c->rbuf[c->rstart] == '\r' || c->rbuf[c->rstart] == '\n')) {
            c->rstart++;
            c->rlen--;
        }
        if (c->rstart > 0) {
            memmove(c->rbuf, c->rbuf + c->rstart, c->rlen);
            c->rstart = 0;
            scanned = 0;
        }
        /* Rescan only the tail: the terminator may straddle reads. */
        size_t from = scanned > 3 ? scanned - 3 : 0;
        size_t end = http_head_end(c->rbuf + from, c->rlen - from);
        if (end > 0) {
            end += from;
            memcpy(c->head, c->rbuf, end);
            c->head[end] = '\0';
            c->rstart = end;
            c->rlen -= end;
            return (long)end;
        }
        scanned = c->rlen;
        if (c->rlen >= sizeof(c->rbuf))
            return -431;
        /* SO_RCVTIMEO bounds each read; this bounds a head trickled in a
         * byte at a time (slowloris). */
        if (started > 0 && monotonic_sec() - started > timeout)
            return 0;
        ssize_t r = conn_recv(c, c->rbuf + c->rlen, sizeof(c->rbuf) - c->rlen);
        if (r <= 0)
            return 0;
        if (started == 0)
            started = monotonic_sec();
        c->rlen += r;
    }
}

/* Answer a connection that sent no request we could parse, then close. */
static void conn_reject_early(struct http_conn *c, int status, const char *why)
{
    memset(&c->req, 0, sizeof(c->req));
    c->req.fd = c->io.fd;
    c->req.server_private = c;
    c->req.method = "";
    c->req.head.minor_version = 1;
    conn_reject(c, status, why);
}

static void conn_serve(struct http_conn *c)
{
    for (;;) {
        long hl = conn_read_head(c);
        if (hl == 0)
            return;
        if (hl < 0) {
            conn_reject_early(c, (int)-hl, "request head too large");
            return;
        }
        if (conn_prepare_request(c, (size_t)hl) < 0)
            return;
        c->srv->cfg.handler(&c->req, c->srv->cfg.ctx);
        conn_finish_request(c);
        if (!c->req.keep_alive || c->dead || c->hijacked)
            return;
    }
}

/* ---- the server ---- */

static void server_unref(struct http_server *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1) {
        close(s->listen_fd);
        http_tls_context_free(s->tls);
        free(s);
    }
}

/* Closing a socket with received bytes unread makes the kernel send RST,
 * and a client still sending its body (Python's http.client sends all of it
 * before reading) then loses the 413/400 we answered. So, like Apache's
 * lingering close: stop sending, discard input for a bounded time, close. */
static void conn_linger(struct http_conn *c)
{
    struct timeval tv = {.tv_sec = 1};
    setsockopt(c->io.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    shutdown(c->io.fd, SHUT_WR);
    double until = monotonic_sec() + HTTP_LINGER_SEC;
    char scratch[16384];
    while (monotonic_sec() < until) {
        ssize_t r = recv(c->io.fd, scratch, sizeof(scratch), 0);
        if (r <= 0 && !(r < 0 && errno == EINTR))
            break;
    }
}

/* TLS: the handshake, in this thread and within the idle timeout. 0 when
 * requests may follow. A plain HTTP request gets a plain 400 that says why. */
static int conn_start_tls(struct http_conn *c)
{
    int r = http_io_accept(&c->io, c->srv->tls, c->srv->cfg.idle_timeout_sec * 1000);
    if (r == HTTP_IO_PLAINTEXT)
        conn_reject_early(c, 400, "this port speaks HTTPS (TLS); use an https:// URL");
    else if (r < 0)
        c->dead = 1;
    return r;
}

static void *conn_thread(void *arg)
{
    struct http_conn *c = arg;
    struct http_server *s = c->srv;
    if (s->tls == NULL || conn_start_tls(c) == 0)
        conn_serve(c);
    http_io_close(&c->io, c->dead);
    /* Body or pipelined bytes may be unread (a rejected request, a 413). */
    if (!c->dead && !c->hijacked && (c->rlen > 0 || !c->req.body_done))
        conn_linger(c);
    close(c->io.fd);
    free(c);
    atomic_fetch_sub(&s->nconns, 1);
    server_unref(s);
    return NULL;
}

/* Over capacity: a canned answer, never blocking the accept loop. (A TLS
 * client could not read it before a handshake we have no thread for: it
 * just sees the connection close.) */
static void reject_busy(struct http_server *s, int fd)
{
    if (s->tls) {
        close(fd);
        return;
    }
    static const char body[] =
        "{\"error\":{\"code\":\"unavailable\",\"message\":\"too many connections\"}}";
    char resp[512];
    int n = snprintf(resp, sizeof(resp),
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s",
                     sizeof(body) - 1, body);
    if (send(fd, resp, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
        log_debug("http: could not send 503: %s", strerror(errno));
    close(fd);
}

static void server_dispatch(struct http_server *s, int fd)
{
    if (atomic_fetch_add(&s->nconns, 1) >= s->cfg.max_connections) {
        atomic_fetch_sub(&s->nconns, 1);
        log_warn("http: %d connections open, refusing one", s->cfg.max_connections);
        reject_busy(s, fd);
        return;
    }
    struct timeval tv = {.tv_sec = s->cfg.idle_timeout_sec};
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
        log_warn("http: setting socket timeouts: %s", strerror(errno));
    /* Heads and small bodies go out in one sendmsg; no need to wait for Nagle. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    struct http_conn *c = calloc(1, sizeof(*c));
    pthread_attr_t attr;
    pthread_t t;
    int ok = c != NULL && pthread_attr_init(&attr) == 0;
    if (ok) {
        c->srv = s;
        http_io_plain(&c->io, fd);
        atomic_fetch_add(&s->refs, 1);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, HTTP_THREAD_STACK);
        ok = pthread_create(&t, &attr, conn_thread, c) == 0;
        pthread_attr_destroy(&attr);
        if (!ok)
            atomic_fetch_sub(&s->refs, 1);
    }
    if (!ok) {
        log_warn("http: cannot start a connection thread");
        free(c);
        atomic_fetch_sub(&s->nconns, 1);
        reject_busy(s, fd);
    }
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (all addresses). */
static int split_listen(const char *addr, char *host, size_t hostsz, const char **port)
{
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon[1] == '\0')
        return -1;
    const char *h = addr;
    size_t hlen = colon - addr;
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    /* getaddrinfo would take "99999" and wrap it around 65536. */
    char *end;
    errno = 0;
    unsigned long num = strtoul(colon + 1, &end, 10);
    if (hlen >= hostsz || *end != '\0' || errno || num > 65535 || colon[1] < '0' || colon[1] > '9')
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = colon + 1;
    return 0;
}

static int listen_on(const char *addr, int *port, char *errbuf, size_t errlen)
{
    char host[256];
    const char *portstr;
    if (split_listen(addr, host, sizeof(host), &portstr) < 0) {
        snprintf(errbuf, errlen, "invalid listen address '%s' (want ADDR:PORT)", addr);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res;
    int gai = getaddrinfo(host[0] ? host : NULL, portstr, &hints, &res);
    if (gai != 0) {
        snprintf(errbuf, errlen, "cannot resolve '%s': %s", addr, gai_strerror(gai));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        /* Restarting lizardd must not wait out TIME_WAIT on the port. */
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot listen on %s: %s", addr, strerror(saved));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

struct http_server *http_server_new(const struct http_server_config *cfg, char *errbuf,
                                    size_t errlen)
{
    if (cfg->handler == NULL || cfg->listen == NULL) {
        snprintf(errbuf, errlen, "http server needs a listen address and a handler");
        return NULL;
    }
    struct http_server *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->cfg.listen = NULL; /* the caller's string; not needed after bind */
    if (s->cfg.idle_timeout_sec <= 0)
        s->cfg.idle_timeout_sec = HTTP_DEFAULT_TIMEOUT;
    if (s->cfg.max_connections <= 0)
        s->cfg.max_connections = HTTP_DEFAULT_MAX_CONNS;
    if (s->cfg.max_json_body == 0)
        s->cfg.max_json_body = HTTP_DEFAULT_JSON_MAX;
    /* Before binding: a bad certificate is a start-up error, like a bad address. */
    if (cfg->tls_cert || cfg->tls_key) {
        if (!cfg->tls_cert || !cfg->tls_key) {
            snprintf(errbuf, errlen, "TLS needs both a certificate and a key");
            free(s);
            return NULL;
        }
        s->tls = http_tls_context(cfg->tls_cert, cfg->tls_key, errbuf, errlen);
        if (s->tls == NULL) {
            free(s);
            return NULL;
        }
    }
    s->cfg.tls_cert = s->cfg.tls_key = NULL; /* the caller's strings, like listen */
    s->listen_fd = listen_on(cfg->listen, &s->port, errbuf, errlen);
    if (s->listen_fd < 0) {
        http_tls_context_free(s->tls);
        free(s);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    return s;
}

int http_server_port(struct http_server *s)
{
    return s->port;
}

void http_server_run(struct http_server *s)
{
    while (!atomic_load(&s->stopping)) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            server_dispatch(s, fd);
            continue;
        }
        if (atomic_load(&s->stopping) || errno == EINVAL)
            break; /* http_server_stop shut the socket down */
        if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
            continue;
        /* Out of fds or memory: back off instead of spinning; connections
         * closing will free what we need. */
        log_warn("http: accept: %s", strerror(errno));
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void http_server_stop(struct http_server *s)
{
    atomic_store(&s->stopping, 1);
    /* Wakes a blocked accept() with EINVAL; close() would not, and would
     * let the fd number be reused under the accept loop. */
    shutdown(s->listen_fd, SHUT_RDWR);
}

void http_server_free(struct http_server *s)
{
    if (s == NULL)
        return;
    http_server_stop(s);
    server_unref(s);
}
