#!/usr/bin/env python3
"""Two ireepkg builds against each other on one bench/resolve case.

Copies the case's project (made by run.py in its --work directory) once
per build, each with a metadata cache of its own (two builds may key their
caches differently), warms both, waits until the lockfiles are 2 s old
(their stamps settled, as docs/registries.md says), then alternates the two
builds: no-op locks first, then warm locks (lockfile deleted, so resolved
from scratch against the warm cache). Prints the median and minimum wall
time of each. Copies and caches go to --tmp and are kept for the next run.

Usage: compare_builds.py OLD_BIN NEW_BIN [--case hard|project] [--rounds 15]
       [--work build/bench-resolve/<graph>] [--tmp /tmp]
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--case", default="hard", choices=["hard", "project"])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--work", type=pathlib.Path, help="a graph directory of run.py's "
                    "--work (default: the only one under build/bench-resolve)")
    ap.add_argument("--tmp", type=pathlib.Path, default=pathlib.Path("/tmp"))
    args = ap.parse_args()
    work = args.work
    if work is None:
        root = pathlib.Path(__file__).resolve().parents[2] / "build" / "bench-resolve"
        graphs = [d for d in root.glob("*x*-*") if (d / args.case).is_dir()]
        if len(graphs) != 1:
            raise SystemExit(f"give --work: {len(graphs)} graphs under {root}")
        work = graphs[0]
    builds = {"old": str(pathlib.Path(args.old).resolve()),
              "new": str(pathlib.Path(args.new).resolve())}
    places = {}
    for tag in builds:
        project = args.tmp / f"compare-{args.case}-{tag}"
        cache = args.tmp / f"compare-cache-{args.case}-{tag}"
        if not project.exists():
            shutil.copytree(work / args.case, project)
        places[tag] = (project, cache)

    def run(tag):
        project, cache = places[tag]
        cmd = [builds[tag], "lock", "--quiet", "--iree-version", "3.13.0",
               "--project", str(project / "plugins.json")]
        start = time.perf_counter()
        subprocess.run(cmd, cwd=project, check=True,
                       env=dict(os.environ, IREEPKG_CACHE_DIR=str(cache)))
        return (time.perf_counter() - start) * 1000

    for tag in builds:
        (places[tag][0] / "plugins.lock.json").unlink(missing_ok=True)
        run(tag)  # cold: fills the cache
        run(tag)  # finds the lockfile up to date, and says so
    time.sleep(2.2)
    for tag in builds:
        run(tag)
    samples = {tag: {"no-op": [], "warm": []} for tag in builds}
    for kind in ("no-op", "warm"):
        for i in range(args.rounds):
            for tag in (list(builds) if i % 2 == 0 else list(builds)[::-1]):
                if kind == "warm":
                    (places[tag][0] / "plugins.lock.json").unlink()
                samples[tag][kind].append(run(tag))
    for tag in builds:
        print(f"{args.case} {tag}: " + ", ".join(
            f"{kind} lock median {statistics.median(v):.2f} ms, min {min(v):.2f}"
            for kind, v in samples[tag].items()))


if __name__ == "__main__":
    main()
