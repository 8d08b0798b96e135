/* HTTP/1.1 head parsing and chunked decoding (RFC 9112). Strict on purpose:
 * lizardd sits behind whatever proxies users put in front of it, and any
 * leniency where two parsers could disagree (bare CR, obs-fold, conflicting
 * lengths, odd Transfer-Encodings) is how request smuggling happens. */
#include "http_parse.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

size_t http_head_end(const char *buf, size_t len)
{
    /* The head ends at the first empty line; the line before it may end in
     * CRLF or a bare LF ("\n\r\n" or "\n\n"). */
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

static int is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_token(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!is_tchar((unsigned char)*s))
            return 0;
    return 1;
}

/* Field values and reason phrases: HTAB, SP, VCHAR and obs-text. */
static int is_field_text(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '\t' && (c < 0x20 || c == 0x7f))
            return 0;
    }
    return 1;
}

/* Cut the next line out of [*p, end) and NUL-terminate it (the CRLF or LF
 * is dropped). A CR anywhere but before the LF, or a NUL, fails: parsers
 * that treat a bare CR as a line end would see different headers than we do. */
static char *next_line(char **p, char *end, const char **why)
{
    char *s = *p;
    char *nl = memchr(s, '\n', end - s);
    if (nl == NULL) {
        *why = "incomplete message head";
        return NULL;
    }
    char *e = nl;
    if (e > s && e[-1] == '\r')
        e--;
    if (memchr(s, '\r', e - s) != NULL || memchr(s, '\0', e - s) != NULL) {
        *why = "control character in message head";
        return NULL;
    }
    *e = '\0';
    *p = nl + 1;
    return s;
}

/* "HTTP/1.0" or "HTTP/1.1" -> minor version; other well-formed versions
 * -> -505; anything else -> -400. */
static int parse_version(const char *v)
{
    if (strncmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' ||
        v[7] > '9' || v[8] != '\0')
        return -400;
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return -505;
    return v[7] - '0';
}

static int parse_headers(char *p, char *end, struct http_head *out, const char **why)
{
    for (;;) {
        char *line = next_line(&p, end, why);
        if (line == NULL)
            return -400;
        if (*line == '\0')
            return 0;
        if (*line == ' ' || *line == '\t') {
            /* obs-fold: RFC 9112 lets servers reject it, and we do, since a
             * folded line is read as a new header by some parsers. */
            *why = "obsolete header line folding";
            return -400;
        }
        char *colon = strchr(line, ':');
        if (colon == NULL) {
            *why = "header line without a colon";
            return -400;
        }
        *colon = '\0';
        /* Whitespace before the colon fails here too, as RFC 9112 demands. */
        if (!is_token(line)) {
            *why = "invalid header name";
            return -400;
        }
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        char *vend = value + strlen(value);
        while (vend > value && (vend[-1] == ' ' || vend[-1] == '\t'))
            vend--;
        *vend = '\0';
        if (!is_field_text(value)) {
            *why = "control character in header value";
            return -400;
        }
        if (out->nheaders == HTTP_MAX_HEADERS) {
            *why = "too many header fields";
            return -431;
        }
        out->headers[out->nheaders].name = line;
        out->headers[out->nheaders].value = value;
        out->nheaders++;
    }
}

static int check_target(const char *t)
{
    if (t[0] != '/' && strcmp(t, "*") != 0)
        return -1;
    for (; *t; t++) {
        unsigned char c = (unsigned char)*t;
        if (c <= 0x20 || c == 0x7f)
            return -1;
    }
    return 0;
}

int http_parse_request_head(char *buf, size_t len, struct http_head *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    if (len > HTTP_MAX_HEAD) {
        *why = "request head too large";
        return -431;
    }
    char *p = buf, *end = buf + len;
    char *line = next_line(&p, end, why);
    if (line == NULL)
        return -400;
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (sp2 == NULL) {
        *why = "malformed request line";
        return -400;
    }
    *sp1 = '\0';
    *sp2 = '\0';
    out->method = line;
    out->target = sp1 + 1;
    if (!is_token(out->method)) {
        *why = "invalid method";
        return -400;
    }
    int v = parse_version(sp2 + 1);
    if (v < 0) {
        *why = v == -505 ? "HTTP version not supported" : "malformed request line";
        return v;
    }
    out->minor_version = v;
    if (check_target(out->target) < 0) {
        *why = "invalid request target";
        return -400;
    }
    return parse_headers(p, end, out, why);
}

