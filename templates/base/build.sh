#!/bin/bash
# base: Debian bookworm (debootstrap minbase) + python3 + ca-certificates and
# a non-root `user` (uid 1000, home /home/user). Hostname and /etc/hosts are
# written per sandbox by the runtime.
. "$(dirname "$0")/../lib.sh"

MIRROR=${LIZARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=${LIZARD_DEBIAN_SUITE:-bookworm}

tpl_begin base "Debian $SUITE minbase + python3 + ca-certificates, user 'user' (uid 1000)" 4

command -v debootstrap >/dev/null || { echo "[base] debootstrap missing: apt-get install debootstrap" >&2; exit 1; }

tpl_step "debootstrap $SUITE from $MIRROR"
# debootstrap is chatty (one line per package); keep the terminal to a
# progress line per stage and the full log for failures.
LOG=$TPL_WORK/debootstrap.log
if ! debootstrap --variant=minbase --include=python3,ca-certificates \
    "$SUITE" "$ROOTFS" "$MIRROR" >"$LOG" 2>&1; then
    tail -n 30 "$LOG" >&2
    exit 1
fi

tpl_step "user and configuration"
# useradd needs nothing from /proc or /dev, so no mounts inside the chroot
# (they would have to be undone before the rename).
chroot "$ROOTFS" /usr/sbin/useradd -m -u 1000 -U -s /bin/bash user
echo "deb $MIRROR $SUITE main" >"$ROOTFS/etc/apt/sources.list"

tpl_step "shrinking"
chroot "$ROOTFS" /usr/bin/apt-get clean
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin \
    "$ROOTFS"/var/cache/debconf/*-old "$ROOTFS"/var/log/*.log \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*
find "$ROOTFS" -name __pycache__ -prune -exec rm -rf {} +
# Sandboxes get fresh /dev (the runtime populates it); debootstrap's device
# nodes would be shifted to a uid that cannot use them anyway.
rm -rf "$ROOTFS/dev" && mkdir "$ROOTFS/dev"
tpl_skeleton
rm -f "$LOG"

tpl_finish
