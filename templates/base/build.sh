#!/bin/bash
# base: Debian bookworm (debootstrap minbase) + python3 + ca-certificates and
# a non-root `user` (uid 1000, home /home/user). Hostname and /etc/hosts are
# written per sandbox by the runtime.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../debian.sh"

tpl_begin base "Debian $SUITE minbase + python3 + ca-certificates, user 'user' (uid 1000)" 4

deb_bootstrap python3,ca-certificates
deb_user
deb_shrink
tpl_finish
