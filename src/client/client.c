/* liblizard: blocking HTTP/1.1 over TCP or TLS, one connection per request.
 * The response head is parsed by the same code as lizardd's requests
 * (common/http_parse.h); bodies are delivered to a callback as they arrive
 * so NDJSON exec output and file downloads never sit whole in memory. All
 * connection I/O goes through struct conn (conn_read / conn_write_all), so
 * https differs from http only in connecting. */
#include "client.h"
#include "../common/cleanup.h"
#include "../common/fsutil.h"
#include "../common/http_parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define CONNECT_TIMEOUT_MS 10000
#define ERROR_BODY_MAX (1 << 20) /* bodies of non-2xx answers are read whole */
#define IO_BUF 65536

struct lizard_client {
    int tls;
    SSL_CTX *ssl_ctx; /* https only */
    char host[256];
    char port[16];
    char prefix[256];
    char *key;
};

/* ---- URL ---- */

int lizard_url_parse(const char *url, int *tls, char *host, size_t hostsz, char *port,
                     size_t portsz, char *prefix, size_t prefixsz, lz_error *err)
{
    *tls = strncmp(url, "https://", 8) == 0;
    if (!*tls && strncmp(url, "http://", 7) != 0)
        return lz_error_set(err, 0, "%s: the API URL must start with http:// or https://", url);
    const char *h = url + (*tls ? 8 : 7), *hend, *p;
    if (*h == '[') { /* [v6]:port */
        hend = strchr(h, ']');
        if (hend == NULL)
            return lz_error_set(err, 0, "%s: unterminated [ in host", url);
        h++;
        p = hend + 1;
    } else {
        hend = h + strcspn(h, ":/");
        p = hend;
    }
    size_t hl = (size_t)(hend - h);
    if (hl == 0 || hl >= hostsz)
        return lz_error_set(err, 0, "%s: bad host", url);
    memcpy(host, h, hl);
    host[hl] = '\0';
    const char *port_s = *tls ? "443" : "80";
    size_t pl = strlen(port_s);
    if (*p == ':') {
        port_s = ++p;
        pl = strspn(p, "0123456789");
        p += pl;
        if (pl == 0 || pl > 5 || atoi(port_s) == 0 || atoi(port_s) > 65535)
            return lz_error_set(err, 0, "%s: bad port", url);
    }
    if (*p != '\0' && *p != '/')
        return lz_error_set(err, 0, "%s: bad URL", url);
    if (pl >= portsz)
        return lz_error_set(err, 0, "%s: bad port", url);
    memcpy(port, port_s, pl);
    port[pl] = '\0';
    /* The prefix is prepended to "/v1/..." paths, so drop trailing slashes. */
    size_t rl = strlen(p);
    while (rl > 0 && p[rl - 1] == '/')
        rl--;
    if (rl >= prefixsz)
        return lz_error_set(err, 0, "%s: path too long", url);
    memcpy(prefix, p, rl);
    prefix[rl] = '\0';
    return 0;
}

char *lizard_url_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(strlen(s) * 3 + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p)) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}

/* ---- TLS setup ---- */

/* err->msg = "WHAT: OpenSSL's reason for its latest error". */
static int tls_error(lz_error *err, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    ERR_clear_error();
    return lz_error_set(err, 0, "%s: %s", what, why ? why : "TLS error");
}

/* Trust: the system store (OpenSSL's default paths, which honour
 * SSL_CERT_FILE and SSL_CERT_DIR) plus LIZARD_CA_FILE, the CA of a lizardd
 * with its own certificate (the Python SDK reads the same variable). */
