#!/usr/bin/env bash
# The ireepkg demonstration on the bundled examples. Run it through
# scripts/demo.sh, which sets up and builds first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
IREEPKG=${IREEPKG:-build/bin/ireepkg}

if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B= N=; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }

step "ireepkg $($IREEPKG --version | head -1 | cut -d' ' -f2)"
$IREEPKG --version

step "Checking the example packages and the example project"
$IREEPKG manifest check examples/simple-mul examples/mul-pipeline examples/project

step "A broken manifest is reported with file:line:column and JSON pointer"
$IREEPKG manifest check --kind manifest tests/data/manifest/bad_arch_typo.json || true

step "The same as JSON, for tools"
$IREEPKG manifest check --json --kind manifest tests/data/manifest/bad_arch_typo.json \
  | head -20 || true

printf '\ndemo finished\n'
