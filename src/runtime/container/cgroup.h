/* cgroups for container sandboxes, v1 (one hierarchy per controller) and v2
 * (one unified tree). Each sandbox gets PARENT/ID in every hierarchy we use.
 *
 * Path building, value formatting and version detection are pure functions
 * of their arguments (no global state) so tests/unit/test_cgroup.c can run
 * them against a fake cgroupfs tree in a temporary directory. */
#ifndef LZ_CONTAINER_CGROUP_H
#define LZ_CONTAINER_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../../common/error.h"
#include "../runtime.h"

enum cgroup_version { CGROUP_V1 = 1, CGROUP_V2 = 2 };

/* v1 hierarchies a sandbox is placed in, NULL-terminated. */
extern const char *const cgroup_v1_controllers[];
/* v2 controllers enabled in cgroup.subtree_control, NULL-terminated. */
extern const char *const cgroup_v2_controllers[];

#define CGROUP_CPU_PERIOD_US 100000

struct cgroup_limits {
    int cpu_count;
    int memory_mb;
    int pids_max;
};

/* One file to write in a sandbox's cgroup. `controller` is the v1 hierarchy
 * (NULL for v2). Optional files are skipped when the kernel lacks them
 * (memory.memsw.* without swap accounting, memory.swap.max without swap). */
struct cgroup_setting {
    const char *controller;
    const char *file;
    char value[32];
    int optional;
};

#define CGROUP_MAX_SETTINGS 8

/* The fstype of the mount whose mount point is exactly `mountpoint` in the
 * text of a /proc/self/mountinfo, into out. The last such mount wins (it is
 * the visible one). Returns 0, or -1 when nothing is mounted there. */
int cgroup_mountinfo_fstype(const char *mountinfo, const char *mountpoint, char *out, size_t n);

/* v2 when `root` is a cgroup2 mount with cgroup.controllers; v1 when it is
 * not (a tmpfs of v1 hierarchies, possibly with an empty cgroup2 at
 * root/unified: the "hybrid" layout, which is v1 for our purposes). */
int cgroup_detect(const char *root, const char *mountinfo, enum cgroup_version *out, lz_error *err);

/* ROOT/CONTROLLER/PARENT[/ID] (v1) or ROOT/PARENT[/ID] (v2); id may be NULL
 * for the parent itself, controller is ignored for v2. */
int cgroup_path(char *out, size_t n, enum cgroup_version v, const char *root,
                const char *controller, const char *parent, const char *id);

/* The files and values that put `l` into effect, in the order they must be
 * written. Returns how many were filled in (<= CGROUP_MAX_SETTINGS). */
int cgroup_settings(enum cgroup_version v, const struct cgroup_limits *l,
                    struct cgroup_setting *out);

/* The "+cpu +memory +pids" line for cgroup.subtree_control: the wanted
 * controllers that appear in `available` (the text of cgroup.controllers). */
int cgroup_v2_subtree_line(const char *available, char *out, size_t n);

/* Create PARENT (and, v2, enable our controllers below ROOT and PARENT).
 * Done once at start-up. */
int cgroup_setup_parent(enum cgroup_version v, const char *root, const char *parent, lz_error *err);
/* mkdir PARENT/ID everywhere and write the limits. */
int cgroup_create(enum cgroup_version v, const char *root, const char *parent, const char *id,
                  const struct cgroup_limits *l, lz_error *err);
/* Move pid into PARENT/ID everywhere. */
int cgroup_attach(enum cgroup_version v, const char *root, const char *parent, const char *id,
                  pid_t pid, lz_error *err);
/* rmdir PARENT/ID everywhere, retrying while the dying processes still
 * populate it (EBUSY), for at most timeout_ms. Missing dirs are fine. */
int cgroup_destroy(enum cgroup_version v, const char *root, const char *parent, const char *id,
                   int timeout_ms, lz_error *err);
/* The freezer (pause/resume). v1: freezer/PARENT/ID/freezer.state is written
 * FROZEN or THAWED and reads FREEZING until every task stopped; v2:
 * PARENT/ID/cgroup.freeze is written 1 or 0 and the "frozen" line of
 * cgroup.events says when it took effect. */
const char *cgroup_freeze_file(enum cgroup_version v);
const char *cgroup_freeze_value(enum cgroup_version v, int frozen);
/* The file whose text cgroup_freeze_state parses: freezer.state or cgroup.events. */
const char *cgroup_freeze_state_file(enum cgroup_version v);
/* 1 frozen, 0 not (or not yet: FREEZING), -1 text not understood. */
int cgroup_freeze_state(enum cgroup_version v, const char *text);
/* Freeze (frozen = 1) or thaw PARENT/ID and wait, at most timeout_ms, until
 * the kernel reports that state. A freeze that does not complete in time is
 * undone (thawed) and fails with ETIMEDOUT, so a failed pause leaves the
 * sandbox running. Idempotent. */
int cgroup_freeze(enum cgroup_version v, const char *root, const char *parent, const char *id,
                  int frozen, int timeout_ms, lz_error *err);
/* Memory in use, CPU time used and task count of PARENT/ID. */
int cgroup_stats(enum cgroup_version v, const char *root, const char *parent, const char *id,
                 struct runtime_stats *out, lz_error *err);

#endif
