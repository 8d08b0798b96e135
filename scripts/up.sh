#!/usr/bin/env bash
# First set-up command (README): install what is missing, build, build the
# `tiny`, `base` and `interpreter` templates if they are not cached, and start
# lizardd in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -j"$(nproc)"
TEMPLATE_DIR=${LIZARD_TEMPLATE_DIR:-/var/lib/lizard/templates}
for t in tiny base interpreter; do
    [ -f "$TEMPLATE_DIR/$t/meta.json" ] || LIZARD_TEMPLATE_DIR="$TEMPLATE_DIR" build/lizard template build "$t"
done
exec build/lizard up "$@"
