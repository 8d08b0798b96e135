/* agent_client: validation of what an (untrusted) agent sends. A fake peer
 * on the other end of a socketpair writes frames, good and bad; the client
 * must accept the good ones and fail cleanly, with the right reason, on
 * everything else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../src/daemon/agent_client.h"
#include "../../src/common/utf8.h"

struct pair {
    int client; /* handed to agent_client */
    int peer;   /* the fake agent */
};

static void pair_open(struct pair *p)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    p->client = sv[0];
    p->peer = sv[1];
}

static void peer_send(struct pair *p, uint8_t type, uint32_t stream, const char *payload)
{
    assert_int_equal(
        proto_write_frame(p->peer, type, stream, payload, payload ? strlen(payload) : 0), 0);
}

static void peer_hello(struct pair *p)
{
    peer_send(p, PROTO_HELLO, 0, "{\"version\":1,\"agent\":\"lizard-agent/test\"}");
}

/* Open a client on a peer that already said HELLO. */
static void open_ok(struct pair *p, struct agent_client *c)
{
    lz_error err;
    pair_open(p);
    peer_hello(p);
    assert_int_equal(agent_client_open(c, p->client, -1, &err), 0);
    assert_string_equal(c->agent, "lizard-agent/test");
}

static void send_request(struct agent_client *c, unsigned allowed)
{
    lz_error err;
    json_t *rq = json_pack("{s:s}", "op", "ping");
    assert_int_equal(agent_client_request(c, rq, allowed, &err), 0);
    json_decref(rq);
}

static void test_hello_ok_and_request_seen_by_peer(void **state)
{
    (void)state;
    struct pair p;
    struct agent_client c;
    open_ok(&p, &c);
    send_request(&c, 0);
    struct proto_header h;
    uint8_t *payload;
    assert_int_equal(proto_read_frame(p.peer, &h, &payload), 1);
    assert_int_equal(h.type, PROTO_REQUEST);
    assert_int_equal(h.stream, c.stream);
    assert_string_equal((char *)payload, "{\"op\":\"ping\"}");
    free(payload);
    agent_client_close(&c);
    close(p.peer);
}

static void expect_open_fails(const char *hello, uint8_t type)
{
    struct pair p;
    struct agent_client c;
    lz_error err;
    pair_open(&p);
    if (hello)
        peer_send(&p, type, type == PROTO_HELLO ? 0 : 1, hello);
    else
        shutdown(p.peer, SHUT_WR);
    assert_int_equal(agent_client_open(&c, p.client, -1, &err), -1);
    assert_int_equal(c.failure, AGENT_FAIL_PEER);
    agent_client_close(&c);
    close(p.peer);
}

static void test_hello_rejects(void **state)
{
    (void)state;
    expect_open_fails("{\"version\":2}", PROTO_HELLO);
    expect_open_fails("{\"version\":\"1\"}", PROTO_HELLO);
    expect_open_fails("[1]", PROTO_HELLO);
    expect_open_fails("not json", PROTO_HELLO);
    expect_open_fails("{\"version\":1,\"agent\":7}", PROTO_HELLO);
    expect_open_fails("{}", PROTO_RESPONSE); /* something before HELLO */
    expect_open_fails(NULL, 0);              /* closed before HELLO */
}