static SSL_CTX *tls_context(lz_error *err)
{
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_default_verify_paths(ctx) != 1 ||
        SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)"\x08http/1.1", 9) != 0) {
        tls_error(err, "cannot set up TLS");
        SSL_CTX_free(ctx);
        return NULL;
    }
    const char *ca = getenv("LIZARD_CA_FILE");
    if (ca && *ca) {
        char what[1024];
        snprintf(what, sizeof(what), "LIZARD_CA_FILE=%s", ca);
        /* OpenSSL's message for a missing file is vague ("system lib"). */
        if (access(ca, R_OK) < 0) {
            lz_error_sys(err, "%s", what);
            SSL_CTX_free(ctx);
            return NULL;
        }
        if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
            tls_error(err, what);
            SSL_CTX_free(ctx);
            return NULL;
        }
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    /* The server may close without close_notify: an ordinary EOF to HTTP,
     * whose own framing says whether the answer was complete. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    return ctx;
}

lizard_client *lizard_client_new(const char *url, const char *key, lz_error *err)
{
    lizard_client *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        lz_error_set(err, ENOMEM, "client");
        return NULL;
    }
    if (lizard_url_parse(url, &c->tls, c->host, sizeof(c->host), c->port, sizeof(c->port),
                         c->prefix, sizeof(c->prefix), err) < 0 ||
        (c->tls && (c->ssl_ctx = tls_context(err)) == NULL) ||
        (key && (c->key = strdup(key)) == NULL)) {
        if (key && c->key == NULL && err && err->msg[0] == '\0')
            lz_error_set(err, ENOMEM, "client");
        lizard_client_free(c);
        return NULL;
    }
    return c;
}

void lizard_client_free(lizard_client *c)
{
    if (c == NULL)
        return;
    SSL_CTX_free(c->ssl_ctx);
    free(c->key);
    free(c);
}

/* "http://HOST:PORT" for messages. */
static const char *client__origin(const lizard_client *c, char *buf, size_t n)
{
    int v6 = strchr(c->host, ':') != NULL;
    snprintf(buf, n, "%s://%s%s%s:%s", c->tls ? "https" : "http", v6 ? "[" : "", c->host,
             v6 ? "]" : "", c->port);
    return buf;
}

/* ---- connection ---- */

/* One connection: the socket, and TLS over it for https. */
struct conn {
    int fd;
    SSL *ssl; /* NULL: plain http */
};

/* No close_notify: every request says "Connection: close" and the answer's
 * framing, not the TLS end, tells whether it was complete. */
static void conn_close(struct conn *cn)
{
    SSL_free(cn->ssl);
    if (cn->fd >= 0)
        close(cn->fd);
}
#define cleanup_conn __attribute__((cleanup(conn_close)))

/* The one read of every path: > 0 bytes, 0 at the end, -1 with errno. */
static ssize_t conn_read(struct conn *cn, void *buf, size_t n)
{
    for (;;) {
        if (cn->ssl == NULL) {
            ssize_t got = read(cn->fd, buf, n);
            if (got < 0 && errno == EINTR)
                continue;
            return got;
        }
        ERR_clear_error();
        errno = 0;
        int got = SSL_read(cn->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
        if (got > 0)
            return got;
        switch (SSL_get_error(cn->ssl, got)) {
        case SSL_ERROR_ZERO_RETURN: /* close_notify, or the TCP end (IGNORE_UNEXPECTED_EOF) */
            return 0;
        case SSL_ERROR_SYSCALL: /* errno is the socket's */
            if (errno == 0)
                errno = ECONNRESET;
            break;
        default:
            errno = EPROTO;
        }
        ERR_clear_error();
        return -1;
    }
}

/* The one write of every path: all of buf, or -1 with errno.
 * MSG_NOSIGNAL (and the TLS socket BIO below): a server that answers early
 * (413, 401) and closes must give us EPIPE and its answer, not kill the
 * process with SIGPIPE. */
static int conn_write_all(struct conn *cn, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w;
        if (cn->ssl == NULL) {
            w = send(cn->fd, p, n, MSG_NOSIGNAL);
        } else {
            ERR_clear_error();
            errno = 0;
            w = SSL_write(cn->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
            if (w <= 0 && SSL_get_error(cn->ssl, (int)w) != SSL_ERROR_SYSCALL)
                errno = EPROTO;
            else if (w <= 0 && errno == 0)
                errno = EPIPE;
            ERR_clear_error();
        }
        if (w < 0 && errno == EINTR) /* plain only: the TLS BIO retries itself */
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A socket BIO for TLS that sends with MSG_NOSIGNAL: OpenSSL's own uses
 * write(), which raises SIGPIPE. Blocking, so no retry flags. */
static int nosig_write(BIO *b, const char *buf, int n)
{
    ssize_t w;
    do
        w = send((int)(intptr_t)BIO_get_data(b), buf, (size_t)n, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return (int)w;
}

static int nosig_read(BIO *b, char *buf, int n)
{
    ssize_t r;
    do
        r = recv((int)(intptr_t)BIO_get_data(b), buf, (size_t)n, 0);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        BIO_set_flags(b, BIO_FLAGS_IN_EOF);
    return (int)r;
}

/* FLUSH: nothing is buffered. EOF: how SSL_OP_IGNORE_UNEXPECTED_EOF tells
 * a TCP end from a read error. Nothing else applies to a plain socket. */
static long nosig_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num, (void)ptr;
    if (cmd == BIO_CTRL_EOF)
        return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
    return cmd == BIO_CTRL_FLUSH;
}

static BIO_METHOD *nosig_method;

static void nosig_init(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "lizard socket");
    if (m && BIO_meth_set_write(m, nosig_write) && BIO_meth_set_read(m, nosig_read) &&
        BIO_meth_set_ctrl(m, nosig_ctrl))
        nosig_method = m;
}

static BIO *nosig_bio(int fd)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, nosig_init);
    BIO *b = nosig_method ? BIO_new(nosig_method) : NULL;
    if (b) {
        BIO_set_data(b, (void *)(intptr_t)fd);
        BIO_set_init(b, 1);
    }
    return b;
}

