/* layer_copy / layer_sync on real trees in a temporary directory: what an
 * overlay upper dir holds (files, modes, owners, symlinks, hard links,
 * whiteouts, opaque directories) arrives, and a sync after changes makes
 * the copy equal again. Needs root (chown, mknod, trusted.* xattrs). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../src/common/fsutil.h"
#include "../../src/runtime/container/layer_copy.h"

static char tmp[256], src[300], dst[300];

static void put(const char *rel, const char *content, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", src, rel);
    assert_int_equal(write_file(p, content, mode, NULL), 0);
    assert_int_equal(chmod(p, mode), 0);
}

static char *get(const char *rel)
{
    char p[512], *out = NULL;
    snprintf(p, sizeof(p), "%s/%s", dst, rel);
    if (read_file(p, 1 << 20, &out, NULL) < 0)
        return NULL;
    return out;
}

static int dst_stat(const char *rel, struct stat *st)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dst, rel);
    return lstat(p, st);
}

static void srcpath(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", src, rel);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof(tmp), "/tmp/lz-layertest-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    snprintf(src, sizeof(src), "%s/src", tmp);
    snprintf(dst, sizeof(dst), "%s/dst", tmp);
    assert_int_equal(mkdir(src, 0755), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rm_rf(tmp, NULL);
    return 0;
}

static void build_tree(void)
{
    char p[512], q[512];
    srcpath(p, sizeof(p), "etc");
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(chown(p, 100000, 100000), 0);
    put("etc/hostname", "sb_1\n", 0644);
    srcpath(p, sizeof(p), "etc/hostname");
    assert_int_equal(chown(p, 100000, 100000), 0);
    put("etc/secret", "s3cret", 04750);
    srcpath(p, sizeof(p), "etc/secret");
    assert_int_equal(chown(p, 101000, 101000), 0);
    assert_int_equal(chmod(p, 04750), 0); /* chown cleared set-uid */
    /* symlink to a host path: copied as a link, never followed */
    srcpath(p, sizeof(p), "etc/evil");
    assert_int_equal(symlink("/etc/shadow", p), 0);
    /* hard link */
    put("etc/a", "same inode", 0600);
    srcpath(p, sizeof(p), "etc/a");
    srcpath(q, sizeof(q), "etc/b");
    assert_int_equal(link(p, q), 0);
    /* whiteout and opaque directory */
    srcpath(p, sizeof(p), "gone");
    assert_int_equal(mknod(p, S_IFCHR | 0, makedev(0, 0)), 0);
    srcpath(p, sizeof(p), "opaque");
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(setxattr(p, "trusted.overlay.opaque", "y", 1, 0), 0);
    srcpath(p, sizeof(p), "workspace");
    assert_int_equal(mkdir(p, 0755), 0);
    put("workspace/data.bin", "0123456789", 0644);
}

/* build_tree, then layer_copy it to dst; returns the manifest. */
static struct layer_manifest *copy_tree(struct layer_copy_stats *st)
{
    build_tree();
    struct layer_manifest *m = NULL;
    lz_error err;
    assert_int_equal(layer_copy(src, dst, &m, st, &err), 0);
    assert_non_null(m);
    return m;
}

