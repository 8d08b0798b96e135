/* The sandbox's seccomp filter: allow by default, deny with EPERM what
 * container runtimes deny by default (Docker's profile, minus what the
 * namespaces and the capability bounding set already confine). */
#include "container.h"
#include "../../common/cleanup.h"
#include "../../common/fsutil.h"

#include <errno.h>
#include <stdint.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/seccomp.h>
#include <unistd.h>

static const char *const denied[] = {
    /* kernel code and the running kernel */
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "syslog",
    "bpf",
    "perf_event_open",
    "lookup_dcookie",
    "iopl",
    "ioperm",
    "vm86",
    "vm86old",
    "uselib",
    "_sysctl",
    "get_kernel_syms",
    "query_module",
    "nfsservctl",
    /* the kernel keyring is not namespaced */
    "keyctl",
    "add_key",
    "request_key",
    /* file handles bypass the mount namespace (the "shocker" escape) */
    "open_by_handle_at",
    "name_to_handle_at",
    /* host-wide settings */
    "swapon",
    "swapoff",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "quotactl",
    "quotactl_fd",
    "fanotify_init",
    /* userfaultfd stalls the kernel at attacker-chosen points (exploit aid) */
    "userfaultfd",
    /* inspecting other processes' memory/kernel objects */
    "kcmp",
    "process_vm_readv",
    "process_vm_writev",
    NULL,
};

static int deny(scmp_filter_ctx ctx, const char *name, lz_error *err)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not a syscall on this architecture */
    int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    if (r < 0)
        return lz_error_set(err, -r, "seccomp: deny %s", name);
    return 0;
}

/* personality: allow only the default (0), PER_LINUX32 (8), UNAME26
 * (0x20000), both (0x20008) and the query 0xffffffff, like Docker; the other
 * flags (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, ...) weaken exploit
 * mitigations. libseccomp allows one comparison per argument in a rule, so
 * "not one of these" is spelt with masked compares against bit 30, which no
 * personality uses and the query has set:
 *   bit 30 set and any other bit clear   -> not the query     -> deny
 *   bit 30 clear and a bit beyond 3/17 set -> not an allowed value -> deny */
static int personality_rules(scmp_filter_ctx ctx)
{
    const uint32_t b30 = 1u << 30;
    for (int b = 0; b < 32; b++) {
        uint32_t bit = 1u << b;
        if (bit == b30)
            continue;
        int r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, b30 | bit, b30));
        if (r == 0 && b != 3 && b != 17)
            r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, b30 | bit, bit));
        if (r < 0)
            return r;
    }
    return 0;
}

static int build_rules(scmp_filter_ctx ctx, lz_error *err)
{
    int r;
    /* 32-bit x86 and x32 system calls reach the same kernel; without them
     * in the filter such calls would kill the process (bad arch). */
    if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
        if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X86)) < 0 && r != -EEXIST)
            return lz_error_set(err, -r, "seccomp: add x86");
        if ((r = seccomp_arch_add(ctx, SCMP_ARCH_X32)) < 0 && r != -EEXIST)
            return lz_error_set(err, -r, "seccomp: add x32");
    }
    for (int i = 0; denied[i]; i++)
        if (deny(ctx, denied[i], err) < 0)
            return -1;
    /* New user namespaces give a fresh full capability set, the usual first
     * step of kernel exploits. clone's flags are argument 0 on x86. */
    r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    /* clone3 passes its flags in memory, out of the filter's reach: answer
     * ENOSYS so libc falls back to clone(2), which is checked above. */
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (r == 0)
        r = personality_rules(ctx);
    if (r < 0)
        return lz_error_set(err, -r, "seccomp: argument rules");
    return 0;
}

int seccomp__build(struct sock_fprog *out, lz_error *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL)
        return lz_error_set(err, ENOMEM, "seccomp_init");
    int ret = build_rules(ctx, err);
    cleanup_close int fd = -1;
    if (ret == 0 && (fd = memfd_create("lizard-seccomp", MFD_CLOEXEC)) < 0)
        ret = lz_error_sys(err, "memfd_create");
    int r;
    if (ret == 0 && (r = seccomp_export_bpf(ctx, fd)) < 0)
        ret = lz_error_set(err, -r, "seccomp_export_bpf");
    seccomp_release(ctx);
    if (ret < 0)
        return -1;
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0 || size % sizeof(struct sock_filter) != 0)
        return lz_error_set(err, EINVAL, "seccomp: odd BPF size %lld", (long long)size);
    struct sock_filter *prog = malloc((size_t)size);
    if (prog == NULL)
        return lz_error_set(err, ENOMEM, "seccomp: BPF buffer");
    if (pread(fd, prog, (size_t)size, 0) != size) {
        free(prog);
        return lz_error_sys(err, "seccomp: read BPF");
    }
    out->filter = prog;
    out->len = (unsigned short)(size / sizeof(struct sock_filter));
    return 0;
}

int seccomp__load(const struct sock_fprog *prog, lz_error *err)
{
    /* no_new_privs first: it is what lets the kernel accept a filter
     * without CAP_SYS_ADMIN, and setuid binaries cannot undo it later. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return lz_error_sys(err, "PR_SET_NO_NEW_PRIVS");
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) < 0)
        return lz_error_sys(err, "PR_SET_SECCOMP");
    return 0;
}