static void test_bad_header_is_peer_failure(void **state)
{
    (void)state;
    struct pair p;
    struct agent_client c;
    lz_error err;
    pair_open(&p);
    uint8_t junk[PROTO_HEADER_SIZE] = {2, PROTO_HELLO, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    assert_int_equal(write(p.peer, junk, sizeof(junk)), (ssize_t)sizeof(junk));
    assert_int_equal(agent_client_open(&c, p.client, -1, &err), -1);
    assert_int_equal(c.failure, AGENT_FAIL_PEER);
    assert_non_null(strstr(err.msg, "version"));
    agent_client_close(&c);
    close(p.peer);
}

static void test_exec_frames(void **state)
{
    (void)state;
    struct pair p;
    struct agent_client c;
    struct agent_frame f;
    lz_error err;
    open_ok(&p, &c);
    send_request(&c, AGENT_ALLOW(PROTO_STDOUT) | AGENT_ALLOW(PROTO_STDERR));
    peer_send(&p, PROTO_STDOUT, 1, "hi\n");
    peer_send(&p, PROTO_STDERR, 1, "oops");
    peer_send(&p, PROTO_RESPONSE, 1,
              "{\"exitCode\":3,\"timedOut\":false,\"truncated\":true,\"signal\":null}");
    assert_int_equal(agent_client_next(&c, &f, true, &err), 1);
    assert_int_equal(f.type, PROTO_STDOUT);
    assert_int_equal(f.len, 3);
    assert_memory_equal(f.data, "hi\n", 3);
    agent_frame_clear(&f);
    assert_int_equal(agent_client_next(&c, &f, true, &err), 1);
    assert_int_equal(f.type, PROTO_STDERR);
    agent_frame_clear(&f);
    assert_int_equal(agent_client_next(&c, &f, true, &err), 1);
    assert_int_equal(f.type, PROTO_RESPONSE);
    struct agent_exec_result res;
    assert_int_equal(agent_check_exec_result(f.json, &res, &err), 0);
    assert_int_equal(res.exit_code, 3);
    assert_true(res.truncated);
    assert_false(res.timed_out);
    assert_false(c.active);
    agent_frame_clear(&f);
    agent_client_close(&c);
    close(p.peer);
}

/* One bad frame after a good request; the call must fail as PEER. */
static void expect_next_fails(uint8_t type, uint32_t stream, const char *payload, unsigned allowed)
{
    struct pair p;
    struct agent_client c;
    struct agent_frame f;
    lz_error err;
    open_ok(&p, &c);
    send_request(&c, allowed);
    peer_send(&p, type, stream, payload);
    assert_int_equal(agent_client_next(&c, &f, true, &err), -1);
    assert_int_equal(c.failure, AGENT_FAIL_PEER);
    agent_frame_clear(&f);
    agent_client_close(&c);
    close(p.peer);
}

static void test_frame_rejects(void **state)
{
    (void)state;
    unsigned out = AGENT_ALLOW(PROTO_STDOUT) | AGENT_ALLOW(PROTO_STDERR);
    expect_next_fails(PROTO_STDOUT, 2, "x", out);              /* another stream */
    expect_next_fails(PROTO_DATA, 1, "x", out);                /* not for exec */
    expect_next_fails(PROTO_STDOUT, 1, "x", 0);                /* not for this op */
    expect_next_fails(PROTO_REQUEST, 1, "{}", out);            /* wrong direction */
    expect_next_fails(PROTO_CANCEL, 1, NULL, out);             /* wrong direction */
    expect_next_fails(PROTO_HELLO, 0, "{\"version\":1}", out); /* second HELLO */
    expect_next_fails(PROTO_RESPONSE, 1, "[]", out);           /* not an object */
    expect_next_fails(PROTO_RESPONSE, 1, "{\"a\":1,\"a\":2}", out);
    expect_next_fails(PROTO_RESPONSE, 1, "{bad", out);
    expect_next_fails(PROTO_ERROR, 1, "{\"message\":\"no code\"}", out);
    expect_next_fails(PROTO_ERROR, 1, "{\"code\":5}", out);
}

static void test_eof_mid_stream(void **state)
{
    (void)state;
    struct pair p;
    struct agent_client c;
    struct agent_frame f;
    lz_error err;
    open_ok(&p, &c);
    send_request(&c, 0);
    /* Half a header, then the agent dies. */
    uint8_t half[5] = {1, PROTO_RESPONSE, 0, 0, 0};
    assert_int_equal(write(p.peer, half, sizeof(half)), 5);
    close(p.peer);
    assert_int_equal(agent_client_next(&c, &f, true, &err), -1);
    assert_int_equal(c.failure, AGENT_FAIL_PEER);
    agent_client_close(&c);
}

static void test_error_payload_cleaned(void **state)
{
    (void)state;
    char code[32], msg[AGENT_MAX_MESSAGE + 1];
    lz_error err;
    const char *p = "{\"code\":\"not_found\",\"message\":\"no \\u001b[31mfile\\n\"}";
    assert_int_equal(agent_parse_error((const uint8_t *)p, strlen(p), code, msg, &err), 0);
    assert_string_equal(code, "not_found");
    assert_string_equal(msg, "no  [31mfile ");
    /* Unknown codes must not pick a status: they become "io". */
    p = "{\"code\":\"teapot\",\"message\":\"x\"}";
    assert_int_equal(agent_parse_error((const uint8_t *)p, strlen(p), code, msg, &err), 0);
    assert_string_equal(code, "io");
    /* Long messages are cut to AGENT_MAX_MESSAGE bytes of valid UTF-8. */
    char big[4000];
    int n = snprintf(big, sizeof(big), "{\"code\":\"io\",\"message\":\"");
    for (int i = 0; i < 700; i++)
        n += snprintf(big + n, sizeof(big) - n, "\xc3\xa9");
    snprintf(big + n, sizeof(big) - n, "\"}");
    assert_int_equal(agent_parse_error((const uint8_t *)big, strlen(big), code, msg, &err), 0);
    assert_true(strlen(msg) <= AGENT_MAX_MESSAGE);
    assert_true(utf8_valid((const uint8_t *)msg, strlen(msg)));
}

static void test_idle_timeout(void **state)
{
    (void)state;
    struct pair p;
    struct agent_client c;
    struct agent_frame f;
    lz_error err;
    open_ok(&p, &c);
    send_request(&c, 0);
    c.idle_ms = 50;
    assert_int_equal(agent_client_next(&c, &f, true, &err), -1);
    assert_int_equal(c.failure, AGENT_FAIL_TIMEOUT);
    agent_client_close(&c);
    close(p.peer);
}

static void test_client_hangup_and_cancel(void **state)
{
    (void)state;
    struct pair p, http;
    struct agent_client c;
    struct agent_frame f;
    lz_error err;
    pair_open(&p);
    pair_open(&http);
    peer_hello(&p);
    assert_int_equal(agent_client_open(&c, p.client, http.client, &err), 0);
    send_request(&c, 0);
    close(http.peer); /* the HTTP client leaves */
    assert_int_equal(agent_client_next(&c, &f, true, &err), -1);
    assert_int_equal(c.failure, AGENT_FAIL_CLIENT);
    agent_client_close(&c);
    /* The agent sees the request, then CANCEL, then the connection close. */
    struct proto_header h;
    uint8_t *payload;
    assert_int_equal(proto_read_frame(p.peer, &h, &payload), 1);
    assert_int_equal(h.type, PROTO_REQUEST);
    free(payload);
    assert_int_equal(proto_read_frame(p.peer, &h, &payload), 1);
    assert_int_equal(h.type, PROTO_CANCEL);
    assert_int_equal(h.stream, 1);
    free(payload);
    assert_int_equal(proto_read_frame(p.peer, &h, &payload), 0);
    close(p.peer);
    close(http.client);
}

/* A peer that is slow to read while it writes: sending a large body must
 * not deadlock, and frames that arrive meanwhile are kept. */
static void test_send_buffers_incoming(void **state)
{
    (void)state;
    struct pair p;
    struct agent_client c;
    struct agent_frame f;
    lz_error err;
    open_ok(&p, &c);
    send_request(&c, AGENT_ALLOW(PROTO_STDOUT));
    peer_send(&p, PROTO_STDOUT, 1, "early");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Fake agent: drain everything the client sends, then answer. */
        struct proto_header h;
        uint8_t *payload;
        uint64_t got = 0;
        while (proto_read_frame(p.peer, &h, &payload) == 1) {
            got += h.length;
            free(payload);
            if (h.type == PROTO_EOF)
                break;
        }
        char resp[64];
        snprintf(resp, sizeof(resp), "{\"written\":%llu}", (unsigned long long)got);
        proto_write_frame(p.peer, PROTO_RESPONSE, 1, resp, strlen(resp));
        _exit(0);
    }
    size_t big = 4 << 20;
    char *data = calloc(1, big);
    assert_int_equal(agent_client_send_data(&c, data, big, &err), 0);
    assert_int_equal(agent_client_send(&c, PROTO_EOF, NULL, 0, &err), 0);
    free(data);
    assert_int_equal(agent_client_next(&c, &f, true, &err), 1);
    assert_int_equal(f.type, PROTO_STDOUT);
    agent_frame_clear(&f);
    assert_int_equal(agent_client_next(&c, &f, true, &err), 1);
    assert_int_equal(f.type, PROTO_RESPONSE);
    int64_t written;
    assert_int_equal(agent_check_count(f.json, "written", &written, &err), 0);
    /* The request payload counts too: 13 bytes of {"op":"ping"}. */
    assert_int_equal(written, (int64_t)big + 13);
    agent_frame_clear(&f);
    agent_client_close(&c);
    close(p.peer);
}

