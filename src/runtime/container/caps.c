/* Capabilities of the sandbox: the bounding set becomes Docker's default
 * set, so nothing executed inside (the agent, or anything it starts) can
 * ever regain the others; ambient and inheritable sets are emptied so no
 * capability leaks across an exec as a non-root user. These are
 * capabilities in the sandbox's own user namespace: even the kept ones act
 * only on objects that namespace owns. */
#include "container.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int kept[] = {
    CAP_CHOWN,   CAP_DAC_OVERRIDE, CAP_FSETID,           CAP_FOWNER,
    CAP_MKNOD,   CAP_NET_RAW,      CAP_SETGID,           CAP_SETUID,
    CAP_SETFCAP, CAP_SETPCAP,      CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT,
    CAP_KILL,    CAP_AUDIT_WRITE,
};

static int is_kept(int cap)
{
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        if (kept[i] == cap)
            return 1;
    return 0;
}

int caps__drop(lz_error *err)
{
    /* PR_CAPBSET_READ fails with EINVAL past the kernel's last capability. */
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
        if (is_kept(cap))
            continue;
        /* Dropping needs CAP_SETPCAP, which we still have: it is in the
         * kept list and the bounding set does not shrink the effective set. */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
            return lz_error_sys(err, "drop capability %d from the bounding set", cap);
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
        return lz_error_sys(err, "clear ambient capabilities");
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) < 0)
        return lz_error_sys(err, "capget");
    data[0].inheritable = data[1].inheritable = 0;
    if (syscall(SYS_capset, &hdr, data) < 0)
        return lz_error_sys(err, "capset");
    return 0;
}
