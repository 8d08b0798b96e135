# Steps shared by the Debian-based recipes (base, interpreter); sourced after
# lib.sh. Each function is one tpl_step, so a recipe's step count is the
# number of calls plus its own steps plus tpl_finish's one.

MIRROR=${LIZARD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=${LIZARD_DEBIAN_SUITE:-bookworm}

# deb_bootstrap PKG,PKG,...: minbase plus these packages (and their Depends)
# from the Debian archive.
deb_bootstrap() {
    command -v debootstrap >/dev/null ||
        { echo "[$TPL_NAME] debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
    tpl_step "debootstrap $SUITE from $MIRROR"
    # debootstrap is chatty (one line per package); keep the terminal to a
    # progress line per stage and the full log for failures.
    DEB_LOG=$TPL_WORK/debootstrap.log
    if ! debootstrap --variant=minbase --include="$1" \
        "$SUITE" "$ROOTFS" "$MIRROR" >"$DEB_LOG" 2>&1; then
        tail -n 30 "$DEB_LOG" >&2
        exit 1
    fi
}

# The non-root `user` (uid 1000, home /home/user) and apt's source list.
deb_user() {
    tpl_step "user and configuration"
    # useradd needs nothing from /proc or /dev, so no mounts inside the chroot
    # (they would have to be undone before the rename).
    chroot "$ROOTFS" /usr/sbin/useradd -m -u 1000 -U -s /bin/bash user
    echo "deb $MIRROR $SUITE main" >"$ROOTFS/etc/apt/sources.list"
}

deb_shrink() {
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
    rm -f "$DEB_LOG"
}
