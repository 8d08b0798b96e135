/* The SQLite store against a real database file in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../src/daemon/store.h"
#include "../../src/common/fsutil.h"

static char dir[64];
static char dbpath[128];

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/lizard-store-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(dbpath, sizeof(dbpath), "%s/t.db", dir);
    *state = store_open(dbpath, NULL);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    store_close(*state);
    rm_rf(dir, NULL);
    return 0;
}

static void test_projects(void **state)
{
    struct store *s = *state;
    struct project_record p = {"proj_1", "My Project", "my-project", 1}, got;
    assert_int_equal(store_project_insert(s, &p, NULL), 0);
    lz_error err;
    assert_int_equal(store_project_insert(s, &p, &err), -1); /* duplicate */
    assert_int_equal(err.errnum, 17 /* EEXIST */);
    assert_int_equal(store_project_find(s, "proj_1", &got, NULL), 0);
    assert_int_equal(store_project_find(s, "my-project", &got, NULL), 0);
    assert_int_equal(store_project_find(s, "My Project", &got, NULL), 0);
    assert_string_equal(got.id, "proj_1");
    assert_int_equal(store_project_find(s, "nope", &got, NULL), STORE_NOT_FOUND);
    /* SQL metacharacters are data, not SQL. */
    assert_int_equal(store_project_find(s, "' OR 1=1 --", &got, NULL), STORE_NOT_FOUND);
}

static void count_cb(const struct sandbox_record *r, void *arg)
{
    (void)r;
    (*(int *)arg)++;
}

static void test_sandboxes_survive_reopen(void **state)
{
    struct store *s = *state;
    struct sandbox_record r;
    memset(&r, 0, sizeof(r));
    strcpy(r.id, "sb_a");
    strcpy(r.project_id, "proj_1");
    strcpy(r.template_name, "tiny");
    strcpy(r.status, "running");
    strcpy(r.runtime, "container");
    strcpy(r.size, "default");
    strcpy(r.host, "h");
    r.cpu_count = 4;
    r.memory_mb = 4096;
    r.expires_ms = 123456;
    r.init_pid = 42;
    r.init_start_time = 99;
    r.metadata_json = "{\"k\":\"v\"}";
    r.env_json = "{}";
    assert_int_equal(store_sandbox_insert(s, &r, NULL), 0);
    strcpy(r.id, "sb_b");
    strcpy(r.project_id, "proj_2");
    assert_int_equal(store_sandbox_insert(s, &r, NULL), 0);

    /* Close and reopen: what was acknowledged is still there. */
    store_close(s);
    s = *state = store_open(dbpath, NULL);
    assert_non_null(s);
    struct sandbox_record got;
    assert_int_equal(store_sandbox_get(s, "sb_a", &got, NULL), 0);
    assert_int_equal(got.init_pid, 42);
    assert_int_equal(got.expires_ms, 123456);
    assert_string_equal(got.metadata_json, "{\"k\":\"v\"}");
    sandbox_record_clear(&got);

    int n = 0;
    assert_int_equal(store_sandbox_list(s, "proj_1", NULL, count_cb, &n, NULL), 1);
    assert_int_equal(n, 1);
    assert_int_equal(store_sandbox_count_running(s, NULL, NULL), 2);
    assert_int_equal(store_sandbox_count_running(s, "proj_2", NULL), 1);

    assert_int_equal(store_sandbox_get(s, "sb_a", &got, NULL), 0);
    strcpy(got.status, "stopping");
    got.expires_ms = 0;
    assert_int_equal(store_sandbox_update(s, &got, NULL), 0);
    sandbox_record_clear(&got);
    assert_int_equal(store_sandbox_count_running(s, "proj_1", NULL), 0);
    assert_int_equal(store_sandbox_delete(s, "sb_a", NULL), 0);
    assert_int_equal(store_sandbox_delete(s, "sb_a", NULL), STORE_NOT_FOUND);
    assert_int_equal(store_sandbox_get(s, "sb_a", &got, NULL), STORE_NOT_FOUND);
}

static void key_cb(const struct key_record *k, void *arg)
{
    (void)k;
    (*(int *)arg)++;
}

static void test_keys(void **state)
{
    struct store *s = *state;
    struct key_record a = {"key_a", "admin", "proj_1", 1, "h1", "lz_a", 1};
    struct key_record b = {"key_b", "ci", "proj_1", 0, "h2", "lz_b", 2};
    assert_int_equal(store_key_insert(s, &a, NULL), 0);
    assert_int_equal(store_key_insert(s, &b, NULL), 0);
    assert_int_equal(store_key_count(s, NULL), 2);
    int n = 0;
    store_key_list(s, "proj_1", key_cb, &n, NULL);
    assert_int_equal(n, 1); /* project listings do not show admin keys */
    struct key_record got;
    assert_int_equal(store_key_get(s, "key_b", &got, NULL), 0);
    assert_string_equal(got.hash, "h2");
    assert_int_equal(store_key_delete(s, "key_b", NULL), 0);
    assert_int_equal(store_key_get(s, "key_b", &got, NULL), STORE_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_projects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandboxes_survive_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
