/* cgroup path, value and detection logic, and v2 set-up against a fake
 * cgroupfs tree in a temporary directory (this machine runs v1). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/common/fsutil.h"
#include "../../src/runtime/container/cgroup.h"

static const char *mi_v1 =
    "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void test_mountinfo_fstype(void **state)
{
    (void)state;
    char fs[64];
    assert_int_equal(cgroup_mountinfo_fstype(mi_v1, "/sys/fs/cgroup", fs, sizeof(fs)), 0);
    assert_string_equal(fs, "tmpfs");
    assert_int_equal(cgroup_mountinfo_fstype(mi_v1, "/sys/fs/cgroup/unified", fs, sizeof(fs)), 0);
    assert_string_equal(fs, "cgroup2");
    assert_int_equal(cgroup_mountinfo_fstype(mi_v1, "/nope", fs, sizeof(fs)), -1);
    /* optional fields before "-", and an escaped space in the mount point */
    const char *mi = "50 1 0:5 / /a\\040b rw shared:7 master:2 - cgroup2 none rw\n";
    assert_int_equal(cgroup_mountinfo_fstype(mi, "/a b", fs, sizeof(fs)), 0);
    assert_string_equal(fs, "cgroup2");
}

static char tmp[256];

static void mkfile(const char *rel, const char *content)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", tmp, rel);
    assert_int_equal(write_file(p, content, 0644, NULL), 0);
}

static char *slurp(const char *rel)
{
    char p[512], *out = NULL;
    snprintf(p, sizeof(p), "%s/%s", tmp, rel);
    if (read_file(p, 4096, &out, NULL) < 0)
        return NULL;
    return out;
}

static int setup_tree(void **state)
{
    (void)state;
    snprintf(tmp, sizeof(tmp), "/tmp/lz-cgtest-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    return 0;
}

static int teardown_tree(void **state)
{
    (void)state;
    rm_rf(tmp, NULL);
    return 0;
}

static void test_detect(void **state)
{
    (void)state;
    enum cgroup_version v = 0;
    lz_error err;
    char mi[1024];
    /* v1 with an empty v2 at /unified: v1 */
    assert_int_equal(cgroup_detect("/sys/fs/cgroup", mi_v1, &v, &err), 0);
    assert_int_equal(v, CGROUP_V1);
    /* v2: cgroup2 at the root and cgroup.controllers present */
    mkfile("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
    snprintf(mi, sizeof(mi), "30 23 0:26 / %s rw - cgroup2 cgroup2 rw,nsdelegate\n", tmp);
    assert_int_equal(cgroup_detect(tmp, mi, &v, &err), 0);
    assert_int_equal(v, CGROUP_V2);
    /* cgroup2 without cgroup.controllers: refused */
    char p[512];
    snprintf(p, sizeof(p), "%s/cgroup.controllers", tmp);
    unlink(p);
    assert_int_equal(cgroup_detect(tmp, mi, &v, &err), -1);
    /* nothing mounted */
    assert_int_equal(cgroup_detect("/nowhere", mi_v1, &v, &err), -1);
}

static void test_paths(void **state)
{
    (void)state;
    char p[256];
    assert_int_equal(
        cgroup_path(p, sizeof(p), CGROUP_V1, "/sys/fs/cgroup", "memory", "lizard", "sb_1"), 0);
    assert_string_equal(p, "/sys/fs/cgroup/memory/lizard/sb_1");
    assert_int_equal(cgroup_path(p, sizeof(p), CGROUP_V1, "/sys/fs/cgroup", "pids", "lizard", NULL),
                     0);
    assert_string_equal(p, "/sys/fs/cgroup/pids/lizard");
    assert_int_equal(
        cgroup_path(p, sizeof(p), CGROUP_V2, "/sys/fs/cgroup", "memory", "lizard", "sb_1"), 0);
    assert_string_equal(p, "/sys/fs/cgroup/lizard/sb_1");
    char small[8];
    assert_int_equal(
        cgroup_path(small, sizeof(small), CGROUP_V2, "/sys/fs/cgroup", NULL, "lizard", "x"), -1);
}

static const struct cgroup_setting *find(const struct cgroup_setting *s, int n, const char *file)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].file, file) == 0)
            return &s[i];
    return NULL;
}

