#!/usr/bin/env bash
# Second set-up command (README) and what CI runs: install what is missing,
# build, run the C unit tests, then the integration tests against real
# lizardd processes (they start and stop their own servers).
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
