/* The container runtime: struct runtime_ops over namespaces, cgroups,
 * overlayfs and seccomp. Layout per sandbox (all on the host):
 *   DATA/sandboxes/ID/            0700 root
 *     layer/                      tmpfs, size = disk limit: upper/ work/ agent.log
 *     rootfs/                     overlay: template (lower) + layer/upper
 *     agent.sock                  listening socket, held by the agent as fd 3
 * See docs/runtime-container.md. */
#include "container.h"
#include "cgroup.h"
#include "layer_copy.h"
#include "../../common/cleanup.h"
#include "../../common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_SETUP_TIMEOUT_MS 10000
#define DESTROY_WAIT_MS 5000
/* A freeze normally completes in well under a millisecond; a task in an
 * uninterruptible sleep (e.g. on a slow disk) can hold it up. */
#define FREEZE_TIMEOUT_MS 5000

/* Probed once by init(); read-only afterwards. */
static enum cgroup_version cg_version;
static struct sock_fprog seccomp_prog;

static const char *cg_root(const struct runtime_config *cfg)
{
    return cfg->cgroup_root ? cfg->cgroup_root : "/sys/fs/cgroup";
}

static const char *cg_parent(const struct runtime_config *cfg)
{
    return cfg->cgroup_parent ? cfg->cgroup_parent : "lizard";
}

/* Ids become path components and the hostname (at most 64 bytes). */
static int check_id(const char *id, lz_error *err)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 63 || id[0] == '.' || id[0] == '-')
        return lz_error_set(err, EINVAL, "bad sandbox id");
    for (size_t i = 0; i < n; i++)
        if (!(id[i] >= 'a' && id[i] <= 'z') && !(id[i] >= '0' && id[i] <= '9') &&
            !(id[i] >= 'A' && id[i] <= 'Z') && id[i] != '_' && id[i] != '-')
            return lz_error_set(err, EINVAL, "bad sandbox id %s", id);
    return 0;
}

static int sandbox_dir(char *out, size_t n, const struct runtime_config *cfg, const char *id,
                       const char *leaf, lz_error *err)
{
    int r = snprintf(out, n, "%s/sandboxes/%s%s%s", cfg->data_dir, id, leaf ? "/" : "",
                     leaf ? leaf : "");
    if (r < 0 || (size_t)r >= n)
        return lz_error_set(err, ENAMETOOLONG, "sandbox path for %s", id);
    return 0;
}

static int container_init(const struct runtime_config *cfg, lz_error *err)
{
    char path[4096];
    cleanup_free char *mountinfo = NULL;
    if (read_file("/proc/self/mountinfo", 4 << 20, &mountinfo, err) < 0)
        return -1;
    if (cgroup_detect(cg_root(cfg), mountinfo, &cg_version, err) < 0)
        return -1;
    if (cgroup_setup_parent(cg_version, cg_root(cfg), cg_parent(cfg), err) < 0)
        return lz_error_prefix(err, "cgroup parent");
    if (seccomp_prog.filter == NULL && seccomp__build(&seccomp_prog, err) < 0)
        return -1;
    if (access(cfg->agent_path, X_OK) < 0)
        return lz_error_sys(err, "agent %s", cfg->agent_path);
    snprintf(path, sizeof(path), "%s/sandboxes", cfg->data_dir);
    if (mkdir_p(path, 0700, err) < 0)
        return -1;
    return 0;
}

static int listen_agent_socket(const char *path, lz_error *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path))
        return lz_error_set(err, ENAMETOOLONG, "socket path %s", path);
    strcpy(addr.sun_path, path);
    cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return lz_error_sys(err, "socket");
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
        return lz_error_sys(err, "bind %s", path);
    /* The directory is 0700 already; this is belt and braces. */
    if (chmod(path, 0600) < 0)
        return lz_error_sys(err, "chmod %s", path);
    /* Listening before the clone: the daemon may connect at once, and the
     * connection waits in the backlog until the agent accepts. */
    if (listen(fd, 128) < 0)
        return lz_error_sys(err, "listen %s", path);
    return steal_fd(&fd);
}

/* starttime (field 22) and state (field 3) of /proc/PID/stat. */
static int proc_stat(pid_t pid, uint64_t *start, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* comm may contain spaces and parentheses: fields start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p += 2;
    if (state)
        *state = *p;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    *start = strtoull(p, NULL, 10);
    return 0;
}

