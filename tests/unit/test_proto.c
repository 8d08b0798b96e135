/* Agent wire protocol framing (src/proto/proto.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../src/proto/proto.h"

static void encode(uint8_t *out, uint8_t version, uint8_t type, uint16_t flags, uint32_t stream,
                   uint32_t length)
{
    struct proto_header h = {version, type, flags, stream, length};
    proto_encode_header(&h, out);
}

static void test_header_round_trip(void **state)
{
    (void)state;
    uint8_t buf[PROTO_HEADER_SIZE];
    encode(buf, PROTO_VERSION, PROTO_STDOUT, 0, 0x01020304, 0x000a0b0c);
    /* Big-endian on the wire. */
    const uint8_t want[] = {1, 4, 0, 0, 1, 2, 3, 4, 0, 0x0a, 0x0b, 0x0c};
    assert_memory_equal(buf, want, sizeof(want));
    struct proto_header h;
    const char *why = "unset";
    assert_int_equal(proto_decode_header(buf, &h, &why), 0);
    assert_null(why);
    assert_int_equal(h.version, PROTO_VERSION);
    assert_int_equal(h.type, PROTO_STDOUT);
    assert_int_equal(h.flags, 0);
    assert_int_equal(h.stream, 0x01020304);
    assert_int_equal(h.length, 0x000a0b0c);
}

static void expect_bad(uint8_t version, uint8_t type, uint16_t flags, uint32_t stream,
                       uint32_t length)
{
    uint8_t buf[PROTO_HEADER_SIZE];
    struct proto_header h;
    const char *why = NULL;
    encode(buf, version, type, flags, stream, length);
    assert_int_equal(proto_decode_header(buf, &h, &why), -1);
    assert_non_null(why);
}

static void test_header_rejects(void **state)
{
    (void)state;
    expect_bad(0, PROTO_DATA, 0, 1, 0);                   /* version */
    expect_bad(2, PROTO_DATA, 0, 1, 0);                   /* version */
    expect_bad(PROTO_VERSION, 0, 0, 1, 0);                /* type */
    expect_bad(PROTO_VERSION, PROTO_CANCEL + 1, 0, 1, 0); /* type */
    expect_bad(PROTO_VERSION, PROTO_DATA, 1, 1, 0);       /* flags */
    expect_bad(PROTO_VERSION, PROTO_DATA, 0x8000, 1, 0);  /* flags */
    expect_bad(PROTO_VERSION, PROTO_DATA, 0, 1, PROTO_MAX_PAYLOAD + 1);
    expect_bad(PROTO_VERSION, PROTO_DATA, 0, 1, UINT32_MAX); /* length */
    expect_bad(PROTO_VERSION, PROTO_REQUEST, 0, 0, 0);       /* stream 0 not HELLO */
    expect_bad(PROTO_VERSION, PROTO_HELLO, 0, 7, 0);         /* HELLO not on 0 */
}

static void test_header_limits_ok(void **state)
{
    (void)state;
    uint8_t buf[PROTO_HEADER_SIZE];
    struct proto_header h;
    encode(buf, PROTO_VERSION, PROTO_DATA, 0, UINT32_MAX, PROTO_MAX_PAYLOAD);
    assert_int_equal(proto_decode_header(buf, &h, NULL), 0);
    encode(buf, PROTO_VERSION, PROTO_HELLO, 0, 0, 0);
    assert_int_equal(proto_decode_header(buf, &h, NULL), 0);
    assert_string_equal(proto_type_name(PROTO_CANCEL), "CANCEL");
    assert_string_equal(proto_type_name(200), "?");
}

static void test_frame_io_round_trip(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(proto_write_frame(sv[0], PROTO_REQUEST, 5, "{\"op\":\"ping\"}", 13), 0);
    assert_int_equal(proto_write_frame(sv[0], PROTO_EOF, 5, NULL, 0), 0);
    struct proto_header h;
    uint8_t *p;
    assert_int_equal(proto_read_frame(sv[1], &h, &p), 1);
    assert_int_equal(h.type, PROTO_REQUEST);
    assert_int_equal(h.stream, 5);
    assert_int_equal(h.length, 13);
    assert_string_equal((char *)p, "{\"op\":\"ping\"}");
    free(p);
    assert_int_equal(proto_read_frame(sv[1], &h, &p), 1);
    assert_int_equal(h.type, PROTO_EOF);
    assert_int_equal(h.length, 0);
    free(p);
    close(sv[0]);
    assert_int_equal(proto_read_frame(sv[1], &h, &p), 0); /* clean EOF */
    close(sv[1]);
}

static void test_frame_io_errors(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    errno = 0;
    assert_int_equal(proto_write_frame(sv[0], PROTO_DATA, 1, "", PROTO_MAX_PAYLOAD + 1), -1);
    assert_int_equal(errno, EMSGSIZE);
    /* A bad header is EPROTO. */
    uint8_t bad[PROTO_HEADER_SIZE];
    encode(bad, 9, PROTO_DATA, 0, 1, 0);
    assert_int_equal(write(sv[0], bad, sizeof(bad)), (ssize_t)sizeof(bad));
    struct proto_header h;
    uint8_t *p;
    assert_int_equal(proto_read_frame(sv[1], &h, &p), -1);
    assert_int_equal(errno, EPROTO);
    /* A truncated payload is EPROTO too. */
    encode(bad, PROTO_VERSION, PROTO_DATA, 0, 1, 10);
    assert_int_equal(write(sv[0], bad, sizeof(bad)), (ssize_t)sizeof(bad));
    assert_int_equal(write(sv[0], "abc", 3), 3);
    close(sv[0]);
    assert_int_equal(proto_read_frame(sv[1], &h, &p), -1);
    assert_int_equal(errno, EPROTO);
    close(sv[1]);
}

