#!/usr/bin/env python3
"""Regenerates tests/data/<kind>/bad_*.expected from the current build.

Run after a deliberate change to a diagnostic, then review `git diff` of the
.expected files: they are the contract the tests hold the validator to."""
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = REPO / "build" / "bin" / "ireepkg"

for kind_dir in sorted((REPO / "tests" / "data").iterdir()):
    if not kind_dir.is_dir():
        continue
    for f in sorted(kind_dir.glob("bad_*.json")):
        p = subprocess.run([BIN, "manifest", "check", "--kind", kind_dir.name, f.name],
                           cwd=kind_dir, capture_output=True, text=True)
        if p.returncode != 1:
            sys.exit(f"{f}: expected exit 1, got {p.returncode}: {p.stderr}")
        f.with_suffix(".expected").write_text(p.stderr)
print("updated")