int http_parse_response_head(char *buf, size_t len, struct http_head *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    if (len > HTTP_MAX_HEAD) {
        *why = "response head too large";
        return -431;
    }
    char *p = buf, *end = buf + len;
    char *line = next_line(&p, end, why);
    if (line == NULL)
        return -400;
    char *sp = strchr(line, ' ');
    if (sp == NULL) {
        *why = "malformed status line";
        return -400;
    }
    *sp = '\0';
    int v = parse_version(line);
    if (v < 0) {
        *why = "unsupported HTTP version in status line";
        return -400;
    }
    out->minor_version = v;
    char *s = sp + 1;
    if (s[0] < '1' || s[0] > '5' || s[1] < '0' || s[1] > '9' || s[2] < '0' || s[2] > '9' ||
        (s[3] != ' ' && s[3] != '\0')) {
        *why = "malformed status code";
        return -400;
    }
    out->status = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
    out->reason = s[3] == ' ' ? s + 4 : s + 3;
    if (!is_field_text(out->reason)) {
        *why = "control character in reason phrase";
        return -400;
    }
    return parse_headers(p, end, out, why);
}

const char *http_header_get(const struct http_head *h, const char *name)
{
    for (size_t i = 0; i < h->nheaders; i++)
        if (strcasecmp(h->headers[i].name, name) == 0)
            return h->headers[i].value;
    return NULL;
}