static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t len)
{
    /* Non-blocking connect so an unroutable address fails in seconds, not
     * after the kernel's minutes of SYN retries; then back to blocking. */
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int r = connect(fd, sa, len);
    if (r < 0 && errno == EINPROGRESS) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        r = poll(&pfd, 1, CONNECT_TIMEOUT_MS);
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr != 0) {
            errno = soerr;
            return -1;
        }
        r = r > 0 ? 0 : -1;
    }
    fcntl(fd, F_SETFL, fl);
    return r;
}

/* Why SSL_connect failed, for people: the certificate check first. */
static int tls_handshake_error(lizard_client *c, SSL *ssl, int r, int sys_errno, lz_error *err)
{
    char origin[300], what[400];
    snprintf(what, sizeof(what), "TLS handshake with lizardd at %s",
             client__origin(c, origin, sizeof(origin)));
    long v = SSL_get_verify_result(ssl);
    if (v != X509_V_OK) {
        int unknown_ca = v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
                         v == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
                         v == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT;
        ERR_clear_error();
        return lz_error_set(err, 0, "%s: certificate verify failed: %s%s", what,
                            X509_verify_cert_error_string(v),
                            unknown_ca ? " (set LIZARD_CA_FILE to the PEM file of the CA that "
                                         "signed lizardd's certificate)"
                                       : "");
    }
    if (SSL_get_error(ssl, r) == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        if (sys_errno == EAGAIN || sys_errno == EWOULDBLOCK)
            return lz_error_set(err, 0, "%s: no answer to the TLS hello (an http:// server?)",
                                what);
        if (sys_errno == 0)
            return lz_error_set(err, 0, "%s: the server closed the connection", what);
        return lz_error_set(err, sys_errno, "%s", what);
    }
    if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_WRONG_VERSION_NUMBER) {
        ERR_clear_error(); /* the server answered in plain text */
        return lz_error_set(err, 0, "%s: the server does not speak TLS (an http:// URL?)", what);
    }
    return tls_error(err, what);
}

/* TLS on the connected socket: the URL's host is the name the certificate
 * must carry (an IP address as such; SNI only for names, RFC 6066). */
