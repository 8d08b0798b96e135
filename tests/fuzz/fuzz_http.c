/* libFuzzer target for src/common/http_parse.c: everything lizardd runs on
 * bytes from the network before a handler sees them.
 *
 * The first input byte picks the feature (head parsing, chunked decoding,
 * query decoding); the rest is the input. Chunked decoding is checked
 * differentially: the body decoded in one piece must equal the body decoded
 * from random slices, so a state machine bug at a slice boundary aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/http_parse.h"

static void fuzz_heads(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    size_t end = http_head_end(buf, size);
    size_t len = end ? end : size;
    struct http_head h;
    const char *why = NULL;
    int r = http_parse_request_head(buf, len, &h, &why);
    if (r == 0) {
        int chunked;
        int64_t cl;
        if (http_body_framing(&h, &chunked, &cl, &why) == 0 && chunked && cl >= 0)
            abort(); /* both framings accepted: smuggling */
        (void)http_header_get(&h, "Content-Length");
        for (size_t i = 0; i < h.nheaders; i++)
            if (strlen(h.headers[i].name) == 0)
                abort();
        if (h.target[0] != '/' && strcmp(h.target, "*") != 0)
            abort();
    } else if (r != -400 && r != -431 && r != -505) {
        abort();
    } else if (why == NULL) {
        abort();
    }
    memcpy(buf, data, size);
    (void)http_parse_response_head(buf, len, &h, &why);
    free(buf);
}

/* Decode in slices whose sizes come from `seed`; returns the decoded length
 * or -1 on error, with *done set. */
static long decode_slices(const uint8_t *in, size_t size, uint32_t seed, char *out, int *done)
{
    struct http_chunked c;
    http_chunked_init(&c);
    size_t pos = 0, outlen = 0;
    *done = 0;
    while (pos < size && !*done) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 16) % 17;
        if (n > size - pos)
            n = size - pos;
        char *piece = malloc(n);
        memcpy(piece, in + pos, n);
        size_t consumed;
        const char *why;
        long r = http_chunked_decode(&c, piece, n, &consumed, done, &why);
        if (r < 0) {
            free(piece);
            return -1;
        }
        if ((size_t)r > n || consumed > n || (!*done && consumed != n))
            abort();
        memcpy(out + outlen, piece, (size_t)r);
        outlen += (size_t)r;
        pos += consumed;
        free(piece);
        if (!*done && consumed == 0)
            abort(); /* no progress */
    }
    return (long)outlen;
}

static void fuzz_chunked(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    uint32_t seed = data[0] | (uint32_t)data[1] << 8;
    data += 2;
    size -= 2;
    char *whole = malloc(size + 1), *sliced = malloc(size + 1);
    int done1, done2;
    long n1 = decode_slices(data, size, 0, whole, &done1); /* seed 0: still slices */
    struct http_chunked c;
    http_chunked_init(&c);
    char *one = malloc(size + 1);
    memcpy(one, data, size);
    size_t consumed;
    int done3;
    const char *why;
    long n3 = http_chunked_decode(&c, one, size, &consumed, &done3, &why);
    long n2 = decode_slices(data, size, seed, sliced, &done2);
    /* Errors can show at different slices, but success must agree exactly. */
    if ((n1 < 0) != (n3 < 0) || (n2 < 0) != (n3 < 0))
        abort();
    if (n3 >= 0) {
        if (n1 != n3 || n2 != n3 || done1 != done3 || done2 != done3)
            abort();
        if (memcmp(whole, one, (size_t)n3) != 0 || memcmp(sliced, one, (size_t)n3) != 0)
            abort();
    }
    free(whole);
    free(sliced);
    free(one);
}

static void fuzz_query(const uint8_t *data, size_t size)
{
    char *q = malloc(size + 1);
    memcpy(q, data, size);
    q[size] = '\0';
    static const char *names[] = {"a", "path", "user", "", "my key"};
    char out[64];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int r = http_query_param(q, names[i], out, sizeof(out));
        if (r == 1 && strlen(out) >= sizeof(out))
            abort();
        if (r < -1 || r > 1)
            abort();
    }
    char *dec = malloc(size + 1);
    long n = http_url_decode((const char *)data, size, dec, size + 1);
    if (n >= 0 && ((size_t)n > size || strlen(dec) != (size_t)n))
        abort();
    n = http_percent_decode((const char *)data, size, dec, size + 1, 0);
    if (n >= 0 && ((size_t)n > size || strlen(dec) != (size_t)n))
        abort();
    free(dec);
    free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0:
        fuzz_heads(data + 1, size - 1);
        break;
    case 1:
        fuzz_chunked(data + 1, size - 1);
        break;
    default:
        fuzz_query(data + 1, size - 1);
        break;
    }
    return 0;
}
