# Shared steps of the built-in template recipes (sourced by NAME/build.sh).
#
# A recipe calls, in order:
#   tpl_begin NAME "description" STEPS   -> sets $ROOTFS (an empty dir to fill)
#   tpl_step "what"                      -> prints "[NAME] what (i/STEPS)..."
#   tpl_finish                           -> uid shift, meta.json, atomic install
#
# Layout of the machine-wide cache (read by lizardd):
#   $TEMPLATE_DIR/NAME/rootfs/     the root filesystem, owned by host uid+UID_BASE
#   $TEMPLATE_DIR/NAME/meta.json   {name, description, sizeBytes, builtAt, buildSeconds, uidBase}
# The build happens in $TEMPLATE_DIR/.NAME.tmp-PID (same file system, so the
# final rename is atomic) and nothing under $TEMPLATE_DIR/NAME changes until
# the new tree is complete.

set -eu

TEMPLATE_DIR=${LIZARD_TEMPLATE_DIR:-/var/lib/lizard/templates}
# Sandboxes map their root to this host uid; every file in a rootfs is
# shifted by it so that root inside owns the files it expects to own.
UID_BASE=${LIZARD_UID_BASE:-100000}
TPL_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Debian's interpreter (standard library only), not whatever python3 is first
# in PATH (pyenv and the like).
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3

tpl_begin() {
    TPL_NAME=$1
    TPL_DESC=$2
    TPL_STEPS=$3
    TPL_STEP=0
    TPL_START=$(date +%s.%N)
    case $TPL_NAME in
    *[!a-z0-9_-]* | "") echo "template name must be [a-z0-9_-]: $TPL_NAME" >&2; exit 2 ;;
    esac
    if [ "$(id -u)" != 0 ]; then
        echo "[$TPL_NAME] building a template needs root (chown to uid $UID_BASE+)" >&2
        exit 1
    fi
    mkdir -p "$TEMPLATE_DIR"
    TPL_WORK=$TEMPLATE_DIR/.$TPL_NAME.tmp-$$
    ROOTFS=$TPL_WORK/rootfs
    rm -rf "$TPL_WORK"
    mkdir -p "$ROOTFS"
    # A failed or interrupted build leaves the installed template untouched
    # and no half-built tree behind.
    trap 'tpl__abort' EXIT
    trap 'exit 130' INT TERM
    echo "[$TPL_NAME] building into $TEMPLATE_DIR/$TPL_NAME"
}

tpl__abort() {
    local rc=$?
    if [ -n "${TPL_WORK:-}" ] && [ -d "$TPL_WORK" ]; then
        rm -rf "$TPL_WORK"
    fi
    if [ $rc -ne 0 ]; then
        echo "[$TPL_NAME] build failed (exit $rc)" >&2
    fi
    exit $rc
}

tpl_step() {
    TPL_STEP=$((TPL_STEP + 1))
    echo "[$TPL_NAME] $1 ($TPL_STEP/$TPL_STEPS)..."
}

# The mount points and scratch dirs every runtime expects to find.
tpl_skeleton() {
    mkdir -p "$ROOTFS"/{proc,dev,sys,run,tmp,root,etc}
    chmod 1777 "$ROOTFS/tmp"
    chmod 0700 "$ROOTFS/root"
    # Placeholder: the runtime writes the sandbox id here per sandbox.
    [ -e "$ROOTFS/etc/hostname" ] || echo lizard >"$ROOTFS/etc/hostname"
}

tpl_finish() {
    tpl_step "shifting ownership to uid $UID_BASE+"
    "$PYTHON" "$TPL_LIB_DIR/finish.py" shift --rootfs "$ROOTFS" --uid-base "$UID_BASE"
    "$PYTHON" "$TPL_LIB_DIR/finish.py" meta --rootfs "$ROOTFS" --uid-base "$UID_BASE" \
        --name "$TPL_NAME" --description "$TPL_DESC" --started "$TPL_START" \
        --out "$TPL_WORK/meta.json"
    "$PYTHON" "$TPL_LIB_DIR/finish.py" install --work "$TPL_WORK" --target "$TEMPLATE_DIR/$TPL_NAME"
    TPL_WORK=
    echo "[$TPL_NAME] done: $TEMPLATE_DIR/$TPL_NAME"
}
