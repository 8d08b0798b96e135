/* Unit tests for src/common/http_parse.c: request/response heads, body
 * framing (the request smuggling cases), chunked decoding split at every
 * byte boundary, and query decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/common/http_parse.h"

/* Parse a NUL-terminated head from a writable copy; returns the result. */
static int parse_req(const char *text, struct http_head *h, char *copy, size_t copysz)
{
    size_t len = strlen(text);
    assert_true(len < copysz);
    memcpy(copy, text, len + 1);
    const char *why = NULL;
    int r = http_parse_request_head(copy, len, h, &why);
    if (r < 0)
        assert_non_null(why);
    return r;
}

static void test_head_end(void **state)
{
    (void)state;
    const char *full = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY";
    assert_int_equal(http_head_end(full, strlen(full)), strlen(full) - 4);
    assert_int_equal(http_head_end(full, strlen(full) - 5), 0);
    const char *lf = "GET / HTTP/1.1\nHost: x\n\nBODY";
    assert_int_equal(http_head_end(lf, strlen(lf)), strlen(lf) - 4);
    assert_int_equal(http_head_end("", 0), 0);
    assert_int_equal(http_head_end("\n", 1), 0);
}

static void test_valid_request(void **state)
{
    (void)state;
    char buf[1024];
    struct http_head h;
    const char *req = "POST /v1/sandboxes?project=a%20b HTTP/1.1\r\n"
                      "Host: localhost:7400\r\n"
                      "Content-Type:   application/json  \r\n"
                      "X-Empty:\r\n"
                      "X-Tab:\tv\tw\t\r\n"
                      "\r\n";
    assert_int_equal(parse_req(req, &h, buf, sizeof(buf)), 0);
    assert_string_equal(h.method, "POST");
    assert_string_equal(h.target, "/v1/sandboxes?project=a%20b");
    assert_int_equal(h.minor_version, 1);
    assert_int_equal(h.nheaders, 4);
    assert_string_equal(http_header_get(&h, "content-type"), "application/json");
    assert_string_equal(http_header_get(&h, "HOST"), "localhost:7400");
    assert_string_equal(http_header_get(&h, "x-empty"), "");
    assert_string_equal(http_header_get(&h, "x-tab"), "v\tw");
    assert_null(http_header_get(&h, "missing"));

    assert_int_equal(parse_req("GET / HTTP/1.0\n\n", &h, buf, sizeof(buf)), 0);
    assert_int_equal(h.minor_version, 0);
    assert_int_equal(h.nheaders, 0);
    assert_int_equal(parse_req("OPTIONS * HTTP/1.1\r\n\r\n", &h, buf, sizeof(buf)), 0);
    assert_string_equal(h.target, "*");
    /* obs-text (bytes >= 0x80) is allowed in values. */
    assert_int_equal(parse_req("GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n", &h, buf, sizeof(buf)),
                     0);
}

