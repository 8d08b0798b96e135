/* The sandbox's PID 1: cloned into new namespaces, set up in the order
 * below, then replaced by the agent. The child reports any failure as text
 * on a CLOEXEC pipe (closed unread by a successful exec), so create() fails
 * with the reason instead of leaving a dead sandbox. */
#include "container.h"
#include "../../common/cleanup.h"
#include "../../common/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AGENT_FD 3

static void __attribute__((noreturn)) child_fail(const struct container_child *c, lz_error *err)
{
    (void)write_all(c->err_fd, err->msg, strlen(err->msg));
    _exit(127);
}

static int bring_up_lo(lz_error *err)
{
    cleanup_close int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return lz_error_sys(err, "socket");
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        return lz_error_sys(err, "SIOCGIFFLAGS lo");
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        return lz_error_sys(err, "SIOCSIFFLAGS lo");
    return 0;
}

/* fds 0..3 for the agent. Every source is first copied above the target
 * range so that no dup2 below can overwrite a source not yet copied. */
static int setup_fds(struct container_child *c, lz_error *err)
{
    int null = fcntl(c->null_fd, F_DUPFD_CLOEXEC, 10);
    int log = fcntl(c->log_fd, F_DUPFD_CLOEXEC, 10);
    int sock = fcntl(c->sock_fd, F_DUPFD_CLOEXEC, 10);
    int errfd = fcntl(c->err_fd, F_DUPFD_CLOEXEC, 10);
    int agent = fcntl(c->agent_fd, F_DUPFD_CLOEXEC, 10);
    if (null < 0 || log < 0 || sock < 0 || errfd < 0 || agent < 0)
        return lz_error_sys(err, "dup");
    c->err_fd = errfd;
    c->agent_fd = agent;
    if (dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0 || dup2(sock, AGENT_FD) < 0)
        return lz_error_sys(err, "dup2");
    /* Everything else the daemon had open closes at exec; the error pipe
     * and the agent's O_PATH fd must stay open until that very moment. */
    if (syscall(SYS_close_range, AGENT_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        return lz_error_sys(err, "close_range");
    return 0;
}

static void __attribute__((noreturn)) child_main(struct container_child *c)
{
    lz_error err = {0};
    char go;
    /* Wait for the parent: until it has written uid_map/gid_map we are
     * nobody (no file we create would have an owner, no capability would
     * apply to our mounts), and until it has attached us to the sandbox's
     * cgroups the cgroup namespace below would be rooted in the wrong one.
     * EOF means the parent gave up: just go. */
    if (read(c->sync_fd, &go, 1) != 1)
        _exit(1);
    close(c->sync_fd);
    /* Before the switch of credentials below: the sandbox directory is
     * 0700 host root, which we are only until then. */
    if (rootfs__enter(c->rootfs, &err) < 0)
        child_fail(c, &err);
    /* Our credentials are still the host's root (kuid 0, unmapped here):
     * become the namespace's root, i.e. uid_base, now that the maps exist.
     * Supplementary groups first (the daemon's are unmapped), gid before
     * uid (setgid needs the privilege setuid would leave behind).
     * Raw system calls, not glibc's wrappers: we were cloned from a
     * multi-threaded daemon with a raw clone, so glibc still believes the
     * daemon's other threads exist and its set*id wrappers would try to
     * broadcast to them under a lock that another thread may have held at
     * the clone -- the child then hangs forever (seen under concurrent
     * creates). */
    if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, 0, 0, 0) < 0 ||
        syscall(SYS_setresuid, 0, 0, 0) < 0) {
        lz_error_sys(&err, "become root of the user namespace");
        child_fail(c, &err);
    }
    /* After the cgroup attach (see above), so /proc/self/cgroup shows "/". */
    if (unshare(CLONE_NEWCGROUP) < 0) {
        lz_error_sys(&err, "unshare(CLONE_NEWCGROUP)");
        child_fail(c, &err);
    }
    /* Mounts need CAP_SYS_ADMIN, so they come before the capability drop. */
    if (rootfs__setup_child(&err) < 0)
        child_fail(c, &err);
    if (sethostname(c->id, strlen(c->id)) < 0) {
        lz_error_sys(&err, "sethostname");
        child_fail(c, &err);
    }
    /* The loopback device of a new network namespace starts down. */
    if (bring_up_lo(&err) < 0)
        child_fail(c, &err);
    /* RLIMIT_NOFILE was set by the parent with prlimit(2): raising the hard
     * limit needs CAP_SYS_RESOURCE in the initial user namespace. */
    if (setup_fds(c, &err) < 0)
        child_fail(c, &err);
    /* Capabilities after every privileged step above, before the filter
     * (capset is allowed either way, but this keeps the filter last). */
    if (caps__drop(&err) < 0)
        child_fail(c, &err);
    /* The filter last: it must not get in the way of our own setup, and
     * must be in place for the first instruction of the agent. */
    if (seccomp__load(c->seccomp, &err) < 0)
        child_fail(c, &err);
    char *const argv[] = {"lizard-agent", "--init", NULL};
    char env_id[128];
    snprintf(env_id, sizeof(env_id), "LIZARD_SANDBOX_ID=%s", c->id);
    char *const envp[] = {env_id, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    /* The agent is exec'd from the fd opened on the host, so it need not
     * exist inside the rootfs (and the sandbox cannot replace it). */
    syscall(SYS_execveat, c->agent_fd, "", argv, envp, AT_EMPTY_PATH);
    lz_error_sys(&err, "execveat agent");
    child_fail(c, &err);
}

pid_t ns__clone(struct container_child *c, lz_error *err)
{
    /* No CLONE_NEWCGROUP here: the child unshares it once it is in its
     * cgroups (see child_main). No PDEATHSIG: sandboxes outlive lizardd.
     * No stack argument: fork-like, the child runs on a copy of ours. */
    long pid = syscall(SYS_clone,
                       CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC |
                           CLONE_NEWNET | SIGCHLD,
                       NULL, NULL, NULL, NULL);
    if (pid < 0)
        return lz_error_sys(err, "clone");
    if (pid == 0)
        child_main(c);
    return (pid_t)pid;
}

static int write_proc(pid_t pid, const char *file, const char *value, lz_error *err)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
    cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return lz_error_sys(err, "open %s", path);
    /* One write: the kernel accepts a map only once, in a single write. */
    if (write(fd, value, strlen(value)) < 0)
        return lz_error_sys(err, "write %s", path);
    return 0;
}

int ns__write_id_maps(pid_t pid, uid_t base, uint32_t count, lz_error *err)
{
    char map[64];
    snprintf(map, sizeof(map), "0 %u %u\n", (unsigned)base, (unsigned)count);
    /* setgroups stays "allow": we write gid_map as real root (CAP_SETGID in
     * the parent namespace), and the agent needs setgroups(2) to run
     * commands as `user`. */
    if (write_proc(pid, "uid_map", map, err) < 0 || write_proc(pid, "gid_map", map, err) < 0)
        return -1;
    return 0;
}