/* Content-Length is 1*DIGIT; no sign, no spaces, no lists, no overflow. */
static int parse_content_length(const char *s, int64_t *out)
{
    int64_t v = 0;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (INT64_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 0;
}

int http_body_framing(const struct http_head *h, int *chunked, int64_t *content_length,
                      const char **why)
{
    int te = 0;
    *chunked = 0;
    *content_length = -1;
    for (size_t i = 0; i < h->nheaders; i++) {
        const struct http_header *f = &h->headers[i];
        if (strcasecmp(f->name, "Transfer-Encoding") == 0) {
            /* Only a lone "chunked": with anything else (gzip, repeated
             * headers, "chunked, identity") two parsers may frame the body
             * differently. */
            if (te || strcasecmp(f->value, "chunked") != 0) {
                *why = "unsupported Transfer-Encoding";
                return -1;
            }
            te = 1;
        } else if (strcasecmp(f->name, "Content-Length") == 0) {
            int64_t v;
            if (parse_content_length(f->value, &v) < 0) {
                *why = "invalid Content-Length";
                return -1;
            }
            if (*content_length >= 0 && *content_length != v) {
                *why = "conflicting Content-Length headers";
                return -1;
            }
            *content_length = v;
        }
    }
    if (te && *content_length >= 0) {
        *why = "both Content-Length and Transfer-Encoding";
        return -1;
    }
    if (te && h->method != NULL && h->minor_version == 0) {
        /* RFC 9112 6.1: an HTTP/1.0 request with Transfer-Encoding is faulty. */
        *why = "Transfer-Encoding in an HTTP/1.0 request";
        return -1;
    }
    *chunked = te;
    return 0;
}

enum {
    CH_SIZE_START, /* expecting the first hex digit of a size */
    CH_SIZE,
    CH_SIZE_WS, /* BWS after the size, before ';' or CR */
    CH_EXT,     /* chunk extension, ignored */
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER_START, /* start of a trailer line or the final CRLF */
    CH_TRAILER,
    CH_TRAILER_LF,
    CH_FINAL_LF,
    CH_DONE,
    CH_ERROR,
};

/* Bounds on what we skip without storing, so a peer cannot keep a
 * connection busy with an endless size line or trailer section. */
#define CH_MAX_SIZE_LINE 4096
#define CH_MAX_TRAILERS HTTP_MAX_HEAD

void http_chunked_init(struct http_chunked *c)
{
    memset(c, 0, sizeof(*c));
    c->state = CH_SIZE_START;
}

static int hexval(unsigned char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* One framing byte (anything but chunk data). Returns 0 or -1 with *why. */
static int chunked_step(struct http_chunked *c, unsigned char ch, const char **why)
{
    int h;
    switch (c->state) {
    case CH_SIZE_START:
    case CH_SIZE:
        h = hexval(ch);
        if (h >= 0) {
            /* Keep sizes below 2^60 so they never overflow int64 users. */
            if (c->remaining >> 56) {
                *why = "chunk size too large";
                return -1;
            }
            c->remaining = c->remaining << 4 | (uint64_t)h;
            c->state = CH_SIZE;
            break;
        }
        if (c->state == CH_SIZE_START) {
            *why = "missing chunk size";
            return -1;
        }
        /* fallthrough */
    case CH_SIZE_WS:
        if (ch == ' ' || ch == '\t')
            c->state = CH_SIZE_WS;
        else if (ch == ';')
            c->state = CH_EXT;
        else if (ch == '\r')
            c->state = CH_SIZE_LF;
        else {
            *why = "invalid chunk size line";
            return -1;
        }
        break;
    case CH_EXT:
        if (ch == '\r')
            c->state = CH_SIZE_LF;
        else if (ch == '\n' || ch == '\0') {
            *why = "invalid chunk extension";
            return -1;
        }
        break;
    case CH_SIZE_LF:
        if (ch != '\n') {
            *why = "chunk size line not ended by CRLF";
            return -1;
        }
        c->state = c->remaining ? CH_DATA : CH_TRAILER_START;
        c->digits = 0;
        return 0;
    case CH_DATA_CR:
    case CH_DATA_LF:
        if (ch != (c->state == CH_DATA_CR ? '\r' : '\n')) {
            *why = "chunk data not followed by CRLF";
            return -1;
        }
        if (c->state == CH_DATA_CR)
            c->state = CH_DATA_LF;
        else {
            c->state = CH_SIZE_START;
            c->digits = 0;
        }
        return 0;
    case CH_TRAILER_START:
        if (ch == '\r')
            c->state = CH_FINAL_LF;
        else if (ch == '\n') {
            *why = "bare LF in trailers";
            return -1;
        } else
            c->state = CH_TRAILER;
        break;
    case CH_TRAILER:
        if (ch == '\r')
            c->state = CH_TRAILER_LF;
        else if (ch == '\n' || ch == '\0') {
            *why = "invalid trailer line";
            return -1;
        }
        break;
    case CH_TRAILER_LF:
    case CH_FINAL_LF:
        if (ch != '\n') {
            *why = "trailer line not ended by CRLF";
            return -1;
        }
        c->state = c->state == CH_FINAL_LF ? CH_DONE : CH_TRAILER_START;
        break;
    default:
        *why = "invalid chunked decoder state";
        return -1;
    }
    /* Size lines and trailers are skipped, not stored; bound them anyway. */
    c->digits++;
    int limit = c->state >= CH_TRAILER_START ? CH_MAX_TRAILERS : CH_MAX_SIZE_LINE;
    if (c->digits > limit) {
        *why = "chunk size line or trailers too long";
        return -1;
    }
    return 0;
}

long http_chunked_decode(struct http_chunked *c, char *buf, size_t len, size_t *consumed, int *done,
                         const char **why)
{
    size_t i = 0, out = 0;
    *consumed = 0;
    if (c->state == CH_ERROR) {
        *why = "malformed chunked body";
        *done = 0;
        return -1;
    }
    while (i < len && c->state != CH_DONE) {
        if (c->state == CH_DATA) {
            size_t n = len - i;
            if (n > c->remaining)
                n = (size_t)c->remaining;
            /* out <= i always (framing bytes are dropped), so this only
             * ever moves data towards the front. */
            memmove(buf + out, buf + i, n);
            out += n;
            i += n;
            c->remaining -= n;
            if (c->remaining == 0)
                c->state = CH_DATA_CR;
            continue;
        }
        if (chunked_step(c, (unsigned char)buf[i], why) < 0) {
            c->state = CH_ERROR;
            *done = 0;
            return -1;
        }
        i++;
    }
    *consumed = i;
    *done = c->state == CH_DONE;
    return (long)out;
}

long http_percent_decode(const char *in, size_t len, char *out, size_t outsz, int plus_is_space)
{
    size_t o = 0;
    if (outsz == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == '%') {
            int hi = i + 2 < len ? hexval((unsigned char)in[i + 1]) : -1;
            int lo = hi >= 0 ? hexval((unsigned char)in[i + 2]) : -1;
            if (lo < 0)
                return -1;
            c = (unsigned char)(hi << 4 | lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        /* A NUL would silently cut the C string the caller uses. */
        if (c == '\0' || o + 1 >= outsz)
            return -1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return (long)o;
}

long http_url_decode(const char *in, size_t len, char *out, size_t outsz)
{
    return http_percent_decode(in, len, out, outsz, 1);
}

int http_query_param(const char *query, const char *name, char *out, size_t outsz)
{
    if (query == NULL)
        return 0;
    size_t namelen = strlen(name);
    const char *p = query;
    while (*p) {
        const char *amp = strchrnul(p, '&');
        const char *eq = memchr(p, '=', amp - p);
        const char *kend = eq ? eq : amp;
        char key[256];
        /* A key we cannot decode cannot be the one asked for; skip it. */
        long kl = http_url_decode(p, kend - p, key, sizeof(key));
        if (kl >= 0 && (size_t)kl == namelen && memcmp(key, name, namelen) == 0) {
            const char *v = eq ? eq + 1 : amp;
            return http_url_decode(v, amp - v, out, outsz) < 0 ? -1 : 1;
        }
        p = *amp ? amp + 1 : amp;
    }
    return 0;
}