static json_t *parse(const char *s)
{
    json_t *j = json_loads(s, JSON_ALLOW_NUL, NULL);
    assert_non_null(j);
    return j;
}

static void test_exec_result_ranges(void **state)
{
    (void)state;
    static const char *bad[] = {
        "{\"exitCode\":256,\"timedOut\":false,\"truncated\":false}",
        "{\"exitCode\":-1,\"timedOut\":false,\"truncated\":false}",
        "{\"exitCode\":\"0\",\"timedOut\":false,\"truncated\":false}",
        "{\"exitCode\":1.5,\"timedOut\":false,\"truncated\":false}",
        "{\"exitCode\":0,\"timedOut\":0,\"truncated\":false}",
        "{\"exitCode\":0,\"timedOut\":false}",
        "{\"exitCode\":0,\"timedOut\":false,\"truncated\":false,\"signal\":65}",
        "{\"exitCode\":0,\"timedOut\":false,\"truncated\":false,\"signal\":\"TERM\"}",
    };
    struct agent_exec_result r;
    lz_error err;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = parse(bad[i]);
        assert_int_equal(agent_check_exec_result(j, &r, &err), -1);
        json_decref(j);
    }
    json_t *j = parse("{\"exitCode\":137,\"timedOut\":true,\"truncated\":false,\"signal\":9}");
    assert_int_equal(agent_check_exec_result(j, &r, &err), 0);
    assert_int_equal(r.exit_code, 137);
    assert_int_equal(r.signal, 9);
    assert_true(r.timed_out);
    json_decref(j);
}

