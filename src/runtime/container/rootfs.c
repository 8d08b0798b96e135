/* The sandbox's file system.
 *
 * Host side (rootfs__prepare): DATA/sandboxes/ID/layer is a tmpfs limited to
 * the sandbox's disk size holding the overlay's upper/ and work/; rootfs/ is
 * the overlay of the shared read-only template and that layer. Both are
 * mounted in the host's mount namespace so that they outlive a restart of
 * lizardd and the host can read the sandbox's files.
 *
 * Child side (rootfs__setup_child): fresh /proc, /dev, /sys under the
 * overlay, pivot_root into it, then runc's masks over /proc. */
#include "container.h"
#include "../../common/cleanup.h"
#include "../../common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static int write_owned(int dirfd, const char *name, const char *content, uid_t owner, lz_error *err)
{
    /* O_NOFOLLOW: a template (a user's snapshot) may have planted a
     * symlink here, and we write as host root. */
    cleanup_close int fd =
        openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return lz_error_sys(err, "open rootfs/etc/%s", name);
    if (write_all(fd, content, strlen(content)) < 0)
        return lz_error_sys(err, "write rootfs/etc/%s", name);
    if (fchown(fd, owner, owner) < 0)
        return lz_error_sys(err, "chown rootfs/etc/%s", name);
    return 0;
}

static int write_identity(const char *rootfs, const char *id, uid_t owner, lz_error *err)
{
    char path[4096], hosts[512];
    if (snprintf(path, sizeof(path), "%s/etc", rootfs) >= (int)sizeof(path))
        return lz_error_set(err, ENAMETOOLONG, "rootfs path");
    if (mkdir(path, 0755) == 0 && chown(path, owner, owner) < 0)
        return lz_error_sys(err, "chown %s", path);
    cleanup_close int etc = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (etc < 0)
        return lz_error_sys(err, "open %s", path);
    snprintf(hosts, sizeof(hosts), "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t%s\n", id);
    snprintf(path, sizeof(path), "%s\n", id);
    if (write_owned(etc, "hostname", path, owner, err) < 0 ||
        write_owned(etc, "hosts", hosts, owner, err) < 0)
        return -1;
    return 0;
}

int rootfs__prepare(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                    const char *sbdir, lz_error *err)
{
    char layer[4096], upper[4096], work[4096], rootfs[4096], lower[4096], opts[8192];
    snprintf(layer, sizeof(layer), "%s/layer", sbdir);
    snprintf(upper, sizeof(upper), "%s/layer/upper", sbdir);
    snprintf(work, sizeof(work), "%s/layer/work", sbdir);
    snprintf(rootfs, sizeof(rootfs), "%s/rootfs", sbdir);
    if (snprintf(lower, sizeof(lower), "%s/%s/rootfs", cfg->template_dir, spec->template_name) >=
        (int)sizeof(lower))
        return lz_error_set(err, ENAMETOOLONG, "template path");
    if (access(lower, F_OK) < 0)
        return lz_error_sys(err, "template %s", lower);

    /* tmpfs: size= enforces the disk limit with no quota support needed,
     * and its pages are charged to the memory cgroup of the process that
     * writes them, i.e. to the sandbox. nodev: devices come only from the
     * bind mounts in /dev. */
    if (mkdir(layer, 0700) < 0 && errno != EEXIST)
        return lz_error_sys(err, "mkdir %s", layer);
    snprintf(opts, sizeof(opts), "size=%llu,mode=0700", (unsigned long long)spec->disk_bytes);
    if (mount("lizard-layer", layer, "tmpfs", MS_NODEV, opts) < 0)
        return lz_error_sys(err, "mount tmpfs on %s", layer);
    /* upper/ becomes "/" of the sandbox: owned by its root (uid_base). */
    if (mkdir(upper, 0755) < 0 || chown(upper, cfg->uid_base, cfg->uid_base) < 0)
        return lz_error_sys(err, "mkdir %s", upper);
    if (mkdir(work, 0700) < 0)
        return lz_error_sys(err, "mkdir %s", work);
    if (mkdir(rootfs, 0755) < 0 && errno != EEXIST)
        return lz_error_sys(err, "mkdir %s", rootfs);
    /* Snapshot layers sit between the writable layer and the template:
     * lowerdir lists the topmost first. */
    int has_extra = spec->extra_lower && spec->extra_lower[0];
    if (snprintf(opts, sizeof(opts), "lowerdir=%s%s%s,upperdir=%s,workdir=%s",
                 has_extra ? spec->extra_lower : "", has_extra ? ":" : "", lower, upper,
                 work) >= (int)sizeof(opts))
        return lz_error_set(err, ENAMETOOLONG, "overlay options");
    if (mount("overlay", rootfs, "overlay", 0, opts) < 0)
        return lz_error_sys(err, "mount overlay on %s", rootfs);
    /* Written before the clone so the agent sees them from its first
     * instruction; through the overlay, so they land in the upper layer. */
    if (write_identity(rootfs, spec->id, cfg->uid_base, err) < 0)
        return -1;
    /* Volumes on top of the overlay, before the clone: the child's
     * recursive bind of rootfs/ takes them into the sandbox. */
    return volume__mount_all(cfg, spec, rootfs, err);
}

