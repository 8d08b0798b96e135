#!/usr/bin/env bash
# Install the Debian packages Lizard needs to build, run and test. Idempotent:
# does nothing (and needs no network) when everything is already installed.
set -euo pipefail
PKGS=(build-essential pkg-config libjansson-dev libsqlite3-dev libseccomp-dev libssl-dev
      libcmocka-dev debootstrap busybox-static python3 python3-pytest iproute2 clang
      crun bubblewrap runc ca-certificates curl python3-venv
      e2fsprogs  # mkfs.ext4 + debugfs make volume images (priority "required": always there)
      openssl    # CLI: test certificates for HTTPS (tests/integration/tlscerts.py)
      chromium)  # headless browser test of exposed ports (tests/integration/test_ports.py)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The TypeScript SDK (sdk/js) builds and tests with Node >= 18 and npm. Any
# node on PATH will do (e.g. one from nodesource, whose package is also called
# nodejs but bundles npm); otherwise Debian's.
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
    echo "[setup] installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
