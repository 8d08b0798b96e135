/* Internals of the container runtime, shared by its files (not by the rest
 * of the daemon, which only sees struct runtime_ops in runtime.h). */
#ifndef LZ_CONTAINER_H
#define LZ_CONTAINER_H

#include <linux/filter.h>
#include <sys/types.h>
#include "../../common/error.h"
#include "../runtime.h"

/* Everything the cloned child needs. It is filled in by the parent before
 * clone(); the child gets its own copy of this memory (no CLONE_VM). */
struct container_child {
    const char *id;
    const char *rootfs; /* host path of the overlay: DATA/sandboxes/ID/rootfs */
    int sync_fd;        /* read end; one byte from the parent means "maps and cgroups done" */
    int err_fd;         /* write end, CLOEXEC: a message here means setup failed */
    int agent_fd;       /* O_PATH of the agent binary, executed with execveat */
    int sock_fd;        /* listening agent socket, becomes fd 3 */
    int null_fd;        /* /dev/null, becomes fd 0 */
    int log_fd;         /* DATA/sandboxes/ID/layer/agent.log, becomes fds 1 and 2 */
    const struct sock_fprog *seccomp;
};

/* port.c: an fd of /proc/PID/ns/net, and a TCP connection to
 * 127.0.0.1:port made inside that network namespace (non-blocking). */
int port__open_netns(pid_t pid, lz_error *err);
int port__connect(int netns_fd, int port, lz_error *err);
/* ns.c: clone the child into new namespaces; it runs container_child_main
 * and never returns. Returns the child's host pid, or -1. */
pid_t ns__clone(struct container_child *c, lz_error *err);
/* ns.c: uid_map and gid_map for the child. */
int ns__write_id_maps(pid_t pid, uid_t base, uint32_t count, lz_error *err);

/* rootfs.c, host side: layer tmpfs, overlay, /etc/hostname and /etc/hosts. */
int rootfs__prepare(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                    const char *sbdir, lz_error *err);
/* rootfs.c, host side: unmount rootfs and layer (both lazily). Idempotent. */
int rootfs__unmount(const char *sbdir, lz_error *err);
/* volume.c, host side, after the overlay is mounted: loop-mount each
 * volume of spec at its mount path inside rootfs. Undone by rootfs__unmount. */
int volume__mount_all(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                      const char *rootfs, lz_error *err);
/* rootfs.c, child side, still with host-root credentials: make mounts
 * private, bind the overlay onto itself and chdir into it. */
int rootfs__enter(const char *rootfs, lz_error *err);
/* rootfs.c, child side, as the namespace's root, cwd in the rootfs: /proc,
 * /dev, /sys, pivot_root, masks. */
int rootfs__setup_child(lz_error *err);

/* caps.c, child side: bounding set to the Docker default, no ambient or
 * inheritable capabilities. */
int caps__drop(lz_error *err);

/* seccomp.c: build the filter once (at init) as BPF, so the child only has
 * to hand it to the kernel: no libseccomp (and no malloc) after clone. */
int seccomp__build(struct sock_fprog *out, lz_error *err);
/* seccomp.c, child side: no_new_privs + the filter. */
int seccomp__load(const struct sock_fprog *prog, lz_error *err);

#endif
