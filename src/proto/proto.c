#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void proto_encode_header(const struct proto_header *h, uint8_t out[PROTO_HEADER_SIZE])
{
    out[0] = h->version;
    out[1] = h->type;
    put_u16(out + 2, h->flags);
    put_u32(out + 4, h->stream);
    put_u32(out + 8, h->length);
}

int proto_decode_header(const uint8_t in[PROTO_HEADER_SIZE], struct proto_header *h,
                        const char **why)
{
    h->version = in[0];
    h->type = in[1];
    h->flags = get_u16(in + 2);
    h->stream = get_u32(in + 4);
    h->length = get_u32(in + 8);
    const char *problem = NULL;
    if (h->version != PROTO_VERSION)
        problem = "unsupported protocol version";
    else if (h->type < PROTO_HELLO || h->type > PROTO_CANCEL)
        problem = "unknown frame type";
    else if (h->flags != 0)
        problem = "reserved flags set";
    else if (h->length > PROTO_MAX_PAYLOAD)
        problem = "frame payload too large";
    else if ((h->stream == 0) != (h->type == PROTO_HELLO))
        problem = "stream 0 is only for HELLO";
    if (why)
        *why = problem;
    return problem ? -1 : 0;
}

const char *proto_type_name(uint8_t type)
{
    static const char *names[] = {"?",   "HELLO",    "REQUEST", "DATA",   "STDOUT", "STDERR",
                                  "EOF", "RESPONSE", "ERROR",   "SIGNAL", "CANCEL"};
    return type <= PROTO_CANCEL ? names[type] : "?";
}

int proto_write_frame(int fd, uint8_t type, uint32_t stream, const void *payload, size_t len)
{
    if (len > PROTO_MAX_PAYLOAD) {
        errno = EMSGSIZE;
        return -1;
    }
    struct proto_header h = {PROTO_VERSION, type, 0, stream, (uint32_t)len};
    uint8_t hdr[PROTO_HEADER_SIZE];
    proto_encode_header(&h, hdr);
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)payload, len}};
    int iovcnt = len ? 2 : 1;
    size_t total = sizeof(hdr) + len;
    while (total > 0) {
        ssize_t w = writev(fd, iov, iovcnt);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        total -= (size_t)w;
        /* Advance the iovecs past what was written. */
        for (int i = 0; i < iovcnt && w > 0; i++) {
            size_t take = (size_t)w < iov[i].iov_len ? (size_t)w : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + take;
            iov[i].iov_len -= take;
            w -= (ssize_t)take;
        }
    }
    return 0;
}

static int read_exact(int fd, void *buf, size_t n, int eof_ok)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            if (got == 0 && eof_ok)
                return 0;
            errno = EPROTO;
            return -1;
        }
        got += (size_t)r;
    }
    return 1;
}

int proto_read_frame(int fd, struct proto_header *h, uint8_t **payload)
{
    uint8_t hdr[PROTO_HEADER_SIZE];
    *payload = NULL;
    int r = read_exact(fd, hdr, sizeof(hdr), 1);
    if (r <= 0)
        return r;
    if (proto_decode_header(hdr, h, NULL) < 0) {
        errno = EPROTO;
        return -1;
    }
    uint8_t *p = malloc(h->length + 1);
    if (p == NULL)
        return -1;
    if (h->length > 0 && read_exact(fd, p, h->length, 0) < 0) {
        free(p);
        return -1;
    }
    p[h->length] = '\0';
    *payload = p;
    return 1;
}

void proto_decoder_init(struct proto_decoder *d)
{
    memset(d, 0, sizeof(*d));
}

void proto_decoder_free(struct proto_decoder *d)
{
    free(d->buf);
    memset(d, 0, sizeof(*d));
}

/* The frame returned by the previous call stays in the buffer (its payload
 * pointer must stay valid) and is dropped here, at the next call. */
static void decoder_drop_pending(struct proto_decoder *d)
{
    if (d->pending == 0)
        return;
    memmove(d->buf, d->buf + d->pending, d->len - d->pending);
    d->len -= d->pending;
    d->pending = 0;
}

int proto_decoder_feed(struct proto_decoder *d, const void *data, size_t n)
{
    decoder_drop_pending(d);
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        uint8_t *nb = realloc(d->buf, cap);
        if (nb == NULL)
            return -1;
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, data, n);
    d->len += n;
    return 0;
}

int proto_decoder_next(struct proto_decoder *d, struct proto_header *h, const uint8_t **payload,
                       const char **why)
{
    decoder_drop_pending(d);
    if (d->len < PROTO_HEADER_SIZE)
        return 0;
    if (proto_decode_header(d->buf, h, why) < 0)
        return -1;
    size_t frame = PROTO_HEADER_SIZE + h->length;
    if (d->len < frame)
        return 0;
    *payload = d->buf + PROTO_HEADER_SIZE;
    d->pending = frame;
    return 1;
}
