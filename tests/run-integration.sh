#!/bin/sh
# Integration tests: a real lizardd on a free port with a temporary data dir,
# driven through the Python SDK (sdk/python), raw HTTP and the CLI.
# Needs root (namespaces, cgroups) and a build (`make`). Builds the `tiny`,
# `base` and `interpreter` templates into the machine-wide cache if missing.
# Extra arguments go to pytest, e.g. tests/run-integration.sh -k files -x
set -eu
cd "$(dirname "$0")/.."

# Debian's pytest: the default `python3` on some machines (pyenv) has none.
PY=/usr/bin/python3
TEMPLATE_DIR=${LIZARD_TEMPLATE_DIR:-/var/lib/lizard/templates}
export LIZARD_TEMPLATE_DIR="$TEMPLATE_DIR"

for f in build/lizardd build/lizard build/lizard-agent; do
    [ -x "$f" ] || { echo "run-integration: $f missing; run make first" >&2; exit 1; }
done
for t in tiny base interpreter; do
    [ -f "$TEMPLATE_DIR/$t/meta.json" ] || build/lizard template build "$t"
done

exec "$PY" -m pytest -q -p no:cacheprovider tests/unit/agent_smoke.py tests/integration "$@"
