#!/usr/bin/env python3
"""bench/site: the registry web site for 10,000 packages x 20 versions.

Builds a synthetic signed registry (quickly: the index files, one real
archive per package for its newest version, and a snapshot signed with
`ireepkg sign`; older versions' archives are not written, since the site
reads only the newest one), then measures in the same run:

  generate    `ireepkg registry site REG -o SITE`: verifying the snapshot and
              every index file, hashing and reading each newest archive
              (manifest and README), rendering and writing every page.
              Into a new directory with an empty client cache (the first
              run fills the cache of verified index files), into a new
              directory again (the cache filled), over the first site with
              nothing changed, and as `publish --site` of one more package
              (the publish included). Wall and CPU time (the machine is
              shared: wall time includes waiting for the disk and the
              CPU), and how many files each wrote.
  size        files and bytes of the site; the search index; the pages.
  browser     in headless Chromium (Selenium, Debian's chromedriver): the
              time from navigation to the search being ready (the search
              index parsed, the first 50 results shown), and per query the
              time to filter all packages and show the results, layout
              included (median of 15 runs each).

The packages cycle through five kinds (embedded ELF for x86_64 and aarch64,
FatELF, a system library, an iree-static compiler plugin with options and a
hook, data only); each version depends on the previous package; one package
in seven has a yanked version (the one before the newest); requires.iree varies.

Prints a table and writes results.json beside this script (not tracked).

Usage: run.py [--packages 10000] [--versions 20] [--work DIR] [--keep]
              [--no-browser]
"""
import argparse
import hashlib
import io
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
IREEPKG = pathlib.Path(os.environ.get("IREEPKG_BIN", BUILD / "bin" / "ireepkg"))

WORDS = ["conv", "matmul", "softmax", "attention", "tile", "fuse", "vector",
         "gpu", "cpu", "rocm", "cuda", "vulkan", "quant", "int8", "fp8", "pad",
         "pack", "sparse", "torch", "onnx", "tosa", "stablehlo", "linalg",
         "dispatch", "ukernel", "transform", "spec", "tuning", "winograd",
         "reduce", "scan", "sort", "topk", "gather", "scatter", "fft"]
IREE = [">=3.10.0, <4.0.0", ">=3.12.0, <4.0.0", ">=3.13.0, <3.14.0", None]


def ireepkg(*args, env=None):
    r = subprocess.run([str(IREEPKG), *map(str, args)], capture_output=True,
                       text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"ireepkg {' '.join(map(str, args))} failed:\n{r.stderr}")
    return r.stdout


def dumps(value) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def tar_member(tar, path, data: bytes):
    info = tarfile.TarInfo(path)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def package(i, n_versions):
    w1, w2 = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
    name = f"{w1}-{w2}-{i:05d}"
    kind = i % 5
    versions = [f"0.{v}.0" for v in range(1, n_versions)] + ["1.0.0"]
    summary = (f"{w1.capitalize()} {w2} plugin number {i} for IREE "
               f"({['embedded ELF', 'FatELF', 'system library', 'compiler', 'data'][kind]})")
    manifest = {"schema_version": 1, "name": name, "version": versions[-1],
                "summary": summary, "license": ["Apache-2.0", "MIT", "BSD-3-Clause"][i % 3],
                "keywords": sorted({w1, w2, "bench"})}
    iree = IREE[i % len(IREE)]
    if iree:
        manifest["requires"] = {"iree": iree}
    files = {"README.md": (f"# {name}\n\n{summary}.\n\n## Use\n\n```sh\nireepkg add {name}\n```\n\n"
                           "- fast\n- *careful*\n- [docs](https://example.org/docs)\n").encode()}
    platforms = []
    if kind in (0, 1):
        if kind == 0:
            library = {"x86_64": "runtime/p.x86_64.so", "aarch64": "runtime/p.aarch64.so"}
        else:
            library = {"fat": "runtime/p.sos"}
        for p in library.values():
            files[p] = b"\x7fELF" + bytes(60)
        manifest["runtime"] = {"plugins": [{"name": name.replace("-", "_"), "format": "embedded-elf",
                                            "library": library, "imports": [f"{w1}_{i}_kernel"]}]}
        platforms = [f"{os}-{arch}" for arch in ("aarch64", "x86_64")
                     for os in ("android", "linux", "macos", "windows")]
    elif kind == 2:
        files["lib/libp.so"] = b"\x7fELF" + bytes(60)
        manifest["runtime"] = {"plugins": [{"name": name.replace("-", "_"), "format": "system-library",
                                            "library": {"linux-x86_64": "lib/libp.so"},
                                            "imports": [f"{w1}_{i}_kernel"]}]}
        platforms = ["linux-x86_64"]
    elif kind == 3:
        manifest["compiler"] = {
            "plugins": [{"id": "hal_target_llvm_cpu", "kind": "iree-static",
                         "description": f"{w1} options",
                         "options": {f"iree-{w1}-tile-{i}": {"type": "integer", "minimum": 1,
                                                             "maximum": 128, "default": 8,
                                                             "description": "tile size"},
                                     f"iree-{w1}-mode-{i}": {"type": "string", "enum": ["fast", "precise"],
                                                             "default": "fast",
                                                             "description": "mode"}}}],
            "hooks": [{"point": "preprocessing", "pipeline": "func.func(canonicalize)"}]}
    deps = {WORDS_NAME(i - 1): "^1.0"} if i > 0 else {}
    return name, versions, manifest, files, platforms, deps, iree, summary