static void test_copy(void **state)
{
    (void)state;
    struct layer_copy_stats st = {0};
    lz_error err;
    struct layer_manifest *m = copy_tree(&st);
    assert_true(st.bytes >= 10);

    char *v = get("etc/hostname");
    assert_string_equal(v, "sb_1\n");
    free(v);
    struct stat a, b;
    assert_int_equal(dst_stat("etc/hostname", &a), 0);
    assert_int_equal(a.st_uid, 100000);
    assert_int_equal(dst_stat("etc", &a), 0);
    assert_int_equal(a.st_uid, 100000);
    assert_int_equal(a.st_mode & 07777, 0755);
    assert_int_equal(dst_stat("etc/secret", &a), 0);
    assert_int_equal(a.st_mode & 07777, 04750);
    assert_int_equal(a.st_uid, 101000);
    assert_int_equal(dst_stat("etc/evil", &a), 0);
    assert_true(S_ISLNK(a.st_mode));
    char target[64] = "";
    char p[512];
    snprintf(p, sizeof(p), "%s/etc/evil", dst);
    assert_true(readlink(p, target, sizeof(target)) > 0);
    assert_string_equal(target, "/etc/shadow");
    assert_int_equal(dst_stat("etc/a", &a), 0);
    assert_int_equal(dst_stat("etc/b", &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);
    assert_int_equal(dst_stat("gone", &a), 0);
    assert_true(S_ISCHR(a.st_mode) && a.st_rdev == makedev(0, 0));
    char x[4] = "";
    snprintf(p, sizeof(p), "%s/opaque", dst);
    assert_int_equal(getxattr(p, "trusted.overlay.opaque", x, sizeof(x)), 1);
    assert_int_equal(x[0], 'y');
    /* the same mtime as the source */
    struct stat s1;
    srcpath(p, sizeof(p), "workspace/data.bin");
    assert_int_equal(lstat(p, &s1), 0);
    assert_int_equal(dst_stat("workspace/data.bin", &a), 0);
    assert_int_equal(a.st_mtim.tv_sec, s1.st_mtim.tv_sec);
    assert_int_equal(a.st_mtim.tv_nsec, s1.st_mtim.tv_nsec);

    /* A second copy to an existing destination is refused. */
    struct layer_manifest *m2 = NULL;
    assert_int_equal(layer_copy(src, dst, &m2, &st, &err), -1);
    layer_manifest_free(m);
}

static void test_sync(void **state)
{
    (void)state;
    struct layer_copy_stats st = {0};
    lz_error err;
    struct layer_manifest *m = copy_tree(&st);

    /* Nothing changed: nothing is copied again. */
    struct layer_copy_stats st2 = {0};
    assert_int_equal(layer_sync(src, dst, m, &st2, &err), 0);
    assert_int_equal(st2.bytes, 0);
    assert_int_equal(st2.removed, 0);

    char p[512];
    /* Same size, mtime set back: ctime still tells. */
    struct stat before;
    srcpath(p, sizeof(p), "workspace/data.bin");
    assert_int_equal(lstat(p, &before), 0);
    put("workspace/data.bin", "abcdefghij", 0644);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    assert_int_equal(utimensat(AT_FDCWD, p, times, 0), 0);
    /* new file in a new directory, a deleted file, a mode change, a file
     * replaced by a directory, opaque mark removed */
    srcpath(p, sizeof(p), "workspace/new");
    assert_int_equal(mkdir(p, 0755), 0);
    put("workspace/new/file", "fresh", 0644);
    srcpath(p, sizeof(p), "etc/hostname");
    assert_int_equal(unlink(p), 0);
    srcpath(p, sizeof(p), "etc/secret");
    assert_int_equal(chmod(p, 0600), 0);
    srcpath(p, sizeof(p), "gone");
    assert_int_equal(unlink(p), 0);
    assert_int_equal(mkdir(p, 0711), 0);
    srcpath(p, sizeof(p), "opaque");
    assert_int_equal(removexattr(p, "trusted.overlay.opaque"), 0);

    struct layer_copy_stats st3 = {0};
    assert_int_equal(layer_sync(src, dst, m, &st3, &err), 0);
    char *v = get("workspace/data.bin");
    assert_string_equal(v, "abcdefghij");
    free(v);
    v = get("workspace/new/file");
    assert_string_equal(v, "fresh");
    free(v);
    struct stat a;
    assert_int_equal(dst_stat("etc/hostname", &a), -1);
    assert_int_equal(st3.removed, 1);
    assert_int_equal(dst_stat("etc/secret", &a), 0);
    assert_int_equal(a.st_mode & 07777, 0600);
    assert_int_equal(dst_stat("gone", &a), 0);
    assert_true(S_ISDIR(a.st_mode));
    assert_int_equal(a.st_mode & 07777, 0711);
    char x[4];
    snprintf(p, sizeof(p), "%s/opaque", dst);
    assert_int_equal(getxattr(p, "trusted.overlay.opaque", x, sizeof(x)), -1);
    /* only what changed was copied: data.bin (10), new/file (5) and the
     * chmod'ed secret (6); not hostname, a, b */
    assert_int_equal(st3.bytes, 21);
    layer_manifest_free(m);
}

int main(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_layer_copy: needs root (chown, mknod, trusted xattrs)\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
