#!/usr/bin/env bash
# Install the Debian packages Lizard needs to build, run and test. Idempotent:
# does nothing (and needs no network) when everything is already installed.
set -euo pipefail
PKGS=(build-essential pkg-config libjansson-dev libsqlite3-dev libseccomp-dev libssl-dev
      libcmocka-dev debootstrap busybox-static python3 python3-pytest iproute2 clang
      crun bubblewrap runc ca-certificates curl python3-venv)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "[setup] installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
