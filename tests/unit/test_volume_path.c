/* Volume mount paths (src/runtime/volume_path.c), the `volumes` field of a
 * create (src/daemon/volumes.c) and `--volume NAME[:PATH]` (src/cli/args.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "../../src/cli/args.h"
#include "../../src/daemon/volumes.h"

static int ok(const char *p)
{
    char msg[256];
    return volume_mount_path_check(p, msg, sizeof(msg)) == 0;
}

static void test_good_paths(void **state)
{
    (void)state;
    assert_true(ok("/workspace"));
    assert_true(ok("/mnt/data"));
    assert_true(ok("/home/user/work"));
    assert_true(ok("/procfs"));  /* only /proc itself and below are reserved */
    assert_true(ok("/a.b/..c")); /* dots inside names are fine */
}

static void test_bad_paths(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",         "workspace", "/",       "/proc",   "/proc/x", "/dev",
        "/dev/shm", "/sys",      "/sys/fs", "/a/../b", "/..",     "/a/./b",
        "/.",       "//a",       "/a//b",   "/a/",     "/a\nb",   NULL,
    };
    for (int i = 0; bad[i]; i++)
        assert_false(ok(bad[i]));
    assert_false(ok(NULL));
    char longp[300];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[0] = '/';
    longp[sizeof(longp) - 1] = '\0';
    assert_false(ok(longp));
}

static void test_overlap(void **state)
{
    (void)state;
    assert_true(volume_mount_paths_overlap("/a", "/a"));
    assert_true(volume_mount_paths_overlap("/a", "/a/b"));
    assert_true(volume_mount_paths_overlap("/a/b", "/a"));
    assert_false(volume_mount_paths_overlap("/a", "/ab"));
    assert_false(volume_mount_paths_overlap("/a/b", "/a/c"));
}

static int parse(const char *json, int *n, char *msg)
{
    json_t *body = json_loads(json, 0, NULL);
    struct volume_request rq[VOLUMES_MAX];
    int r = volume_requests_parse(body, rq, n, msg, 256);
    if (r == 0 && *n > 0 && strcmp(rq[0].mount_path, "/workspace") != 0)
        r = 1; /* only the tests below with a default path get here */
    json_decref(body);
    return r;
}

static void test_requests(void **state)
{
    (void)state;
    char msg[256];
    int n = -1;
    assert_int_equal(parse("{}", &n, msg), 0);
    assert_int_equal(n, 0);
    assert_int_equal(parse("{\"volumes\": [{\"volume\": \"data\"}]}", &n, msg), 0);
    assert_int_equal(n, 1);
    assert_int_equal(parse("{\"volumes\": [{\"volume\": \"a\", \"mountPath\": \"/x\"}]}", &n, msg),
                     1);
    static const char *const bad[] = {
        "{\"volumes\": \"data\"}",
        "{\"volumes\": [\"data\"]}",
        "{\"volumes\": [{}]}",
        "{\"volumes\": [{\"volume\": 5}]}",
        "{\"volumes\": [{\"volume\": \"a\", \"mountPath\": \"/proc\"}]}",
        "{\"volumes\": [{\"volume\": \"a\", \"mountPath\": 1}]}",
        "{\"volumes\": [{\"volume\": \"a\"}, {\"volume\": \"b\"}]}", /* both at /workspace */
        "{\"volumes\": [{\"volume\": \"a\", \"mountPath\": \"/x\"},"
        " {\"volume\": \"b\", \"mountPath\": \"/x/y\"}]}",
        "{\"volumes\": [{\"volume\":\"1\",\"mountPath\":\"/1\"},{\"volume\":\"2\",\"mountPath\":"
        "\"/2\"},{\"volume\":\"3\",\"mountPath\":\"/3\"},{\"volume\":\"4\",\"mountPath\":\"/4\"},"
        "{\"volume\":\"5\",\"mountPath\":\"/5\"},{\"volume\":\"6\",\"mountPath\":\"/6\"},"
        "{\"volume\":\"7\",\"mountPath\":\"/7\"},{\"volume\":\"8\",\"mountPath\":\"/8\"},"
        "{\"volume\":\"9\",\"mountPath\":\"/9\"}]}",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        msg[0] = '\0';
        assert_int_equal(parse(bad[i], &n, msg), -1);
        assert_true(msg[0] != '\0');
    }
}

static void test_cli_volume_arg(void **state)
{
    (void)state;
    lz_error err;
    json_t *list = json_array();
    assert_int_equal(args_volume_add(list, "data", &err), 0);
    assert_int_equal(args_volume_add(list, "logs:/var/log/app", &err), 0);
    assert_int_equal(args_volume_add(list, ":/x", &err), -1);
    assert_int_equal(args_volume_add(list, "data:", &err), -1);
    char *s = json_dumps(list, JSON_COMPACT);
    assert_string_equal(s, "[{\"volume\":\"data\"},{\"volume\":\"logs\",\"mountPath\":"
                           "\"/var/log/app\"}]");
    free(s);
    json_decref(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_paths),     cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_overlap),        cmocka_unit_test(test_requests),
        cmocka_unit_test(test_cli_volume_arg),
    };
    return cmocka_run_group_tests_name("volume_path", tests, NULL, NULL);
}