static void test_invalid_requests(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int status;
    } cases[] = {
        {"\r\n", -400},
        {"GET\r\n\r\n", -400},
        {"GET /\r\n\r\n", -400},
        {"GET  / HTTP/1.1\r\n\r\n", -400},
        {"GET / HTTP/1.1 \r\n\r\n", -400},
        {"GET /a b HTTP/1.1\r\n\r\n", -400},
        {"GET http://x/ HTTP/1.1\r\n\r\n", -400},
        {"GET ** HTTP/1.1\r\n\r\n", -400},
        {"GET /\x01 HTTP/1.1\r\n\r\n", -400},
        {"GET /\x7f HTTP/1.1\r\n\r\n", -400},
        {"GET /\tx HTTP/1.1\r\n\r\n", -400},
        {"G(T / HTTP/1.1\r\n\r\n", -400},
        {" GET / HTTP/1.1\r\n\r\n", -400},
        {"GET / HTTP/2.0\r\n\r\n", -505},
        {"GET / HTTP/1.2\r\n\r\n", -505},
        {"GET / HTTP/0.9\r\n\r\n", -505},
        {"GET / HTTP/1\r\n\r\n", -400},
        {"GET / HTTP/1.10\r\n\r\n", -400},
        {"GET / http/1.1\r\n\r\n", -400},
        {"GET / FOO/1.1\r\n\r\n", -400},
        {"GET / HTTP/1.1\rX: y\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX : a\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\n X: a\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\n: a\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX(: a\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX: a\x01\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nX: a\r\n", -400}, /* no empty line */
    };
    char buf[1024];
    struct http_head h;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int r = parse_req(cases[i].text, &h, buf, sizeof(buf));
        if (r != cases[i].status)
            fail_msg("case %zu (%s): got %d, want %d", i, cases[i].text, r, cases[i].status);
    }
    /* Embedded NULs (strlen-based helper cannot express them). */
    static const char nul_name[] = "GET / HTTP/1.1\r\nX\0Y: a\r\n\r\n";
    static const char nul_target[] = "GET /a\0b HTTP/1.1\r\n\r\n";
    const char *why;
    memcpy(buf, nul_name, sizeof(nul_name));
    assert_int_equal(http_parse_request_head(buf, sizeof(nul_name) - 1, &h, &why), -400);
    memcpy(buf, nul_target, sizeof(nul_target));
    assert_int_equal(http_parse_request_head(buf, sizeof(nul_target) - 1, &h, &why), -400);
}

static void test_limits(void **state)
{
    (void)state;
    char *buf = malloc(HTTP_MAX_HEAD * 2);
    struct http_head h;
    const char *why;
    /* HTTP_MAX_HEADERS headers pass, one more is a 431. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\n");
        for (int i = 0; i < HTTP_MAX_HEADERS + extra; i++)
            n += (size_t)sprintf(buf + n, "X-H%d: %d\r\n", i, i);
        n += (size_t)sprintf(buf + n, "\r\n");
        int r = http_parse_request_head(buf, n, &h, &why);
        assert_int_equal(r, extra ? -431 : 0);
        if (!extra)
            assert_int_equal(h.nheaders, HTTP_MAX_HEADERS);
    }
    /* A head longer than HTTP_MAX_HEAD. */
    size_t n = (size_t)sprintf(buf, "GET / HTTP/1.1\r\nX: ");
    memset(buf + n, 'a', HTTP_MAX_HEAD);
    n += HTTP_MAX_HEAD;
    n += (size_t)sprintf(buf + n, "\r\n\r\n");
    assert_int_equal(http_parse_request_head(buf, n, &h, &why), -431);
    free(buf);
}

/* Framing of a head given as text; returns http_body_framing's result. */
static int framing(const char *text, int *chunked, int64_t *cl)
{
    char buf[1024];
    struct http_head h;
    assert_int_equal(parse_req(text, &h, buf, sizeof(buf)), 0);
    const char *why = NULL;
    int r = http_body_framing(&h, chunked, cl, &why);
    if (r < 0)
        assert_non_null(why);
    return r;
}

