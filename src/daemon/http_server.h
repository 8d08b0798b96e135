/* lizardd's HTTP/1.1 server: one listener, a thread per connection, blocking
 * sockets with timeouts. Request bodies are read in pieces as they arrive and
 * responses can be streamed (chunked), so nothing is buffered whole. A slow
 * client only ties up its own thread. */
#ifndef LZ_HTTP_SERVER_H
#define LZ_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "../common/http_parse.h"

struct http_request {
    int fd; /* the connection; handlers must not close it */
    struct http_head head;
    const char *method; /* "GET", ... */
    char path[2048];    /* percent-decoded path, without the query */
    const char *query;  /* raw query after '?', "" if none */
    /* body state (owned by the server) */
    int chunked;
    int64_t content_length; /* -1 when the request has no length (chunked or none) */
    int64_t body_read;
    int body_done;
    /* response state */
    int responded; /* a full response or a stream head was sent */
    int streaming; /* chunked response in progress */
    int keep_alive;
    void *server_private;
};

/* Handler: answer the request with one of the http_respond_* / stream calls.
 * Return value is ignored; a handler that did not respond gets a 500 and a
 * log line (that is a bug). */
typedef void (*http_handler_fn)(struct http_request *req, void *ctx);

struct http_server_config {
    const char *listen;   /* "ADDR:PORT" */
    size_t max_json_body; /* bodies read with http_read_json larger than this -> 413 */
    int idle_timeout_sec; /* keep-alive idle / slow client timeout (<= 0: 60) */
    int max_connections;  /* concurrent connections; over it: 503 (<= 0: 1024) */
    /* PEM files: both set = every connection speaks TLS (the handshake runs
     * in the connection's thread, within idle_timeout_sec); both NULL = plain. */
    const char *tls_cert, *tls_key;
    http_handler_fn handler;
    void *ctx;
};

struct http_server;
/* Binds and listens (errors are reported here, before the daemon says it is
 * up). Returns NULL on failure with err filled. */
struct http_server *http_server_new(const struct http_server_config *cfg, char *errbuf,
                                    size_t errlen);
/* The bound port (useful with port 0). */
int http_server_port(struct http_server *s);
/* Accept loop; returns when http_server_stop is called. */
void http_server_run(struct http_server *s);
/* Makes run() return (shuts the listening socket down). Safe from another
 * thread or a signal handler. Connections in progress finish on their own. */
void http_server_stop(struct http_server *s);
/* After run() returned: releases the server. Connection threads still running
 * keep their own reference, so the memory outlives them; the listening
 * socket is closed when the last one ends. */
void http_server_free(struct http_server *s);

/* ---- for handlers ---- */
const char *http_request_header(struct http_request *req, const char *name);
/* Decoded query parameter: 1 found, 0 absent, -1 malformed. */
int http_request_query(struct http_request *req, const char *name, char *out, size_t outsz);

/* Read up to n body bytes; returns bytes read, 0 at the end of the body, -1
 * on a broken/timed-out client (the connection is then closed). */
ssize_t http_read_body(struct http_request *req, void *buf, size_t n);
/* Read the whole body as JSON, at most max bytes (0: cfg max_json_body).
 * Empty body -> NULL with *status 0. On bad input returns NULL and sets
 * *status (400 malformed, with jansson's text; 413 too large, saying the
 * limit; 500 out of memory) and a message in errbuf, for the handler to pass
 * to http_respond_error. After a 413 the connection closes. */
json_t *http_read_json(struct http_request *req, size_t max, int *status, char *errbuf,
                       size_t errlen);

/* One complete response. body_json is stolen (json_decref'd). */
int http_respond_json(struct http_request *req, int status, json_t *body_json);
/* The one error helper: {"error":{"code":CODE,"message":MSG}}. */
int http_respond_error(struct http_request *req, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int http_respond_raw(struct http_request *req, int status, const char *content_type,
                     const void *body, size_t len);
/* Extra response header for the next respond/stream_begin call (e.g. Retry-After). */
void http_add_header(struct http_request *req, const char *name, const char *value);

/* Streamed response (Transfer-Encoding: chunked; to HTTP/1.0 clients the raw
 * bytes, then the connection closes). All respond/stream calls return 0, or
 * -1 once the client is gone (later calls then fail at once, no SIGPIPE). */
int http_stream_begin(struct http_request *req, int status, const char *content_type);
int http_stream_write(struct http_request *req, const void *data, size_t len);
int http_stream_end(struct http_request *req);

/* Take over the raw connection (WebSocket upgrade, port proxy). Sets *data
 * and *len to the bytes already read from the socket past the request head
 * (the start of the body or upgraded stream; forward them first). From then
 * on the handler reads/writes through http_request_io(req) itself (req->fd
 * is for poll() and shutdown() only: with TLS its bytes are encrypted); the
 * server sends nothing more and closes the connection when the handler
 * returns. */
void http_request_hijack(struct http_request *req, const void **data, size_t *len);

/* The connection's byte stream (http_io.h): plain or TLS. */
struct http_io *http_request_io(struct http_request *req);

#endif
