#!/usr/bin/env bash
# Configures and builds build-sanitize/: ireepkg's code with AddressSanitizer
# and UndefinedBehaviorSanitizer, instrumented for libFuzzer, plus the fuzz
# targets (-DIREEPKG_SANITIZE=address,undefined -DIREEPKG_FUZZ=ON; see
# docs/reliability.md). Sourced by scripts/test.sh and scripts/fuzz.sh after
# scripts/setup.sh (which installs clang-22 and libclang-rt-22-dev).
# Uses ccache when it is installed.
set -euo pipefail
IREEPKG_ROOT=${IREEPKG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$IREEPKG_ROOT"

if [ ! -f build-sanitize/build.ninja ]; then
  printf '[setup] configuring build-sanitize/\n'
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
              -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B build-sanitize -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    "${launcher[@]}" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DIREEPKG_SANITIZE=address,undefined -DIREEPKG_FUZZ=ON \
    -DIREEPKG_PYTHON="$IREEPKG_ROOT/.venv/bin/python" >/dev/null
fi
printf '[setup] building build-sanitize/ (sanitizers and fuzz targets)\n'
if ! ninja -C build-sanitize "$@" >build-sanitize/build.log 2>&1; then
  grep -vE '^\[[0-9]+/[0-9]+\] ' build-sanitize/build.log
  printf '[setup] building build-sanitize/ failed\n' >&2
  exit 1
fi
