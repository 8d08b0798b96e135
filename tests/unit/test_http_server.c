/* Tests for src/daemon/http_server.c over real sockets: a server on
 * 127.0.0.1:0 runs in a thread with the test handler below, and the tests
 * talk raw HTTP to it (responses parsed with http_parse.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../src/daemon/http_server.h"

/* ---- the handler ---- */

static atomic_int hello_count;
static atomic_int stream_broke; /* /forever saw a write fail */

static void handle_echo_len(struct http_request *req)
{
    char buf[1000];
    int64_t total = 0;
    ssize_t n;
    while ((n = http_read_body(req, buf, sizeof(buf))) > 0)
        total += n;
    if (n < 0) {
        http_respond_error(req, 400, "bad_request", "could not read the body");
        return;
    }
    http_respond_json(req, 200, json_pack("{s:I}", "len", (json_int_t)total));
}

static void handle_json(struct http_request *req)
{
    int status;
    char err[256];
    json_t *j = http_read_json(req, 0, &status, err, sizeof(err));
    if (j == NULL && status != 0) {
        http_respond_error(req, status, status == 413 ? "too_large" : "bad_request", "%s", err);
        return;
    }
    if (j == NULL)
        j = json_pack("{s:b}", "empty", 1);
    http_respond_json(req, 200, j);
}

static void handle_stream(struct http_request *req)
{
    http_stream_begin(req, 200, "application/x-ndjson");
    for (int i = 0; i < 100; i++) {
        char line[64];
        int n = snprintf(line, sizeof(line), "{\"i\":%d}\n", i);
        http_stream_write(req, line, (size_t)n);
    }
    http_stream_end(req);
}

static void handle_forever(struct http_request *req)
{
    static char block[65536];
    memset(block, 'x', sizeof(block));
    http_stream_begin(req, 200, "application/octet-stream");
    for (int i = 0; i < 100000; i++) {
        if (http_stream_write(req, block, sizeof(block)) < 0) {
            /* Later writes must fail at once, too. */
            if (http_stream_write(req, block, 1) == -1)
                atomic_store(&stream_broke, 1);
            break;
        }
    }
    http_stream_end(req);
}

/* Like a WebSocket upgrade: take the socket, echo bytes until EOF. */
static void handle_upgrade(struct http_request *req)
{
    const void *early;
    size_t n;
    http_request_hijack(req, &early, &n);
    static const char ok[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\n\r\n";
    if (send(req->fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL) < 0 ||
        (n > 0 && send(req->fd, early, n, MSG_NOSIGNAL) < 0))
        return;
    char buf[256];
    ssize_t r;
    while ((r = recv(req->fd, buf, sizeof(buf), 0)) > 0)
        if (send(req->fd, buf, (size_t)r, MSG_NOSIGNAL) < 0)
            return;
}

static void test_handler(struct http_request *req, void *ctx)
{
    (void)ctx;
    if (strcmp(req->path, "/hello") == 0) {
        int n = atomic_fetch_add(&hello_count, 1) + 1;
        http_respond_json(req, 200, json_pack("{s:s,s:i}", "method", req->method, "n", n));
    } else if (strcmp(req->path, "/echo-len") == 0) {
        handle_echo_len(req);
    } else if (strcmp(req->path, "/json") == 0) {
        handle_json(req);
    } else if (strcmp(req->path, "/stream") == 0) {
        handle_stream(req);
    } else if (strcmp(req->path, "/forever") == 0) {
        handle_forever(req);
    } else if (strcmp(req->path, "/upgrade") == 0) {
        handle_upgrade(req);
    } else if (strcmp(req->path, "/busy") == 0) {
        http_add_header(req, "Retry-After", "5");
        http_add_header(req, "X-Bad", "a\r\nInjected: yes");
        http_respond_error(req, 503, "unavailable", "host is full");
    } else if (strncmp(req->path, "/q", 2) == 0) {
        char x[64] = "";
        int r = http_request_query(req, "x", x, sizeof(x));
        http_respond_json(req, 200,
                          json_pack("{s:s,s:i,s:s,s:s}", "path", req->path, "found", r, "x", x,
                                    "raw", req->query));
    } else if (strcmp(req->path, "/empty") == 0) {
        http_respond_raw(req, 204, NULL, NULL, 0);
    } else if (strcmp(req->path, "/noanswer") == 0) {
        /* a bug: the server must answer 500 */
    } else {
        http_respond_error(req, 404, "not_found", "no route for %s", req->path);
    }
}

/* ---- server fixture ---- */

struct fixture {
    struct http_server *srv;
    pthread_t thread;
    int port;
};

static void *run_server(void *arg)
{
    http_server_run(arg);
    return NULL;
}

static struct fixture *fixture_start(int max_connections)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct http_server_config cfg = {
        .listen = "127.0.0.1:0",
        .max_json_body = 1024,
        .idle_timeout_sec = 1,
        .max_connections = max_connections,
        .handler = test_handler,
    };
    char err[256];
    f->srv = http_server_new(&cfg, err, sizeof(err));
    if (f->srv == NULL)
        fail_msg("http_server_new: %s", err);
    f->port = http_server_port(f->srv);
    assert_true(f->port > 0);
    assert_int_equal(pthread_create(&f->thread, NULL, run_server, f->srv), 0);
    return f;
}

