#!/usr/bin/env python3
"""bench/flags: whole-process time of the read-only commands.

  - `ireepkg flags runtime` with 1,000 installed runtime plugins (100
    packages x 10 plugins)                          target < 5 ms
  - `ireepkg flags compiler` with 100 active compiler packages (each an
    iree-static plugin with two typed options, and a preprocessing hook)
                                                    target < 20 ms

Each is the median of N runs of the whole process (fork, exec, run, exit),
timed from Python; the cost of starting a trivial process (`/bin/true`) the
same way is reported beside it. Writes results.json beside this script.

Usage: run.py [--runs 200] [--work DIR]
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = REPO / "build"
IREEPKG = pathlib.Path(os.environ.get("IREEPKG_BIN", BUILD / "bin" / "ireepkg"))
ELF = BUILD / "examples" / "simple-mul" / "runtime" / "simple_mul.x86_64.so"


def make_runtime_package(root, i):
    d = root / f"rt{i:03d}"
    (d / "runtime").mkdir(parents=True)
    plugins = []
    for k in range(10):
        shutil.copy(ELF, d / "runtime" / f"p{k}.so")
        plugins.append({"name": f"p{i}_{k}", "format": "embedded-elf",
                        "library": {"x86_64": f"runtime/p{k}.so"},
                        # The one symbol the library resolves: pack checks
                        # every declared import (install then notes that
                        # the later plugins shadow the earlier ones).
                        "imports": ["simple_mul_workgroup"], "parameters": {"n": str(k)}})
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": f"rt{i:03d}", "version": "1.0.0",
        "runtime": {"plugins": plugins}}))
    return d


def make_compiler_package(root, i):
    d = root / f"cc{i:03d}"
    d.mkdir(parents=True)
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": f"cc{i:03d}", "version": "1.0.0",
        "compiler": {
            "plugins": [{"id": f"plugin_{i}", "kind": "iree-static", "options": {
                f"iree-bench-{i}-tile": {"type": "integer", "minimum": 1, "maximum": 64, "default": 8},
                f"iree-bench-{i}-mode": {"type": "string", "enum": ["a", "b"], "default": "a"}}}],
            "hooks": [{"point": "preprocessing",
                       "pipeline": f"func.func(canonicalize,cse{{}}),bench-pass-{i}{{level=2}}"}]}}))
    return d


def median_ms(cmd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--work", default="/tmp/ireepkg-bench-flags")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    if work.exists():
        for dirpath, _, _ in os.walk(work):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(work)
    src, dist = work / "src", work / "dist"
    archives = []
    for i in range(100):
        for maker in (make_runtime_package, make_compiler_package):
            d = maker(src, i)
            out = subprocess.run([IREEPKG, "pack", d, "-o", dist, "--json"], capture_output=True,
                                 text=True, check=True).stdout
            archives.append(json.loads(out)["archive"])
    prefix = work / "prefix"
    env = dict(os.environ, IREEPKG_CACHE_DIR=str(work / "cache"))
    subprocess.run([IREEPKG, "install", "--quiet", "--prefix", prefix, *archives], check=True, env=env)
    listed = subprocess.run([IREEPKG, "flags", "runtime", "--prefix", prefix], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert len(listed) == 1000, len(listed)
    comp = subprocess.run([IREEPKG, "flags", "compiler", "--prefix", prefix], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    assert len(comp) == 100 * 3 + 1, len(comp)

    baseline = median_ms(["/bin/true"], args.runs)
    runtime = median_ms([IREEPKG, "flags", "runtime", "--prefix", prefix], args.runs)
    compiler = median_ms([IREEPKG, "flags", "compiler", "--prefix", prefix], args.runs)
    result = {"runs": args.runs, "process_start_ms": baseline,
              "flags_runtime_1000_plugins_ms": runtime,
              "flags_compiler_100_packages_ms": compiler}
    (HERE / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"starting /bin/true from Python:              {baseline:6.2f} ms (median of {args.runs})")
    print(f"ireepkg flags runtime, 1,000 plugins:        {runtime:6.2f} ms (target < 5 ms)")
    print(f"ireepkg flags compiler, 100 packages:        {compiler:6.2f} ms (target < 20 ms)")


if __name__ == "__main__":
    main()