static int umount_lazy(const char *path, lz_error *err)
{
    /* EINVAL: not a mount point (never mounted, or already unmounted). */
    if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
        return lz_error_sys(err, "umount %s", path);
    return 0;
}

int rootfs__unmount(const char *sbdir, lz_error *err)
{
    char path[4096];
    /* The overlay first: it holds the layer busy. */
    snprintf(path, sizeof(path), "%s/rootfs", sbdir);
    if (umount_lazy(path, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/layer", sbdir);
    return umount_lazy(path, err);
}

/* ---- child side: runs in the new user and mount namespaces ---- */

/* A top-level directory of the rootfs to mount on. The rootfs may come from
 * a user's snapshot: refuse a symlink, which would point the mount at a
 * path we did not choose. */
static int ensure_dir(const char *name, mode_t mode, lz_error *err)
{
    struct stat st;
    if (mkdir(name, mode) < 0 && errno != EEXIST)
        return lz_error_sys(err, "mkdir /%s", name);
    if (lstat(name, &st) < 0)
        return lz_error_sys(err, "stat /%s", name);
    if (!S_ISDIR(st.st_mode))
        return lz_error_set(err, ENOTDIR, "/%s in the rootfs is not a directory", name);
    return 0;
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};

static int mount_dev(lz_error *err)
{
    char target[64], source[64];
    if (ensure_dir("dev", 0755, err) < 0)
        return -1;
    if (mount("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC | MS_STRICTATIME,
              "mode=755,size=65536k") < 0)
        return lz_error_sys(err, "mount tmpfs on /dev");
    /* A user namespace may not mknod real devices, so the host's nodes are
     * bind-mounted onto empty files; the devices themselves are harmless. */
    for (int i = 0; dev_nodes[i]; i++) {
        snprintf(target, sizeof(target), "dev/%s", dev_nodes[i]);
        snprintf(source, sizeof(source), "/dev/%s", dev_nodes[i]);
        int fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
        if (fd < 0)
            return lz_error_sys(err, "create /%s", target);
        close(fd);
        if (mount(source, target, NULL, MS_BIND, NULL) < 0)
            return lz_error_sys(err, "bind %s", source);
    }
    /* newinstance: the sandbox's own pty numbering, not the host's. */
    if (mkdir("dev/pts", 0755) < 0 || mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                                            "newinstance,ptmxmode=0666,mode=0620,gid=5") < 0)
        return lz_error_sys(err, "mount devpts");
    if (mkdir("dev/shm", 01777) < 0 ||
        mount("shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=65536k") < 0)
        return lz_error_sys(err, "mount /dev/shm");
    static const char *const links[][2] = {
        {"pts/ptmx", "dev/ptmx"},          {"/proc/self/fd", "dev/fd"},
        {"/proc/self/fd/0", "dev/stdin"},  {"/proc/self/fd/1", "dev/stdout"},
        {"/proc/self/fd/2", "dev/stderr"},
    };
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
        if (symlink(links[i][0], links[i][1]) < 0)
            return lz_error_sys(err, "symlink /%s", links[i][1]);
    return 0;
}

static int mount_pseudo(lz_error *err)
{
    /* proc after the clone: it shows the pid namespace of the mounter,
     * which must be the sandbox's. */
    if (ensure_dir("proc", 0555, err) < 0)
        return -1;
    if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return lz_error_sys(err, "mount /proc");
    if (mount_dev(err) < 0)
        return -1;
    /* sysfs is allowed because we own a network namespace; it stays
     * read-only. If the kernel refuses, /sys is simply empty. */
    if (ensure_dir("sys", 0555, err) < 0)
        return -1;
    (void)mount("sysfs", "sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    /* /tmp stays in the writable layer (no tmpfs of its own): it then
     * shares the sandbox's disk limit instead of adding a second budget. */
    if (ensure_dir("tmp", 01777, err) < 0)
        return -1;
    if (chmod("tmp", 01777) < 0)
        return lz_error_sys(err, "chmod /tmp");
    return 0;
}

static const char *const masked[] = {
    "/proc/acpi",
    "/proc/asound",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    NULL,
};
static const char *const readonly[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

static int mask_paths(lz_error *err)
{
    for (int i = 0; masked[i]; i++) {
        struct stat st;
        if (stat(masked[i], &st) < 0)
            continue; /* not on this kernel, or /sys absent */
        int r = S_ISDIR(st.st_mode)
                    ? mount("tmpfs", masked[i], "tmpfs", MS_RDONLY, "size=0,mode=0555")
                    : mount("/dev/null", masked[i], NULL, MS_BIND, NULL);
        if (r < 0)
            return lz_error_sys(err, "mask %s", masked[i]);
    }
    for (int i = 0; readonly[i]; i++) {
        struct statvfs sv;
        if (mount(readonly[i], readonly[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
            if (errno == ENOENT)
                continue;
            return lz_error_sys(err, "bind %s", readonly[i]);
        }
        /* A remount must repeat the flags the mount already has (nosuid,
         * nodev, noexec of /proc), or the kernel refuses it as an attempt
         * to clear them. */
        unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
        if (statvfs(readonly[i], &sv) == 0)
            flags |= sv.f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC);
        if (mount(NULL, readonly[i], NULL, flags, NULL) < 0)
            return lz_error_sys(err, "remount %s read-only", readonly[i]);
    }
    return 0;
}

int rootfs__enter(const char *rootfs, lz_error *err)
{
    /* Private first: the host's mounts are shared (systemd), and without
     * this every mount below would propagate back into the host; pivot_root
     * also refuses a shared new or old root. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return lz_error_sys(err, "make / rprivate");
    /* A bind of the overlay onto itself gives a mount of this namespace's
     * own on which the new mounts stack, and a mount point for pivot_root
     * whatever rootfs/ is on the host. */
    if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
        return lz_error_sys(err, "bind %s", rootfs);
    /* chdir after the bind, so "." is the top mount; all paths below are
     * relative to it until pivot_root. */
    if (chdir(rootfs) < 0)
        return lz_error_sys(err, "chdir %s", rootfs);
    return 0;
}

int rootfs__setup_child(lz_error *err)
{
    if (mount_pseudo(err) < 0)
        return -1;
    /* pivot_root(".", "."): the old root ends up stacked on "." and is
     * detached at once; from here the host's file system is unreachable. */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        return lz_error_sys(err, "pivot_root");
    if (umount2(".", MNT_DETACH) < 0)
        return lz_error_sys(err, "detach the old root");
    if (chdir("/") < 0)
        return lz_error_sys(err, "chdir /");
    /* Masks after pivot_root: /dev/null and the targets are then the
     * sandbox's own, with no host path involved. */
    return mask_paths(err);
}