static void fixture_stop(struct fixture *f)
{
    http_server_stop(f->srv);
    pthread_join(f->thread, NULL);
    http_server_free(f->srv);
    free(f);
}

static int setup(void **state)
{
    *state = fixture_start(0);
    return 0;
}

static int teardown(void **state)
{
    fixture_stop(*state);
    return 0;
}

/* ---- a tiny client ---- */

struct client {
    int fd;
    int head_only; /* the next response answers HEAD: no body */
    size_t len;
    char buf[1 << 17];
};

struct resp {
    int status;
    char head[HTTP_MAX_HEAD + 1];
    struct http_head h;
    char *body;
    size_t blen;
};

static struct client *client_connect(int port)
{
    struct client *c = calloc(1, sizeof(*c));
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(c->fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    /* The tests must not hang if the server misbehaves. */
    struct timeval tv = {.tv_sec = 5};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return c;
}

static void client_close(struct client *c)
{
    close(c->fd);
    free(c);
}

static void client_send(struct client *c, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        assert_true(n > 0);
        p += n;
        len -= (size_t)n;
    }
}

static void client_sends(struct client *c, const char *s)
{
    client_send(c, s, strlen(s));
}

/* More bytes into c->buf; 0 at EOF, -1 on error/timeout. */
static ssize_t client_fill(struct client *c)
{
    if (c->len == sizeof(c->buf))
        return -1;
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
    if (n > 0)
        c->len += (size_t)n;
    return n;
}

