/* The CLI's pure argument parsing (src/cli/args.c) and the client's URL
 * handling (src/client/client.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/cli/args.h"
#include "../../src/client/client.h"

static void test_kv(void **state)
{
    (void)state;
    json_t *o = json_object();
    lz_error err = {0};
    assert_int_equal(args_kv_add(o, "A=1", &err), 0);
    assert_int_equal(args_kv_add(o, "B=x=y", &err), 0); /* only the first '=' splits */
    assert_int_equal(args_kv_add(o, "EMPTY=", &err), 0);
    assert_int_equal(args_kv_add(o, "A=2", &err), 0); /* last one wins */
    assert_string_equal(json_string_value(json_object_get(o, "A")), "2");
    assert_string_equal(json_string_value(json_object_get(o, "B")), "x=y");
    assert_string_equal(json_string_value(json_object_get(o, "EMPTY")), "");
    assert_int_equal(json_object_size(o), 3);
    assert_int_equal(args_kv_add(o, "novalue", &err), -1);
    assert_non_null(strstr(err.msg, "KEY=VALUE"));
    assert_int_equal(args_kv_add(o, "=v", &err), -1);
    assert_int_equal(args_kv_add(o, "K=\xff\xfe", &err), -1); /* not UTF-8 */
    json_decref(o);
}

static void test_ms(void **state)
{
    (void)state;
    int64_t v;
    lz_error err = {0};
    assert_int_equal(args_parse_ms("0", &v, &err), 0);
    assert_int_equal(v, 0);
    assert_int_equal(args_parse_ms("1500", &v, &err), 0);
    assert_int_equal(v, 1500);
    assert_int_equal(args_parse_ms("250ms", &v, &err), 0);
    assert_int_equal(v, 250);
    assert_int_equal(args_parse_ms("30s", &v, &err), 0);
    assert_int_equal(v, 30000);
    assert_int_equal(args_parse_ms("5m", &v, &err), 0);
    assert_int_equal(v, 300000);
    assert_int_equal(args_parse_ms("2h", &v, &err), 0);
    assert_int_equal(v, 7200000);
    assert_int_equal(args_parse_ms("", &v, &err), -1);
    assert_int_equal(args_parse_ms("-5", &v, &err), -1);
    assert_int_equal(args_parse_ms(" 5", &v, &err), -1);
    assert_int_equal(args_parse_ms("5x", &v, &err), -1);
    assert_int_equal(args_parse_ms("1.5s", &v, &err), -1);
    assert_int_equal(args_parse_ms("99999999999999999999", &v, &err), -1);
    assert_int_equal(args_parse_ms("9223372036854775807h", &v, &err), -1);
}

static void test_listen(void **state)
{
    (void)state;
    lz_error err = {0};
    assert_int_equal(args_check_listen("127.0.0.1:7400", &err), 0);
    assert_int_equal(args_check_listen("0.0.0.0:0", &err), 0);
    assert_int_equal(args_check_listen("localhost:80", &err), 0);
    assert_int_equal(args_check_listen("[::1]:7400", &err), 0);
    assert_int_equal(args_check_listen("7400", &err), -1);
    assert_int_equal(args_check_listen(":7400", &err), -1);
    assert_int_equal(args_check_listen("127.0.0.1:", &err), -1);
    assert_int_equal(args_check_listen("127.0.0.1:65536", &err), -1);
    assert_int_equal(args_check_listen("127.0.0.1:74a", &err), -1);
    assert_int_equal(args_check_listen("::1:7400", &err), -1);
    assert_int_equal(args_check_listen("[::1:7400", &err), -1);
}

static void test_exec_cmd(void **state)
{
    (void)state;
    char *one[] = {"echo hi | wc -c"};
    json_t *c = args_exec_cmd(1, one);
    assert_true(json_is_string(c));
    assert_string_equal(json_string_value(c), "echo hi | wc -c");
    json_decref(c);
    char *many[] = {"python3", "-c", "print(2**10)"};
    c = args_exec_cmd(3, many);
    assert_true(json_is_array(c));
    assert_int_equal(json_array_size(c), 3);
    assert_string_equal(json_string_value(json_array_get(c, 2)), "print(2**10)");
    json_decref(c);
    assert_null(args_exec_cmd(0, many));
}

