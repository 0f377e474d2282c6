#!/usr/bin/env python3
"""bench/parallel_download: 50 package archives from a loopback server.

Makes 50 files of random bytes (256 KiB to 2 MiB, fixed seed), serves them
on 127.0.0.1 and downloads them with ireepkg's HTTP client (through
build/bin/ireepkg-fetch-driver, which loads libireepkg_http.so as ireepkg
does; every file is streamed into SHA-256 and a temporary file, verified and
renamed). Loopback has neither latency nor a bandwidth limit, so two kinds of
remote server are modelled:

  latency    tests/net/fault_server.py answering every request after
             --delay ms (time to first byte), unlimited bandwidth
  bandwidth  tests/net/fault_server.py sending every body at --rate KiB/s
             (a server or link that caps each connection)
  loopback   nginx, no limits (the client's own cost: hashing, writing)

For each: every file downloaded alone (the sum and the slowest of those),
then all 50 in one call with --parallel 8 (ireepkg's default) and 50, best
of --repeat. Beside it, in the same run, `curl --parallel` with the same
limits fetching the same URLs (no hashing) as a baseline. Target: the wall
time of all 50 close to the slowest single download, not the sum.

Prints a table and writes results.json beside this script.

Usage: run.py [--count 50] [--delay 150] [--rate 4096] [--repeat 3]
              [--work DIR]
"""
import argparse
import hashlib
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
DRIVER = BUILD / "bin" / "ireepkg-fetch-driver"
sys.path.insert(0, str(REPO / "tests" / "cli"))
from netfix import fault_server, nginx_server  # noqa: E402


def make_files(www: pathlib.Path, count: int):
    """count files of 256 KiB-2 MiB; returns [(name, size, sha256)]."""
    rng = random.Random(42)
    (www / "archives").mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(count):
        size = rng.randint(256 * 1024, 2 * 1024 * 1024)
        data = rng.randbytes(size)
        name = f"archives/pkg{i:02d}-1.0.0.ireepkg"
        (www / name).write_bytes(data)
        out.append((name, size, hashlib.sha256(data).hexdigest()))
    return out


def drive(request):
    r = subprocess.run([str(DRIVER), "-"], input=json.dumps(request),
                       capture_output=True, text=True, timeout=600)
    out = json.loads(r.stdout)
    if not out["ok"]:
        sys.exit(f"download failed: {out['error']['message']}")
    return out


def download(base, files, dest: pathlib.Path, parallel, ca_file=None):
    """All `files` in one call; returns its wall time in seconds."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    options = {"parallel": parallel}
    if ca_file:
        options["ca_file"] = ca_file
    out = drive({"options": options, "downloads": [
        {"urls": [f"{base}/{name}"], "dest": str(dest / pathlib.Path(name).name),
         "size": size, "sha256": digest, "label": name}
        for name, size, digest in files]})
    if len(os.listdir(dest)) != len(files):
        sys.exit("not every file arrived")
    return out["downloads_ms"] / 1000


def curl_baseline(base, files, dest: pathlib.Path, parallel):
    """curl --parallel over the same URLs (writes, no hashing)."""
    curl = shutil.which("curl")
    if not curl:
        return None
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    args = [curl, "-sS", "--no-progress-meter", "--fail", "--parallel", "--parallel-immediate",
            "--parallel-max", str(parallel)]
    for name, _, _ in files:
        args += ["-o", str(dest / pathlib.Path(name).name), f"{base}/{name}"]
    start = time.perf_counter()
    subprocess.run(args, check=True, timeout=600)
    return time.perf_counter() - start


def scenario(label, base, files, work, repeat):
    print(f"\n== {label}: {base}", flush=True)
    singles = [download(base, [f], work / "single", 1) for f in files]
    result = {"sum_of_singles_s": sum(singles), "slowest_single_s": max(singles),
              "median_single_s": statistics.median(singles)}
    for parallel in (8, len(files)):
        walls = [download(base, files, work / "all", parallel)
                 for _ in range(repeat)]
        result[f"ireepkg_parallel_{parallel}_s"] = min(walls)
        curl = [curl_baseline(base, files, work / "curl", parallel)
                for _ in range(repeat)]
        if curl[0] is not None:
            result[f"curl_parallel_{parallel}_s"] = min(curl)
    for k, v in result.items():
        print(f"  {k:28s} {v * 1000:9.0f} ms")
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--delay", type=int, default=150,
                    help="latency scenario: ms before each response")
    ap.add_argument("--rate", type=int, default=4096,
                    help="bandwidth scenario: KiB/s per connection")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="/tmp/ireepkg-bench-download")
    args = ap.parse_args()
    if not DRIVER.exists():
        sys.exit(f"{DRIVER} is missing: ninja -C build ireepkg-fetch-driver")

    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    www = work / "www"
    files = make_files(www, args.count)
    total = sum(size for _, size, _ in files)
    print(f"{len(files)} files, {total / 2**20:.1f} MiB "
          f"({min(s for _, s, _ in files) / 1024:.0f} KiB to "
          f"{max(s for _, s, _ in files) / 1024:.0f} KiB)")

    results = {"files": len(files), "total_bytes": total,
               "delay_ms": args.delay, "rate_kib_per_s": args.rate}
    with fault_server(www) as url:
        results["latency"] = scenario(
            f"latency: {args.delay} ms before each response (fault server)",
            f"{url}/delay-{args.delay}", files, work, args.repeat)
        results["bandwidth"] = scenario(
            f"bandwidth: {args.rate} KiB/s per connection (fault server)",
            f"{url}/rate-{args.rate}", files, work, args.repeat)
    with nginx_server(www) as (url, _):
        results["loopback"] = scenario("loopback, no limits (nginx)", url,
                                       files, work, args.repeat)

    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print("\nwall time of all files in one call, against the slowest single "
          "download and the sum:")
    for key in ("latency", "bandwidth", "loopback"):
        r = results[key]
        for p in (8, len(files)):
            wall = r[f"ireepkg_parallel_{p}_s"]
            print(f"  {key:9s} parallel {p:2d}: {wall * 1000:7.0f} ms = "
                  f"{wall / r['slowest_single_s']:5.2f}x slowest, "
                  f"{wall / r['sum_of_singles_s']:5.3f}x sum")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