static int tls_connect(lizard_client *c, struct conn *cn, lz_error *err)
{
    ERR_clear_error();
    BIO *bio = nosig_bio(cn->fd);
    cn->ssl = SSL_new(c->ssl_ctx);
    if (cn->ssl == NULL || bio == NULL) {
        BIO_free(bio);
        return tls_error(err, "cannot set up TLS");
    }
    SSL_set_bio(cn->ssl, bio, bio);
    unsigned char ip[16];
    int is_ip = inet_pton(AF_INET, c->host, ip) == 1 || inet_pton(AF_INET6, c->host, ip) == 1;
    if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(cn->ssl), c->host) != 1
              : SSL_set1_host(cn->ssl, c->host) != 1 ||
                    SSL_set_tlsext_host_name(cn->ssl, c->host) != 1)
        return tls_error(err, "cannot set up TLS");
    /* A server that accepts but never answers the hello must not hang us:
     * the handshake is bounded like connect. The answer afterwards may take
     * as long as the command runs (exec streams), so the bound is lifted. */
    struct timeval bound = {CONNECT_TIMEOUT_MS / 1000, 0}, none = {0, 0};
    setsockopt(cn->fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof(bound));
    setsockopt(cn->fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof(bound));
    errno = 0;
    int r = SSL_connect(cn->ssl);
    if (r != 1)
        return tls_handshake_error(c, cn->ssl, r, errno, err);
    setsockopt(cn->fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    setsockopt(cn->fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
    return 0;
}

static int client__connect(lizard_client *c, struct conn *cn, lz_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int r = getaddrinfo(c->host, c->port, &hints, &res);
    if (r != 0)
        return lz_error_set(err, 0, "cannot resolve %s: %s", c->host, gai_strerror(r));
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect_timeout(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        saved = errno;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        char origin[300];
        errno = saved;
        return lz_error_sys(err, "cannot connect to lizardd at %s",
                            client__origin(c, origin, sizeof(origin)));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    cn->fd = fd;
    return c->tls ? tls_connect(c, cn, err) : 0;
}

/* ---- request ---- */

enum { BODY_NONE = -2, BODY_CHUNKED = -1 };

static int client__send_head(lizard_client *c, struct conn *cn, const char *method,
                             const char *path, const char *ctype, int64_t clen, const char *accept,
                             lz_error *err)
{
    char head[4096];
    const char *default_port = c->tls ? "443" : "80";
    int n = snprintf(head, sizeof(head),
                     "%s %s%s HTTP/1.1\r\nHost: %s%s%s%s%s\r\nUser-Agent: liblizard/1\r\n"
                     "Accept: %s\r\nConnection: close\r\n",
                     method, c->prefix, path, strchr(c->host, ':') ? "[" : "", c->host,
                     strchr(c->host, ':') ? "]" : "", strcmp(c->port, default_port) ? ":" : "",
                     strcmp(c->port, default_port) ? c->port : "",
                     accept ? accept : "application/json");
    if (c->key && n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - n, "Authorization: Bearer %s\r\n", c->key);
    if (clen != BODY_NONE && n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - n, "Content-Type: %s\r\n", ctype);
    if (clen >= 0 && n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - n, "Content-Length: %lld\r\n", (long long)clen);
    if (clen == BODY_CHUNKED && n > 0 && (size_t)n < sizeof(head))
        n += snprintf(head + n, sizeof(head) - n, "Transfer-Encoding: chunked\r\n");
    if (n < 0 || (size_t)n + 2 >= sizeof(head))
        return lz_error_set(err, 0, "request head too long: %s", path);
    memcpy(head + n, "\r\n", 2);
    if (conn_write_all(cn, head, (size_t)n + 2) < 0)
        return lz_error_sys(err, "send request");
    return 0;
}

/* Copy in_fd to the socket; chunked when the length is not known. */
static int client__send_fd(struct conn *cn, int in_fd, int chunked, lz_error *err)
{
    cleanup_free char *buf = malloc(IO_BUF + 32);
    if (buf == NULL)
        return lz_error_set(err, ENOMEM, "send body");
    for (;;) {
        ssize_t r = read(in_fd, buf + 16, IO_BUF);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return lz_error_sys(err, "read request body");
        if (!chunked && r == 0)
            return 0;
        if (!chunked) {
            if (conn_write_all(cn, buf + 16, (size_t)r) < 0)
                return lz_error_sys(err, "send request body");
            continue;
        }
        /* Frame in place: "<hex>\r\n" before the data, "\r\n" after. */
        char sz[16];
        int hl = snprintf(sz, sizeof(sz), "%zx\r\n", (size_t)r);
        memcpy(buf + 16 - hl, sz, (size_t)hl);
        memcpy(buf + 16 + r, "\r\n", 2);
        if (conn_write_all(cn, buf + 16 - hl, (size_t)hl + (size_t)r + 2) < 0)
            return lz_error_sys(err, "send request body");
        if (r == 0)
            return 0; /* that was the "0\r\n\r\n" terminator */
    }
}

/* ---- response ---- */

struct resp {
    struct conn *cn;
    char head[HTTP_MAX_HEAD + 1];
    struct http_head h;
    char *buf; /* IO_BUF bytes; body bytes that arrived with the head first */
    size_t len;
    int chunked, no_body;
    int64_t left; /* Content-Length bytes still to come; -1 = until EOF */
    struct http_chunked ch;
};

static int resp__read_head(struct resp *r, const char *method, lz_error *err)
{
    size_t have = 0, end;
    for (;;) {
        while ((end = http_head_end(r->head, have)) == 0) {
            if (have >= HTTP_MAX_HEAD)
                return lz_error_set(err, 0, "response head too large");
            ssize_t got = conn_read(r->cn, r->head + have, HTTP_MAX_HEAD - have);
            if (got < 0)
                return lz_error_sys(err, "read response");
            if (got == 0)
                return lz_error_set(err, 0, "lizardd closed the connection without answering");
            have += (size_t)got;
        }
        /* Bytes after the head are the start of the body. */
        r->len = have - end;
        memcpy(r->buf, r->head + end, r->len);
        const char *why = "bad response";
        if (http_parse_response_head(r->head, end, &r->h, &why) < 0)
            return lz_error_set(err, 0, "bad response from lizardd: %s", why);
        if (r->h.status >= 200 || r->h.status == 101)
            break;
        /* 1xx interim answer: the real one follows. */
        memmove(r->head, r->buf, r->len);
        have = r->len;
    }
    int64_t clen;
    const char *why = "bad framing";
    if (http_body_framing(&r->h, &r->chunked, &clen, &why) < 0)
        return lz_error_set(err, 0, "bad response from lizardd: %s", why);
    r->no_body = strcmp(method, "HEAD") == 0 || r->h.status == 204 || r->h.status == 304;
    r->left = r->chunked ? -1 : clen;
    http_chunked_init(&r->ch);
    return 0;
}

/* Deliver the body to cb piece by piece. */
static int resp__read_body(struct resp *r, lizard_chunk_cb cb, void *ud, lz_error *err)
{
    if (r->no_body || r->left == 0)
        return 0;
    for (;;) {
        if (r->len > 0) {
            size_t n = r->len;
            int done = 0;
            if (r->chunked) {
                size_t consumed;
                const char *why = "bad chunk";
                long out = http_chunked_decode(&r->ch, r->buf, r->len, &consumed, &done, &why);
                if (out < 0)
                    return lz_error_set(err, 0, "bad response body: %s", why);
                n = (size_t)out;
            } else if (r->left >= 0) {
                if ((int64_t)n > r->left)
                    n = (size_t)r->left; /* ignore anything past the length */
                r->left -= (int64_t)n;
                done = r->left == 0;
            }
            r->len = 0;
            if (n > 0 && cb(r->buf, n, ud) != 0)
                return lz_error_set(err, ECANCELED, "aborted");
            if (done)
                return 0;
        }
        ssize_t got = conn_read(r->cn, r->buf, IO_BUF);
        if (got < 0)
            return lz_error_sys(err, "read response body");
        if (got == 0) {
            if (!r->chunked && r->left < 0)
                return 0; /* no framing: the body ends with the connection */
            return lz_error_set(err, 0, "lizardd closed the connection mid-answer");
        }
        r->len = (size_t)got;
    }
}

struct membuf {
    char *p;
    size_t len, cap, max;
};

static int membuf_add(const char *data, size_t len, void *ud)
{
    struct membuf *m = ud;
    if (m->len + len > m->max)
        return -1;
    if (m->len + len + 1 > m->cap) {
        size_t cap = (m->len + len + 1) * 2;
        char *p = realloc(m->p, cap);
        if (p == NULL)
            return -1;
        m->p = p;
        m->cap = cap;
    }
    memcpy(m->p + m->len, data, len);
    m->len += len;
    m->p[m->len] = '\0';
    return 0;
}

/* Turn a non-2xx answer into -status with the server's message. */
static int resp__error(struct resp *r, lz_error *err)
{
    struct membuf m = {.max = ERROR_BODY_MAX};
    lz_error ignored;
    resp__read_body(r, membuf_add, &m, &ignored);
    const char *msg = NULL;
    json_t *j = m.p ? json_loadb(m.p, m.len, 0, NULL) : NULL;
    json_t *e = json_object_get(j, "error");
    msg = json_string_value(json_object_get(e, "message"));
    if (msg == NULL)
        msg = json_string_value(e); /* tolerate {"error": "text"} */
    if (msg)
        lz_error_set(err, 0, "%s", msg);
    else if (m.len > 0 && m.len < 200 && !strchr(m.p, '<'))
        lz_error_set(err, 0, "HTTP %d %s: %.*s", r->h.status, r->h.reason,
                     (int)strcspn(m.p, "\r\n"), m.p);
    else
        lz_error_set(err, 0, "HTTP %d %s", r->h.status, r->h.reason);
    json_decref(j);
    free(m.p);
    return -r->h.status;
}

/* ---- the one request path ---- */

struct req_body {
    const char *json; /* JSON text, or */
    int in_fd;        /* raw bytes from this fd (-1: none) */
};

static int client__do(lizard_client *c, const char *method, const char *path,
                      const struct req_body *b, const char *accept, lizard_chunk_cb cb, void *ud,
                      lz_error *err)
{
    cleanup_conn struct conn cn = {.fd = -1, .ssl = NULL};
    if (client__connect(c, &cn, err) < 0)
        return -1;
    int64_t clen = BODY_NONE;
    if (b->json) {
        clen = (int64_t)strlen(b->json);
    } else if (b->in_fd >= 0) {
        struct stat st;
        off_t pos = lseek(b->in_fd, 0, SEEK_CUR);
        clen = fstat(b->in_fd, &st) == 0 && S_ISREG(st.st_mode) && pos >= 0 ? st.st_size - pos
                                                                            : BODY_CHUNKED;
    }
    const char *ctype = b->json ? "application/json" : "application/octet-stream";
    if (client__send_head(c, &cn, method, path, ctype, clen, accept, err) < 0)
        return -1;
    /* A failed upload may still have an answer waiting (the server stops
     * reading at 401/413 and replies), so remember the error and read on. */
    lz_error send_err = {0};
    int send_failed = 0;
    if (b->json && conn_write_all(&cn, b->json, (size_t)clen) < 0)
        send_failed = lz_error_sys(&send_err, "send request body");
    else if (!b->json && b->in_fd >= 0)
        send_failed = client__send_fd(&cn, b->in_fd, clen == BODY_CHUNKED, &send_err);
    cleanup_free char *buf = malloc(IO_BUF);
    cleanup_free struct resp *r = calloc(1, sizeof(*r));
    if (buf == NULL || r == NULL)
        return lz_error_set(err, ENOMEM, "response");
    r->cn = &cn;
    r->buf = buf;
    if (resp__read_head(r, method, err) < 0) {
        if (send_failed && err)
            *err = send_err;
        return -1;
    }
    if (r->h.status < 200 || r->h.status >= 300)
        return resp__error(r, err);
    if (send_failed) {
        if (err)
            *err = send_err;
        return -1;
    }
    if (resp__read_body(r, cb, ud, err) < 0)
        return -1;
    return r->h.status;
}

static int discard(const char *d, size_t n, void *ud)
{
    (void)d, (void)n, (void)ud;
    return 0;
}

static int client__json_call(lizard_client *c, const char *method, const char *path, json_t *body,
                             const char *accept, int in_fd, lizard_chunk_cb cb, void *ud,
                             lz_error *err)
{
    cleanup_free char *text = NULL;
    if (body && (text = json_dumps(body, JSON_COMPACT)) == NULL)
        return lz_error_set(err, 0, "cannot encode the request body");
    struct req_body b = {.json = text, .in_fd = text ? -1 : in_fd};
    return client__do(c, method, path, &b, accept, cb, ud, err);
}

static int parse_json_body(struct membuf *m, json_t **out_json, lz_error *err)
{
    *out_json = NULL;
    if (m->len == 0)
        return 0;
    json_error_t je;
    *out_json = json_loadb(m->p, m->len, 0, &je);
    if (*out_json == NULL)
        return lz_error_set(err, 0, "bad JSON from lizardd: %s", je.text);
    return 0;
}

static int write_fd_cb(const char *data, size_t len, void *ud)
{
    return write_all(*(int *)ud, data, len);
}

/* Whole-body calls: the answer goes to out_fd or is parsed as JSON. */
static int client__collect(lizard_client *c, const char *method, const char *path, json_t *body,
                           int in_fd, int out_fd, json_t **out_json, lz_error *err)
{
    struct membuf m = {.max = (size_t)64 << 20}; /* no list answer is near this */
    int st = out_fd >= 0
                 ? client__json_call(c, method, path, body, NULL, in_fd, write_fd_cb, &out_fd, err)
                 : client__json_call(c, method, path, body, NULL, in_fd, membuf_add, &m, err);
    if (st >= 0 && out_fd < 0 && out_json && parse_json_body(&m, out_json, err) < 0)
        st = -1;
    if (out_json && st < 0) {
        json_decref(*out_json);
        *out_json = NULL;
    }
    free(m.p);
    return st;
}

int lizard_request(lizard_client *c, const char *method, const char *path, json_t *body,
                   json_t **out_json, lz_error *err)
{
    if (out_json)
        *out_json = NULL;
    return client__collect(c, method, path, body, -1, -1, out_json, err);
}

int lizard_request_fd(lizard_client *c, const char *method, const char *path, int in_fd, int out_fd,
                      json_t **out_json, lz_error *err)
{
    if (out_json)
        *out_json = NULL;
    return client__collect(c, method, path, NULL, in_fd, out_fd, out_json, err);
}

int lizard_request_stream(lizard_client *c, const char *method, const char *path, json_t *body,
                          const char *accept, lizard_chunk_cb cb, void *ud, lz_error *err)
{
    return client__json_call(c, method, path, body, accept, -1, cb ? cb : discard, ud, err);
}

/* ---- NDJSON ---- */

#define NDJSON_LINE_MAX ((size_t)16 << 20)

struct ndjson {
    struct membuf line; /* the incomplete last line */
    lizard_line_cb cb;
    void *ud;
    lz_error *err;
};

static int ndjson__line(struct ndjson *n, const char *p, size_t len)
{
    while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' '))
        len--;
    if (len == 0)
        return 0;
    json_error_t je;
    /* Command output may hold NUL bytes ("\u0000"); callers use its length. */
    json_t *obj = json_loadb(p, len, JSON_ALLOW_NUL, &je);
    if (obj == NULL) {
        lz_error_set(n->err, 0, "bad NDJSON line from lizardd: %s", je.text);
        return -1;
    }
    int r = n->cb(obj, n->ud);
    json_decref(obj);
    if (r != 0)
        lz_error_set(n->err, ECANCELED, "aborted");
    return r;
}