/* Three frames, encoded into one buffer. */
static size_t three_frames(uint8_t *out)
{
    size_t n = 0;
    encode(out + n, PROTO_VERSION, PROTO_HELLO, 0, 0, 2);
    memcpy(out + n + PROTO_HEADER_SIZE, "{}", 2);
    n += PROTO_HEADER_SIZE + 2;
    encode(out + n, PROTO_VERSION, PROTO_EOF, 0, 9, 0);
    n += PROTO_HEADER_SIZE;
    encode(out + n, PROTO_VERSION, PROTO_STDOUT, 0, 9, 5);
    memcpy(out + n + PROTO_HEADER_SIZE, "hello", 5);
    n += PROTO_HEADER_SIZE + 5;
    return n;
}

static void check_three(int i, const struct proto_header *h, const uint8_t *p)
{
    static const uint8_t types[] = {PROTO_HELLO, PROTO_EOF, PROTO_STDOUT};
    assert_int_equal(h->type, types[i]);
    if (i == 0)
        assert_memory_equal(p, "{}", 2);
    if (i == 2)
        assert_memory_equal(p, "hello", 5);
}

static void test_decoder_whole(void **state)
{
    (void)state;
    uint8_t buf[128];
    size_t n = three_frames(buf);
    struct proto_decoder d;
    proto_decoder_init(&d);
    assert_int_equal(proto_decoder_feed(&d, buf, n), 0);
    struct proto_header h;
    const uint8_t *p;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(proto_decoder_next(&d, &h, &p, NULL), 1);
        check_three(i, &h, p);
    }
    assert_int_equal(proto_decoder_next(&d, &h, &p, NULL), 0);
    proto_decoder_free(&d);
}

static void test_decoder_byte_by_byte(void **state)
{
    (void)state;
    uint8_t buf[128];
    size_t n = three_frames(buf);
    struct proto_decoder d;
    proto_decoder_init(&d);
    struct proto_header h;
    const uint8_t *p;
    int got = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(proto_decoder_feed(&d, buf + i, 1), 0);
        int r;
        while ((r = proto_decoder_next(&d, &h, &p, NULL)) == 1)
            check_three(got++, &h, p);
        assert_int_equal(r, 0);
    }
    assert_int_equal(got, 3);
    proto_decoder_free(&d);
}

static void test_decoder_large_payload(void **state)
{
    (void)state;
    size_t len = PROTO_MAX_PAYLOAD;
    uint8_t *buf = malloc(PROTO_HEADER_SIZE + len);
    assert_non_null(buf);
    encode(buf, PROTO_VERSION, PROTO_DATA, 0, 3, (uint32_t)len);
    for (size_t i = 0; i < len; i++)
        buf[PROTO_HEADER_SIZE + i] = (uint8_t)(i * 7);
    struct proto_decoder d;
    proto_decoder_init(&d);
    struct proto_header h;
    const uint8_t *p;
    size_t fed = 0;
    int frames = 0;
    /* Odd-sized chunks that straddle the header and payload. */
    while (fed < PROTO_HEADER_SIZE + len) {
        size_t k = PROTO_HEADER_SIZE + len - fed < 4099 ? PROTO_HEADER_SIZE + len - fed : 4099;
        assert_int_equal(proto_decoder_feed(&d, buf + fed, k), 0);
        fed += k;
        if (proto_decoder_next(&d, &h, &p, NULL) == 1) {
            frames++;
            assert_int_equal(h.length, len);
            assert_memory_equal(p, buf + PROTO_HEADER_SIZE, len);
        }
    }
    assert_int_equal(frames, 1);
    proto_decoder_free(&d);
    free(buf);
}

static void test_decoder_bad_frame(void **state)
{
    (void)state;
    uint8_t buf[64];
    size_t n = 0;
    encode(buf, PROTO_VERSION, PROTO_DATA, 0, 1, 1);
    buf[PROTO_HEADER_SIZE] = 'x';
    n = PROTO_HEADER_SIZE + 1;
    encode(buf + n, PROTO_VERSION, PROTO_DATA, 4, 1, 0); /* flags set */
    n += PROTO_HEADER_SIZE;
    struct proto_decoder d;
    proto_decoder_init(&d);
    assert_int_equal(proto_decoder_feed(&d, buf, n), 0);
    struct proto_header h;
    const uint8_t *p;
    const char *why = NULL;
    assert_int_equal(proto_decoder_next(&d, &h, &p, &why), 1);
    assert_int_equal(proto_decoder_next(&d, &h, &p, &why), -1);
    assert_string_equal(why, "reserved flags set");
    /* The decoder stays stuck on a bad frame: the stream is unusable. */
    assert_int_equal(proto_decoder_next(&d, &h, &p, &why), -1);
    proto_decoder_free(&d);

    /* A too-large length is refused from the header alone, before the
     * payload arrives, so a peer cannot make us buffer 4 GiB. */
    proto_decoder_init(&d);
    encode(buf, PROTO_VERSION, PROTO_DATA, 0, 1, PROTO_MAX_PAYLOAD + 1);
    assert_int_equal(proto_decoder_feed(&d, buf, PROTO_HEADER_SIZE), 0);
    assert_int_equal(proto_decoder_next(&d, &h, &p, &why), -1);
    proto_decoder_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_round_trip),    cmocka_unit_test(test_header_rejects),
        cmocka_unit_test(test_header_limits_ok),     cmocka_unit_test(test_frame_io_round_trip),
        cmocka_unit_test(test_frame_io_errors),      cmocka_unit_test(test_decoder_whole),
        cmocka_unit_test(test_decoder_byte_by_byte), cmocka_unit_test(test_decoder_large_payload),
        cmocka_unit_test(test_decoder_bad_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
