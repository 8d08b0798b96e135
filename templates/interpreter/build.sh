#!/bin/bash
# interpreter: base (Debian minbase + python3 + ca-certificates + `user`) plus
# the `python` command, the scientific stack (numpy, pandas, scipy,
# matplotlib with the Agg backend, requests) and everyday CLI tools, all from
# Debian's archive. What code interpreters and data-analysis agents expect.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../debian.sh"

PACKAGES=python3,ca-certificates,python-is-python3
PACKAGES=$PACKAGES,python3-numpy,python3-pandas,python3-scipy,python3-matplotlib,python3-requests
PACKAGES=$PACKAGES,git,curl,jq,procps,less,nano

tpl_begin interpreter "base + python, numpy, pandas, scipy, matplotlib (Agg), requests, git, curl, jq" 6

deb_bootstrap "$PACKAGES"
deb_user

tpl_step "matplotlib defaults"
# Sandboxes have no display: plots go to files. /etc/matplotlibrc is read by
# every process (exec does not read /etc/environment, so MPLBACKEND would not
# reach it); a user's own matplotlibrc or MPLBACKEND still wins.
RC=$ROOTFS/etc/matplotlibrc
if [ -f "$RC" ] && grep -q '^[#[:space:]]*backend[[:space:]]*:' "$RC"; then
    sed -i 's/^[#[:space:]]*backend[[:space:]]*:.*/backend: Agg/' "$RC"
else
    echo "backend: Agg" >>"$RC"
fi

deb_shrink

tpl_step "precompiling Python modules and matplotlib's font cache"
# deb_shrink dropped the bytecode; here it is worth its space: without it
# `user` (who cannot write to /usr) recompiles pandas/scipy/matplotlib on
# every import (~2 s), and every first plot scans the fonts (~1 s).
# Serial: compileall -j needs /dev/shm, and the rootfs has no /dev now.
chroot "$ROOTFS" /usr/bin/python3 -m compileall -q /usr/lib/python3/dist-packages /usr/lib/python3.11
for home in root:/root user:/home/user; do
    chroot --userspec="${home%%:*}:${home%%:*}" "$ROOTFS" /usr/bin/env HOME="${home#*:}" \
        /usr/bin/python3 -c "import matplotlib.font_manager"
done

tpl_finish
