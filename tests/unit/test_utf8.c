/* utf8_sanitize: replacement of ill-formed input (checked against Python's
 * decode(errors="replace"), which follows the same maximal-subpart rule) and
 * identical results however the input is split into chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../src/common/utf8.h"

struct vec {
    const char *in;
    size_t in_len;
    const char *out;
    size_t out_len;
};
#define V(a, b)                                                                                    \
    {                                                                                              \
        a, sizeof(a) - 1, b, sizeof(b) - 1                                                         \
    }
#define R "\xef\xbf\xbd"

static const struct vec vectors[] = {
    V("hello", "hello"),
    V("caf\xc3\xa9", "caf\xc3\xa9"),
    V("\xff", R),
    V("a\xc3", "a" R),
    V("\xe2\x82", R),
    V("\xe2\x82\xac", "\xe2\x82\xac"),
    V("\xc0\xaf", R R),
    V("\xed\xa0\x80", R R R),
    V("\xf4\x90\x80\x80", R R R R),
    V("\xf0\x9f\x98\x80x", "\xf0\x9f\x98\x80x"),
    V("\xf0\x9f\x98", R),
    V("\xe0\x80\x80", R R R),
    V("\x80\x80", R R),
    V("a\0b", "a\0b"),
    V("\xf0\x9f"
      "A",
      R "A"),
};

static size_t sanitize_chunked(const struct vec *v, size_t chunk, char *out)
{
    struct utf8_carry carry = {{0}, 0};
    size_t w = 0;
    for (size_t off = 0; off < v->in_len; off += chunk) {
        size_t n = v->in_len - off < chunk ? v->in_len - off : chunk;
        w += utf8_sanitize(&carry, (const uint8_t *)v->in + off, n, false, out + w);
    }
    w += utf8_sanitize(&carry, NULL, 0, true, out + w);
    return w;
}

static void test_vectors_whole(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        const struct vec *v = &vectors[i];
        char out[UTF8_SANITIZE_BOUND(16)];
        size_t w = utf8_sanitize(NULL, (const uint8_t *)v->in, v->in_len, true, out);
        assert_int_equal(w, v->out_len);
        assert_memory_equal(out, v->out, w);
        assert_true(utf8_valid((const uint8_t *)out, w));
        assert_int_equal(utf8_valid((const uint8_t *)v->in, v->in_len),
                         v->in_len == v->out_len && memcmp(v->in, v->out, v->in_len) == 0);
    }
}

static void test_vectors_chunked(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        for (size_t chunk = 1; chunk <= 4; chunk++) {
            const struct vec *v = &vectors[i];
            char out[UTF8_SANITIZE_BOUND(16) * 4];
            size_t w = sanitize_chunked(v, chunk, out);
            assert_int_equal(w, v->out_len);
            assert_memory_equal(out, v->out, w);
        }
    }
}

/* Random bytes biased towards UTF-8 structure: any chunking gives the same
 * output as one call, and jansson accepts every result. */
static void test_random_chunking(void **state)
{
    (void)state;
    static const uint8_t alphabet[] = {'a',  0x00, 0x80, 0x9f, 0xa0, 0xbf, 0xc2, 0xc3, 0xe0,
                                       0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x82, 0x98};
    srand(1234);
    for (int iter = 0; iter < 3000; iter++) {
        uint8_t in[40];
        size_t n = (size_t)(rand() % 40);
        for (size_t i = 0; i < n; i++)
            in[i] = alphabet[rand() % sizeof(alphabet)];
        char whole[UTF8_SANITIZE_BOUND(40)], parts[UTF8_SANITIZE_BOUND(40) * 2];
        size_t w1 = utf8_sanitize(NULL, in, n, true, whole);
        struct vec v = {(const char *)in, n, NULL, 0};
        size_t chunk = 1 + (size_t)(rand() % 5);
        size_t w2 = sanitize_chunked(&v, chunk, parts);
        assert_int_equal(w1, w2);
        assert_memory_equal(whole, parts, w1);
        assert_true(utf8_valid((const uint8_t *)whole, w1));
        json_t *s = json_stringn(whole, w1);
        assert_non_null(s);
        json_decref(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_whole),
        cmocka_unit_test(test_vectors_chunked),
        cmocka_unit_test(test_random_chunking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
