#!/usr/bin/env bash
# Installs what ireepkg needs and builds it. Sourced by scripts/demo.sh and
# scripts/test.sh; safe to run again: each step is skipped when its inputs
# have not changed, so a second run takes seconds.
#
# Needs root (or sudo) on Debian 12 for the system packages; everything else
# stays inside the checkout (.venv/, build/).
set -euo pipefail

IREEPKG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$IREEPKG_ROOT"

log() { printf '[setup] %s\n' "$*"; }

# --- Debian packages -------------------------------------------------------
DEBIAN_PACKAGES=(
  # toolchain and build
  cmake ninja-build pkg-config git ca-certificates ccache
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # sanitizer and libFuzzer runtimes (build-sanitize/, scripts/fuzz.sh)
  libclang-rt-22-dev
  libstdc++-12-dev
  # libraries
  nlohmann-json3-dev libcurl4-openssl-dev libarchive-dev doctest-dev
  libzstd-dev libsodium-dev nettle-dev
  # checksums of the parsed forms in the cache (registry/src/client/parsed_cache.cpp)
  libxxhash-dev
  # Markdown READMEs on the registry site (linked statically)
  libcmark-dev
  # config.toml (pkg/src/project/user_config.cpp)
  libtomlplusplus-dev
  # the fast path for registry index files (manifest_schema/src/fast_index.cpp)
  libsimdjson-dev
  # peers used by the tests and the demonstration
  python3 python3-venv zstd minisign nginx-light openssl
  # registries in OCI registries: the CNCF distribution registry, and
  # htpasswd for its Basic authentication (tests/cli/ocifix.py)
  docker-registry apache2-utils
  # the registry site's tests drive Debian's headless browser (Selenium)
  chromium chromium-driver
  # shells and man, for the completion scripts and the manual page tests
  zsh fish man-db groff-base
  # other targets of runtime_integration (cmake/toolchains/) and the lanes
  # that run IREE's own runtimes for them: Windows under wine, built with
  # mingw-w64 (also the DLLs of test_platform_native_checks.py,
  # test_platforms.py and test_compiler_e2e.py); linux-aarch64 under qemu-user, with Debian's
  # aarch64 glibc
  gcc-mingw-w64-x86-64 wine wine64
  qemu-user libc6-arm64-cross libc6-dev-arm64-cross
  # (IREE's aarch64 tools need the C++ runtime)
  libstdc++6-arm64-cross libgcc-s1-arm64-cross
)

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

# scripts/fuzz.sh needs the packages only.
if [ "${IREEPKG_SETUP_PACKAGES_ONLY:-0}" = 1 ]; then
  return 0 2>/dev/null || exit 0
fi

# --- Python virtual environment with the pinned IREE wheels ----------------
# Debian's own Python, not whichever `python3` comes first on PATH: a
# Python installed under root's home (pyenv, for example) cannot be run by
# the ordinary user some of the tests run as, nor by the people who share
# the checkout.
PYTHON_FOR_VENV=/usr/bin/python3
REQS=scripts/requirements.txt
STAMP=.venv/.ireepkg-requirements
want="$(cat "$REQS" scripts/build-requirements.txt | sha256sum | cut -d' ' -f1) $PYTHON_FOR_VENV"
if [ -f .venv/pyvenv.cfg ] &&
   ! grep -qx "home = $(dirname "$PYTHON_FOR_VENV")" .venv/pyvenv.cfg; then
  log "recreating .venv with $PYTHON_FOR_VENV"
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  if [ ! -x .venv/bin/python ]; then
    log "creating .venv"
    "$PYTHON_FOR_VENV" -m venv .venv
  fi
  log "installing Python packages from $REQS"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r "$REQS"
  # The same wheels (and the wheel build's own requirements) in a directory
  # every user can read: the tests that make fresh virtual environments,
  # also as an ordinary user, install from it without reaching PyPI.
  log "keeping the wheels in .venv/wheelhouse"
  rm -rf .venv/wheelhouse
  .venv/bin/python -m pip download -q --disable-pip-version-check \
    -d .venv/wheelhouse -r "$REQS" -r scripts/build-requirements.txt
  echo "$want" > "$STAMP"
fi

# --- Other targets -----------------------------------------------------------
# zig (scripts/cross-requirements.txt) for the macOS toolchain files, and
# IREE's runtime wheels for Windows and linux-aarch64, which the test lanes
# run under wine and qemu (tests/lanes/): downloaded and unpacked into
# .venv/wheelhouse and .venv/iree-runtime-<platform>/ only when missing.
CROSS_STAMP=.venv/.ireepkg-cross-requirements
cross_want=$(sha256sum scripts/cross-requirements.txt | cut -d' ' -f1)
if [ "$(cat "$CROSS_STAMP" 2>/dev/null)" != "$cross_want" ]; then
  log "installing Python packages from scripts/cross-requirements.txt"
  .venv/bin/python -m pip install -q --disable-pip-version-check \
    -r scripts/cross-requirements.txt
  echo "$cross_want" > "$CROSS_STAMP"
fi
IREE_RUNTIME_VERSION=$(sed -n 's/^iree-base-runtime==//p' "$REQS")
for wheel_platform in win_amd64 manylinux_2_28_aarch64; do
  unpacked=.venv/iree-runtime-$wheel_platform
  if [ -f "$unpacked/.ireepkg-version" ] &&
     [ "$(cat "$unpacked/.ireepkg-version")" = "$IREE_RUNTIME_VERSION" ]; then
    continue
  fi
  tag=${wheel_platform#manylinux_2_28_}
  wheel=$(ls .venv/wheelhouse/iree_base_runtime-"$IREE_RUNTIME_VERSION"-*"$tag"*.whl \
            2>/dev/null | head -1 || true)
  if [ -z "$wheel" ]; then
    log "downloading IREE's runtime $IREE_RUNTIME_VERSION for $wheel_platform"
    .venv/bin/python -m pip download -q --disable-pip-version-check \
      "iree-base-runtime==$IREE_RUNTIME_VERSION" --platform "$wheel_platform" \
      --python-version 3.11 --only-binary=:all: --no-deps -d .venv/wheelhouse
    wheel=$(ls .venv/wheelhouse/iree_base_runtime-"$IREE_RUNTIME_VERSION"-*"$tag"*.whl | head -1)
  fi
  rm -rf "$unpacked"
  .venv/bin/python -m zipfile -e "$wheel" "$unpacked"
  # zip files keep no execute bits: the tools must run (under qemu).
  chmod +x "$unpacked"/iree/_runtime_libs/iree-* 2>/dev/null || true
  echo "$IREE_RUNTIME_VERSION" > "$unpacked/.ireepkg-version"
done

# --- Build -----------------------------------------------------------------
# ccache keeps compiled objects between builds (build/, build-sanitize/, the
# wheel's build, other checkouts on this machine): paths relative to the
# checkout, so that a fresh clone elsewhere hits what this one compiled.
export CCACHE_BASEDIR="$IREEPKG_ROOT" CCACHE_NOHASHDIR=1
if [ ! -f build/build.ninja ]; then
  log "configuring build/"
  cmake -S . -B build -G Ninja \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DIREEPKG_PYTHON="$IREEPKG_ROOT/.venv/bin/python" >/dev/null
fi
log "building"
ninja -C build | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
test -x build/bin/ireepkg
