/* A connection's byte stream, plain or TLS (http_io.h, docs/http.md "TLS").
 *
 * OpenSSL's error queue is per thread and SSL_get_error() reads it, so it is
 * cleared before every SSL call: an error left behind by other OpenSSL use
 * on this thread (HMACs, key hashes) must not turn a retry into a failure. */
#include "http_io.h"
#include "../common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

void http_io_plain(struct http_io *io, int fd)
{
    *io = (struct http_io){.fd = fd, .ssl = NULL, .read_wait = POLLIN, .write_wait = POLLOUT};
}

/* After SSL_read/SSL_write returned r <= 0: 0 at the peer's clean end, else
 * -1 with errno (EAGAIN, and *wait set to the events to retry on). */
static ssize_t tls_failed(struct http_io *io, int r, short *wait)
{
    int e = SSL_get_error(io->ssl, r);
    ERR_clear_error();
    switch (e) {
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        *wait = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        if (errno != EINTR)
            errno = EAGAIN;
        return -1;
    case SSL_ERROR_SYSCALL:
        if (errno == 0)
            errno = ECONNRESET;
        return -1;
    default:
        errno = EPROTO;
        return -1;
    }
}

ssize_t http_io_read(struct http_io *io, void *buf, size_t n)
{
    if (io->ssl == NULL)
        return recv(io->fd, buf, n, 0);
    ERR_clear_error();
    int r = SSL_read(io->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
    if (r > 0) {
        io->read_wait = POLLIN;
        return r;
    }
    return tls_failed(io, r, &io->read_wait);
}

ssize_t http_io_write(struct http_io *io, const void *buf, size_t n)
{
    /* MSG_NOSIGNAL: a client that hung up must give us EPIPE, not SIGPIPE.
     * (OpenSSL's socket BIO uses write(); lizardd ignores SIGPIPE.) */
    if (io->ssl == NULL)
        return send(io->fd, buf, n, MSG_NOSIGNAL);
    ERR_clear_error();
    int r = SSL_write(io->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
    if (r > 0) {
        io->write_wait = POLLOUT;
        return r;
    }
    /* A write "ending cleanly" makes no sense: the peer is gone. */
    ssize_t f = tls_failed(io, r, &io->write_wait);
    if (f == 0)
        errno = EPIPE;
    return -1;
}

int http_io_pending(const struct http_io *io)
{
    return io->ssl ? SSL_pending(io->ssl) : 0;
}

void http_io_shutdown_write(struct http_io *io)
{
    if (io->ssl) {
        /* Sends close_notify without waiting for the peer's; SSL_read
         * keeps working for the other direction. */
        ERR_clear_error();
        SSL_shutdown(io->ssl);
        ERR_clear_error();
    }
    shutdown(io->fd, SHUT_WR);
}

/* ---- server-side TLS ---- */

/* ALPN: we speak HTTP/1.1 only; say so, so no client tries h2. */
static int alpn_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char ours[] = "\x08http/1.1";
    unsigned char *sel;
    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto(&sel, outlen, ours, sizeof(ours) - 1, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

static void *tls_error(SSL_CTX *ctx, char *errbuf, size_t errlen, const char *what,
                       const char *file)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    snprintf(errbuf, errlen, "%s %s (%s)", what, file, why ? why : "unusable");
    ERR_clear_error();
    SSL_CTX_free(ctx);
    return NULL;
}

SSL_CTX *http_tls_context(const char *cert_file, const char *key_file, char *errbuf, size_t errlen)
{
    /* OpenSSL's message for a missing file is vague ("system lib"). */
    const char *files[] = {cert_file, key_file};
    for (int i = 0; i < 2; i++) {
        if (access(files[i], R_OK) < 0) {
            snprintf(errbuf, errlen, "%s %s: %s", i ? "TLS key" : "TLS certificate", files[i],
                     strerror(errno));
            return NULL;
        }
    }
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return tls_error(ctx, errbuf, errlen, "cannot make a TLS context for", cert_file);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* Most clients close without close_notify; that is an ordinary EOF to
     * HTTP, which frames its own messages. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    /* Partial writes: the proxy writes from a buffer it later compacts, on a
     * non-blocking socket. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_http11, NULL);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1)
        return tls_error(ctx, errbuf, errlen, "no usable PEM certificate chain in", cert_file);
    /* Also checks that the key belongs to the certificate. */
    if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1)
        return tls_error(ctx, errbuf, errlen, "no PEM private key for the certificate in",
                         key_file);
    return ctx;
}

void http_tls_context_free(SSL_CTX *ctx)
{
    SSL_CTX_free(ctx);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SSL_accept until done; 0, -1 or HTTP_IO_PLAINTEXT. fd is non-blocking. */
static int tls_handshake(SSL *ssl, int fd, int64_t deadline)
{
    for (;;) {
        ERR_clear_error();
        int r = SSL_accept(ssl);
        if (r == 1)
            return 0;
        int e = SSL_get_error(ssl, r);
        short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (ev == 0) {
            unsigned long err = ERR_peek_error();
            const char *why = ERR_reason_error_string(err);
            log_debug("http: TLS handshake failed: %s", why ? why : strerror(errno));
            return ERR_GET_REASON(err) == SSL_R_HTTP_REQUEST ? HTTP_IO_PLAINTEXT : -1;
        }
        int64_t left = deadline - mono_ms();
        struct pollfd p = {fd, ev, 0};
        if (left <= 0 || (poll(&p, 1, (int)left) < 0 && errno != EINTR)) {
            log_debug("http: TLS handshake timed out");
            return -1;
        }
    }
}

int http_io_accept(struct http_io *io, SSL_CTX *ctx, int timeout_ms)
{
    ERR_clear_error();
    SSL *ssl = SSL_new(ctx);
    int fl = fcntl(io->fd, F_GETFL);
    int rc = -1;
    /* Non-blocking for the handshake only, so that poll() bounds it as a
     * whole; the connection is blocking (with socket timeouts) after. */
    if (ssl && SSL_set_fd(ssl, io->fd) == 1 && fl >= 0 &&
        fcntl(io->fd, F_SETFL, fl | O_NONBLOCK) == 0) {
        rc = tls_handshake(ssl, io->fd, mono_ms() + timeout_ms);
        fcntl(io->fd, F_SETFL, fl);
    }
    ERR_clear_error();
    if (rc == 0)
        io->ssl = ssl;
    else
        SSL_free(ssl);
    return rc;
}

void http_io_close(struct http_io *io, int broken)
{
    if (io->ssl == NULL)
        return;
    ERR_clear_error();
    if (!broken)
        SSL_shutdown(io->ssl); /* close_notify; the peer's is not awaited */
    ERR_clear_error();
    SSL_free(io->ssl);
    io->ssl = NULL;
}