/* Reads the child's report: EOF without a byte means it exec'd the agent. */
static int wait_child_ready(int errfd, lz_error *err)
{
    char msg[sizeof(err->msg)];
    size_t got = 0;
    for (;;) {
        struct pollfd p = {errfd, POLLIN, 0};
        int r = poll(&p, 1, CHILD_SETUP_TIMEOUT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return lz_error_set(err, ETIMEDOUT, "sandbox setup did not finish");
        ssize_t n = read(errfd, msg + got, sizeof(msg) - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return lz_error_sys(err, "read setup report");
        if (n == 0 || got + (size_t)n == sizeof(msg) - 1) {
            got += (size_t)n;
            break;
        }
        got += (size_t)n;
    }
    if (got == 0)
        return 0;
    msg[got] = '\0';
    return lz_error_set(err, 0, "sandbox setup: %s", msg);
}

static int container_destroy(const struct runtime_config *cfg, const char *id,
                             const struct runtime_handle *h, lz_error *err);

static int create_in(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                     const char *sbdir, struct runtime_handle *out, pid_t *pid, lz_error *err)
{
    char sock_path[4096], log_path[4096];
    if (rootfs__prepare(cfg, spec, sbdir, err) < 0)
        return -1;
    struct cgroup_limits lim = {spec->cpu_count, spec->memory_mb, spec->pids_max};
    if (cgroup_create(cg_version, cg_root(cfg), cg_parent(cfg), spec->id, &lim, err) < 0)
        return -1;
    if (sandbox_dir(sock_path, sizeof(sock_path), cfg, spec->id, "agent.sock", err) < 0 ||
        sandbox_dir(log_path, sizeof(log_path), cfg, spec->id, "layer/agent.log", err) < 0)
        return -1;
    /* The agent's own output goes to the layer: host-readable, and bounded
     * by the sandbox's disk limit even if a process inside floods it. */
    cleanup_close int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    cleanup_close int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    /* Opened before the clone (and so before pivot_root in the child). */
    cleanup_close int agent_fd = open(cfg->agent_path, O_PATH | O_CLOEXEC);
    if (log_fd < 0 || null_fd < 0 || agent_fd < 0)
        return lz_error_sys(err, "open %s",
                            log_fd < 0    ? log_path
                            : null_fd < 0 ? "/dev/null"
                                          : cfg->agent_path);
    cleanup_close int sock_fd = listen_agent_socket(sock_path, err);
    if (sock_fd < 0)
        return -1;
    char rootfs[4096];
    if (sandbox_dir(rootfs, sizeof(rootfs), cfg, spec->id, "rootfs", err) < 0)
        return -1;
    int sync_p[2], err_p[2];
    if (pipe2(sync_p, O_CLOEXEC) < 0)
        return lz_error_sys(err, "pipe");
    if (pipe2(err_p, O_CLOEXEC) < 0) {
        close(sync_p[0]);
        close(sync_p[1]);
        return lz_error_sys(err, "pipe");
    }
    cleanup_close int sync_r = sync_p[0], sync_w = sync_p[1];
    cleanup_close int err_r = err_p[0], err_w = err_p[1];
    struct container_child c = {
        .id = spec->id,
        .rootfs = rootfs,
        .sync_fd = sync_r,
        .err_fd = err_w,
        .agent_fd = agent_fd,
        .sock_fd = sock_fd,
        .null_fd = null_fd,
        .log_fd = log_fd,
        .seccomp = &seccomp_prog,
    };
    /* Our copies of the child's pipe ends are closed right after the
     * clone, so that EOF on err_r means "the child exec'd". */
    pid_t p = ns__clone(&c, err);
    if (p < 0)
        return -1;
    *pid = p;
    close(steal_fd(&sync_r));
    close(steal_fd(&err_w));
    if (proc_stat(p, &out->init_start_time, NULL) < 0)
        return lz_error_sys(err, "read /proc/%d/stat", (int)p);
    out->init_pid = p;
    if (ns__write_id_maps(p, cfg->uid_base, cfg->uid_count, err) < 0)
        return -1;
    /* Before the release: the child unshares its cgroup namespace first
     * thing, and everything it allocates should be charged to the sandbox. */
    if (cgroup_attach(cg_version, cg_root(cfg), cg_parent(cfg), spec->id, p, err) < 0)
        return -1;
    if (spec->nofile > 0) {
        struct rlimit rl = {(rlim_t)spec->nofile, (rlim_t)spec->nofile};
        if (prlimit(p, RLIMIT_NOFILE, &rl, NULL) < 0)
            return lz_error_sys(err, "prlimit NOFILE %d", spec->nofile);
    }
    if (write(sync_w, "x", 1) != 1)
        return lz_error_sys(err, "release the child");
    return wait_child_ready(err_r, err);
}

static int container_create(const struct runtime_config *cfg, const struct sandbox_spec *spec,
                            struct runtime_handle *out, lz_error *err)
{
    char sbdir[4096];
    if (check_id(spec->id, err) < 0 ||
        sandbox_dir(sbdir, sizeof(sbdir), cfg, spec->id, NULL, err) < 0)
        return -1;
    if (mkdir(sbdir, 0700) < 0)
        return lz_error_sys(err, "mkdir %s", sbdir);
    struct runtime_handle h = {0, 0};
    pid_t pid = 0;
    if (create_in(cfg, spec, sbdir, &h, &pid, err) == 0) {
        *out = h;
        return 0;
    }
    /* Undo everything; destroy() copes with whatever exists. The child is
     * ours, so reap it here rather than leave a zombie to the daemon. */
    lz_error e2;
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    container_destroy(cfg, spec->id, NULL, &e2);
    return -1;
}

static int pidfd_open_(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Kill PID 1 (the kernel then kills the whole pid namespace) and wait,
 * boundedly, until it has exited. Works whether or not it is our child. */
static int kill_init(const struct runtime_handle *h, lz_error *err)
{
    cleanup_close int pidfd = pidfd_open_(h->init_pid);
    if (pidfd < 0)
        return errno == ESRCH ? 0 : lz_error_sys(err, "pidfd_open %d", (int)h->init_pid);
    /* Compare start times only now that the pidfd pins the process: a pid
     * reused by an unrelated process must not be killed. */
    uint64_t start;
    if (proc_stat(h->init_pid, &start, NULL) < 0 || start != h->init_start_time)
        return 0;
    if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
        return lz_error_sys(err, "kill %d", (int)h->init_pid);
    struct pollfd p = {pidfd, POLLIN, 0};
    while (poll(&p, 1, DESTROY_WAIT_MS) < 0 && errno == EINTR)
        ;
    /* If it is our child, reap it (the daemon's own reaper may win the
     * race; ECHILD is fine). */
    waitpid(h->init_pid, NULL, WNOHANG);
    return 0;
}

static int container_destroy(const struct runtime_config *cfg, const char *id,
                             const struct runtime_handle *h, lz_error *err)
{
    char sbdir[4096];
    if (check_id(id, err) < 0 || sandbox_dir(sbdir, sizeof(sbdir), cfg, id, NULL, err) < 0)
        return -1;
    /* A frozen task cannot act on SIGKILL (v1 freezer): thaw a paused
     * sandbox first. It runs for the moment until the kill; a missing
     * cgroup (half-created sandbox) is fine. */
    lz_error e2;
    cgroup_freeze(cg_version, cg_root(cfg), cg_parent(cfg), id, 0, FREEZE_TIMEOUT_MS, &e2);
    if (h && h->init_pid > 0 && kill_init(h, err) < 0)
        return -1;
    /* cgroups after the kill: rmdir fails while any process is inside
     * (cgroup_destroy retries while the pid namespace finishes dying). */
    if (cgroup_destroy(cg_version, cg_root(cfg), cg_parent(cfg), id, DESTROY_WAIT_MS, err) < 0)
        return -1;
    /* Lazy unmount is safe now that no process uses the file system. */
    if (rootfs__unmount(sbdir, err) < 0)
        return -1;
    /* rm_rf does not cross mount points: had an unmount not happened, it
     * refuses rather than delete through the overlay. */
    return rm_rf(sbdir, err);
}

static int container_is_alive(const struct runtime_handle *h)
{
    uint64_t start;
    char state;
    if (h->init_pid <= 0 || proc_stat(h->init_pid, &start, &state) < 0)
        return 0;
    /* Z: exited, waiting for the daemon to reap it. */
    return start == h->init_start_time && state != 'Z' && state != 'X';
}

static int container_connect_agent(const struct runtime_config *cfg, const char *id, lz_error *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (check_id(id, err) < 0 ||
        sandbox_dir(addr.sun_path, sizeof(addr.sun_path), cfg, id, "agent.sock", err) < 0)
        return -1;
    cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return lz_error_sys(err, "socket");
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
        return lz_error_sys(err, "connect %s", addr.sun_path);
    return steal_fd(&fd);
}

static int container_connect_port(const struct runtime_config *cfg, const struct runtime_handle *h,
                                  int port, lz_error *err)
{
    (void)cfg;
    cleanup_close int nsfd = port__open_netns(h->init_pid, err);
    if (nsfd < 0)
        return -1;
    /* Checked after opening: the fd pins the namespace of whoever has that
     * pid now, and the start time proves it is still the sandbox's PID 1. */
    if (!container_is_alive(h))
        return lz_error_set(err, ESRCH, "the sandbox's init process is gone");
    return port__connect(nsfd, port, err);
}

static int container_pause(const struct runtime_config *cfg, const char *id, lz_error *err)
{
    if (check_id(id, err) < 0)
        return -1;
    return cgroup_freeze(cg_version, cg_root(cfg), cg_parent(cfg), id, 1, FREEZE_TIMEOUT_MS, err);
}

static int container_resume(const struct runtime_config *cfg, const char *id, lz_error *err)
{
    if (check_id(id, err) < 0)
        return -1;
    return cgroup_freeze(cg_version, cg_root(cfg), cg_parent(cfg), id, 0, FREEZE_TIMEOUT_MS, err);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The final sync, with the sandbox frozen so nothing changes under it. */
static int snapshot_frozen_sync(const struct runtime_config *cfg, const char *id, const char *upper,
                                const char *dest, int frozen, struct layer_manifest *m,
                                struct layer_copy_stats *cs, lz_error *err)
{
    if (!frozen && container_pause(cfg, id, err) < 0)
        return lz_error_prefix(err, "freeze for the snapshot");
    int r = layer_sync(upper, dest, m, cs, err);
    lz_error e2;
    /* Thaw whatever the sync did: a sandbox must never stay frozen
     * because a snapshot failed. */
    if (!frozen && container_resume(cfg, id, r < 0 ? &e2 : err) < 0 && r == 0)
        r = -1;
    return r;
}

static int container_snapshot(const struct runtime_config *cfg, const char *id, const char *dest,
                              int frozen, struct runtime_snapshot_stats *out, lz_error *err)
{
    char upper[4096];
    if (check_id(id, err) < 0 || sandbox_dir(upper, sizeof(upper), cfg, id, "layer/upper", err) < 0)
        return -1;
    struct layer_manifest *m = NULL;
    struct layer_copy_stats cs = {0};
    int64_t t0 = mono_ms();
    /* Pass one while the sandbox runs (or is paused: then it is the only
     * pass that matters, the sync finds nothing). */
    if (layer_copy(upper, dest, &m, &cs, err) < 0)
        return -1;
    int64_t t1 = mono_ms();
    int r = snapshot_frozen_sync(cfg, id, upper, dest, frozen, m, &cs, err);
    int64_t t2 = mono_ms();
    layer_manifest_free(m);
    out->bytes = cs.bytes;
    out->entries = cs.entries;
    out->copy_ms = t1 - t0;
    out->freeze_ms = frozen ? 0 : t2 - t1;
    return r;
}

static int container_stats(const struct runtime_config *cfg, const char *id,
                           struct runtime_stats *out, lz_error *err)
{
    if (check_id(id, err) < 0)
        return -1;
    return cgroup_stats(cg_version, cg_root(cfg), cg_parent(cfg), id, out, err);
}

const struct runtime_ops container_runtime = {
    .name = "container",
    .init = container_init,
    .create = container_create,
    .destroy = container_destroy,
    .is_alive = container_is_alive,
    .connect_agent = container_connect_agent,
    .connect_port = container_connect_port,
    .stats = container_stats,
    .pause = container_pause,
    .resume = container_resume,
    .snapshot = container_snapshot,
};
