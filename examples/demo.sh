#!/usr/bin/env bash
# The ireepkg demonstration on the bundled examples. Run it through
# scripts/demo.sh, which sets up and builds first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
IREEPKG=${IREEPKG:-$ROOT/build/bin/ireepkg}
VENV=$ROOT/.venv/bin
DIST=$ROOT/build/examples/dist
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ireepkg-demo.XXXXXX")
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
export IREEPKG_CACHE_DIR=$WORK/cache

if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B= N=; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
show() { printf '$ %s\n' "$*"; "$@"; }

step "ireepkg $($IREEPKG --version | head -1 | cut -d' ' -f2)"
$IREEPKG --version

step "Check the example packages and the example project"
show $IREEPKG manifest check examples/simple-mul examples/mul-pipeline examples/project

step "A broken manifest: every problem, with file:line:column and JSON pointer"
show $IREEPKG manifest check --kind manifest tests/data/manifest/bad_arch_typo.json || true

step "Pack a package (the build already packed both into build/examples/dist)"
show $IREEPKG pack build/examples/simple-mul -o "$WORK/dist"
show $IREEPKG info "$DIST/simple-mul-1.2.0.ireepkg"

step "Dependencies are checked: mul-pipeline needs simple-mul"
show $IREEPKG install --prefix "$WORK/prefix" "$DIST/mul-pipeline-0.3.0.ireepkg" || true

step "Install both, in one transaction"
show $IREEPKG install --prefix "$WORK/prefix" "$DIST/simple-mul-1.2.0.ireepkg" "$DIST/mul-pipeline-0.3.0.ireepkg"
show $IREEPKG list --prefix "$WORK/prefix"
show $IREEPKG verify --prefix "$WORK/prefix"

step "The prefix's flagfiles, in activation order"
show cat "$WORK/prefix/state/runtime.flags"
show cat "$WORK/prefix/state/compiler.flags"

step "Run a custom dispatch that calls the plugin, with the real IREE tools"
show "$VENV/iree-compile" examples/programs/simple_mul.mlir \
  --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
  --iree-llvmcpu-target-cpu=host -o "$WORK/simple_mul.vmfb"
show "$VENV/iree-run-module" --flagfile="$WORK/prefix/state/runtime.flags" \
  --device=local-sync --module="$WORK/simple_mul.vmfb" --function=simple_mul \
  --input=8xf32=1,2,3,4,5,6,7,8 --input=8xf32=3

step "Removing the plugin: IREE can no longer resolve the import"
show $IREEPKG remove --prefix "$WORK/prefix" --cascade simple-mul
show "$VENV/iree-run-module" --flagfile="$WORK/prefix/state/runtime.flags" \
  --device=local-sync --module="$WORK/simple_mul.vmfb" --function=simple_mul \
  --input=8xf32=1 --input=8xf32=3 2>&1 | head -3 || true

step "Reinstalling links the files from the package cache"
show $IREEPKG install --prefix "$WORK/prefix" "$DIST/simple-mul-1.2.0.ireepkg"
show "$VENV/iree-run-module" --flagfile="$WORK/prefix/state/runtime.flags" \
  --device=local-sync --module="$WORK/simple_mul.vmfb" --function=simple_mul \
  --input=8xf32=1,2,3,4,5,6,7,8 --input=8xf32=3

printf '\ndemo finished\n'
