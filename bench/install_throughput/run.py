#!/usr/bin/env python3
"""bench/install_throughput: installing one large package.

Makes a package of 2,000 files (500 MB by default: half random bytes, half
compressible text-like data), packs it, then in the same run and on the same
file system measures, best of N:

  baseline   zstd -dc <archive> | tar -x -C <dir>   followed by   sha256sum <archive>
  install    ireepkg install --no-cache <archive> into a fresh prefix
             (verifies every member hash, writes, syncs, commits)
  cached     ireepkg install <archive> again after a remove (files linked
             from the content-addressed cache)

and the peak memory (max RSS) of the install. Prints a table and writes
results.json beside this script.

Usage: run.py [--mb 500] [--files 2000] [--repeat 3] [--work DIR]
"""
import argparse
import json
import os
import pathlib
import random
import resource
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
IREEPKG = pathlib.Path(os.environ.get("IREEPKG_BIN", REPO / "build" / "bin" / "ireepkg"))


def make_package(root: pathlib.Path, total_mb: int, files: int):
    pkg = root / "bigpkg"
    if pkg.exists():
        shutil.rmtree(pkg)
    (pkg / "data").mkdir(parents=True)
    (pkg / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "bigpkg", "version": "1.0.0",
        "summary": "benchmark payload"}, indent=2))
    size = total_mb * 1024 * 1024 // files
    rng = random.Random(42)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(2000)]
    for i in range(files):
        d = pkg / "data" / f"{i // 100:02d}"
        d.mkdir(exist_ok=True)
        if i % 2:
            content = os.urandom(size)
        else:
            parts, n = [], 0
            while n < size:
                w = rng.choice(words) + b" "
                parts.append(w)
                n += len(w)
            content = b"".join(parts)[:size]
        (d / f"f{i:04d}.bin").write_bytes(content)
    return pkg


def timed(cmd, **kw):
    """Wall time and peak RSS (KiB) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, **kw)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{cmd} failed with {code}")
    return elapsed, usage.ru_maxrss


def rmtree(p):
    if p.exists():
        for dirpath, _, _ in os.walk(p):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="/tmp/ireepkg-bench-install")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    pkg = make_package(work, args.mb, args.files)
    dist = work / "dist"
    subprocess.run([IREEPKG, "pack", pkg, "-o", dist], check=True, stdout=subprocess.DEVNULL)
    archive = dist / "bigpkg-1.0.0.ireepkg"
    rmtree(pkg)
    unpacked = args.mb * 1024 * 1024
    env = dict(os.environ, IREEPKG_CACHE_DIR=str(work / "cache"))

    baseline, install, cached, rss = [], [], [], []
    for _ in range(args.repeat):
        out = work / "tar-out"
        rmtree(out)
        out.mkdir()
        subprocess.run(["sync"])
        t1, _ = timed(["sh", "-c", f"zstd -dc '{archive}' | tar -x -C '{out}'"])
        t2, _ = timed(["sha256sum", str(archive)], stdout=subprocess.DEVNULL)
        baseline.append(t1 + t2)
        rmtree(out)

        prefix = work / "prefix"
        rmtree(prefix)
        subprocess.run(["sync"])
        t, peak = timed([IREEPKG, "install", "--no-cache", "--quiet", "--prefix", prefix, archive], env=env)
        install.append(t)
        rss.append(peak)

        # Fill the cache, remove, then time the linked re-install.
        rmtree(prefix)
        rmtree(work / "cache")
        subprocess.run([IREEPKG, "install", "--quiet", "--prefix", prefix, archive], env=env, check=True)
        subprocess.run([IREEPKG, "remove", "--quiet", "--prefix", prefix, "bigpkg"], env=env, check=True)
        t, _ = timed([IREEPKG, "install", "--quiet", "--prefix", prefix, archive], env=env)
        cached.append(t)
        rmtree(prefix)

    result = {
        "package": {"files": args.files, "unpacked_bytes": unpacked,
                    "archive_bytes": archive.stat().st_size},
        "baseline_s": min(baseline), "install_s": min(install), "cached_install_s": min(cached),
        "ratio_install_over_baseline": min(install) / min(baseline),
        "install_peak_rss_mib": max(rss) / 1024,
        "install_mb_per_s": unpacked / 1e6 / min(install),
        "runs": args.repeat,
    }
    (HERE / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"package: {args.files} files, {unpacked / 2**20:.0f} MiB unpacked, "
          f"{archive.stat().st_size / 2**20:.0f} MiB archive")
    print(f"baseline (zstd -dc | tar -x; sha256sum): {min(baseline) * 1000:8.0f} ms")
    print(f"ireepkg install --no-cache:              {min(install) * 1000:8.0f} ms  "
          f"({result['ratio_install_over_baseline']:.2f}x baseline, target <= 1.0x)")
    print(f"ireepkg install, cached version:         {min(cached) * 1000:8.0f} ms  (target < 50 ms)")
    print(f"install peak RSS:                        {result['install_peak_rss_mib']:8.1f} MiB (target < 64 MiB)")


if __name__ == "__main__":
    main()