static void test_settings_v1(void **state)
{
    (void)state;
    struct cgroup_setting s[CGROUP_MAX_SETTINGS];
    struct cgroup_limits l = {4, 4096, 1024};
    int n = cgroup_settings(CGROUP_V1, &l, s);
    assert_int_equal(n, 5);
    assert_string_equal(s[0].file, "cpu.cfs_period_us"); /* period before quota */
    assert_string_equal(s[0].value, "100000");
    assert_string_equal(find(s, n, "cpu.cfs_quota_us")->value, "400000");
    assert_string_equal(find(s, n, "cpu.cfs_quota_us")->controller, "cpu");
    assert_string_equal(find(s, n, "memory.limit_in_bytes")->value, "4294967296");
    assert_true(find(s, n, "memory.memsw.limit_in_bytes")->optional);
    assert_string_equal(find(s, n, "pids.max")->value, "1024");
    assert_string_equal(find(s, n, "pids.max")->controller, "pids");
    /* memory before memsw */
    assert_true(find(s, n, "memory.limit_in_bytes") < find(s, n, "memory.memsw.limit_in_bytes"));
    struct cgroup_limits none = {0, 0, 0};
    n = cgroup_settings(CGROUP_V1, &none, s);
    assert_string_equal(find(s, n, "cpu.cfs_quota_us")->value, "-1");
    assert_string_equal(find(s, n, "pids.max")->value, "max");
}

static void test_settings_v2(void **state)
{
    (void)state;
    struct cgroup_setting s[CGROUP_MAX_SETTINGS];
    struct cgroup_limits l = {2, 512, 100};
    int n = cgroup_settings(CGROUP_V2, &l, s);
    assert_int_equal(n, 4);
    assert_string_equal(find(s, n, "cpu.max")->value, "200000 100000");
    assert_string_equal(find(s, n, "memory.max")->value, "536870912");
    assert_string_equal(find(s, n, "memory.swap.max")->value, "0");
    assert_true(find(s, n, "memory.swap.max")->optional);
    assert_string_equal(find(s, n, "pids.max")->value, "100");
    assert_null(s[0].controller);
    struct cgroup_limits none = {0, 0, 0};
    n = cgroup_settings(CGROUP_V2, &none, s);
    assert_string_equal(find(s, n, "cpu.max")->value, "max 100000");
    assert_string_equal(find(s, n, "memory.max")->value, "max");
}

static void test_subtree_line(void **state)
{
    (void)state;
    char line[64];
    assert_int_equal(cgroup_v2_subtree_line("cpuset cpu io memory pids\n", line, sizeof(line)), 0);
    assert_string_equal(line, "+cpu +memory +pids");
    /* "cpuset" must not count as "cpu" */
    assert_int_equal(cgroup_v2_subtree_line("cpuset io memory\n", line, sizeof(line)), 0);
    assert_string_equal(line, "+memory");
    assert_int_equal(cgroup_v2_subtree_line("", line, sizeof(line)), 0);
    assert_string_equal(line, "");
}

/* The fake tree: cgroupfs creates the interface files on mkdir; here the
 * test creates the ones cgroup_create writes, as the kernel would. */
static void fake_v2_files(const char *dir, int with_swap)
{
    char rel[256];
    const char *files[] = {"cgroup.controllers", "cgroup.subtree_control",
                           "cgroup.procs",       "cpu.max",
                           "memory.max",         "pids.max",
                           "memory.current",     "cpu.stat",
                           "pids.current",       NULL};
    for (int i = 0; files[i]; i++) {
        snprintf(rel, sizeof(rel), "%s/%s", dir, files[i]);
        mkfile(rel, strcmp(files[i], "cgroup.controllers") == 0 ? "cpu memory pids\n" : "");
    }
    if (with_swap) {
        snprintf(rel, sizeof(rel), "%s/memory.swap.max", dir);
        mkfile(rel, ""); /* regular files: writes do not truncate */
    }
}

