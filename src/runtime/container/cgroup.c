/* cgroup v1 and v2 placement and limits for container sandboxes. */
#include "cgroup.h"
#include "../../common/cleanup.h"
#include "../../common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* freezer has no limits to write, but pause/resume needs the directory;
 * cpuacct is where v1 keeps the CPU usage counter. */
const char *const cgroup_v1_controllers[] = {"cpu", "cpuacct", "memory", "pids", "freezer", NULL};
const char *const cgroup_v2_controllers[] = {"cpu", "memory", "pids", NULL};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void mountinfo_unescape(const char *in, size_t len, char *out, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        if (in[i] == '\\' && i + 3 < len && in[i + 1] >= '0' && in[i + 1] <= '3') {
            out[o++] = (char)((in[i + 1] - '0') * 64 + (in[i + 2] - '0') * 8 + (in[i + 3] - '0'));
            i += 3;
        } else {
            out[o++] = in[i];
        }
    }
    out[o] = '\0';
}

/* Split one mountinfo line into its mount point (field 5) and the fstype
 * (the field after the lone "-"). Returns 0 when both were found. */
static int mountinfo_line(const char *line, size_t len, char *mnt, size_t mntsz, char *fstype,
                          size_t fssz)
{
    const char *p = line, *end = line + len;
    int field = 0, after_sep = 0;
    mnt[0] = fstype[0] = '\0';
    while (p < end) {
        while (p < end && *p == ' ')
            p++;
        const char *tok = p;
        while (p < end && *p != ' ')
            p++;
        size_t tlen = (size_t)(p - tok);
        if (tlen == 0)
            break;
        field++;
        if (field == 5)
            mountinfo_unescape(tok, tlen, mnt, mntsz);
        if (after_sep) {
            snprintf(fstype, fssz, "%.*s", (int)tlen, tok);
            return mnt[0] ? 0 : -1;
        }
        if (field > 6 && tlen == 1 && tok[0] == '-')
            after_sep = 1;
    }
    return -1;
}

