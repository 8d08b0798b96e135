/* The byte stream of one HTTP connection: a plain socket, or TLS over it
 * (lizardd --tls-cert/--tls-key). http_server.c does all connection I/O
 * through it, and a handler that took the connection over
 * (http_request_hijack: the port proxy) uses it too, so TLS lives in one
 * place. docs/http.md "TLS". */
#ifndef LZ_HTTP_IO_H
#define LZ_HTTP_IO_H

#include <stddef.h>
#include <sys/types.h>

struct ssl_st;
struct ssl_ctx_st;

struct http_io {
    int fd;             /* the socket: poll() and shutdown() it, never read/write it */
    struct ssl_st *ssl; /* NULL: plain */
    /* poll() events a read / write that failed with EAGAIN waits for. POLLIN
     * and POLLOUT, except with TLS, where a read may need to write first
     * (and the other way round). */
    short read_wait, write_wait;
};

void http_io_plain(struct http_io *io, int fd);

/* > 0 bytes, 0 at EOF, -1 on error. On a non-blocking socket -1 with errno
 * EAGAIN means "not now": poll for read_wait / write_wait and retry. On a
 * blocking socket EAGAIN is its SO_RCVTIMEO/SO_SNDTIMEO expiring. Writes may
 * be partial. */
ssize_t http_io_read(struct http_io *io, void *buf, size_t n);
ssize_t http_io_write(struct http_io *io, const void *buf, size_t n);

/* Bytes TLS already decrypted: a read returns them although poll() says
 * nothing (they are no longer in the socket). 0 for plain sockets. */
int http_io_pending(const struct http_io *io);

/* No more writes: TLS close_notify (best effort), then shutdown(SHUT_WR).
 * Reading continues (half-close). */
void http_io_shutdown_write(struct http_io *io);

/* ---- server-side TLS ---- */

/* The server's context from a PEM certificate chain and its private key.
 * NULL with a message naming the file and the reason on failure (unreadable,
 * not PEM, key does not match the certificate). */
struct ssl_ctx_st *http_tls_context(const char *cert_file, const char *key_file, char *errbuf,
                                    size_t errlen);
void http_tls_context_free(struct ssl_ctx_st *ctx);

#define HTTP_IO_PLAINTEXT (-2)
/* TLS handshake on a fresh blocking connection, bounded as a whole by
 * timeout_ms (a client trickling its hello cannot stretch it). 0 on success
 * (io then reads and writes TLS), -1 on failure or timeout,
 * HTTP_IO_PLAINTEXT when the client sent a plain HTTP request (io stays
 * plain, so the caller can answer it in kind). */
int http_io_accept(struct http_io *io, struct ssl_ctx_st *ctx, int timeout_ms);

/* Ends TLS (close_notify unless `broken`) and frees it; the fd stays open. */
void http_io_close(struct http_io *io, int broken);

#endif
