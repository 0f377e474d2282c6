#!/usr/bin/env bash
# The ireepkg demonstration on the bundled examples. Run it through
# scripts/demo.sh, which sets up and builds first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
IREEPKG=${IREEPKG:-$ROOT/build/bin/ireepkg}
VENV=$ROOT/.venv/bin
# The example packages as the build packed them (the test suite runs this
# script with its own build's).
EXAMPLES=${IREEPKG_EXAMPLES_BUILD:-$ROOT/build/examples}
DIST=$EXAMPLES/dist
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ireepkg-demo.XXXXXX")
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
export IREEPKG_CACHE_DIR=$WORK/cache
# As a user who activated the virtual environment with IREE's wheels: the
# IREE in use is theirs (3.13.0), and every requires.iree is checked.
export VIRTUAL_ENV=$ROOT/.venv PATH=$VENV:$PATH

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
show $IREEPKG pack "$EXAMPLES/simple-mul" -o "$WORK/dist"
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

step "A signed registry: static files, served here over HTTP on 127.0.0.1"
mkdir -p "$WORK/keys"
show $IREEPKG key generate -o "$WORK/keys/examples"
KEY=$(sed -n 2p "$WORK/keys/examples.pub")
show $IREEPKG registry init "$WORK/registry" --key "$WORK/keys/examples.key" --name examples
show $IREEPKG publish "$DIST/simple-mul-1.2.0.ireepkg" "$DIST/mul-pipeline-0.3.0.ireepkg" \
  --registry "$WORK/registry" --key "$WORK/keys/examples.key"
PORT=$("$VENV/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$VENV/python" -m http.server --bind 127.0.0.1 --directory "$WORK/registry" "$PORT" \
  >"$WORK/http.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 50); do
  curl -sf "http://127.0.0.1:$PORT/config.json" >/dev/null && break
  sleep 0.1
done
show $IREEPKG search mul --registry "http://127.0.0.1:$PORT" --registry-key "$KEY"

step "The registry's web site: search and a page per package, from the signed files"
show $IREEPKG registry site "$WORK/registry" -o "$WORK/registry/site" \
  --url "http://127.0.0.1:$PORT"
show curl -sf -o /dev/null -w 'GET /site/index.html: %{http_code}, %{size_download} bytes\n' \
  "http://127.0.0.1:$PORT/site/index.html"
show curl -sf -o /dev/null -w 'GET /site/packages/simple-mul.html: %{http_code}, %{size_download} bytes\n' \
  "http://127.0.0.1:$PORT/site/packages/simple-mul.html"

step "A project: plugins.json names the registry and its key; add picks the newest version"
mkdir -p "$WORK/project"
cd "$WORK/project"
show $IREEPKG init --registry "examples=http://127.0.0.1:$PORT" --registry-key "$KEY" \
  --platform linux-x86_64 --platform linux-aarch64
show $IREEPKG add simple-mul
show $IREEPKG add mul-pipeline --option iree-llvmcpu-distribution-size=64
show cat plugins.json

step "Lock for both platforms: exact versions, archive hashes, activation order"
show $IREEPKG lock --iree-version 3.13.0
show cat plugins.lock.json

step "No solution: the error explains why"
show $IREEPKG add simple-mul@^2.0 || true
# --frozen only edits plugins.json; the lock then says why nothing fits.
show $IREEPKG add simple-mul@^2.0 --frozen
show $IREEPKG lock --iree-version 3.13.0 || true
show $IREEPKG add simple-mul@^1.2

step "Sync: the project's prefix becomes exactly the lock, in one transaction"
show $IREEPKG sync --iree-version 3.13.0
show $IREEPKG list
show "$VENV/iree-run-module" --flagfile="$WORK/project/.iree-plugins/state/runtime.flags" \
  --device=local-sync --module="$WORK/simple_mul.vmfb" --function=simple_mul \
  --input=8xf32=1,2,3,4,5,6,7,8 --input=8xf32=3
show $IREEPKG outdated --all --iree-version 3.13.0

step "An offline vendor bundle, installed with the server stopped and an empty cache"
show $IREEPKG bundle create -o "$WORK/vendor.ireebundle"
kill $SERVER; wait $SERVER 2>/dev/null || true
show env IREEPKG_CACHE_DIR="$WORK/cache2" $IREEPKG sync --offline --frozen \
  --bundle "$WORK/vendor.ireebundle" --prefix "$WORK/airgapped"
show $IREEPKG list --prefix "$WORK/airgapped"

step "A tampered archive in the registry is refused; nothing is installed"
chmod u+w "$WORK/registry/archives/simple-mul/simple-mul-1.2.0.ireepkg"
printf 'x' >> "$WORK/registry/archives/simple-mul/simple-mul-1.2.0.ireepkg"
show env IREEPKG_CACHE_DIR="$WORK/cache3" $IREEPKG install simple-mul \
  --registry "$WORK/registry" --registry-key "$KEY" --prefix "$WORK/victim" || true
show ls "$WORK/victim/packages" 2>/dev/null || echo "(no packages installed)"
cd "$ROOT"

printf '\ndemo finished\n'

