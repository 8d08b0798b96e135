#!/usr/bin/env bash
# Second set-up command (README) and what CI runs: install what is missing,
# build, run the C unit tests, then the integration tests against real
# lizardd processes (they start and stop their own servers), the TypeScript
# SDK's tests, the same integration tests against an ASan/UBSan build, and a
# short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -j"$(nproc)"
make unit
sh tests/unit/container_smoke.sh
TEMPLATE_DIR=${LIZARD_TEMPLATE_DIR:-/var/lib/lizard/templates}
for t in tiny base interpreter; do
    [ -f "$TEMPLATE_DIR/$t/meta.json" ] || LIZARD_TEMPLATE_DIR="$TEMPLATE_DIR" build/lizard template build "$t"
done
bash tests/run-integration.sh
# TypeScript SDK: dev tools from the lock file, then build + node --test
# against its own lizardd instances.
(cd sdk/js && npm ci && npm test)
# Sanitizers: unit tests and the Python integration suite against an
# ASan/UBSan lizardd and CLI (a memory error aborts the daemon and fails it).
make -j"$(nproc)" asan
LIZARD_BUILD_DIR="$PWD/build/asan" ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 \
    bash tests/run-integration.sh
# Every parser that reads untrusted bytes has a libFuzzer target: a short run
# each, so they keep building and the obvious crashes are caught here.
make -j"$(nproc)" fuzz
for f in build/fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    echo "== $f"
    "$f" -max_total_time=15 -print_final_stats=0 2>&1 | tail -n 2
done