static void test_framing(void **state)
{
    (void)state;
    int ch;
    int64_t cl;
    assert_int_equal(framing("GET / HTTP/1.1\r\n\r\n", &ch, &cl), 0);
    assert_int_equal(ch, 0);
    assert_int_equal(cl, -1);
    assert_int_equal(framing("POST / HTTP/1.1\r\nContent-Length: 42\r\n\r\n", &ch, &cl), 0);
    assert_int_equal(cl, 42);
    assert_int_equal(framing("POST / HTTP/1.1\r\ncontent-length: 0\r\n\r\n", &ch, &cl), 0);
    assert_int_equal(cl, 0);
    assert_int_equal(
        framing("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", &ch, &cl), 0);
    assert_int_equal(cl, 5);
    assert_int_equal(framing("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &ch, &cl), 0);
    assert_int_equal(ch, 1);
    assert_int_equal(cl, -1);
    assert_int_equal(framing("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &ch, &cl), 0);
    assert_int_equal(
        framing("POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n", &ch, &cl), 0);
    assert_true(cl == INT64_MAX);

    static const char *bad[] = {
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (framing(bad[i], &ch, &cl) != -1)
            fail_msg("framing case %zu accepted: %s", i, bad[i]);
}

static void test_response_head(void **state)
{
    (void)state;
    char buf[256];
    struct http_head h;
    const char *why;
    strcpy(buf, "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n");
    assert_int_equal(http_parse_response_head(buf, strlen(buf), &h, &why), 0);
    assert_int_equal(h.status, 201);
    assert_string_equal(h.reason, "Created");
    assert_string_equal(http_header_get(&h, "content-length"), "2");
    strcpy(buf, "HTTP/1.0 204\r\n\r\n");
    assert_int_equal(http_parse_response_head(buf, strlen(buf), &h, &why), 0);
    assert_int_equal(h.status, 204);
    assert_int_equal(h.minor_version, 0);
    assert_string_equal(h.reason, "");
    strcpy(buf, "HTTP/1.1 503 Service Unavailable\r\n\r\n");
    assert_int_equal(http_parse_response_head(buf, strlen(buf), &h, &why), 0);
    assert_string_equal(h.reason, "Service Unavailable");

    static const char *bad[] = {
        "HTTP/1.1 99 X\r\n\r\n",
        "HTTP/1.1 600 X\r\n\r\n",
        "HTTP/1.1 2000 X\r\n\r\n",
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1\r\n\r\n",
        "HTTP/1.1 20x OK\r\n\r\n",
        "HTTP/1.1 200 O\x01K\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX : y\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        strcpy(buf, bad[i]);
        if (http_parse_response_head(buf, strlen(buf), &h, &why) != -400)
            fail_msg("response case %zu accepted: %s", i, bad[i]);
    }
}

/* ---- chunked ---- */

/* Feed `in` to a fresh decoder in pieces cut at the given offsets (cuts must
 * be increasing). Output goes to out/outlen; returns 1 done, 0 incomplete,
 * -1 error. *rest gets the input bytes left after the end of the body. */
static int chunked_pieces(const char *in, size_t len, const size_t *cuts, int ncuts, char *out,
                          size_t *outlen, size_t *rest)
{
    struct http_chunked c;
    http_chunked_init(&c);
    *outlen = 0;
    *rest = 0;
    size_t pos = 0;
    for (int i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        /* Each piece in its own heap buffer so ASan sees overreads. */
        size_t plen = end - pos;
        char *piece = malloc(plen ? plen : 1);
        memcpy(piece, in + pos, plen);
        size_t consumed;
        int done;
        const char *why = NULL;
        long n = http_chunked_decode(&c, piece, plen, &consumed, &done, &why);
        if (n < 0) {
            assert_non_null(why);
            free(piece);
            return -1;
        }
        assert_true((size_t)n <= plen);
        assert_true(consumed <= plen);
        memcpy(out + *outlen, piece, (size_t)n);
        *outlen += (size_t)n;
        free(piece);
        if (done) {
            *rest = plen - consumed + (len - end);
            return 1;
        }
        assert_int_equal(consumed, plen);
        pos = end;
    }
    return 0;
}

static void check_chunked_all_splits(const char *in, const char *want, size_t want_rest)
{
    size_t len = strlen(in), outlen, rest;
    char out[512];
    /* Whole, every single cut, and every pair of cuts. */
    assert_int_equal(chunked_pieces(in, len, NULL, 0, out, &outlen, &rest), 1);
    assert_int_equal(outlen, strlen(want));
    assert_memory_equal(out, want, outlen);
    assert_int_equal(rest, want_rest);
    for (size_t i = 0; i <= len; i++) {
        for (size_t j = i; j <= len; j++) {
            size_t cuts[2] = {i, j};
            int r = chunked_pieces(in, len, cuts, 2, out, &outlen, &rest);
            if (r != 1 || outlen != strlen(want) || memcmp(out, want, outlen) != 0 ||
                rest != want_rest)
                fail_msg("split %zu/%zu of %s: r=%d outlen=%zu rest=%zu", i, j, in, r, outlen,
                         rest);
        }
    }
}

static void check_chunked_bad_all_splits(const char *in)
{
    size_t len = strlen(in), outlen, rest;
    char out[512];
    for (size_t i = 0; i <= len; i++) {
        size_t cuts[1] = {i};
        if (chunked_pieces(in, len, cuts, 1, out, &outlen, &rest) != -1)
            fail_msg("split %zu of bad chunked body accepted: %s", i, in);
    }
}

static void test_chunked_valid(void **state)
{
    (void)state;
    check_chunked_all_splits("5\r\nhello\r\n6;ext=1;q=\"a b\"\r\n world\r\n0\r\n\r\n",
                             "hello world", 0);
    check_chunked_all_splits("5\r\nhello\r\n0\r\nTrailer: x\r\nOther: y\r\n\r\nGET /", "hello", 5);
    check_chunked_all_splits("A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n",
                             "0123456789abcdefghij", 0);
    check_chunked_all_splits("0000005\r\nhello\r\n000\r\n\r\n", "hello", 0);
    check_chunked_all_splits("5 ;x\r\nhello\r\n0\t\r\n\r\n", "hello", 0);
    check_chunked_all_splits("0\r\n\r\n", "", 0);
    check_chunked_all_splits("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n", 0);
}

static void test_chunked_invalid(void **state)
{
    (void)state;
    static const char *bad[] = {
        "5\nhello\r\n0\r\n\r\n",     /* bare LF after size */
        "5\r\nhello\n0\r\n\r\n",     /* bare LF after data */
        "5\r\nhelloX\r\n0\r\n\r\n",  /* data longer than size */
        "x\r\n",                     /* not hex */
        "\r\n",                      /* no size */
        ";ext\r\n",                  /* no size */
        "-5\r\nhello\r\n",           /* sign */
        "0x5\r\nhello\r\n",          /* 0x prefix */
        "5 5\r\nhello\r\n",          /* space inside the size */
        "10000000000000000\r\n",     /* 2^64: overflow */
        "fffffffffffffffffffff\r\n", /* overflow */
        "5;a\nb\r\nhello\r\n",       /* LF inside extension */
        "5\r\rhello\r\n",            /* CR CR */
        "0\r\nTrailer: x\n\r\n",     /* bare LF in trailer */
        "0\r\n\n",                   /* bare LF as final line */
        "0\r\n\rX",                  /* CR not followed by LF */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_chunked_bad_all_splits(bad[i]);

    /* A chunk size right under the limit is fine; the decoder wants data. */
    struct http_chunked c;
    http_chunked_init(&c);
    char buf[64];
    strcpy(buf, "fffffffffffffff\r\nab");
    size_t consumed;
    int done;
    const char *why;
    assert_int_equal(http_chunked_decode(&c, buf, strlen(buf), &consumed, &done, &why), 2);
    assert_int_equal(done, 0);

    /* After an error the decoder stays failed. */
    http_chunked_init(&c);
    strcpy(buf, "zz");
    assert_int_equal(http_chunked_decode(&c, buf, 2, &consumed, &done, &why), -1);
    strcpy(buf, "0\r\n\r\n");
    assert_int_equal(http_chunked_decode(&c, buf, 5, &consumed, &done, &why), -1);

    /* Endless chunk extensions and trailers are cut off. */
    size_t big = 3 * HTTP_MAX_HEAD;
    char *in = malloc(big);
    memset(in, 'x', big);
    memcpy(in, "5;", 2);
    http_chunked_init(&c);
    assert_int_equal(http_chunked_decode(&c, in, big, &consumed, &done, &why), -1);
    memcpy(in, "0\r\nX: ", 6);
    http_chunked_init(&c);
    assert_int_equal(http_chunked_decode(&c, in, big, &consumed, &done, &why), -1);
    free(in);
}

/* ---- query / percent decoding ---- */

static void test_url_decode(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(http_url_decode("a%20b+c%2Fd", 11, out, sizeof(out)), 7);
    assert_string_equal(out, "a b c/d");
    assert_int_equal(http_percent_decode("/a+b%2f", 7, out, sizeof(out), 0), 5);
    assert_string_equal(out, "/a+b/");
    assert_int_equal(http_url_decode("%e2%82%AC", 9, out, sizeof(out)), 3);
    assert_string_equal(out, "\xe2\x82\xac");
    assert_int_equal(http_url_decode("", 0, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    assert_int_equal(http_url_decode("%", 1, out, sizeof(out)), -1);
    assert_int_equal(http_url_decode("%4", 2, out, sizeof(out)), -1);
    assert_int_equal(http_url_decode("%4g", 3, out, sizeof(out)), -1);
    assert_int_equal(http_url_decode("%g4", 3, out, sizeof(out)), -1);
    assert_int_equal(http_url_decode("a%00b", 5, out, sizeof(out)), -1);
    assert_int_equal(http_url_decode("a\0b", 3, out, sizeof(out)), -1);
    /* The length limits the input: the escape past it is not read. */
    assert_int_equal(http_url_decode("ab%41", 2, out, sizeof(out)), 2);
    /* outsz counts the terminating NUL. */
    assert_int_equal(http_url_decode("abcd", 4, out, 5), 4);
    assert_int_equal(http_url_decode("abcd", 4, out, 4), -1);
    assert_int_equal(http_url_decode("", 0, out, 0), -1);
}

static void test_query_param(void **state)
{
    (void)state;
    char out[32];
    const char *q = "path=%2Fhome%2Fuser%2Fa+b.txt&user=root&recursive&empty=&t=a=b&user=x&"
                    "my%20key=v&bad=%zz&nul=%00";
    assert_int_equal(http_query_param(q, "path", out, sizeof(out)), 1);
    assert_string_equal(out, "/home/user/a b.txt");
    assert_int_equal(http_query_param(q, "user", out, sizeof(out)), 1);
    assert_string_equal(out, "root"); /* first occurrence wins */
    assert_int_equal(http_query_param(q, "recursive", out, sizeof(out)), 1);
    assert_string_equal(out, "");
    assert_int_equal(http_query_param(q, "empty", out, sizeof(out)), 1);
    assert_string_equal(out, "");
    assert_int_equal(http_query_param(q, "t", out, sizeof(out)), 1);
    assert_string_equal(out, "a=b");
    assert_int_equal(http_query_param(q, "my key", out, sizeof(out)), 1);
    assert_string_equal(out, "v");
    assert_int_equal(http_query_param(q, "missing", out, sizeof(out)), 0);
    assert_int_equal(http_query_param(q, "pat", out, sizeof(out)), 0);
    assert_int_equal(http_query_param(q, "bad", out, sizeof(out)), -1);
    assert_int_equal(http_query_param(q, "nul", out, sizeof(out)), -1);
    assert_int_equal(http_query_param(q, "path", out, 5), -1); /* too long */
    assert_int_equal(http_query_param("", "a", out, sizeof(out)), 0);
    assert_int_equal(http_query_param(NULL, "a", out, sizeof(out)), 0);
    assert_int_equal(http_query_param("&&a=1&", "a", out, sizeof(out)), 1);
    assert_string_equal(out, "1");
    assert_int_equal(http_query_param("=x&a=2", "a", out, sizeof(out)), 1);
    assert_string_equal(out, "2");
    assert_int_equal(http_query_param("%zz=1&a=3", "a", out, sizeof(out)), 1);
    assert_string_equal(out, "3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_end),         cmocka_unit_test(test_valid_request),
        cmocka_unit_test(test_invalid_requests), cmocka_unit_test(test_limits),
        cmocka_unit_test(test_framing),          cmocka_unit_test(test_response_head),
        cmocka_unit_test(test_chunked_valid),    cmocka_unit_test(test_chunked_invalid),
        cmocka_unit_test(test_url_decode),       cmocka_unit_test(test_query_param),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
