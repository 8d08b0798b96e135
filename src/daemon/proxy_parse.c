/* Pure parsing for the port proxy (see proxy_parse.h). Everything here sees
 * bytes from anyone on the network, so it is bounded and fuzzed
 * (tests/fuzz/fuzz_proxy.c). */
#include "proxy_parse.h"
#include "../common/ids.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* An output buffer that remembers overflowing instead of truncating. */
struct out {
    char *p;
    size_t len, cap;
    int overflow;
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->overflow || o->len + n + 1 > o->cap) {
        o->overflow = 1;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void put_str(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static long out_result(struct out *o)
{
    return o->overflow ? -1 : (long)o->len;
}

int proxy_parse_host(const char *host, const char *domain, int *port, char *id, size_t idsz)
{
    if (host == NULL || domain == NULL || *domain == '\0')
        return -1;
    size_t n = strlen(host);
    /* Drop ":N" (the listener's port; any port is fine, it reached us). */
    const char *colon = memchr(host, ':', n);
    if (colon != NULL) {
        if (colon[1] == '\0' || strspn(colon + 1, "0123456789") != strlen(colon + 1))
            return -1;
        n = colon - host;
    }
    size_t dl = strlen(domain);
    if (n < dl + 2 || host[n - dl - 1] != '.' || strncasecmp(host + n - dl, domain, dl) != 0)
        return -1;
    size_t label = n - dl - 1; /* "PORT-ID" */
    size_t digits = 0;
    long p = 0;
    while (digits < label && digits < 6 && isdigit((unsigned char)host[digits]))
        p = p * 10 + (host[digits++] - '0');
    if (digits == 0 || digits > 5 || host[0] == '0' || p > 65535 || digits >= label ||
        host[digits] != '-')
        return -1;
    size_t idlen = label - digits - 1;
    if (idlen + 1 > idsz)
        return -1;
    for (size_t i = 0; i < idlen; i++)
        id[i] = (char)tolower((unsigned char)host[digits + 1 + i]);
    id[idlen] = '\0';
    if (!id_is_valid(id, "sb_"))
        return -1;
    *port = (int)p;
    return 0;
}

void proxy_cookie_name(int port, char out[PROXY_COOKIE_NAME_MAX])
{
    snprintf(out, PROXY_COOKIE_NAME_MAX, "lizard_token_%d", port);
}

/* Calls fn for each "name=value" pair of a Cookie header, with surrounding
 * spaces trimmed; stops when fn returns non-zero and returns that. */
static int cookie_each(const char *cookie, int (*fn)(const char *pair, size_t n, void *arg),
                       void *arg)
{
    const char *p = cookie;
    while (*p) {
        const char *semi = strchrnul(p, ';');
        const char *s = p, *e = semi;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e > s) {
            int r = fn(s, e - s, arg);
            if (r != 0)
                return r;
        }
        p = *semi ? semi + 1 : semi;
    }
    return 0;
}

static int pair_named(const char *pair, size_t n, const char *name)
{
    size_t nl = strlen(name);
    return n > nl && pair[nl] == '=' && memcmp(pair, name, nl) == 0;
}

struct cookie_find {
    const char *name;
    char *out;
    size_t outsz;
};

static int cookie_find_one(const char *pair, size_t n, void *arg)
{
    struct cookie_find *f = arg;
    if (!pair_named(pair, n, f->name))
        return 0;
    size_t vl = n - strlen(f->name) - 1;
    if (vl + 1 > f->outsz)
        return -1;
    memcpy(f->out, pair + n - vl, vl);
    f->out[vl] = '\0';
    return 1;
}

int proxy_cookie_get(const char *cookie, const char *name, char *out, size_t outsz)
{
    struct cookie_find f = {name, out, outsz};
    return cookie == NULL ? 0 : cookie_each(cookie, cookie_find_one, &f);
}

struct cookie_keep {
    const char *name;
    struct out *o;
};

static int cookie_keep_one(const char *pair, size_t n, void *arg)
{
    struct cookie_keep *k = arg;
    if (pair_named(pair, n, k->name))
        return 0;
    if (k->o->len > 0)
        put_str(k->o, "; ");
    put(k->o, pair, n);
    return 0;
}

long proxy_cookie_strip(const char *cookie, const char *name, char *out, size_t outsz)
{
    struct out o = {out, 0, outsz, outsz == 0};
    if (outsz > 0)
        out[0] = '\0';
    struct cookie_keep k = {name, &o};
    cookie_each(cookie, cookie_keep_one, &k);
    return out_result(&o);
}

/* Is this "name[=value]" query component the token parameter? */
static int is_token_param(const char *s, size_t n)
{
    const char *eq = memchr(s, '=', n);
    size_t kl = eq ? (size_t)(eq - s) : n;
    char key[sizeof(PROXY_TOKEN_PARAM) + 1];
    long dl = http_url_decode(s, kl, key, sizeof(key));
    return dl == (long)strlen(PROXY_TOKEN_PARAM) && memcmp(key, PROXY_TOKEN_PARAM, dl) == 0;
}

long proxy_target_strip(const char *target, char *out, size_t outsz)
{
    struct out o = {out, 0, outsz, outsz == 0};
    if (outsz > 0)
        out[0] = '\0';
    const char *q = strchr(target, '?');
    if (q == NULL) {
        put_str(&o, target);
        return out_result(&o);
    }
    put(&o, target, q - target);
    const char *p = q + 1;
    int first = 1;
    while (*p) {
        const char *amp = strchrnul(p, '&');
        if (amp > p && !is_token_param(p, amp - p)) {
            put_str(&o, first ? "?" : "&");
            put(&o, p, amp - p);
            first = 0;
        }
        p = *amp ? amp + 1 : amp;
    }
    return out_result(&o);
}

int proxy_request_token(const struct http_head *h, const char *target, int port, char *out,
                        size_t outsz, const char **from)
{
    const char *hv = http_header_get(h, PROXY_TOKEN_HEADER);
    if (hv != NULL) {
        *from = "header";
        if (strlen(hv) + 1 > outsz)
            return -1;
        snprintf(out, outsz, "%s", hv);
        return 1;
    }
    const char *q = strchr(target, '?');
    int r = q ? http_query_param(q + 1, PROXY_TOKEN_PARAM, out, outsz) : 0;
    if (r != 0) {
        *from = "query";
        return r;
    }
    char name[PROXY_COOKIE_NAME_MAX];
    proxy_cookie_name(port, name);
    /* Several Cookie headers are allowed (RFC 9113 8.2.3 on the way to 1.1). */
    for (size_t i = 0; i < h->nheaders; i++) {
        if (strcasecmp(h->headers[i].name, "Cookie") != 0)
            continue;
        r = proxy_cookie_get(h->headers[i].value, name, out, outsz);
        if (r != 0) {
            *from = "cookie";
            return r;
        }
    }
    return 0;
}

long proxy_build_head(const struct http_head *h, const char *target, int port, char *out,
                      size_t outsz)
{
    struct out o = {out, 0, outsz, outsz == 0};
    char name[PROXY_COOKIE_NAME_MAX];
    proxy_cookie_name(port, name);
    put_str(&o, h->method);
    put_str(&o, " ");
    put_str(&o, target);
    put_str(&o, h->minor_version == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    for (size_t i = 0; i < h->nheaders && !o.overflow; i++) {
        const struct http_header *hd = &h->headers[i];
        const char *value = hd->value;
        char kept[HTTP_MAX_HEAD];
        if (strcasecmp(hd->name, PROXY_TOKEN_HEADER) == 0)
            continue;
        if (strcasecmp(hd->name, "Cookie") == 0) {
            long kl = proxy_cookie_strip(value, name, kept, sizeof(kept));
            if (kl < 0)
                return -1; /* never forward the token because it did not fit */
            if (kl == 0)
                continue;
            value = kept;
        }
        put_str(&o, hd->name);
        put_str(&o, ": ");
        put_str(&o, value);
        put_str(&o, "\r\n");
    }
    put_str(&o, "\r\n");
    return out_result(&o);
}