def WORDS_NAME(i):
    w1, w2 = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
    return f"{w1}-{w2}-{i:05d}"


def make_registry(work: pathlib.Path, n_packages: int, n_versions: int):
    env = dict(os.environ, IREEPKG_CACHE_DIR=str(work / "cache"))
    ireepkg("key", "generate", "-o", work / "k")
    reg = work / "registry"
    ireepkg("registry", "init", reg, "--key", work / "k.key", "--name", "bench", env=env)
    staging = work / "tars"
    staging.mkdir()
    index_hashes = {}
    pending = []  # (name, tar path, final archive path)
    for i in range(n_packages):
        name, versions, manifest, files, platforms, deps, iree, summary = package(i, n_versions)
        if deps:
            manifest["dependencies"] = deps
        mtext = dumps(manifest)
        record = {"schema_version": 1, "files": sorted(
            [{"path": "ireeplugin.json", "sha256": hashlib.sha256(mtext).hexdigest(), "size": len(mtext)}] +
            [{"path": p, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)} for p, d in files.items()],
            key=lambda e: e["path"])}
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            tar_member(tar, "ireeplugin.json", mtext)
            tar_member(tar, ".ireepkg/RECORD.json", dumps(record))
            for p, d in sorted(files.items()):
                tar_member(tar, p, d)
        tar_path = staging / f"{name}.tar"
        tar_path.write_bytes(buf.getvalue())
        archive = f"archives/{name}/{name}-{versions[-1]}.ireepkg"
        pending.append((name, versions, tar_path, archive, platforms, deps, iree, summary, i))
    # One zstd process for every archive.
    tars = [str(p[2]) for p in pending]
    for k in range(0, len(tars), 2000):
        subprocess.run(["zstd", "-q", "-3", "--rm", *tars[k:k + 2000]], check=True)
    for name, versions, tar_path, archive, platforms, deps, iree, summary, i in pending:
        dest = reg / archive
        dest.parent.mkdir(parents=True, exist_ok=True)
        zst = pathlib.Path(str(tar_path) + ".zst")
        data = zst.read_bytes()
        zst.replace(dest)
        entries = []
        for j, v in enumerate(versions):
            newest = j == len(versions) - 1
            e = {"version": v, "summary": summary, "platforms": platforms,
                 "archive": f"archives/{name}/{name}-{v}.ireepkg",
                 "sha256": hashlib.sha256(data).hexdigest() if newest
                 else hashlib.sha256(f"{name}{v}".encode()).hexdigest(),
                 "size": len(data) if newest else 1000 + j,
                 "yanked": j == len(versions) - 2 and i % 7 == 6}
            if deps:
                e["dependencies"] = deps
            if iree:
                e["requires"] = {"iree": iree}
            entries.append(e)
        text = dumps({"schema_version": 1, "name": name, "versions": entries})
        (reg / "index" / f"{name}.json").write_bytes(text)
        index_hashes[name] = "sha256:" + hashlib.sha256(text).hexdigest()
    shutil.rmtree(staging)
    expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 30 * 86400))
    (reg / "snapshot.json").write_bytes(dumps(
        {"schema_version": 1, "version": 2, "expires": expires, "index": index_hashes}))
    ireepkg("sign", reg / "snapshot.json", "--key", work / "k.key")
    return reg, env