static void test_take_flag(void **state)
{
    (void)state;
    char *argv[] = {"lizard", "--json", "sandbox", "exec", "sb_1", "--", "x", "--json", NULL};
    int argc = 8;
    assert_int_equal(args_take_flag(&argc, argv, "--json"), 1);
    assert_int_equal(argc, 7);
    assert_string_equal(argv[1], "sandbox");
    /* after "--" it belongs to the command */
    assert_string_equal(argv[6], "--json");
    assert_null(argv[7]);
    char *argv2[] = {"lizard", "keys", "ls", NULL};
    argc = 3;
    assert_int_equal(args_take_flag(&argc, argv2, "--json"), 0);
    assert_int_equal(argc, 3);
}

static void test_is_id(void **state)
{
    (void)state;
    assert_true(args_is_id("sb_abc123"));
    assert_true(args_is_id("key-1"));
    assert_false(args_is_id(""));
    assert_false(args_is_id("a b"));
    assert_false(args_is_id("../x"));
    assert_false(args_is_id("a?b"));
    char longid[200];
    memset(longid, 'a', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    assert_false(args_is_id(longid));
}

static void test_url(void **state)
{
    (void)state;
    char h[64], p[8], pre[64];
    int tls = -1;
    lz_error err = {0};
    assert_int_equal(lizard_url_parse("http://127.0.0.1:7400", &tls, h, 64, p, 8, pre, 64, &err),
                     0);
    assert_string_equal(h, "127.0.0.1");
    assert_string_equal(p, "7400");
    assert_string_equal(pre, "");
    assert_int_equal(lizard_url_parse("http://example.com/lz/", &tls, h, 64, p, 8, pre, 64, &err),
                     0);
    assert_string_equal(h, "example.com");
    assert_string_equal(p, "80");
    assert_string_equal(pre, "/lz");
    assert_int_equal(lizard_url_parse("http://[::1]:9/", &tls, h, 64, p, 8, pre, 64, &err), 0);
    assert_string_equal(h, "::1");
    assert_string_equal(p, "9");
    assert_int_equal(tls, 0);
    assert_int_equal(lizard_url_parse("https://x", &tls, h, 64, p, 8, pre, 64, &err), 0);
    assert_int_equal(tls, 1);
    assert_string_equal(h, "x");
    assert_string_equal(p, "443");
    assert_int_equal(lizard_url_parse("https://[::1]:8443/a", &tls, h, 64, p, 8, pre, 64, &err), 0);
    assert_string_equal(h, "::1");
    assert_string_equal(p, "8443");
    assert_string_equal(pre, "/a");
    assert_int_equal(lizard_url_parse("ftp://x", &tls, h, 64, p, 8, pre, 64, &err), -1);
    assert_non_null(strstr(err.msg, "https://"));
    assert_int_equal(lizard_url_parse("127.0.0.1:7400", &tls, h, 64, p, 8, pre, 64, &err), -1);
    assert_int_equal(lizard_url_parse("http://:80", &tls, h, 64, p, 8, pre, 64, &err), -1);
    assert_int_equal(lizard_url_parse("http://h:99999", &tls, h, 64, p, 8, pre, 64, &err), -1);
    assert_int_equal(lizard_url_parse("http://h:0", &tls, h, 64, p, 8, pre, 64, &err), -1);
    assert_int_equal(lizard_url_parse("http://h:80x", &tls, h, 64, p, 8, pre, 64, &err), -1);
    assert_int_equal(lizard_url_parse("http://[::1", &tls, h, 64, p, 8, pre, 64, &err), -1);
}

static void test_url_escape(void **state)
{
    (void)state;
    char *e = lizard_url_escape("/tmp/a b&c=d?ü");
    assert_string_equal(e, "/tmp/a%20b%26c%3Dd%3F%C3%BC");
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv),        cmocka_unit_test(test_ms),
        cmocka_unit_test(test_listen),    cmocka_unit_test(test_exec_cmd),
        cmocka_unit_test(test_take_flag), cmocka_unit_test(test_is_id),
        cmocka_unit_test(test_url),       cmocka_unit_test(test_url_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