static void test_pid_and_counts(void **state)
{
    (void)state;
    lz_error err;
    int pid;
    int64_t n;
    json_t *j = parse("{\"pid\":0,\"size\":-1,\"written\":12}");
    assert_int_equal(agent_check_pid(j, &pid, &err), -1);
    assert_int_equal(agent_check_count(j, "size", &n, &err), -1);
    assert_int_equal(agent_check_count(j, "written", &n, &err), 0);
    assert_int_equal(n, 12);
    json_decref(j);
    j = parse("{\"pid\":4194305}");
    assert_int_equal(agent_check_pid(j, &pid, &err), -1);
    json_decref(j);
    j = parse("{\"pid\":42}");
    assert_int_equal(agent_check_pid(j, &pid, &err), 0);
    assert_int_equal(pid, 42);
    json_decref(j);
}

static void test_stat_and_list(void **state)
{
    (void)state;
    lz_error err;
    json_t *j = parse("{\"name\":\"a\\u0000b\",\"path\":\"/a\",\"type\":\"symlink\",\"size\":3,"
                      "\"mode\":511,\"uid\":0,\"gid\":0,\"mtime\":1700000000,\"target\":\"/x\","
                      "\"evil\":\"dropped\"}");
    json_t *st = agent_check_stat(j, &err);
    assert_non_null(st);
    assert_null(json_object_get(st, "evil"));
    assert_string_equal(json_string_value(json_object_get(st, "target")), "/x");
    assert_int_equal(json_string_length(json_object_get(st, "name")), 3);
    json_decref(st);
    json_decref(j);
    static const char *bad[] = {
        "{\"name\":\"a\",\"path\":\"/a\",\"type\":\"fifo\",\"size\":3,\"mode\":0,\"uid\":0,"
        "\"gid\":0,\"mtime\":1}",
        "{\"name\":\"a\",\"path\":\"/a\",\"type\":\"file\",\"size\":-3,\"mode\":0,\"uid\":0,"
        "\"gid\":0,\"mtime\":1}",
        "{\"name\":\"a\",\"path\":\"/a\",\"type\":\"file\",\"size\":3,\"mode\":0,\"uid\":-1,"
        "\"gid\":0,\"mtime\":1}",
        "{\"name\":1,\"path\":\"/a\",\"type\":\"file\",\"size\":3,\"mode\":0,\"uid\":0,"
        "\"gid\":0,\"mtime\":1}",
        "{\"name\":\"a\",\"path\":\"/a\",\"type\":\"file\",\"size\":3,\"mode\":0,\"uid\":0,"
        "\"gid\":0,\"mtime\":\"yesterday\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = parse(bad[i]);
        assert_null(agent_check_stat(j, &err));
        json_decref(j);
    }
    j = parse("{\"entries\":[{\"name\":\"a\",\"path\":\"/a\",\"type\":\"file\",\"size\":3,"
              "\"mode\":420,\"uid\":0,\"gid\":0,\"mtime\":1.5}]}");
    json_t *l = agent_check_list(j, &err);
    assert_non_null(l);
    assert_int_equal(json_array_size(json_object_get(l, "entries")), 1);
    json_decref(l);
    json_decref(j);
    j = parse("{\"entries\":[{}]}");
    assert_null(agent_check_list(j, &err));
    json_decref(j);
}

