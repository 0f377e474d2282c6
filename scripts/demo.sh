#!/usr/bin/env bash
# Sets up, builds, and runs the demonstration on the bundled examples.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$IREEPKG_ROOT"
exec bash examples/demo.sh
