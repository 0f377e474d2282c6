#!/usr/bin/env python3
"""bench/discovery: finding 1,000 installed runtime plugins.

Runs build/bin/ireepkg_bench_discovery, which makes a prefix with N packages
of one runtime plugin each (3 of 4 embedded ELF for x86_64 and aarch64, 1 of 4
a system library; every library file present) and, in the same run and on
the same warm page cache, measures (median over many iterations, in 5
rounds; "quiet" is the lowest round median):

  index       ireepkg_runtime_open + ireepkg_runtime_list_plugins (host) +
              free + close, through the C API of libireepkg_runtime: one
              mmap of <prefix>/state/runtime.index, checksum and bounds
              checks, one allocation for the list          (target < 50 us)
  index+stat  the same with IREEPKG_RUNTIME_LIST_CHECK_FILES (stat() of every
              listed file)
  list only   ireepkg_runtime_list_plugins + free on an open handle
  naive       what the index replaces: readdir <prefix>/packages/*/*, read
              and parse every ireeplugin.json (nlohmann/json), select each
              plugin's library for the host

It checks that the index and the naive walk find exactly the same plugins,
prints a table and writes results.json beside this script (not tracked).

Usage: run.py [--plugins 1000] [--iterations 5000] [--naive-iterations 100]
              [--work DIR] [--keep]
"""
import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
BENCH = BUILD / "bin" / "ireepkg_bench_discovery"
TARGET_US = 50.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugins", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--naive-iterations", type=int, default=100)
    ap.add_argument("--work", type=pathlib.Path,
                    help="scratch directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch prefix")
    args = ap.parse_args()
    if not BENCH.exists():
        sys.exit(f"{BENCH} is not built: run `ninja -C {BUILD}` first")

    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="ireepkg-bench-discovery-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            [str(BENCH), "--work", str(work), "--plugins", str(args.plugins),
             "--iterations", str(args.iterations),
             "--naive-iterations", str(args.naive_iterations)],
            capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{BENCH.name} failed ({proc.returncode}):\n{proc.stderr}")
        raw = json.loads(proc.stdout)
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    rows = [
        ("index: open + list + close", raw["index_open_list_close"]),
        ("index + stat every file", raw["index_open_list_check_files_close"]),
        ("index: list only (open handle)", raw["index_list_only"]),
        ("naive: walk + parse manifests", raw["naive_walk_parse"]),
    ]
    api = raw["index_open_list_close"]["median_us"]
    naive = raw["naive_walk_parse"]["median_us"]
    print(f"Discovering {raw['plugins']} runtime plugins on {raw['host']} "
          f"(index {raw['index_bytes'] / 1024:.0f} KiB; manifests "
          f"{raw['manifest_bytes'] / 1024:.0f} KiB)")
    print(f"{'':34} {'median':>11} {'quiet':>11} {'p90':>11} {'min':>11} {'runs':>6}")
    for label, s in rows:
        print(f"{label:34} {s['median_us']:>9.1f}us {s['quiet_median_us']:>9.1f}us "
              f"{s['p90_us']:>9.1f}us {s['min_us']:>9.1f}us {s['iterations']:>6}")
    print("(quiet: the lowest median of 5 rounds, i.e. with the least interference "
          "from other processes)")
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    verdict = "meets" if api < TARGET_US else "MISSES"
    print(f"index vs naive: {naive / api:.0f}x faster (medians); {verdict} the "
          f"{TARGET_US:.0f} us target: {api:.1f} us median, "
          f"{raw['index_open_list_close']['quiet_median_us']:.1f} us quiet"
          + (f" (load average {load:.1f} on {os.cpu_count()} CPUs)" if load is not None else ""))
    results = {
        "benchmark": "discovery",
        "plugins": raw["plugins"],
        "host": raw["host"],
        "cpu": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_1m": load,
        "index_bytes": raw["index_bytes"],
        "manifest_bytes": raw["manifest_bytes"],
        "index_open_list_close": raw["index_open_list_close"],
        "index_open_list_check_files_close": raw["index_open_list_check_files_close"],
        "index_list_only": raw["index_list_only"],
        "naive_walk_parse": raw["naive_walk_parse"],
        "ratio_naive_to_index": round(naive / api, 1),
        "target_us": TARGET_US,
        "meets_target": api < TARGET_US,
    }
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {HERE / 'results.json'}")


if __name__ == "__main__":
    main()
