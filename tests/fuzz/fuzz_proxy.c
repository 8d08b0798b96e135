/* libFuzzer target for src/daemon/proxy_parse.c: the port proxy's parsing of
 * Host, tokens and cookies, all of it bytes from anyone on the network.
 *
 * Besides "no crash", it checks the property that matters: the head the
 * proxy forwards to a sandbox never carries the access token, whichever way
 * the client sent it (the rebuilt head, parsed again, yields no token). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/daemon/proxy_parse.h"

static void fuzz_host(const char *s)
{
    int port = 0;
    char id[64];
    if (proxy_parse_host(s, "localhost", &port, id, sizeof(id)) == 0 &&
        (port < 1 || port > 65535 || strncmp(id, "sb_", 3) != 0))
        abort();
}

static void fuzz_cookie(const char *s)
{
    char out[256], stripped[4096];
    proxy_cookie_get(s, "lizard_token_80", out, sizeof(out));
    if (proxy_cookie_strip(s, "lizard_token_80", stripped, sizeof(stripped)) >= 0 &&
        proxy_cookie_get(stripped, "lizard_token_80", out, sizeof(out)) != 0)
        abort();
}

static void fuzz_target(const char *s)
{
    char out[4096], tok[PROXY_TOKEN_MAX];
    if (proxy_target_strip(s, out, sizeof(out)) >= 0) {
        const char *q = strchr(out, '?');
        if (q && http_query_param(q + 1, PROXY_TOKEN_PARAM, tok, sizeof(tok)) != 0)
            abort();
    }
}

static void fuzz_head(const char *s, size_t n)
{
    char *buf = malloc(n + 1), *again = NULL;
    struct http_head h, h2;
    const char *why, *from;
    memcpy(buf, s, n);
    buf[n] = '\0';
    size_t end = http_head_end(buf, n);
    char target[HTTP_MAX_HEAD], out[2 * HTTP_MAX_HEAD], tok[PROXY_TOKEN_MAX];
    if (end == 0 || http_parse_request_head(buf, end, &h, &why) != 0)
        goto out;
    proxy_request_token(&h, h.target, 80, tok, sizeof(tok), &from);
    if (proxy_target_strip(h.target, target, sizeof(target)) < 0)
        goto out;
    long len = proxy_build_head(&h, target, 80, out, sizeof(out));
    if (len < 0)
        goto out;
    again = strndup(out, len);
    if (http_parse_request_head(again, len, &h2, &why) != 0)
        abort(); /* we forward only what we would accept ourselves */
    if (proxy_request_token(&h2, h2.target, 80, tok, sizeof(tok), &from) != 0)
        abort(); /* the token leaked to the sandbox */
out:
    free(again);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = strndup((const char *)data + 1, size - 1);
    switch (data[0] % 4) {
    case 0:
        fuzz_host(s);
        break;
    case 1:
        fuzz_cookie(s);
        break;
    case 2:
        fuzz_target(s);
        break;
    default:
        fuzz_head((const char *)data + 1, size - 1);
        break;
    }
    free(s);
    return 0;
}
