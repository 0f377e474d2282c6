#!/usr/bin/env bash
# Regenerates docs/images/registry-site-desktop.png and -phone.png, the
# README's screenshots of a registry site, with the browser test that takes
# them (tests/cli/test_registry_site.py). Needs the build (scripts/setup.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/ireepkg-shots.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
cd "$ROOT/tests/cli"
IREEPKG_SITE_SCREENSHOTS=$OUT IREEPKG_BIN=$ROOT/build/bin/ireepkg \
  IREEPKG_BUILD_DIR=$ROOT/build PYTHONDONTWRITEBYTECODE=1 \
  "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider \
  test_registry_site.py -k screenshots
mkdir -p "$ROOT/docs/images"
for f in registry-site-desktop.png registry-site-phone.png; do
  cp "$OUT/$f" "$ROOT/docs/images/$f"
  echo "wrote docs/images/$f"
done