static void test_processes(void **state)
{
    (void)state;
    lz_error err;
    json_t *j = parse("{\"processes\":[{\"pid\":7,\"cmd\":\"sleep 9\",\"running\":true,"
                      "\"exitCode\":null,\"startedAt\":1764410400123},"
                      "{\"pid\":8,\"cmd\":\"true\",\"running\":false,\"exitCode\":0,"
                      "\"startedAt\":\"2026-11-29T10:00:00.000Z\"}]}");
    json_t *out = agent_check_processes(j, &err);
    assert_non_null(out);
    json_t *p0 = json_array_get(json_object_get(out, "processes"), 0);
    assert_string_equal(json_string_value(json_object_get(p0, "startedAt")),
                        "2025-11-29T10:00:00.123Z");
    assert_true(json_is_null(json_object_get(p0, "exitCode")));
    json_decref(out);
    json_decref(j);
    j = parse("{\"processes\":[{\"pid\":7,\"cmd\":\"x\",\"running\":\"yes\"}]}");
    assert_null(agent_check_processes(j, &err));
    json_decref(j);
    struct agent_proc_status st;
    j = parse("{\"running\":false,\"exitCode\":2,\"truncated\":false}");
    assert_int_equal(agent_check_proc_output(j, &st, &err), 0);
    assert_true(st.has_exit_code);
    assert_int_equal(st.exit_code, 2);
    json_decref(j);
    j = parse("{\"running\":false,\"exitCode\":999,\"truncated\":false}");
    assert_int_equal(agent_check_proc_output(j, &st, &err), -1);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_ok_and_request_seen_by_peer),
        cmocka_unit_test(test_hello_rejects),
        cmocka_unit_test(test_bad_header_is_peer_failure),
        cmocka_unit_test(test_exec_frames),
        cmocka_unit_test(test_frame_rejects),
        cmocka_unit_test(test_eof_mid_stream),
        cmocka_unit_test(test_error_payload_cleaned),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_client_hangup_and_cancel),
        cmocka_unit_test(test_send_buffers_incoming),
        cmocka_unit_test(test_exec_result_ranges),
        cmocka_unit_test(test_pid_and_counts),
        cmocka_unit_test(test_stat_and_list),
        cmocka_unit_test(test_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