static void test_v2_fake_tree(void **state)
{
    (void)state;
    lz_error err;
    char p[512];
    mkfile("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
    mkfile("cgroup.subtree_control", "");
    snprintf(p, sizeof(p), "%s/lizard", tmp);
    assert_int_equal(mkdir(p, 0755), 0);
    fake_v2_files("lizard", 0);
    assert_int_equal(cgroup_setup_parent(CGROUP_V2, tmp, "lizard", &err), 0);
    char *root_sc = slurp("cgroup.subtree_control");
    char *parent_sc = slurp("lizard/cgroup.subtree_control");
    assert_string_equal(root_sc, "+cpu +memory +pids");
    assert_string_equal(parent_sc, "+cpu +memory +pids");
    free(root_sc);
    free(parent_sc);

    /* cgroup_create makes the dir; pre-create it with its files as the
     * kernel would (EEXIST is accepted). */
    snprintf(p, sizeof(p), "%s/lizard/sb1", tmp);
    assert_int_equal(mkdir(p, 0755), 0);
    fake_v2_files("lizard/sb1", 1);
    struct cgroup_limits l = {4, 4096, 512};
    assert_int_equal(cgroup_create(CGROUP_V2, tmp, "lizard", "sb1", &l, &err), 0);
    const char *want[][2] = {{"lizard/sb1/cpu.max", "400000 100000"},
                             {"lizard/sb1/memory.max", "4294967296"},
                             {"lizard/sb1/memory.swap.max", "0"},
                             {"lizard/sb1/pids.max", "512"}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char *got = slurp(want[i][0]);
        assert_non_null(got);
        assert_string_equal(got, want[i][1]);
        free(got);
    }
    assert_int_equal(cgroup_attach(CGROUP_V2, tmp, "lizard", "sb1", 4242, &err), 0);
    char *procs = slurp("lizard/sb1/cgroup.procs");
    assert_string_equal(procs, "4242");
    free(procs);

    mkfile("lizard/sb1/memory.current", "123456\n");
    mkfile("lizard/sb1/cpu.stat", "usage_usec 777\nuser_usec 500\nsystem_usec 277\n");
    mkfile("lizard/sb1/pids.current", "3\n");
    struct runtime_stats st;
    assert_int_equal(cgroup_stats(CGROUP_V2, tmp, "lizard", "sb1", &st, &err), 0);
    assert_int_equal(st.memory_bytes, 123456);
    assert_int_equal(st.cpu_usec, 777);
    assert_int_equal(st.pids, 3);

    /* without memory.swap.max (no swap on the host) create still works */
    snprintf(p, sizeof(p), "%s/lizard/sb2", tmp);
    assert_int_equal(mkdir(p, 0755), 0);
    fake_v2_files("lizard/sb2", 0);
    assert_int_equal(cgroup_create(CGROUP_V2, tmp, "lizard", "sb2", &l, &err), 0);
    /* a missing mandatory file is an error */
    snprintf(p, sizeof(p), "%s/lizard/sb2/pids.max", tmp);
    unlink(p);
    assert_int_equal(cgroup_create(CGROUP_V2, tmp, "lizard", "sb2", &l, &err), -1);
    assert_non_null(strstr(err.msg, "pids.max"));

    /* destroy: the fake dirs hold regular files, so rmdir fails with
     * ENOTEMPTY (not EBUSY: no retry); an absent cgroup is fine. */
    assert_int_equal(cgroup_destroy(CGROUP_V2, tmp, "lizard", "gone", 100, &err), 0);
}

static void test_v1_fake_tree(void **state)
{
    (void)state;
    lz_error err;
    char p[512];
    for (int i = 0; cgroup_v1_controllers[i]; i++) {
        snprintf(p, sizeof(p), "%s/%s", tmp, cgroup_v1_controllers[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    assert_int_equal(cgroup_setup_parent(CGROUP_V1, tmp, "lizard", &err), 0);
    for (int i = 0; cgroup_v1_controllers[i]; i++) {
        snprintf(p, sizeof(p), "%s/%s/lizard/sb1", tmp, cgroup_v1_controllers[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    mkfile("cpu/lizard/sb1/cpu.cfs_period_us", "");
    mkfile("cpu/lizard/sb1/cpu.cfs_quota_us", "");
    mkfile("memory/lizard/sb1/memory.limit_in_bytes", "");
    mkfile("pids/lizard/sb1/pids.max", "");
    struct cgroup_limits l = {1, 256, 64};
    assert_int_equal(cgroup_create(CGROUP_V1, tmp, "lizard", "sb1", &l, &err), 0);
    char *q = slurp("cpu/lizard/sb1/cpu.cfs_quota_us");
    char *m = slurp("memory/lizard/sb1/memory.limit_in_bytes");
    char *pm = slurp("pids/lizard/sb1/pids.max");
    assert_string_equal(q, "100000");
    assert_string_equal(m, "268435456");
    assert_string_equal(pm, "64");
    free(q);
    free(m);
    free(pm);
    /* destroy of a never-created sandbox is a no-op */
    assert_int_equal(cgroup_destroy(CGROUP_V1, tmp, "lizard", "gone", 100, &err), 0);
}

static void test_freeze_state_parse(void **state)
{
    (void)state;
    assert_int_equal(cgroup_freeze_state(CGROUP_V1, "FROZEN\n"), 1);
    assert_int_equal(cgroup_freeze_state(CGROUP_V1, "FREEZING\n"), 0);
    assert_int_equal(cgroup_freeze_state(CGROUP_V1, "THAWED\n"), 0);
    assert_int_equal(cgroup_freeze_state(CGROUP_V1, ""), -1);
    assert_int_equal(cgroup_freeze_state(CGROUP_V2, "populated 1\nfrozen 1\n"), 1);
    assert_int_equal(cgroup_freeze_state(CGROUP_V2, "populated 1\nfrozen 0\n"), 0);
    /* "frozen" must start a line */
    assert_int_equal(cgroup_freeze_state(CGROUP_V2, "populated 1\nxfrozen 1\n"), -1);
    assert_string_equal(cgroup_freeze_file(CGROUP_V1), "freezer.state");
    assert_string_equal(cgroup_freeze_value(CGROUP_V1, 1), "FROZEN");
    assert_string_equal(cgroup_freeze_value(CGROUP_V1, 0), "THAWED");
    assert_string_equal(cgroup_freeze_file(CGROUP_V2), "cgroup.freeze");
    assert_string_equal(cgroup_freeze_value(CGROUP_V2, 1), "1");
}

/* v2: the fake kernel is the test itself, which reports in cgroup.events
 * what a real one would once the tasks stopped. */
static void test_v2_freeze_fake_tree(void **state)
{
    (void)state;
    lz_error err;
    char p[512];
    snprintf(p, sizeof(p), "%s/lizard", tmp);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/lizard/sb1", tmp);
    assert_int_equal(mkdir(p, 0755), 0);
    mkfile("lizard/sb1/cgroup.freeze", "0\n");
    mkfile("lizard/sb1/cgroup.events", "populated 1\nfrozen 1\n");
    assert_int_equal(cgroup_freeze(CGROUP_V2, tmp, "lizard", "sb1", 1, 100, &err), 0);
    char *v = slurp("lizard/sb1/cgroup.freeze");
    assert_int_equal(v[0], '1');
    free(v);
    /* thaw: waits for "frozen 0" */
    mkfile("lizard/sb1/cgroup.events", "populated 1\nfrozen 0\n");
    assert_int_equal(cgroup_freeze(CGROUP_V2, tmp, "lizard", "sb1", 0, 100, &err), 0);
    v = slurp("lizard/sb1/cgroup.freeze");
    assert_int_equal(v[0], '0');
    free(v);
    /* a freeze the kernel never completes: ETIMEDOUT, and thawed again */
    assert_int_equal(cgroup_freeze(CGROUP_V2, tmp, "lizard", "sb1", 1, 20, &err), -1);
    assert_int_equal(err.errnum, ETIMEDOUT);
    v = slurp("lizard/sb1/cgroup.freeze");
    assert_int_equal(v[0], '0');
    free(v);
    /* no such cgroup */
    assert_int_equal(cgroup_freeze(CGROUP_V2, tmp, "lizard", "gone", 1, 20, &err), -1);
}

static void test_v1_freeze_fake_tree(void **state)
{
    (void)state;
    lz_error err;
    char p[512];
    snprintf(p, sizeof(p), "%s/freezer/lizard/sb1", tmp);
    assert_int_equal(mkdir_p(p, 0755, &err), 0);
    /* A regular file reads back what was written: FROZEN at once, as if
     * every task had stopped. */
    mkfile("freezer/lizard/sb1/freezer.state", "THAWED\n");
    assert_int_equal(cgroup_freeze(CGROUP_V1, tmp, "lizard", "sb1", 1, 100, &err), 0);
    char *v = slurp("freezer/lizard/sb1/freezer.state");
    assert_int_equal(strncmp(v, "FROZEN", 6), 0);
    free(v);
    assert_int_equal(cgroup_freeze(CGROUP_V1, tmp, "lizard", "sb1", 0, 100, &err), 0);
    v = slurp("freezer/lizard/sb1/freezer.state");
    assert_int_equal(strncmp(v, "THAWED", 6), 0);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mountinfo_fstype),
        cmocka_unit_test_setup_teardown(test_detect, setup_tree, teardown_tree),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_settings_v1),
        cmocka_unit_test(test_settings_v2),
        cmocka_unit_test(test_subtree_line),
        cmocka_unit_test_setup_teardown(test_v2_fake_tree, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_v1_fake_tree, setup_tree, teardown_tree),
        cmocka_unit_test(test_freeze_state_parse),
        cmocka_unit_test_setup_teardown(test_v2_freeze_fake_tree, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_v1_freeze_fake_tree, setup_tree, teardown_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
