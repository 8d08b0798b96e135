#!/usr/bin/env bash
# First set-up command (README): install what is missing, build, build the
# `base` template if it is not cached, and start lizardd in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -j"$(nproc)"
TEMPLATE_DIR=${LIZARD_TEMPLATE_DIR:-/var/lib/lizard/templates}
for t in tiny base; do
    [ -f "$TEMPLATE_DIR/$t/meta.json" ] || LIZARD_TEMPLATE_DIR="$TEMPLATE_DIR" build/lizard template build "$t"
done
exec build/lizard up "$@"
