#!/bin/sh
# Really creates container sandboxes and checks their isolation from the
# host side (needs root). Usage: tests/unit/container_smoke.sh [AGENT]
# AGENT defaults to build/lizard-agent; any static program that serves
# fd 3 as PID 1 works, since every check here is made from the host.
set -eu
cd "$(dirname "$0")/../.."
B=${B:-build}
AGENT=$(realpath "${1:-$B/lizard-agent}")
make -s "$B/tests/container_driver" >/dev/null
DRIVER=$(realpath "$B/tests/container_driver")
W=$(mktemp -d /tmp/lz-smoke-XXXXXX)
T=$W/templates/tiny/rootfs
D=$W/data
export LZ_CGROUP_PARENT=lizard-smoke
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }

# A busybox rootfs, shifted to the sandbox uid range (100000 + uid).
mkdir -p "$T/bin" "$T/etc" "$T/root" "$T/home/user" "$T/tmp" "$T/proc" "$T/dev" "$T/sys"
cp /bin/busybox "$T/bin/busybox"
chroot "$T" /bin/busybox --install -s /bin
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n' >"$T/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nuser:x:1000:\n' >"$T/etc/group"
chown -hR 100000:100000 "$T"
chown -hR 101000:101000 "$T/home/user"
chmod 1777 "$T/tmp"

drv() { "$DRIVER" "$1" "$D" "$W/templates" "$AGENT" "$2" ${3:-} ${4:-}; }
ID=smoke1
set -- $(LZ_DISK_BYTES=$((16 << 20)) LZ_MEMORY_MB=256 LZ_PIDS=64 drv create $ID)
PID=$1 START=$2
IN="nsenter -t $PID -U -m -p -n -u -i -C -S 0 -G 0 -r -w"

[ "$(drv alive $ID "$PID" "$START")" = 1 ] || fail "is_alive"
ok "created $ID, PID 1 is host pid $PID"
grep -q "^Uid:.*100000" /proc/$PID/status || fail "uid map"
ok "uid 0 inside is host uid 100000"
grep -q "^NoNewPrivs:.*1" /proc/$PID/status || fail "no_new_privs"
grep -q "^Seccomp:.*2" /proc/$PID/status || fail "seccomp"
grep -q "^CapBnd:.*00000000a80425fb" /proc/$PID/status || fail "bounding set"
ok "no_new_privs, seccomp filter, Docker bounding set"
drv connect $ID >/dev/null || fail "connect_agent"
ok "agent socket accepts"
n=$($IN /bin/ps -o pid | tail -n +2 | wc -l)
[ "$n" -le 3 ] || fail "sees $n processes"
ok "ps inside sees only the sandbox's processes ($n)"
[ "$($IN /bin/hostname)" = $ID ] || fail hostname
grep -q "127.0.1.1.$ID" "$D/sandboxes/$ID/rootfs/etc/hosts" || fail /etc/hosts
ok "hostname and /etc/hosts"
links=$($IN /bin/ip -o link | wc -l)
$IN /bin/ip -o link | grep -q "lo:.*UP" || fail "lo down"
[ "$links" = 1 ] || fail "$links interfaces"
ok "only lo, and it is up"
[ "$($IN /bin/cat /proc/1/cgroup | grep -c ':/$')" -ge 9 ] || fail "cgroup namespace"
ok "/proc/1/cgroup shows / (cgroup namespace)"
[ "$(cat /sys/fs/cgroup/memory/$LZ_CGROUP_PARENT/$ID/memory.limit_in_bytes)" = 268435456 ] || fail memory
[ "$(cat /sys/fs/cgroup/pids/$LZ_CGROUP_PARENT/$ID/pids.max)" = 64 ] || fail pids
[ "$(cat /sys/fs/cgroup/cpu/$LZ_CGROUP_PARENT/$ID/cpu.cfs_quota_us)" = 200000 ] || fail cpu
ok "memory, pids and cpu limits written"
drv stats $ID | grep -q "pids 1" || fail stats
ok "stats"
if $IN /bin/dd if=/dev/zero of=/big bs=1M count=64 2>"$W/dd.err"; then fail "dd beyond the disk limit worked"; fi
grep -q "No space left" "$W/dd.err" || fail "dd: $(cat "$W/dd.err")"
ok "writes beyond the disk limit fail with ENOSPC"
$IN /bin/sh -c 'echo x > /proc/sys/kernel/hostname' 2>/dev/null && fail "/proc/sys writable"
[ "$($IN /bin/cat /proc/timer_list | wc -c)" = 0 ] || fail "/proc/timer_list not masked"
ok "/proc/sys read-only, /proc/timer_list masked"

# destroy from another process: PID 1 is not the driver's child.
drv destroy $ID "$PID" "$START" 2>/dev/null
[ "$(drv alive $ID "$PID" "$START")" = 0 ] || fail "still alive"
grep -q "$D/sandboxes/$ID" /proc/self/mountinfo && fail "mounts left"
ls -d /sys/fs/cgroup/*/$LZ_CGROUP_PARENT/$ID 2>/dev/null && fail "cgroups left"
[ -e "$D/sandboxes/$ID" ] && fail "files left"
ps -o pid= --ppid 1 -o stat= | awk -v p=$PID '$1==p && $2 !~ /Z/' | grep -q . && fail "process left"
drv destroy $ID "$PID" "$START" 2>/dev/null || fail "second destroy"
ok "destroy leaves no mounts, cgroups, processes or files; idempotent"
"$DRIVER" bench "$D" "$W/templates" "$AGENT" 20
for c in /sys/fs/cgroup/*/$LZ_CGROUP_PARENT; do rmdir "$c"; done
echo "container smoke: all ok"