static int ndjson__chunk(const char *data, size_t len, void *ud)
{
    struct ndjson *n = ud;
    const char *nl;
    while ((nl = memchr(data, '\n', len)) != NULL) {
        size_t part = (size_t)(nl - data);
        int r;
        if (n->line.len > 0) {
            if (membuf_add(data, part, &n->line) < 0)
                return lz_error_set(n->err, 0, "NDJSON line too long");
            r = ndjson__line(n, n->line.p, n->line.len);
            n->line.len = 0;
        } else {
            r = ndjson__line(n, data, part);
        }
        if (r != 0)
            return r;
        data = nl + 1;
        len -= part + 1;
    }
    if (len > 0 && membuf_add(data, len, &n->line) < 0)
        return lz_error_set(n->err, 0, "NDJSON line too long");
    return 0;
}

int lizard_request_ndjson(lizard_client *c, const char *method, const char *path, json_t *body,
                          lizard_line_cb cb, void *ud, lz_error *err)
{
    lz_error inner = {0};
    struct ndjson n = {.line = {.max = NDJSON_LINE_MAX}, .cb = cb, .ud = ud, .err = &inner};
    int st = client__json_call(c, method, path, body, "application/x-ndjson", -1, ndjson__chunk, &n,
                               err);
    /* The callback's own error explains an abort better than "aborted". */
    if (st < 0 && inner.msg[0] && err)
        *err = inner;
    /* A last line without "\n" still counts. */
    if (st >= 0 && n.line.len > 0 && ndjson__line(&n, n.line.p, n.line.len) != 0) {
        if (err)
            *err = inner;
        st = -1;
    }
    free(n.line.p);
    return st;
}
