#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite:
#  1. ctest in build/: unit tests, CLI tests, schema agreement and
#     end-to-end tests against the real peers;
#  2. ctest -L sanitize in build-sanitize/: the unit, runtime and CLI tests
#     again with AddressSanitizer and UndefinedBehaviorSanitizer, and a
#     short run of every fuzz target on its corpus (fuzz_smoke_<name>);
#     see docs/reliability.md. IREEPKG_TEST_SANITIZE=0 leaves this out.
# Arguments go to the first ctest (e.g. -R cli_pack).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$IREEPKG_ROOT"
status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@" || status=$?
if [ "${IREEPKG_TEST_SANITIZE:-1}" != 0 ]; then
  source scripts/sanitize_build.sh
  ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" \
    -L sanitize || status=$?
fi
exit $status
