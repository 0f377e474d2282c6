#!/usr/bin/env python3
"""How long touching fresh memory takes on this machine, now and then.

Maps N MiB of anonymous memory (transparent huge pages asked for, as
ireepkg's heap does), writes one byte per 4 KiB page, and prints how long
that took; --runs times, --pause seconds apart, optionally each right after
a command (e.g. `uv pip compile ...`, which frees 160 MB as it exits).

On a virtual machine that returns freed memory to its host (a balloon
device with free page reporting, DAMON proactive reclaim), the time jumps
whenever the pages handed out were returned: see docs/performance.md,
"Where resolution stands".

Usage: fresh_memory.py [--mib 28] [--runs 18] [--pause 1] [--after CMD...]
"""
import argparse
import mmap
import shlex
import subprocess
import time


def touch(mib, already_touched=False):
    """Seconds to write one byte per page of `mib` MiB newly mapped (or,
    with already_touched, mapped and written once before: the loop's own
    cost)."""
    size = mib << 20
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    if already_touched:
        for off in range(0, size, 4096):
            m[off] = 1
    t = time.perf_counter()
    for off in range(0, size, 4096):
        m[off] = 1
    elapsed = time.perf_counter() - t
    m.close()
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=28)
    ap.add_argument("--runs", type=int, default=18)
    ap.add_argument("--pause", type=float, default=1.0)
    ap.add_argument("--after", default="", help="a command to run before each touch")
    args = ap.parse_args()
    # The loop's own cost, on memory already faulted in.
    base = min(touch(args.mib, already_touched=True) for _ in range(3))
    print(f"loop overhead (memory already mapped): {base * 1000:.1f} ms")
    times = []
    for _ in range(max(1, min(args.runs, 1000))):
        if args.after:
            subprocess.run(shlex.split(args.after), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        t = touch(args.mib)
        times.append(t)
        print(f"{args.mib} MiB of fresh memory touched in {t * 1000:.1f} ms", flush=True)
        time.sleep(args.pause)
    times.sort()
    print(f"median {times[len(times) // 2] * 1000:.1f} ms, "
          f"min {times[0] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
