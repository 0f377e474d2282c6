#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite (ctest: unit tests, CLI
# tests, schema agreement and end-to-end tests against the real peers).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$IREEPKG_ROOT"
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
