/* Volumes in the container runtime: each attached volume's ext4 image is
 * put on a loop device and mounted, on the host, at its mount path inside
 * the sandbox's overlay (DATA/sandboxes/ID/rootfs/MOUNTPATH) before the
 * clone. The child's recursive bind of the rootfs then carries it into the
 * sandbox, and destroy's lazy unmount of the rootfs takes it along; the loop
 * device is set up with AUTOCLEAR, so the kernel frees it when that last
 * mount goes. Like the overlay, the mount lives in the host's mount
 * namespace and so survives a restart of lizardd. It is not in the overlay's
 * upper layer, so snapshots (copies of that layer) never contain it. */
#include "container.h"
#include "../../common/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Another process may take the free device between GET_FREE and CONFIGURE
 * (EBUSY); that race is retried a few times. */
#define LOOP_TRIES 16

/* Resolve `path` as the sandbox would see it: symlinks stay inside the
 * rootfs (RESOLVE_IN_ROOT), and no mount point is crossed (RESOLVE_NO_XDEV),
 * so the result is a directory of the sandbox's own file system, never a
 * host path and never inside another volume. */
static int open_in_root(int rootfd, const char *path)
{
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

/* The mount point, made with its missing parents (0755, owned by the
 * sandbox's root) one component at a time, each resolved as above. */
static int make_mount_point(int rootfd, const char *mount_path, uid_t owner, lz_error *err)
{
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "%s", mount_path);
    for (char *end = prefix + 1;; end++) {
        if (*end != '/' && *end != '\0')
            continue;
        char saved = *end;
        *end = '\0';
        cleanup_close int fd = open_in_root(rootfd, prefix);
        if (fd < 0 && errno == ENOENT) {
            char *slash = strrchr(prefix, '/');
            *slash = '\0';
            cleanup_close int parent = open_in_root(rootfd, prefix[0] ? prefix : "/");
            *slash = '/';
            if (parent < 0)
                return lz_error_sys(err, "volume mount point %s", prefix);
            if (mkdirat(parent, slash + 1, 0755) < 0 ||
                fchownat(parent, slash + 1, owner, owner, AT_SYMLINK_NOFOLLOW) < 0)
                return lz_error_sys(err, "mkdir %s in the sandbox", prefix);
            fd = open_in_root(rootfd, prefix);
        }
        if (fd < 0)
            return lz_error_sys(err, "volume mount point %s", prefix);
        if (saved == '\0')
            return steal_fd(&fd);
        *end = saved;
    }
}

/* A loop device backed by `image`, set up in one LOOP_CONFIGURE. Returns its
 * fd (the device stays bound while the fd or a mount of it is open). */
static int loop_attach(const char *image, char *dev, size_t devlen, lz_error *err)
{
    cleanup_close int img = open(image, O_RDWR | O_CLOEXEC);
    if (img < 0)
        return lz_error_sys(err, "open volume image %s", image);
    cleanup_close int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (ctl < 0)
        return lz_error_sys(err, "open /dev/loop-control");
    struct loop_config cfg = {.fd = (__u32)img};
    cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", image);
    for (int i = 0; i < LOOP_TRIES; i++) {
        int n = ioctl(ctl, LOOP_CTL_GET_FREE);
        if (n < 0)
            return lz_error_sys(err, "LOOP_CTL_GET_FREE");
        snprintf(dev, devlen, "/dev/loop%d", n);
        cleanup_close int fd = open(dev, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return lz_error_sys(err, "open %s", dev);
        if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0)
            return steal_fd(&fd);
        if (errno != EBUSY)
            return lz_error_sys(err, "LOOP_CONFIGURE %s", dev);
    }
    return lz_error_set(err, EBUSY, "no free loop device after %d tries", LOOP_TRIES);
}

static int mount_volume(int rootfd, const struct volume_mount *v, uid_t owner, lz_error *err)
{
    char msg[256], dev[64], target[64];
    if (volume_mount_path_check(v->mount_path, msg, sizeof(msg)) < 0)
        return lz_error_set(err, EINVAL, "%s", msg);
    cleanup_close int at = make_mount_point(rootfd, v->mount_path, owner, err);
    if (at < 0)
        return -1;
    struct stat root_st, at_st;
    if (fstat(rootfd, &root_st) < 0 || fstat(at, &at_st) < 0)
        return lz_error_sys(err, "stat volume mount point");
    /* A symlink to "/" would put the volume over the whole root. */
    if (root_st.st_ino == at_st.st_ino && root_st.st_dev == at_st.st_dev)
        return lz_error_set(err, EINVAL, "mountPath %s resolves to /", v->mount_path);
    cleanup_close int loop = loop_attach(v->image_path, dev, sizeof(dev), err);
    if (loop < 0)
        return -1;
    /* The target through its fd: the path was resolved once, above, and
     * cannot be swapped for another between the check and the mount. */
    snprintf(target, sizeof(target), "/proc/self/fd/%d", at);
    /* noinit_itable: the image was made sparse with lazy_itable_init, and
     * its uninitialised tables already read as zeros (volumes.c); without
     * it the kernel would write them out, filling host disk for nothing. */
    if (mount(dev, target, "ext4", MS_NOSUID | MS_NODEV, "noinit_itable") < 0)
        return lz_error_sys(err, "mount volume %s on %s", v->image_path, v->mount_path);
    return 0;
}

int volume__mount_all(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                      const char *rootfs, lz_error *err)
{
    if (spec->nvolumes <= 0)
        return 0;
    cleanup_close int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return lz_error_sys(err, "open %s", rootfs);
    for (int i = 0; i < spec->nvolumes; i++)
        if (mount_volume(rootfd, &spec->volumes[i], cfg->uid_base, err) < 0)
            return -1;
    return 0;
}