def dir_size(root: pathlib.Path):
    files = [p for p in root.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def browser_times(site: pathlib.Path, runs=15):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,900"):
        o.add_argument(a)
    if os.geteuid() == 0:
        o.add_argument("--no-sandbox")  # Chromium refuses its sandbox as root
    d = webdriver.Chrome(options=o, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        loads = []
        for _ in range(5):
            d.get("about:blank")
            d.get((site / "index.html").as_uri())
            end = time.monotonic() + 60
            while d.execute_script("return document.body && document.body.getAttribute('data-search-ready')") != "true":
                if time.monotonic() > end:
                    raise SystemExit("the search never became ready")
                time.sleep(0.01)
            loads.append(d.execute_script(
                "return performance.now()"))  # ms since navigation start (upper bound)
        queries = {"(everything)": ("", ""), "conv": ("conv", ""), "matmul tile": ("matmul tile", ""),
                   "an exact name": (WORDS_NAME(4242), ""), "no match": ("zzzz", ""),
                   "kind filter only": ("", "compiler: iree-static")}
        out = {}
        for label, (text, kind) in queries.items():
            times = []
            for _ in range(runs):
                times.append(d.execute_script("""
                    const q = document.getElementById('q'), k = document.getElementById('kind');
                    const want = arguments[1];
                    k.value = '';
                    for (const o of k.options) if (o.textContent === want) k.value = o.value;
                    q.value = '';
                    q.dispatchEvent(new Event('input'));
                    document.body.offsetHeight;
                    const t0 = performance.now();
                    q.value = arguments[0];
                    k.dispatchEvent(new Event('change'));
                    document.body.offsetHeight;  // layout included
                    return [performance.now() - t0, +document.body.getAttribute('data-search-count')];
                    """, text, kind))
            out[label] = {"median_ms": round(statistics.median(t[0] for t in times), 2),
                          "max_ms": round(max(t[0] for t in times), 2),
                          "matches": times[0][1]}
        return {"ready_ms_median": round(statistics.median(loads), 1), "queries": out}
    finally:
        d.quit()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", type=int, default=10000)
    ap.add_argument("--versions", type=int, default=20)
    ap.add_argument("--work", type=pathlib.Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="ireepkg-bench-site-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        t = time.monotonic()
        reg, env = make_registry(work, args.packages, args.versions)
        made = time.monotonic() - t
        print(f"registry: {args.packages} packages x {args.versions} versions, made in {made:.1f} s")
        runs = []
        extra = work / "extra"
        (extra / "src").mkdir(parents=True)
        (extra / "src" / "ireeplugin.json").write_text(json.dumps(
            {"schema_version": 1, "name": "one-more", "version": "1.0.0", "summary": "published last"}))
        (extra / "src" / "README.md").write_text("# one-more\n")
        ireepkg("pack", extra / "src", "-o", extra)
        site_args = ["--url", "https://plugins.example.org/iree", "--json"]
        for label, command in (
                ("new directory, empty client cache",
                 ["registry", "site", reg, "-o", work / "site", *site_args]),
                ("new directory, index cache filled",
                 ["registry", "site", reg, "-o", work / "site2", *site_args]),
                ("over the first site, nothing changed",
                 ["registry", "site", reg, "-o", work / "site", *site_args]),
                ("publish one package with --site (the publish included)",
                 ["publish", extra / "one-more-1.0.0.ireepkg", "--registry", reg, "--key",
                  work / "k.key", "--site", work / "site", "--site-url",
                  "https://plugins.example.org/iree"])):
            t = time.monotonic()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = ireepkg(*command, env=env)
            wall = time.monotonic() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            run = {"run": label, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
            if command[0] == "registry":
                r = json.loads(out)
                assert r["packages"] == args.packages and r["versions"] == args.packages * args.versions, r
                assert not r["warnings"], r["warnings"][:3]
                run["written"] = r["written"]
            else:
                run["written"] = int(out.split(" new or changed")[0].rsplit(", ", 1)[1])
            runs.append(run)
        shutil.rmtree(work / "site2")
        site = work / "site"
        files, total = dir_size(site)
        pages = sorted((site / "packages").iterdir(), key=lambda p: p.stat().st_size)
        size = {"files": files, "bytes": total,
                "index_html": (site / "index.html").stat().st_size,
                "all_html": (site / "all.html").stat().st_size,
                "search_index_js": (site / "assets" / "search-index.js").stat().st_size,
                "package_page_median": pages[len(pages) // 2].stat().st_size}
        results = {"packages": args.packages, "versions": args.versions, "make_registry_s": round(made, 1),
                   "generate": runs, "size": size}
        if not args.no_browser:
            results["browser"] = browser_times(site)
        for r in runs:
            print(f"{r['run']}: {r['wall_s']} s wall, {r['cpu_s']} s CPU, "
                  f"{r['written']} files written")
        print(f"site: {files} files, {total / 2**20:.1f} MiB; search index "
              f"{size['search_index_js'] / 2**20:.2f} MiB; median package page "
              f"{size['package_page_median'] / 1024:.1f} KiB")
        if "browser" in results:
            b = results["browser"]
            print(f"browser: search ready {b['ready_ms_median']} ms after navigation (median of 5)")
            for q, v in b["queries"].items():
                print(f"  {q:18} {v['matches']:6} matches  median {v['median_ms']:7.2f} ms  max {v['max_ms']:7.2f} ms")
        (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