static void client_consume(struct client *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

static void body_append(struct resp *r, const char *data, size_t n)
{
    r->body = realloc(r->body, r->blen + n + 1);
    memcpy(r->body + r->blen, data, n);
    r->blen += n;
    r->body[r->blen] = '\0';
}

/* Read one response. Returns 0, or -1 if the connection closed first. */
static int client_read(struct client *c, struct resp *r)
{
    memset(r, 0, sizeof(*r));
    r->body = calloc(1, 1);
    size_t hl;
    while ((hl = http_head_end(c->buf, c->len)) == 0)
        if (client_fill(c) <= 0)
            return -1;
    memcpy(r->head, c->buf, hl);
    client_consume(c, hl);
    const char *why = "";
    if (http_parse_response_head(r->head, hl, &r->h, &why) < 0)
        fail_msg("bad response head: %s", why);
    r->status = r->h.status;
    int chunked;
    int64_t cl;
    assert_int_equal(http_body_framing(&r->h, &chunked, &cl, &why), 0);
    if (r->status < 200 || r->status == 204 || r->status == 304 || c->head_only)
        return 0;
    if (chunked) {
        struct http_chunked ch;
        http_chunked_init(&ch);
        for (;;) {
            size_t consumed;
            int done;
            long n = http_chunked_decode(&ch, c->buf, c->len, &consumed, &done, &why);
            if (n < 0)
                fail_msg("bad chunked response: %s", why);
            body_append(r, c->buf, (size_t)n);
            client_consume(c, consumed);
            if (done)
                return 0;
            if (client_fill(c) <= 0)
                fail_msg("connection closed inside a chunked response");
        }
    }
    if (cl >= 0) {
        while (c->len < (size_t)cl)
            if (client_fill(c) <= 0)
                fail_msg("connection closed inside a response body");
        body_append(r, c->buf, (size_t)cl);
        client_consume(c, (size_t)cl);
        return 0;
    }
    /* No framing: the body runs to the close. */
    while (client_fill(c) > 0)
        ;
    body_append(r, c->buf, c->len);
    client_consume(c, c->len);
    return 0;
}

static void resp_free(struct resp *r)
{
    free(r->body);
    r->body = NULL;
}

/* Request/response in one go on connection c. */
static int roundtrip(struct client *c, const char *request, struct resp *r)
{
    client_sends(c, request);
    return client_read(c, r);
}

static json_t *resp_json(struct resp *r)
{
    json_error_t e;
    json_t *j = json_loadb(r->body, r->blen, 0, &e);
    if (j == NULL)
        fail_msg("response body is not JSON (%s): %.200s", e.text, r->body);
    return j;
}

/* The error shape of docs/api.md, with the given code. */
static void assert_error(struct resp *r, int status, const char *code)
{
    if (r->status != status)
        fail_msg("status %d, want %d: %.300s", r->status, status, r->body);
    assert_string_equal(http_header_get(&r->h, "Content-Type"), "application/json");
    json_t *j = resp_json(r);
    const char *got = json_string_value(json_object_get(json_object_get(j, "error"), "code"));
    const char *msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
    assert_non_null(got);
    assert_non_null(msg);
    assert_string_equal(got, code);
    json_decref(j);
}

static int64_t json_int_at(struct resp *r, const char *key)
{
    json_t *j = resp_json(r);
    int64_t v = json_integer_value(json_object_get(j, key));
    json_decref(j);
    return v;
}

/* Expect the server to close the connection (EOF, not a timeout). */
static void assert_closed(struct client *c)
{
    char b[256];
    ssize_t n;
    while ((n = recv(c->fd, b, sizeof(b), 0)) > 0)
        ;
    assert_int_equal(n, 0);
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- tests ---- */

static void test_keep_alive(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    struct resp r;
    int before = atomic_load(&hello_count);
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    assert_null(http_header_get(&r.h, "Connection"));
    assert_int_equal(json_int_at(&r, "n"), before + 1);
    resp_free(&r);
    /* Same socket, second request; then a pipelined pair in one write. */
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(json_int_at(&r, "n"), before + 2);
    resp_free(&r);
    client_sends(c,
                 "GET /hello HTTP/1.1\r\n\r\n\r\nGET /hello HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_int_equal(client_read(c, &r), 0);
    assert_int_equal(json_int_at(&r, "n"), before + 3);
    resp_free(&r);
    assert_int_equal(client_read(c, &r), 0);
    assert_int_equal(json_int_at(&r, "n"), before + 4);
    assert_string_equal(http_header_get(&r.h, "Connection"), "close");
    resp_free(&r);
    assert_closed(c);
    client_close(c);
}

static void test_http10(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    struct resp r;
    /* 1.0 without keep-alive: answer, then close. */
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.0\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(http_header_get(&r.h, "Connection"), "close");
    resp_free(&r);
    assert_closed(c);
    client_close(c);
    /* 1.0 asking for keep-alive gets it. */
    c = client_connect(f->port);
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r), 0);
    assert_string_equal(http_header_get(&r.h, "Connection"), "keep-alive");
    resp_free(&r);
    /* A stream to a 1.0 client: raw bytes, the end is the close. */
    assert_int_equal(roundtrip(c, "GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &r), 0);
    assert_null(http_header_get(&r.h, "Transfer-Encoding"));
    assert_non_null(strstr(r.body, "{\"i\":99}\n"));
    resp_free(&r);
    client_close(c);
}

static void test_chunked_request(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    client_sends(c, "POST /echo-len HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    /* Chunks of many sizes, sent in odd pieces, 100000 bytes in all. */
    static char data[40000];
    memset(data, 'z', sizeof(data));
    size_t total = 0, sizes[] = {1, 7, 4096, 40000, 15, 30000, 25881};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char line[32];
        int n = snprintf(line, sizeof(line), "%zx;ext=%zu\r\n", sizes[i], i);
        client_send(c, line, (size_t)n);
        client_send(c, data, sizes[i]);
        client_sends(c, "\r\n");
        total += sizes[i];
    }
    assert_int_equal(total, 100000);
    client_sends(c, "0\r\nX-Trailer: yes\r\n\r\n");
    struct resp r;
    assert_int_equal(client_read(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_int_at(&r, "len"), 100000);
    resp_free(&r);
    /* Keep-alive after a chunked body. */
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* A malformed chunked body: the handler sees an error, then close. */
    assert_int_equal(roundtrip(c,
                               "POST /echo-len HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "5\r\nhelloXX\r\n0\r\n\r\n",
                               &r),
                     0);
    assert_error(&r, 400, "bad_request");
    assert_string_equal(http_header_get(&r.h, "Connection"), "close");
    resp_free(&r);
    assert_closed(c);
    client_close(c);
}

static void test_content_length_and_expect(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    struct resp r;
    assert_int_equal(
        roundtrip(c, "POST /echo-len HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world", &r), 0);
    assert_int_equal(json_int_at(&r, "len"), 11);
    resp_free(&r);
    /* Expect: 100-continue: the interim answer comes before we send the body. */
    client_sends(c, "POST /echo-len HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    assert_int_equal(client_read(c, &r), 0);
    assert_int_equal(r.status, 100);
    resp_free(&r);
    client_sends(c, "hello");
    assert_int_equal(client_read(c, &r), 0);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_int_at(&r, "len"), 5);
    resp_free(&r);
    /* A body the handler does not read is drained: the next request works. */
    assert_int_equal(
        roundtrip(c, "POST /hello HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* Expect without reading the body: no 100, and the connection closes. */
    assert_int_equal(
        roundtrip(c, "POST /hello HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
                  &r),
        0);
    assert_int_equal(r.status, 200);
    assert_string_equal(http_header_get(&r.h, "Connection"), "close");
    resp_free(&r);
    assert_closed(c);
    client_close(c);
}

static void test_stream_response(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    struct resp r;
    assert_int_equal(roundtrip(c, "GET /stream HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(http_header_get(&r.h, "Transfer-Encoding"), "chunked");
    assert_string_equal(http_header_get(&r.h, "Content-Type"), "application/x-ndjson");
    int lines = 0;
    for (char *p = r.body; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 100);
    assert_true(strncmp(r.body, "{\"i\":0}\n{\"i\":1}\n", 16) == 0);
    resp_free(&r);
    /* Still usable after the stream. */
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* HEAD: the headers of GET, no body (the next response follows at once). */
    c->head_only = 1;
    assert_int_equal(roundtrip(c, "HEAD /hello HTTP/1.1\r\n\r\n", &r), 0);
    c->head_only = 0;
    assert_int_equal(r.status, 200);
    assert_non_null(http_header_get(&r.h, "Content-Length"));
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    client_close(c);
}

static void test_json_bodies(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    struct resp r;
    const char *ok = "{\"a\":[1,2,{\"b\":null}]}";
    char req[256];
    snprintf(req, sizeof(req), "POST /json HTTP/1.1\r\nContent-Length: %zu\r\n\r\n%s", strlen(ok),
             ok);
    assert_int_equal(roundtrip(c, req, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, ok);
    resp_free(&r);
    /* Empty body: NULL with status 0. */
    assert_int_equal(roundtrip(c, "POST /json HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r), 0);
    assert_string_equal(r.body, "{\"empty\":true}");
    resp_free(&r);
    /* Malformed JSON: 400 with jansson's message. */
    assert_int_equal(
        roundtrip(c, "POST /json HTTP/1.1\r\nContent-Length: 9\r\n\r\n{\"a\": 1,,", &r), 0);
    assert_error(&r, 400, "bad_request");
    assert_non_null(strstr(r.body, "malformed JSON"));
    resp_free(&r);
    /* Oversized (limit 1024) by Content-Length: 413 before reading. */
    assert_int_equal(roundtrip(c, "POST /json HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", &r), 0);
    assert_error(&r, 413, "too_large");
    assert_non_null(strstr(r.body, "1024"));
    assert_string_equal(http_header_get(&r.h, "Connection"), "close");
    resp_free(&r);
    assert_closed(c);
    client_close(c);
    /* A client that sends its whole oversized body before reading (like
     * Python's http.client) still gets the 413, not a connection reset. */
    c = client_connect(f->port);
    size_t huge = 8 << 20;
    char *body = malloc(huge);
    memset(body, 'x', huge);
    snprintf(req, sizeof(req), "POST /json HTTP/1.1\r\nContent-Length: %zu\r\n\r\n", huge);
    client_sends(c, req);
    client_send(c, body, huge);
    free(body);
    assert_int_equal(client_read(c, &r), 0);
    assert_error(&r, 413, "too_large");
    resp_free(&r);
    assert_closed(c);
    client_close(c);
    /* Oversized chunked body: 413 once the limit is passed. */
    c = client_connect(f->port);
    client_sends(c, "POST /json HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    static char big[2000];
    memset(big, ' ', sizeof(big));
    client_sends(c, "7d0\r\n");
    client_send(c, big, sizeof(big));
    client_sends(c, "\r\n0\r\n\r\n");
    assert_int_equal(client_read(c, &r), 0);
    assert_error(&r, 413, "too_large");
    resp_free(&r);
    client_close(c);
}

static void test_bad_requests(void **state)
{
    struct fixture *f = *state;
    static const struct {
        const char *req;
        int status;
        const char *code;
    } cases[] = {
        {"GET / HTTP/2.0\r\n\r\n", 505, "bad_request"},
        {"GET / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc", 400,
         "bad_request"},
        {"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc", 400,
         "bad_request"},
        {"POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n", 400, "bad_request"},
        {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "bad_request"},
        {"GET /a%00b HTTP/1.1\r\n\r\n", 400, "bad_request"},
        {"GET /a%zz HTTP/1.1\r\n\r\n", 400, "bad_request"},
        {"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400, "bad_request"},
        {"GET /a b HTTP/1.1\r\n\r\n", 400, "bad_request"},
        {"GET / HTTP/1.1\r\nExpect: magic\r\n\r\n", 417, "bad_request"},
        {"\x16\x03\x01\x02\x01\xfc\x03\x03\r\n\r\n", 400, "bad_request"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct client *c = client_connect(f->port);
        struct resp r;
        if (roundtrip(c, cases[i].req, &r) < 0)
            fail_msg("case %zu: no response", i);
        assert_error(&r, cases[i].status, cases[i].code);
        assert_string_equal(http_header_get(&r.h, "Connection"), "close");
        resp_free(&r);
        assert_closed(c);
        client_close(c);
    }
    /* A head over HTTP_MAX_HEAD: 431. */
    struct client *c = client_connect(f->port);
    size_t n = HTTP_MAX_HEAD + 100;
    char *big = malloc(n);
    memset(big, 'a', n);
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    client_send(c, big, n);
    free(big);
    struct resp r;
    assert_int_equal(client_read(c, &r), 0);
    assert_error(&r, 431, "too_large");
    resp_free(&r);
    client_close(c);
    /* 65 headers: 431. */
    c = client_connect(f->port);
    client_sends(c, "GET / HTTP/1.1\r\n");
    for (int i = 0; i <= HTTP_MAX_HEADERS; i++) {
        char h[32];
        snprintf(h, sizeof(h), "X-%d: y\r\n", i);
        client_sends(c, h);
    }
    client_sends(c, "\r\n");
    assert_int_equal(client_read(c, &r), 0);
    assert_error(&r, 431, "too_large");
    resp_free(&r);
    client_close(c);
}

static void test_handler_helpers(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    struct resp r;
    assert_int_equal(roundtrip(c, "GET /noanswer HTTP/1.1\r\n\r\n", &r), 0);
    assert_error(&r, 500, "internal");
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /busy HTTP/1.1\r\n\r\n", &r), 0);
    assert_error(&r, 503, "unavailable");
    assert_string_equal(http_header_get(&r.h, "Retry-After"), "5");
    assert_null(http_header_get(&r.h, "Injected"));
    assert_null(http_header_get(&r.h, "X-Bad"));
    resp_free(&r);
    /* Extra headers are for one response only. */
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_null(http_header_get(&r.h, "Retry-After"));
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /q%20a%2Fb?x=a+b%26c&y=1 HTTP/1.1\r\n\r\n", &r), 0);
    json_t *j = resp_json(&r);
    assert_string_equal(json_string_value(json_object_get(j, "path")), "/q a/b");
    assert_string_equal(json_string_value(json_object_get(j, "x")), "a b&c");
    assert_string_equal(json_string_value(json_object_get(j, "raw")), "x=a+b%26c&y=1");
    assert_int_equal(json_integer_value(json_object_get(j, "found")), 1);
    json_decref(j);
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /q?x=%zz HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(json_int_at(&r, "found"), -1);
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /empty HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 204);
    assert_null(http_header_get(&r.h, "Content-Length"));
    resp_free(&r);
    assert_int_equal(roundtrip(c, "GET /nope/%C3%A9 HTTP/1.1\r\n\r\n", &r), 0);
    assert_error(&r, 404, "not_found");
    resp_free(&r);
    /* A path that is not UTF-8 still gets a JSON error (bytes replaced). */
    assert_int_equal(roundtrip(c, "GET /nope/%FF HTTP/1.1\r\n\r\n", &r), 0);
    assert_error(&r, 404, "not_found");
    resp_free(&r);
    client_close(c);
}

static void test_stalled_client(void **state)
{
    struct fixture *f = *state;
    /* Half a head, then silence: cut after the 1 s timeout. */
    struct client *c = client_connect(f->port);
    client_sends(c, "GET /hello HTTP/1.1\r\nHo");
    double t0 = now_sec();
    assert_closed(c);
    double waited = now_sec() - t0;
    assert_true(waited >= 0.8 && waited < 3.5);
    client_close(c);
    /* A head trickled a byte at a time also gets cut, at about 2x the timeout. */
    c = client_connect(f->port);
    t0 = now_sec();
    int closed = 0;
    for (int i = 0; i < 60 && !closed; i++) {
        if (send(c->fd, "X", 1, MSG_NOSIGNAL) < 0)
            closed = 1;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        char b;
        if (recv(c->fd, &b, 1, MSG_DONTWAIT) == 0)
            closed = 1;
    }
    assert_true(closed);
    assert_true(now_sec() - t0 < 4);
    client_close(c);
    /* An idle keep-alive connection is closed after the timeout, too. */
    c = client_connect(f->port);
    struct resp r;
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    resp_free(&r);
    t0 = now_sec();
    assert_closed(c);
    assert_true(now_sec() - t0 < 3);
    client_close(c);
}

static void test_hangup_mid_stream(void **state)
{
    struct fixture *f = *state;
    atomic_store(&stream_broke, 0);
    struct client *c = client_connect(f->port);
    client_sends(c, "GET /forever HTTP/1.1\r\n\r\n");
    /* Take some of the stream, then hang up with data unread (RST). */
    for (size_t got = 0; got < 200000; got += c->len, c->len = 0)
        assert_true(client_fill(c) > 0);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    client_close(c);
    for (int i = 0; i < 50 && !atomic_load(&stream_broke); i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(atomic_load(&stream_broke), 1);
    /* Same with a plain close (FIN; the server's writes get EPIPE). */
    atomic_store(&stream_broke, 0);
    c = client_connect(f->port);
    client_sends(c, "GET /forever HTTP/1.1\r\n\r\n");
    assert_true(client_fill(c) > 0);
    shutdown(c->fd, SHUT_RDWR);
    client_close(c);
    for (int i = 0; i < 50 && !atomic_load(&stream_broke); i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(atomic_load(&stream_broke), 1);
    /* Still alive. */
    c = client_connect(f->port);
    struct resp r;
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    client_close(c);
}

static void test_hijack(void **state)
{
    struct fixture *f = *state;
    struct client *c = client_connect(f->port);
    /* Bytes right behind the head reach the handler first. */
    client_sends(c, "GET /upgrade HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nearly;");
    struct resp r;
    assert_int_equal(client_read(c, &r), 0);
    assert_int_equal(r.status, 101);
    resp_free(&r);
    client_sends(c, "later");
    while (c->len < 11)
        assert_true(client_fill(c) > 0);
    assert_memory_equal(c->buf, "early;later", 11);
    shutdown(c->fd, SHUT_WR);
    assert_closed(c);
    client_close(c);
}

static void test_connection_cap(void **state)
{
    (void)state;
    struct fixture *f = fixture_start(2);
    struct client *a = client_connect(f->port), *b = client_connect(f->port);
    struct resp r;
    /* Make sure both are accepted and served (threads running). */
    assert_int_equal(roundtrip(a, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    resp_free(&r);
    assert_int_equal(roundtrip(b, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    resp_free(&r);
    struct client *c = client_connect(f->port);
    assert_int_equal(client_read(c, &r), 0);
    assert_error(&r, 503, "unavailable");
    assert_string_equal(http_header_get(&r.h, "Retry-After"), "1");
    resp_free(&r);
    client_close(c);
    /* Once one leaves, a new one is served. */
    client_close(a);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    c = client_connect(f->port);
    assert_int_equal(roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n", &r), 0);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    client_close(c);
    client_close(b);
    fixture_stop(f);
}

static void test_listen_errors(void **state)
{
    (void)state;
    char err[256];
    struct http_server_config cfg = {.listen = "nonsense", .handler = test_handler};
    assert_null(http_server_new(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "nonsense"));
    cfg.listen = "127.0.0.1:99999";
    assert_null(http_server_new(&cfg, err, sizeof(err)));
    /* Port in use. */
    struct fixture *f = fixture_start(0);
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", f->port);
    cfg.listen = addr;
    assert_null(http_server_new(&cfg, err, sizeof(err)));
    assert_non_null(strstr(err, "in use"));
    fixture_stop(f);
    cfg.listen = "[::1]:0";
    struct http_server *s = http_server_new(&cfg, err, sizeof(err));
    if (s) /* no IPv6 on some hosts */
        http_server_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keep_alive),      cmocka_unit_test(test_http10),
        cmocka_unit_test(test_chunked_request), cmocka_unit_test(test_content_length_and_expect),
        cmocka_unit_test(test_stream_response), cmocka_unit_test(test_json_bodies),
        cmocka_unit_test(test_bad_requests),    cmocka_unit_test(test_handler_helpers),
        cmocka_unit_test(test_stalled_client),  cmocka_unit_test(test_hangup_mid_stream),
        cmocka_unit_test(test_hijack),          cmocka_unit_test(test_connection_cap),
        cmocka_unit_test(test_listen_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
