#!/bin/bash
# tiny: a static busybox and nothing else. Builds in about a second; used by
# tests that need a real sandbox but not a distribution.
. "$(dirname "$0")/../lib.sh"

BUSYBOX=${LIZARD_BUSYBOX:-/bin/busybox}

tpl_begin tiny "busybox-static only, for fast tests" 3

tpl_step "busybox"
[ -x "$BUSYBOX" ] || { echo "[tiny] $BUSYBOX missing: apt-get install busybox-static" >&2; exit 1; }
# A dynamically linked busybox would need the host's libc inside the sandbox
# (ldd fails on static executables).
if ldd "$BUSYBOX" >/dev/null 2>&1; then
    echo "[tiny] $BUSYBOX is not statically linked: apt-get install busybox-static" >&2
    exit 1
fi
tpl_skeleton
mkdir -p "$ROOTFS"/{bin,usr/bin,home/user}
install -m 0755 "$BUSYBOX" "$ROOTFS/bin/busybox"
# Relative links, one per applet, all in /bin (sh among them).
for applet in $("$BUSYBOX" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$ROOTFS/bin/$applet"
done
# Scripts written as `#!/usr/bin/env X` must work too.
ln -sf ../../bin/busybox "$ROOTFS/usr/bin/env"

tpl_step "users"
cat >"$ROOTFS/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000::/home/user:/bin/sh
PW
cat >"$ROOTFS/etc/group" <<'GR'
root:x:0:
user:x:1000:
GR
chown 1000:1000 "$ROOTFS/home/user"
chmod 0755 "$ROOTFS/home/user"

tpl_finish