/* Calls fn for every mount in the text; stops when fn returns non-zero. */
static int mountinfo_each(const char *mountinfo,
                          int (*fn)(const char *mnt, const char *fstype, void *arg), void *arg)
{
    for (const char *line = mountinfo; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char mnt[4096], fstype[64];
        if (mountinfo_line(line, len, mnt, sizeof(mnt), fstype, sizeof(fstype)) == 0) {
            int r = fn(mnt, fstype, arg);
            if (r)
                return r;
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    return 0;
}

struct fstype_query {
    const char *mountpoint;
    char *out;
    size_t n;
    int found;
};

static int fstype_match(const char *mnt, const char *fstype, void *arg)
{
    struct fstype_query *q = arg;
    if (strcmp(mnt, q->mountpoint) == 0) {
        snprintf(q->out, q->n, "%s", fstype);
        q->found = 1;
    }
    return 0;
}

int cgroup_mountinfo_fstype(const char *mountinfo, const char *mountpoint, char *out, size_t n)
{
    struct fstype_query q = {mountpoint, out, n, 0};
    mountinfo_each(mountinfo, fstype_match, &q);
    return q.found ? 0 : -1;
}

struct v1_query {
    const char *prefix;
    size_t len;
};

static int v1_match(const char *mnt, const char *fstype, void *arg)
{
    struct v1_query *q = arg;
    return strcmp(fstype, "cgroup") == 0 && strncmp(mnt, q->prefix, q->len) == 0 &&
           mnt[q->len] == '/';
}

int cgroup_detect(const char *root, const char *mountinfo, enum cgroup_version *out, lz_error *err)
{
    char fstype[64] = "", path[4096];
    if (cgroup_mountinfo_fstype(mountinfo, root, fstype, sizeof(fstype)) == 0 &&
        strcmp(fstype, "cgroup2") == 0) {
        snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
        if (access(path, F_OK) < 0)
            return lz_error_sys(err, "cgroup2 at %s without cgroup.controllers", root);
        *out = CGROUP_V2;
        return 0;
    }
    /* Not cgroup2 at the root: v1 if any v1 hierarchy is mounted below it.
     * A cgroup2 at ROOT/unified (hybrid layout) carries no controllers we
     * could use while they are bound to v1, so it does not count. */
    struct v1_query q = {root, strlen(root)};
    if (mountinfo_each(mountinfo, v1_match, &q)) {
        *out = CGROUP_V1;
        return 0;
    }
    return lz_error_set(err, ENOENT, "no cgroup v1 or v2 hierarchy mounted at %s", root);
}

int cgroup_path(char *out, size_t n, enum cgroup_version v, const char *root,
                const char *controller, const char *parent, const char *id)
{
    int r;
    if (v == CGROUP_V1)
        r = snprintf(out, n, "%s/%s/%s%s%s", root, controller, parent, id ? "/" : "", id ? id : "");
    else
        r = snprintf(out, n, "%s/%s%s%s", root, parent, id ? "/" : "", id ? id : "");
    if (r < 0 || (size_t)r >= n)
        return -1;
    return 0;
}

static void setting(struct cgroup_setting *s, const char *controller, const char *file,
                    int optional, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void setting(struct cgroup_setting *s, const char *controller, const char *file,
                    int optional, const char *fmt, ...)
{
    va_list ap;
    s->controller = controller;
    s->file = file;
    s->optional = optional;
    va_start(ap, fmt);
    vsnprintf(s->value, sizeof(s->value), fmt, ap);
    va_end(ap);
}

int cgroup_settings(enum cgroup_version v, const struct cgroup_limits *l,
                    struct cgroup_setting *out)
{
    long long quota = l->cpu_count > 0 ? (long long)l->cpu_count * CGROUP_CPU_PERIOD_US : -1;
    long long mem = l->memory_mb > 0 ? (long long)l->memory_mb * 1024 * 1024 : -1;
    int n = 0;
    if (v == CGROUP_V1) {
        /* The period first: the quota is interpreted relative to it. */
        setting(&out[n++], "cpu", "cpu.cfs_period_us", 0, "%d", CGROUP_CPU_PERIOD_US);
        setting(&out[n++], "cpu", "cpu.cfs_quota_us", 0, "%lld", quota);
        /* memory before memory+swap: the kernel refuses memsw < memory. */
        setting(&out[n++], "memory", "memory.limit_in_bytes", 0, "%lld", mem);
        setting(&out[n++], "memory", "memory.memsw.limit_in_bytes", 1, "%lld", mem);
        if (l->pids_max > 0)
            setting(&out[n++], "pids", "pids.max", 0, "%d", l->pids_max);
        else
            setting(&out[n++], "pids", "pids.max", 0, "max");
        return n;
    }
    if (quota > 0)
        setting(&out[n++], NULL, "cpu.max", 0, "%lld %d", quota, CGROUP_CPU_PERIOD_US);
    else
        setting(&out[n++], NULL, "cpu.max", 0, "max %d", CGROUP_CPU_PERIOD_US);
    if (mem > 0)
        setting(&out[n++], NULL, "memory.max", 0, "%lld", mem);
    else
        setting(&out[n++], NULL, "memory.max", 0, "max");
    /* No swap: the memory limit is the whole budget, as on v1 with memsw. */
    setting(&out[n++], NULL, "memory.swap.max", 1, "0");
    if (l->pids_max > 0)
        setting(&out[n++], NULL, "pids.max", 0, "%d", l->pids_max);
    else
        setting(&out[n++], NULL, "pids.max", 0, "max");
    return n;
}

static int word_in(const char *text, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = text; (p = strstr(p, word)) != NULL; p += wl) {
        int start = p == text || p[-1] == ' ' || p[-1] == '\n';
        int end = p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n';
        if (start && end)
            return 1;
    }
    return 0;
}

int cgroup_v2_subtree_line(const char *available, char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; cgroup_v2_controllers[i]; i++) {
        if (!word_in(available, cgroup_v2_controllers[i]))
            continue;
        int r = snprintf(out + o, n - o, "%s+%s", o ? " " : "", cgroup_v2_controllers[i]);
        if (r < 0 || (size_t)r >= n - o)
            return -1;
        o += (size_t)r;
    }
    return 0;
}

/* cgroupfs wants each value in a single write(2). */
static int cg_write(const char *dir, const char *file, const char *value, int optional,
                    lz_error *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        if (optional && errno == ENOENT)
            return 0;
        return lz_error_sys(err, "open %s", path);
    }
    if (write(fd, value, strlen(value)) < 0)
        return lz_error_sys(err, "write '%s' to %s", value, path);
    return 0;
}

static int v2_enable(const char *dir, lz_error *err)
{
    char path[4096], line[128];
    cleanup_free char *avail = NULL;
    snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
    if (read_file(path, 4096, &avail, err) < 0)
        return -1;
    if (cgroup_v2_subtree_line(avail, line, sizeof(line)) < 0)
        return lz_error_set(err, EINVAL, "controller list too long");
    if (line[0] == '\0')
        return 0;
    return cg_write(dir, "cgroup.subtree_control", line, 0, err);
}

