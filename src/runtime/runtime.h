/* The runtime interface: how lizardd makes, finds and destroys the isolated
 * environment of a sandbox. One vtable per runtime (container now, microvm
 * later); nothing else in the daemon knows which one a sandbox uses.
 *
 * Everything a runtime needs to find a sandbox again after a daemon restart
 * is in struct runtime_handle, which the daemon stores in SQLite before it
 * acknowledges the create. */
#ifndef LZ_RUNTIME_H
#define LZ_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../common/error.h"

struct runtime_config {
    const char *data_dir;      /* e.g. /var/lib/lizard; sandboxes live in DATA/sandboxes/ID */
    const char *template_dir;  /* machine-wide template cache, TEMPLATES/NAME/rootfs */
    const char *agent_path;    /* host path of the static lizard-agent binary */
    uid_t uid_base;            /* host uid/gid that is root in every sandbox */
    uint32_t uid_count;        /* size of the mapped range (65536) */
    const char *cgroup_root;   /* "/sys/fs/cgroup" (tests point it at a fake tree) */
    const char *cgroup_parent; /* "lizard": sandboxes go in PARENT/ID */
};

/* A persistent volume attached to a sandbox: an ext4 image file (made by
 * the daemon) that the runtime makes appear at mount_path inside. */
struct volume_mount {
    const char *image_path; /* host path of the image, DATA/volumes/ID.img */
    const char *mount_path; /* absolute path inside; checked by volume_mount_path_check */
};

#define VOLUMES_MAX 8 /* per sandbox */

/* 0 if `path` may be a volume's mount path inside a sandbox: absolute, no
 * "." or ".." components, not "/", not in /proc, /dev or /sys, at most 255
 * bytes. Else -1 and a reason in msg. (volume_path.c) */
int volume_mount_path_check(const char *path, char *msg, size_t msglen);
/* 1 if two checked mount paths are equal or one is inside the other. */
int volume_mount_paths_overlap(const char *a, const char *b);

struct sandbox_spec {
    const char *id;            /* sandbox id; also its hostname */
    const char *template_name; /* directory name under template_dir */
    int cpu_count;             /* cpu.cfs_quota_us = cpu_count * period (v1), cpu.max (v2) */
    int memory_mb;             /* hard memory limit; OOM kills happen inside only */
    int pids_max;              /* process/thread limit */
    uint64_t disk_bytes;       /* size of the writable layer */
    int nofile;                /* RLIMIT_NOFILE inside */
    /* Extra read-only layers between the writable layer and the template
     * (snapshots): host directories joined with ':', topmost first, as
     * overlayfs' lowerdir takes them. NULL or "" = none. */
    const char *extra_lower;
    const struct volume_mount *volumes; /* attached volumes, nvolumes <= VOLUMES_MAX */
    int nvolumes;
};

struct runtime_handle {
    pid_t init_pid;           /* host pid of the sandbox's PID 1 (the agent) */
    uint64_t init_start_time; /* /proc/PID/stat starttime, guards against pid reuse */
};

struct runtime_stats {
    uint64_t memory_bytes;
    uint64_t cpu_usec;
    uint32_t pids;
};

struct runtime_snapshot_stats {
    uint64_t bytes;    /* file bytes copied, both passes */
    uint64_t entries;  /* entries copied, both passes */
    int64_t copy_ms;   /* first pass, sandbox running */
    int64_t freeze_ms; /* sandbox frozen: final sync (0 if it was paused) */
};

struct runtime_ops {
    const char *name; /* "container" | "microvm" — what getInfo().runtime says */
    /* Probe the host once at start-up (cgroup version, overlay, userns). */
    int (*init)(const struct runtime_config *cfg, lz_error *err);
    /* Build the environment and start the agent as PID 1. On success the
     * agent socket accepts connections (possibly before the agent runs). */
    int (*create)(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                  struct runtime_handle *out, lz_error *err);
    /* Kill everything and free every host resource: processes, mounts,
     * cgroups, files. Idempotent: safe on a half-created or gone sandbox. */
    int (*destroy)(const struct runtime_config *cfg, const char *id, const struct runtime_handle *h,
                   lz_error *err);
    /* 1 if the sandbox's PID 1 still runs (and is the same process), else 0. */
    int (*is_alive)(const struct runtime_handle *h);
    /* A connected stream to the agent (blocking fd, CLOEXEC), or -1. */
    int (*connect_agent)(const struct runtime_config *cfg, const char *id, lz_error *err);
    int (*stats)(const struct runtime_config *cfg, const char *id, struct runtime_stats *out,
                 lz_error *err);
    /* A TCP connection to 127.0.0.1:port inside the sandbox's network
     * (non-blocking, CLOEXEC); nothing is published on the host. -1 with
     * err->errnum ECONNREFUSED when nothing listens there. */
    int (*connect_port)(const struct runtime_config *cfg, const struct runtime_handle *h, int port,
                        lz_error *err);
    /* Stop (freeze) every process of the sandbox and wait until they are
     * all stopped; memory and processes stay. A pause that cannot complete
     * is undone and fails. resume() thaws. Both are idempotent. */
    int (*pause)(const struct runtime_config *cfg, const char *id, lz_error *err);
    int (*resume)(const struct runtime_config *cfg, const char *id, lz_error *err);
    /* Copy the sandbox's writable layer (files only) into the new
     * directory `dest`, usable later as a spec.extra_lower layer. The copy
     * runs while the sandbox runs; the sandbox is frozen only for a final
     * sync of what changed meanwhile (not at all when `frozen` says it is
     * paused already). */
    int (*snapshot)(const struct runtime_config *cfg, const char *id, const char *dest, int frozen,
                    struct runtime_snapshot_stats *out, lz_error *err);
    /* Later issues: restore of memory (microvm). */
};

extern const struct runtime_ops container_runtime;

#endif
