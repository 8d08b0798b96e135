/* Ids, API key format, hashing and the JSON field helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/common/ids.h"
#include "../../src/common/json_util.h"
#include "../../src/daemon/auth.h"

static void test_random_ids(void **state)
{
    (void)state;
    char a[32], b[32];
    assert_int_equal(random_id(a, sizeof(a), "sb_", 20), 0);
    assert_int_equal(random_id(b, sizeof(b), "sb_", 20), 0);
    assert_int_equal(strlen(a), 23);
    assert_true(id_is_valid(a, "sb_"));
    assert_string_not_equal(a, b);
    assert_int_equal(random_id(a, 10, "sb_", 20), -1); /* does not fit */
}

static void test_id_validation(void **state)
{
    (void)state;
    assert_true(id_is_valid("sb_abc123", "sb_"));
    assert_false(id_is_valid("sb_", "sb_"));
    assert_false(id_is_valid("sb_../etc", "sb_"));
    assert_false(id_is_valid("sb_ABC", "sb_"));
    assert_false(id_is_valid("proj_abc", "sb_"));
    assert_false(id_is_valid(NULL, "sb_"));
    char longid[100] = "sb_";
    memset(longid + 3, 'a', 70);
    longid[73] = '\0';
    assert_false(id_is_valid(longid, "sb_"));
}

static void test_key_generate_and_parse(void **state)
{
    (void)state;
    struct key_record rec;
    char key[AUTH_KEY_MAX], id[64], secret[AUTH_KEY_MAX], hash[65];
    memset(&rec, 0, sizeof(rec));
    assert_int_equal(auth_key_generate(&rec, key, NULL), 0);
    assert_int_equal(strncmp(key, "lz_", 3), 0);
    assert_int_equal(auth_key_parse(key, id, secret), 0);
    assert_string_equal(id, rec.id);
    assert_true(strlen(secret) * 5 >= 128); /* at least 128 random bits */
    auth_hash_secret(secret, hash);
    assert_string_equal(hash, rec.hash);
    assert_null(strstr(rec.prefix, secret)); /* listings never show the secret */
}

static void test_key_parse_rejects(void **state)
{
    (void)state;
    char id[64], secret[AUTH_KEY_MAX];
    assert_int_equal(auth_key_parse("", id, secret), -1);
    assert_int_equal(auth_key_parse("lz_", id, secret), -1);
    assert_int_equal(auth_key_parse("lz_abc", id, secret), -1);
    assert_int_equal(auth_key_parse("lz__secret", id, secret), -1);
    assert_int_equal(auth_key_parse("lz_abc_", id, secret), -1);
    assert_int_equal(auth_key_parse("lz_a/b_secret", id, secret), -1);
    assert_int_equal(auth_key_parse("xx_abc_secret", id, secret), -1);
    assert_int_equal(auth_key_parse(NULL, id, secret), -1);
}

static void test_hash_known_value(void **state)
{
    (void)state;
    char hash[65];
    auth_hash_secret("abc", hash);
    assert_string_equal(hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_json_fields(void **state)
{
    (void)state;
    char msg[256];
    json_t *o = json_loads("{\"s\":\"x\",\"i\":5,\"r\":3.0,\"f\":2.5,\"b\":true,\"n\":null,"
                           "\"m\":{\"A\":\"1\"},\"bad\":{\"A\":1}}",
                           0, NULL);
    const char *s = NULL;
    int64_t i = 0;
    int b = 0;
    json_t *m = NULL;
    assert_int_equal(json_opt_string(o, "s", &s, msg, sizeof(msg)), 1);
    assert_string_equal(s, "x");
    assert_int_equal(json_opt_string(o, "i", &s, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "'i'"));
    assert_int_equal(json_opt_string(o, "n", &s, msg, sizeof(msg)), 0);
    assert_int_equal(json_req_string(o, "missing", &s, msg, sizeof(msg)), -1);
    assert_int_equal(json_opt_int(o, "i", 0, 10, &i, msg, sizeof(msg)), 1);
    assert_int_equal(i, 5);
    assert_int_equal(json_opt_int(o, "i", 6, 10, &i, msg, sizeof(msg)), -1);
    assert_int_equal(json_opt_int(o, "r", 0, 10, &i, msg, sizeof(msg)), 1);
    assert_int_equal(i, 3);
    assert_int_equal(json_opt_int(o, "f", 0, 10, &i, msg, sizeof(msg)), -1);
    assert_int_equal(json_opt_int(o, "s", 0, 10, &i, msg, sizeof(msg)), -1);
    assert_int_equal(json_opt_bool(o, "b", &b, msg, sizeof(msg)), 1);
    assert_true(b);
    assert_int_equal(json_opt_bool(o, "i", &b, msg, sizeof(msg)), -1);
    assert_int_equal(json_opt_string_map(o, "m", 10, &m, msg, sizeof(msg)), 1);
    assert_int_equal(json_opt_string_map(o, "bad", 10, &m, msg, sizeof(msg)), -1);
    assert_int_equal(json_opt_string_map(o, "m", 0, &m, msg, sizeof(msg)), -1);
    json_decref(o);
}

static void test_time_format(void **state)
{
    (void)state;
    char buf[32];
    format_iso8601_ms(1764410400123LL, buf);
    assert_string_equal(buf, "2025-11-29T10:00:00.123Z");
    json_t *n = json_time_or_null(0, 1);
    assert_true(json_is_null(n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_ids),
        cmocka_unit_test(test_id_validation),
        cmocka_unit_test(test_key_generate_and_parse),
        cmocka_unit_test(test_key_parse_rejects),
        cmocka_unit_test(test_hash_known_value),
        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_time_format),
    };
    return cmocka_run_group_tests_name("auth_ids", tests, NULL, NULL);
}