int cgroup_setup_parent(enum cgroup_version v, const char *root, const char *parent, lz_error *err)
{
    char path[4096];
    if (v == CGROUP_V1) {
        for (int i = 0; cgroup_v1_controllers[i]; i++) {
            cgroup_path(path, sizeof(path), v, root, cgroup_v1_controllers[i], parent, NULL);
            if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return lz_error_sys(err, "mkdir %s", path);
        }
        return 0;
    }
    /* Controllers reach a cgroup only when every ancestor enables them in
     * cgroup.subtree_control: first the root's, then PARENT's (which exists
     * only after the root enabled them, so the order matters). */
    if (v2_enable(root, err) < 0)
        return -1;
    cgroup_path(path, sizeof(path), v, root, NULL, parent, NULL);
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return lz_error_sys(err, "mkdir %s", path);
    return v2_enable(path, err);
}

int cgroup_create(enum cgroup_version v, const char *root, const char *parent, const char *id,
                  const struct cgroup_limits *l, lz_error *err)
{
    char path[4096];
    if (v == CGROUP_V1) {
        for (int i = 0; cgroup_v1_controllers[i]; i++) {
            cgroup_path(path, sizeof(path), v, root, cgroup_v1_controllers[i], parent, id);
            /* EEXIST: co-mounted controllers (cpu,cpuacct) share a dir. */
            if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return lz_error_sys(err, "mkdir %s", path);
        }
    } else {
        cgroup_path(path, sizeof(path), v, root, NULL, parent, id);
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
            return lz_error_sys(err, "mkdir %s", path);
    }
    struct cgroup_setting s[CGROUP_MAX_SETTINGS];
    int n = cgroup_settings(v, l, s);
    for (int i = 0; i < n; i++) {
        cgroup_path(path, sizeof(path), v, root, s[i].controller, parent, id);
        if (cg_write(path, s[i].file, s[i].value, s[i].optional, err) < 0)
            return -1;
    }
    return 0;
}

int cgroup_attach(enum cgroup_version v, const char *root, const char *parent, const char *id,
                  pid_t pid, lz_error *err)
{
    char path[4096], value[32];
    snprintf(value, sizeof(value), "%d", (int)pid);
    if (v == CGROUP_V2) {
        cgroup_path(path, sizeof(path), v, root, NULL, parent, id);
        return cg_write(path, "cgroup.procs", value, 0, err);
    }
    for (int i = 0; cgroup_v1_controllers[i]; i++) {
        cgroup_path(path, sizeof(path), v, root, cgroup_v1_controllers[i], parent, id);
        if (cg_write(path, "cgroup.procs", value, 0, err) < 0)
            return -1;
    }
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Processes killed a moment ago may still be exiting and keep the cgroup
 * populated; rmdir answers EBUSY until the last one is gone. */
static int rmdir_retry(const char *path, int64_t deadline, lz_error *err)
{
    for (;;) {
        if (rmdir(path) == 0 || errno == ENOENT)
            return 0;
        if (errno != EBUSY || now_ms() >= deadline)
            return lz_error_sys(err, "rmdir %s", path);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

int cgroup_destroy(enum cgroup_version v, const char *root, const char *parent, const char *id,
                   int timeout_ms, lz_error *err)
{
    char path[4096];
    int64_t deadline = now_ms() + timeout_ms;
    if (v == CGROUP_V2) {
        cgroup_path(path, sizeof(path), v, root, NULL, parent, id);
        return rmdir_retry(path, deadline, err);
    }
    int ret = 0;
    for (int i = 0; cgroup_v1_controllers[i]; i++) {
        cgroup_path(path, sizeof(path), v, root, cgroup_v1_controllers[i], parent, id);
        /* Keep going after a failure so one stuck hierarchy does not leak
         * the others; the first error is reported. */
        lz_error e2;
        if (rmdir_retry(path, deadline, ret ? &e2 : err) < 0)
            ret = -1;
    }
    return ret;
}

const char *cgroup_freeze_file(enum cgroup_version v)
{
    return v == CGROUP_V1 ? "freezer.state" : "cgroup.freeze";
}

const char *cgroup_freeze_value(enum cgroup_version v, int frozen)
{
    if (v == CGROUP_V1)
        return frozen ? "FROZEN" : "THAWED";
    return frozen ? "1" : "0";
}

const char *cgroup_freeze_state_file(enum cgroup_version v)
{
    return v == CGROUP_V1 ? "freezer.state" : "cgroup.events";
}

int cgroup_freeze_state(enum cgroup_version v, const char *text)
{
    if (v == CGROUP_V1) {
        /* FREEZING: some tasks are not stopped yet; not frozen. */
        if (strncmp(text, "FROZEN", 6) == 0)
            return 1;
        if (strncmp(text, "THAWED", 6) == 0 || strncmp(text, "FREEZING", 8) == 0)
            return 0;
        return -1;
    }
    for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, "frozen ", 7) == 0 && (p[7] == '0' || p[7] == '1'))
            return p[7] == '1';
    return -1;
}

static int freeze_reached(const char *dir, enum cgroup_version v, int frozen, lz_error *err)
{
    char path[4096 + 32];
    cleanup_free char *text = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, cgroup_freeze_state_file(v));
    if (read_file(path, 4096, &text, err) < 0)
        return -1;
    int st = cgroup_freeze_state(v, text);
    if (st < 0)
        return lz_error_set(err, EINVAL, "%s: unexpected content", path);
    return st == frozen;
}

int cgroup_freeze(enum cgroup_version v, const char *root, const char *parent, const char *id,
                  int frozen, int timeout_ms, lz_error *err)
{
    char dir[4096];
    if (cgroup_path(dir, sizeof(dir), v, root, "freezer", parent, id) < 0)
        return lz_error_set(err, ENAMETOOLONG, "cgroup path for %s", id);
    if (cg_write(dir, cgroup_freeze_file(v), cgroup_freeze_value(v, frozen), 0, err) < 0)
        return -1;
    /* The write only starts the freeze: tasks stop at their next return to
     * user space (or in an uninterruptible sleep, later). The state file
     * says when all of them did. */
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int r = freeze_reached(dir, v, frozen, err);
        if (r < 0)
            return -1;
        if (r == 1)
            return 0;
        if (now_ms() >= deadline)
            break;
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    if (frozen) {
        lz_error e2;
        cg_write(dir, cgroup_freeze_file(v), cgroup_freeze_value(v, 0), 0, &e2);
    }
    return lz_error_set(err, ETIMEDOUT, "the sandbox's processes did not %s within %d ms",
                        frozen ? "freeze" : "thaw", timeout_ms);
}

static int read_u64(const char *dir, const char *file, const char *key, uint64_t *out,
                    lz_error *err)
{
    char path[4096];
    cleanup_free char *text = NULL;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (read_file(path, 64 * 1024, &text, err) < 0)
        return -1;
    const char *p = text;
    if (key) {
        /* "key value" lines (cpu.stat). */
        size_t kl = strlen(key);
        for (p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
            if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
                break;
        if (!p)
            return lz_error_set(err, ENOENT, "%s: no %s", path, key);
        p += kl + 1;
    }
    char *end;
    errno = 0;
    unsigned long long val = strtoull(p, &end, 10);
    if (end == p || errno)
        return lz_error_set(err, EINVAL, "%s: not a number", path);
    *out = val;
    return 0;
}

int cgroup_stats(enum cgroup_version v, const char *root, const char *parent, const char *id,
                 struct runtime_stats *out, lz_error *err)
{
    char path[4096];
    uint64_t mem = 0, cpu = 0, pids = 0;
    if (v == CGROUP_V2) {
        cgroup_path(path, sizeof(path), v, root, NULL, parent, id);
        if (read_u64(path, "memory.current", NULL, &mem, err) < 0 ||
            read_u64(path, "cpu.stat", "usage_usec", &cpu, err) < 0 ||
            read_u64(path, "pids.current", NULL, &pids, err) < 0)
            return -1;
    } else {
        cgroup_path(path, sizeof(path), v, root, "memory", parent, id);
        if (read_u64(path, "memory.usage_in_bytes", NULL, &mem, err) < 0)
            return -1;
        cgroup_path(path, sizeof(path), v, root, "cpuacct", parent, id);
        if (read_u64(path, "cpuacct.usage", NULL, &cpu, err) < 0)
            return -1;
        cpu /= 1000; /* ns -> us */
        cgroup_path(path, sizeof(path), v, root, "pids", parent, id);
        if (read_u64(path, "pids.current", NULL, &pids, err) < 0)
            return -1;
    }
    out->memory_bytes = mem;
    out->cpu_usec = cpu;
    out->pids = (uint32_t)pids;
    return 0;
}
