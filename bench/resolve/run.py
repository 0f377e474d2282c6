#!/usr/bin/env python3
"""bench/resolve: `ireepkg lock` against `uv pip compile` on the same graph.

Generates (seeded, deterministic) a dependency graph of N packages x V
versions (default 10,000 x 20) with realistic fan-out, plus a hard
backtracking case, and writes it twice:

  registry/      an ireepkg directory registry without archives: config.json,
                 index/<name>.json, snapshot.json signed with a key made by
                 `ireepkg key generate` and signed by `ireepkg sign`
  wheels/        the same graph as tiny wheels (METADATA with Requires-Dist,
                 WHEEL, RECORD), one per non-yanked version, for
                 `uv pip compile --no-index --find-links wheels/`

and simple/, a PEP 503 index over wheels/, with two projects over it
(`project/plugins.json` + `requirements.in`, and `hard/plugins.json` +
`hard/requirements.in`). Generated data is cached under
build/bench-resolve/<N>x<V>-<hash of the parameters>/, so re-runs skip
generation.

Then, in the same run, for each case: three cold runs of each tool (empty
metadata cache; the median is reported), then --runs warm runs of each,
alternating. A warm ireepkg
run is `ireepkg lock` with plugins.lock.json deleted first (so it resolves
from scratch, with no preferred versions) and its metadata cache kept; a warm
uv run is `uv pip compile` with its cache kept, over --find-links wheels/
and, for reference, over the index simple/. The solutions are checked
against the graph (every requirement satisfied, nothing yanked) and against
each other (same name -> version). Then a no-op `ireepkg lock`: the lockfile
in place and nothing changed, and, for reference, `ireepkg sync --dry-run`
of the unchanged project into an empty prefix (a plan to install every
locked package).

Then the real no-op sync, for the main case. The registry above has no
archives, so after the main case is measured its solution (about 1,000
packages) is written out as real packages: per version, a package
directory with an ireeplugin.json (name, version, the dependencies the
graph gives it) and one small data file, packed with `ireepkg pack` and
published with one `ireepkg publish` into a registry made by `ireepkg
registry init` (cached in <data>/installed-<hash of the solution>/, beside a
project/plugins.json asking for the same roots). Its project is locked (not
measured; the solution must be the main case's), synced once into an empty
prefix (measured: the first sync, installing every package), then synced
again with nothing changed: the no-op sync, and the same with
<cache>/syncs deleted before each run (the full check), alternating. After
every sync the prefix must hold exactly the locked packages and
`sync --json` must report no change.

Then the main case over HTTP: the registry and simple/ served by nginx on
127.0.0.1 (nginx-light, as the tests use it), `ireepkg lock` against `uv
pip compile --index-url`, three cold runs of each and then --runs warm
ones, alternating, both giving the main case's solution.

Targets: warm <= 0.5x and cold <= 1.0x uv over the local index, no-op lock
and no-op sync under 10 ms. Prints a table (median and min wall time, CPU
time, peak RSS, the ratios) and the no-op lines, and writes results.json
beside this script.

Yanked versions: an ireepkg registry marks them `"yanked": true` and the
resolver never chooses them; --find-links has no notion of yanking, so their
wheels are left out of wheels/. Both resolvers see the same choices.

Usage: run.py [--packages 10000] [--versions 20] [--roots 30] [--runs 7]
              [--quick] [--seed 1] [--json] [--work DIR] [--regenerate]
              [--generate-only] [--uv-only]
Environment: IREEPKG_BIN, the ireepkg to measure (default build/bin/ireepkg).

Why one file of this size: it is one self-contained script, run by path with
any Python 3 and nothing installed; the generator, the writers of each data
set and the measurements share the graph's types and the checks of its
solutions.
"""
import argparse
import base64
import bisect
import datetime
import hashlib
import io
import json
import multiprocessing
import multiprocessing.pool
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "cli"))
from netfix import nginx_server  # noqa: E402
IREEPKG = pathlib.Path(os.environ.get("IREEPKG_BIN", REPO / "build" / "bin" / "ireepkg"))
TIME = "/usr/bin/time"  # GNU time, for the peak RSS
UV_VERSION = "0.13.9"
GENERATOR_VERSION = 2  # bump whenever the generated data changes
IREE_VERSION = "3.13.0"  # the generated packages have no IREE requirement

#===----------------------------------------------------------------------===#
# Versions and constraints
#===----------------------------------------------------------------------===#


def vstr(v):
    return "%d.%d.%d" % v


class Cons:
    """A half-open range [lo, hi) of versions (None: unbounded), with its
    spelling in ireepkg's constraint syntax and as a PEP 440 specifier."""
    __slots__ = ("lo", "hi", "text", "pep")

    def __init__(self, lo, hi, text, pep):
        self.lo, self.hi, self.text, self.pep = lo, hi, text, pep

    def contains(self, v):
        return (self.lo is None or v >= self.lo) and (self.hi is None or v < self.hi)


def caret(v):  # major >= 1 everywhere, so ^ is "same major"
    hi = (v[0] + 1, 0, 0)
    return Cons(v, hi, "^" + vstr(v), f">={vstr(v)},<{vstr(hi)}")


def tilde(v):
    hi = (v[0], v[1] + 1, 0)
    return Cons(v, hi, "~" + vstr(v), f">={vstr(v)},<{vstr(hi)}")


def between(v, major_below):
    hi = (major_below, 0, 0)
    return Cons(v, hi, f">={vstr(v)}, <{vstr(hi)}", f">={vstr(v)},<{vstr(hi)}")


def at_least(v):
    return Cons(v, None, ">=" + vstr(v), ">=" + vstr(v))


def any_version():
    return Cons(None, None, "*", "")


#===----------------------------------------------------------------------===#
# The graph
#===----------------------------------------------------------------------===#
#
# graph: {name: [Release]} with releases in ascending version order.


class Release:
    __slots__ = ("version", "deps", "yanked")

    def __init__(self, version, deps, yanked):
        self.version, self.deps, self.yanked = version, deps, yanked


FANOUT_WEIGHTS = [15, 20, 20, 17, 13, 9, 6]  # 0..6 dependencies, mean ~2.4


def generate_main(n, nv, rnd):
    """N packages on a common time line [0, 1]. Lower-numbered packages are
    older and more popular: dependencies are drawn from lower numbers, skewed
    towards the bottom, so the graph is acyclic. Versions move by patch
    (65%), minor (32%) or major (3%) steps. 0-6 dependencies per package
    (mean 2.4); each version is released at a point in time and constrains
    each dependency from the version of it that was newest then (30%: an
    older one of the same major): ^ (35%), ~ (5%), a two-major range (20%),
    an open lower bound (40%). Versions inherit their predecessor's
    dependencies, with occasional additions (8%), removals (5%) and
    refreshed constraints (20% per dependency). 15% of packages stop being
    released early, their last versions pinning older majors: that, and
    newer lower bounds, is where conflicts come from. 2% of versions are
    yanked, the newest among them.

    The newest non-yanked version of every package is made to accept the
    newest non-yanked versions of its dependencies (a healthy ecosystem:
    what was released last works together), so every request has one best
    solution, which any complete resolver must find whatever order it
    decides packages in: this case measures scale, the hard case
    backtracking."""
    names = [f"pkg-{i:05d}" for i in range(n)]
    versions, times = [], []
    graph = {}
    for i in range(n):
        v = (1, rnd.choice((0, 0, 0, 1, 2, 3)), 0)
        vs = [v]
        for _ in range(nv - 1):
            r = rnd.random()
            if r < 0.03:
                v = (v[0] + 1, 0, 0)
            elif r < 0.35:
                v = (v[0], v[1] + 1, 0)
            else:
                v = (v[0], v[1], v[2] + 1)
            vs.append(v)
        birth = min(0.9, max(0.0, 0.75 * i / n + rnd.uniform(-0.05, 0.05)))
        end = 1.0 if rnd.random() < 0.85 else rnd.uniform(birth + 0.05, 1.0)
        ts = sorted(rnd.uniform(birth, min(end, 1.0)) for _ in range(nv))
        versions.append(vs)
        times.append(ts)
    yanked = [[rnd.random() < 0.02 for _ in range(nv)] for _ in range(n)]
    for y in yanked:
        if all(y):
            y[-1] = False
    # The newest non-yanked versions work together (see above).
    witness = [max(j for j in range(nv) if not y[j]) for y in yanked]

    def make_cons(d, t):
        # The newest version of d at time t, sometimes an older one of the
        # same major as the lower bound.
        idx = max(0, bisect.bisect_right(times[d], t) - 1)
        base = versions[d][idx]
        if rnd.random() < 0.3:
            same = [k for k in range(idx + 1) if versions[d][k][0] == base[0]]
            base = versions[d][rnd.choice(same)]
        r = rnd.random()
        if r < 0.35:
            return caret(base)
        if r < 0.40:
            return tilde(base)
        if r < 0.60:
            return between(base, base[0] + 2)
        return at_least(base)

    def pick_target(i, taken):
        for _ in range(20):
            d = int(i * rnd.random() ** 2)
            if d not in taken:
                return d
        return None

    for i in range(n):
        deps = {}  # target index -> Cons
        releases = []
        for j in range(nv):
            t = times[i][j]
            if i > 0:
                if j == 0:
                    k = rnd.choices(range(len(FANOUT_WEIGHTS)), FANOUT_WEIGHTS)[0]
                    for _ in range(min(k, i)):
                        d = pick_target(i, deps)
                        if d is not None:
                            deps[d] = make_cons(d, t)
                else:
                    if len(deps) < 6 and rnd.random() < 0.08:
                        d = pick_target(i, deps)
                        if d is not None:
                            deps[d] = make_cons(d, t)
                    if deps and rnd.random() < 0.05:
                        del deps[rnd.choice(sorted(deps))]
                    for d in sorted(deps):
                        if rnd.random() < 0.2:
                            deps[d] = make_cons(d, t)
            rdeps = dict(deps)
            if j == witness[i]:
                for d, c in rdeps.items():
                    if not c.contains(versions[d][witness[d]]):
                        rdeps[d] = caret(versions[d][witness[d]])
            releases.append(Release(versions[i][j],
                                    {names[d]: c for d, c in sorted(rdeps.items())},
                                    yanked[i][j]))
        graph[names[i]] = releases
    return graph, witness


# chain -> the newest version that still fits (at most 11: --versions >= 12)
HARD_CHAINS = {"a": 7, "b": 11, "c": 4, "d": 9, "e": 2, "f": 5}
HARD_DEPTH = 8


def generate_hard(nv):
    """The newest versions of the roots conflict deep down.

    plugins.json / requirements.in: hard-app, hard-legacy (any version).
    hard-legacy (every version) needs hard-core <2. hard-app needs the heads
    of six chains hard-<x>0 -> hard-<x>1 -> ... -> hard-<x>7, where
    hard-<x><l> k.0.0 needs hard-<x><l+1> >=k.0.0, and the chain's last
    package needs hard-core ^2 from version T_x + 1 on (^1 below). Only
    k <= T_x fits, which a resolver can only find out by trying: it picks
    the newest head, follows the chain down eight levels to hard-core, finds
    the conflict with hard-legacy there, and must back off up the chain to
    an older head (PubGrub learns why, and skips what the same reason
    rules out). The unique
    solution is every chain at T_x.0.0, hard-core 1.9.0, hard-app and
    hard-legacy at their newest."""
    graph = {}
    core = [(1, m, 0) for m in range(10)] + [(2, m, 0) for m in range(max(1, nv - 10))]
    graph["hard-core"] = [Release(v, {}, False) for v in core]
    graph["hard-legacy"] = [Release((1, m, 0), {"hard-core": Cons(None, (2, 0, 0), "<2.0.0", "<2.0.0")},
                                    False) for m in range(nv)]
    graph["hard-app"] = [Release((k, 0, 0), {f"hard-{x}0": at_least((1, 0, 0)) for x in HARD_CHAINS},
                                 False) for k in range(1, nv + 1)]
    for x, fit in HARD_CHAINS.items():
        for lvl in range(HARD_DEPTH):
            rel = []
            for k in range(1, nv + 1):
                if lvl + 1 < HARD_DEPTH:
                    deps = {f"hard-{x}{lvl + 1}": at_least((k, 0, 0))}
                else:
                    deps = {"hard-core": caret((2, 0, 0) if k > fit else (1, 0, 0))}
                rel.append(Release((k, 0, 0), deps, False))
            graph[f"hard-{x}{lvl}"] = rel
    return graph


def hard_expected(nv):
    sol = {"hard-app": (nv, 0, 0), "hard-legacy": (1, nv - 1, 0), "hard-core": (1, 9, 0)}
    for x, fit in HARD_CHAINS.items():
        for lvl in range(HARD_DEPTH):
            sol[f"hard-{x}{lvl}"] = (min(fit, nv), 0, 0)
    return sol


def generate(n, nv, nroots, seed):
    import random
    rnd = random.Random(seed)
    graph, witness = generate_main(n, nv, rnd)
    # Roots: leaf-side packages (the top fifth), mostly any version, some
    # with a lower bound.
    lo = int(n * 0.8)
    roots = {}
    for i in sorted(rnd.sample(range(lo, n), min(nroots, n - lo))):
        name = f"pkg-{i:05d}"
        if rnd.random() < 0.6:
            roots[name] = any_version()
        else:
            roots[name] = at_least(graph[name][rnd.randint(0, witness[i])].version)
    graph.update(generate_hard(nv))
    hard_roots = {"hard-app": any_version(), "hard-legacy": any_version()}
    return graph, roots, hard_roots


def check_solution(graph, roots, sol):
    """Problems of `sol` ({name: version tuple}) as a solution for `roots`."""
    problems = []
    by_version = {name: {r.version: r for r in rels} for name, rels in graph.items()}
    for name, c in roots.items():
        if name not in sol or not c.contains(sol[name]):
            problems.append(f"root {name} {c.text}: got {sol.get(name)}")
    for name, v in sol.items():
        rel = by_version.get(name, {}).get(v)
        if rel is None:
            problems.append(f"{name} {vstr(v)} does not exist")
            continue
        if rel.yanked:
            problems.append(f"{name} {vstr(v)} is yanked")
        for d, c in rel.deps.items():
            if d not in sol or not c.contains(sol[d]):
                problems.append(f"{name} {vstr(v)} needs {d} {c.text}: got {sol.get(d)}")
    return problems


#===----------------------------------------------------------------------===#
# Writing the registry, the projects and the wheels
#===----------------------------------------------------------------------===#


def canonical(obj):
    """As `ireepkg publish` writes registry files: sorted keys, indent 2."""
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def write_registry(graph, reg, key_base):
    (reg / "index").mkdir(parents=True)
    snapshot = {}
    for name in sorted(graph):
        versions = []
        for r in graph[name]:
            v = vstr(r.version)
            e = {"version": v, "platforms": [],
                 "archive": f"archives/{name}/{name}-{v}.ireepkg",
                 "sha256": hashlib.sha256(f"{name}-{v}".encode()).hexdigest(),
                 "size": 4096, "yanked": r.yanked}
            if r.deps:
                e["dependencies"] = {d: c.text for d, c in r.deps.items()}
            versions.append(e)
        data = canonical({"schema_version": 1, "name": name, "versions": versions}).encode()
        (reg / "index" / f"{name}.json").write_bytes(data)
        snapshot[name] = "sha256:" + hashlib.sha256(data).hexdigest()
    pub = public_key_line(key_base)
    (reg / "config.json").write_text(canonical({"schema_version": 1, "name": "bench",
                                                 "keys": [pub]}))
    expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3650))
    (reg / "snapshot.json").write_text(canonical({
        "schema_version": 1, "version": 1,
        "expires": expires.strftime("%Y-%m-%dT%H:%M:%SZ"), "index": snapshot}))
    subprocess.run([IREEPKG, "sign", reg / "snapshot.json", "--key", f"{key_base}.key"],
                   check=True, stdout=subprocess.DEVNULL)


def public_key_line(key_base):
    lines = pathlib.Path(f"{key_base}.pub").read_text().splitlines()
    return next(line for line in lines if line.startswith("RW"))


def write_plugins_json(d, registry_name, reg, pub, roots):
    """plugins.json asking for `roots` (name -> constraint) from one registry."""
    plugins = []
    for name, c in roots.items():
        p = {"name": name}
        if c.text != "*":
            p["version"] = c.text
        plugins.append(p)
    (d / "plugins.json").write_text(json.dumps({
        "schema_version": 1,
        "registries": [{"name": registry_name, "url": str(reg), "public_key": pub}],
        "plugins": plugins}, indent=2) + "\n")


def write_projects(base, reg, key_base, roots, hard_roots):
    pub = public_key_line(key_base)
    for sub, rs in (("project", roots), ("hard", hard_roots)):
        d = base / sub
        d.mkdir()
        write_plugins_json(d, "bench", reg, pub, rs)
        (d / "requirements.in").write_text("".join(f"{n}{c.pep}\n" for n, c in rs.items()))


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


WHEEL_FILE = b"Wheel-Version: 1.0\nGenerator: ireepkg-bench-resolve\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _write_wheels(args):
    """Writes a batch of wheels: [(dir, name, version, [requires-dist])]."""
    for out, name, version, requires in args:
        dist = name.replace("-", "_")
        info = f"{dist}-{version}.dist-info"
        meta = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                + "".join(f"Requires-Dist: {r}\n" for r in requires)).encode()
        record = (f"{info}/METADATA,{_record_hash(meta)},{len(meta)}\n"
                  f"{info}/WHEEL,{_record_hash(WHEEL_FILE)},{len(WHEEL_FILE)}\n"
                  f"{info}/RECORD,,\n").encode()
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            for member, data in (("METADATA", meta), ("WHEEL", WHEEL_FILE), ("RECORD", record)):
                zi = zipfile.ZipInfo(f"{info}/{member}", date_time=(1980, 1, 1, 0, 0, 0))
                zi.external_attr = 0o644 << 16
                z.writestr(zi, data)
        with open(os.path.join(out, f"{dist}-{version}-py3-none-any.whl"), "wb") as f:
            f.write(buf.getvalue())
    return len(args)


def write_wheels(graph, out, jobs):
    out.mkdir()
    work = []
    for name in sorted(graph):
        for r in graph[name]:
            if r.yanked:
                continue  # --find-links knows no yanking: leave them out
            work.append((str(out), name, vstr(r.version),
                         [f"{d}{c.pep}" for d, c in r.deps.items()]))
    batches = [work[i:i + 2000] for i in range(0, len(work), 2000)]
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            done = sum(pool.imap_unordered(_write_wheels, batches))
    else:
        done = sum(map(_write_wheels, batches))
    return done


def write_simple_index(graph, out):
    """A PEP 503 index over wheels/: simple/<name>/index.html per package,
    linking the wheels by relative URL."""
    out.mkdir()
    for name in sorted(graph):
        d = out / name
        d.mkdir()
        links = []
        for r in graph[name]:
            if not r.yanked:
                f = f"{name.replace('-', '_')}-{vstr(r.version)}-py3-none-any.whl"
                links.append(f'<a href="../../wheels/{f}">{f}</a><br/>\n')
        (d / "index.html").write_text("<!DOCTYPE html>\n<html><body>\n" + "".join(links)
                                      + "</body></html>\n")


def empty_sibling(out):
    """An empty <out>.tmp to generate into (renamed to `out` once complete,
    so that an interrupted generation is never taken for data)."""
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return tmp


def prepare(args, graph, roots, hard_roots, log):
    key = hashlib.sha256(json.dumps([GENERATOR_VERSION, args.packages, args.versions,
                                     args.roots, args.seed]).encode()).hexdigest()[:12]
    base = pathlib.Path(args.work) / f"{args.packages}x{args.versions}-{key}"
    if args.regenerate and base.exists():
        shutil.rmtree(base)
    if (base / "complete").exists():
        log(f"using generated data in {base}")
        return base
    tmp = empty_sibling(base)
    t0 = time.perf_counter()
    key_base = tmp / "signing"
    subprocess.run([IREEPKG, "key", "generate", "-o", key_base], check=True,
                   stdout=subprocess.DEVNULL)
    write_registry(graph, tmp / "registry", key_base)
    log(f"wrote the registry ({len(graph)} index files) in {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    count = write_wheels(graph, tmp / "wheels", args.jobs)
    write_simple_index(graph, tmp / "simple")
    log(f"wrote {count} wheels and their index in {time.perf_counter() - t0:.1f} s")
    # The projects name the registry by its final path.
    write_projects(tmp, base / "registry", key_base, roots, hard_roots)
    (tmp / "complete").write_text("")
    tmp.rename(base)
    return base


#===----------------------------------------------------------------------===#
# The installed case: the main solution as real packages
#===----------------------------------------------------------------------===#

INSTALLED_VERSION = 1  # bump whenever the installed case's data changes


def _run_tool(cmd):
    """Runs an ireepkg command that writes the data (with --quiet); its
    output is shown only when it fails."""
    proc = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed with exit code {proc.returncode}:\n"
                 f"{proc.stdout}{proc.stderr}")
    return proc.stdout


def _pack(args):
    src, dist = args
    _run_tool([IREEPKG, "pack", "--quiet", src, "-o", dist])


def prepare_installed(base, graph, roots, solution, jobs, log):
    """A registry that publishes exactly the versions of `solution` (the
    main case's, {name: version tuple}), with real archives, and a project
    over it asking for `roots`; cached in base/installed-<hash>/.

    Each package is written as an author writes one: a directory with an
    ireeplugin.json (name, version, and the dependencies the graph gives
    that version) and one small data file, packed by `ireepkg pack` and
    published by `ireepkg publish` into a registry made by `ireepkg registry
    init`, signed with the bench's key. Returns the directory, holding
    registry/ and project/plugins.json."""
    key = hashlib.sha256(json.dumps([
        GENERATOR_VERSION, INSTALLED_VERSION,
        sorted((n, vstr(v)) for n, v in solution.items()),
        sorted((n, c.text) for n, c in roots.items())]).encode()).hexdigest()[:12]
    out = base / f"installed-{key}"
    if (out / "complete").exists():
        log(f"using the installed case's registry in {out}")
        return out
    tmp = empty_sibling(out)
    by_version = {name: {r.version: r for r in rels} for name, rels in graph.items()}
    t0 = time.perf_counter()
    work = []
    for name, v in sorted(solution.items()):
        rel = by_version[name][v]
        d = tmp / "packages" / f"{name}-{vstr(v)}"
        (d / "data").mkdir(parents=True)
        manifest = {"schema_version": 1, "name": name, "version": vstr(v),
                    "summary": "a generated package of bench/resolve", "license": "Apache-2.0"}
        if rel.deps:
            manifest["dependencies"] = {dep: c.text for dep, c in rel.deps.items()}
        (d / "ireeplugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
        (d / "data" / "README.txt").write_text(f"{name} {vstr(v)}: generated by bench/resolve\n")
        work.append((d, tmp / "dist"))
    (tmp / "dist").mkdir()
    if jobs > 1:
        with multiprocessing.pool.ThreadPool(jobs) as pool:
            pool.map(_pack, work)
    else:
        list(map(_pack, work))
    t_pack = time.perf_counter() - t0
    log(f"installed case: wrote and packed {len(work)} packages in {t_pack:.1f} s")
    t0 = time.perf_counter()
    reg = tmp / "registry"
    signing = base / "signing.key"
    _run_tool([IREEPKG, "registry", "init", "--quiet", reg, "--key", signing,
               "--name", "bench-installed", "--expires-days", "3650"])
    archives = sorted((tmp / "dist").glob("*.ireepkg"))
    if len(archives) != len(solution):
        sys.exit(f"installed case: {len(archives)} archives packed for {len(solution)} packages")
    _run_tool([IREEPKG, "publish", "--quiet", *archives, "--registry", reg, "--key", signing,
               "--expires-days", "3650"])
    t_publish = time.perf_counter() - t0
    log(f"installed case: published {len(archives)} archives in one `ireepkg publish` "
        f"in {t_publish:.1f} s")
    shutil.rmtree(tmp / "packages")
    shutil.rmtree(tmp / "dist")
    proj = tmp / "project"
    proj.mkdir()
    write_plugins_json(proj, "bench-installed", out / "registry",
                       public_key_line(base / "signing"), roots)
    (tmp / "generation.json").write_text(json.dumps(
        {"packages": len(solution), "pack_s": t_pack, "publish_s": t_publish}, indent=2) + "\n")
    (tmp / "complete").write_text("")
    tmp.rename(out)
    return out


#===----------------------------------------------------------------------===#
# Running the resolvers
#===----------------------------------------------------------------------===#


def ensure_uv(work, log):
    venv = pathlib.Path(work) / "venv"
    uv = venv / "bin" / "uv"
    if uv.exists():
        out = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout
        if out.split()[1:2] == [UV_VERSION]:
            return uv, venv / "bin" / "python"
    log(f"installing uv {UV_VERSION} into {venv}")
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", f"uv=={UV_VERSION}"],
                   check=True)
    return uv, venv / "bin" / "python"


def run_one(cmd, cwd=None, env=None):
    """Runs cmd; returns (wall s, cpu s, peak RSS MiB, stdout, stderr).

    The peak RSS comes from GNU time, which starts the command from its own
    small process: a child forked straight from this (large) Python process
    would report Python's memory as its own peak."""
    with tempfile.TemporaryDirectory() as tmp:
        fo, fe, ft = (os.path.join(tmp, n) for n in ("out", "err", "time"))
        with open(fo, "wb") as o, open(fe, "wb") as e:
            start = time.perf_counter()
            proc = subprocess.Popen([TIME, "-f", "%M", "-o", ft, *map(str, cmd)],
                                    cwd=cwd, env=env, stdout=o, stderr=e)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        out = pathlib.Path(fo).read_text(errors="replace")
        err = pathlib.Path(fe).read_text(errors="replace")
        if code != 0:
            sys.exit(f"{' '.join(map(str, cmd))} failed with exit code {code}:\n{out}{err}")
        rss_kib = int(pathlib.Path(ft).read_text().split()[-1])
    return wall, usage.ru_utime + usage.ru_stime, rss_kib / 1024, out, err


def parse_version(text):
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text)
    if not m:
        raise ValueError(f"unexpected version {text!r}")
    return tuple(int(x) for x in m.groups())


class Ireepkg:
    name = "ireepkg lock"

    def __init__(self, project, cache):
        self.project, self.cache = project, cache
        self.env = dict(os.environ, IREEPKG_CACHE_DIR=str(cache))
        self.env.pop("IREEPKG_OFFLINE", None)

    def cold(self):
        if self.cache.exists():
            shutil.rmtree(self.cache)

    def command(self):
        return [str(IREEPKG), "lock", "--quiet", "--iree-version", IREE_VERSION,
                "--project", str(self.project / "plugins.json")]

    def run(self):
        lock = self.project / "plugins.lock.json"
        if lock.exists():
            lock.unlink()  # resolve from scratch, no preferred versions
        wall, cpu, rss, _, _ = run_one(self.command(), cwd=self.project, env=self.env)
        return wall, cpu, rss

    def run_noop(self):
        """`ireepkg lock` with the lockfile in place and nothing changed."""
        wall, cpu, rss, _, _ = run_one(self.command(), cwd=self.project, env=self.env)
        return wall, cpu, rss

    def run_sync_plan(self):
        """`ireepkg sync --dry-run` of the unchanged project into an empty
        prefix (see measure())."""
        prefix = self.cache.parent / f"sync-prefix-{self.project.name}"
        cmd = [str(IREEPKG), "sync", "--dry-run", "--quiet",
               "--project", str(self.project / "plugins.json"), "--prefix", str(prefix)]
        wall, cpu, rss, _, _ = run_one(cmd, cwd=self.project, env=self.env)
        if prefix.exists():
            sys.exit("sync --dry-run changed the prefix")
        return wall, cpu, rss

    def solution(self):
        lock = json.loads((self.project / "plugins.lock.json").read_text())
        return {p["name"]: parse_version(p["version"]) for p in lock["packages"]}


class Uv:
    """`uv pip compile` over --find-links wheels/ (the comparison the target
    is about), or with index=True over the PEP 503 index simple/ (uv then
    reads only the packages it reaches, as ireepkg does)."""

    def __init__(self, uv, python, project, base, index=False, index_url=None):
        self.uv, self.python, self.project, self.base, self.index = uv, python, project, base, index
        self.name = "uv (local index)" if index else "uv pip compile"
        self.cache = base / ("uv-cache-index" if index else "uv-cache")
        self.out = project / ("requirements-index.txt" if index else "requirements.txt")
        self.index_url = index_url or (base / "simple").as_uri()
        if index_url:  # the index served over HTTP
            self.name = "uv (HTTP index)"
            self.cache = base / "uv-cache-http"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}

    def cold(self):
        if self.cache.exists():
            shutil.rmtree(self.cache)

    def command(self):
        source = (["--index-url", self.index_url] if self.index
                  else ["--no-index", "--find-links", str(self.base / "wheels")])
        return [str(self.uv), "pip", "compile", "--no-config", "--quiet", "--no-header",
                "--no-annotate", *source, "--cache-dir", str(self.cache),
                "--python", str(self.python), "requirements.in", "-o", str(self.out)]

    def run(self):
        wall, cpu, rss, _, _ = run_one(self.command(), cwd=self.project, env=self.env)
        return wall, cpu, rss

    def solution(self):
        sol = {}
        for line in self.out.read_text().splitlines():
            m = re.match(r"^([a-z0-9][a-z0-9._-]*)==(\S+)", line)
            if m:
                sol[m.group(1)] = parse_version(m.group(2))
        return sol


class InstalledSync:
    """`ireepkg sync` of the installed case's project (prepare_installed())
    into work/sync-prefix, with its own metadata and download cache
    work/sync-cache."""

    def __init__(self, data, work):
        self.project = data / "project"
        self.cache, self.prefix = work / "sync-cache", work / "sync-prefix"
        self.env = dict(os.environ, IREEPKG_CACHE_DIR=str(self.cache))
        self.env.pop("IREEPKG_OFFLINE", None)

    def lock(self):
        """A fresh lock (cache emptied, no lockfile): {name: version}."""
        for d in (self.cache, self.prefix):
            if d.exists():
                shutil.rmtree(d)
        lock = self.project / "plugins.lock.json"
        if lock.exists():
            lock.unlink()
        run_one([IREEPKG, "lock", "--quiet", "--iree-version", IREE_VERSION,
                 "--project", self.project / "plugins.json"], cwd=self.project, env=self.env)
        locked = json.loads(lock.read_text())
        return {p["name"]: parse_version(p["version"]) for p in locked["packages"]}

    def sync(self, full_check=False):
        """One sync; returns (wall, cpu, rss, its --json report). With
        full_check, <cache>/syncs is deleted first: sync keeps there what
        lets it skip re-checking the prefix when nothing changed since it
        last synced it."""
        if full_check:
            shutil.rmtree(self.cache / "syncs", ignore_errors=True)
        cmd = [IREEPKG, "sync", "--quiet", "--json", "--iree-version", IREE_VERSION,
               "--project", self.project / "plugins.json", "--prefix", self.prefix]
        wall, cpu, rss, out, err = run_one(cmd, cwd=self.project, env=self.env)
        try:
            report = json.loads(out)
        except ValueError:
            sys.exit(f"ireepkg sync --json printed no JSON report:\n{out}{err}")
        return wall, cpu, rss, report

    def installed(self):
        state = json.loads((self.prefix / "state" / "installed.json").read_text())
        return {p["name"]: parse_version(p["version"]) for p in state["packages"]}


def settle(*paths):
    """Waits until each file was last changed at least 2.1 s ago. lock and
    sync keep a file's SHA-256 by its stamp only once the stamp is settled
    (2 s old: docs/registries.md), so a run within 2 s of a file's change
    hashes it again; a project is rarely locked or synced again within 2 s
    of its last change, and the no-op runs measure that usual case."""
    for p in paths:
        st = os.stat(p)
        wait = max(st.st_mtime, st.st_ctime) + 2.1 - time.time()
        if wait > 0:
            time.sleep(min(wait, 5.0))


def repeated(run, runs, check=None):
    """Two warm-up runs of `run`, then max(runs, 5) measured ones, each
    followed by check(); the measured (wall, cpu, ...) samples."""
    for _ in range(2):
        run()
    samples = []
    for _ in range(max(runs, 5)):
        samples.append(run())
        if check:
            check()
    return samples


def summarize(res, key, samples):
    """res[key_s], [key_min_s], [key_cpu_s]: the median and minimum wall
    time and the median CPU time of (wall, cpu, ...) samples."""
    walls = [s[0] for s in samples]
    res[key + "_s"] = statistics.median(walls)
    res[key + "_min_s"] = min(walls)
    res[key + "_cpu_s"] = statistics.median(s[1] for s in samples)


def measure_installed(data, work, solution, runs, log):
    """The real no-op sync: every package of the main solution installed.

    Locks the installed case's project (not measured; its solution must be
    the main case's), syncs it into an empty prefix (measured once: the
    first sync, installing every package), then measures no-op syncs (the
    project, lock and prefix unchanged), after two warm-up runs, and the
    same with <cache>/syncs deleted before each run (the full check), the
    two alternating."""
    t = InstalledSync(data, work)
    if t.lock() != solution:
        sys.exit("installed case: `ireepkg lock` did not give the main case's solution")
    lock_bytes = (t.project / "plugins.lock.json").read_bytes()
    n = len(solution)
    res = {"installed_packages": n}
    wall, cpu, rss, report = t.sync()
    installs = [c for c in report.get("changes", []) if c.get("from") is None]
    if (not report.get("ok") or len(installs) != n or len(report["changes"]) != n
            or t.installed() != solution):
        sys.exit(f"installed case: the first sync did not install the {n} locked packages: "
                 f"{json.dumps(report)[:2000]}")
    res["first_sync_s"], res["first_sync_cpu_s"], res["first_sync_rss_mib"] = wall, cpu, rss
    log(f"  main: first ireepkg sync (installs {n} packages) {wall * 1000:.0f} ms")

    def noop(full_check):
        wall, cpu, rss, report = t.sync(full_check)
        if (not report.get("ok") or report.get("changes") != [] or report.get("relocked")
                or report.get("reordered") or len(report.get("unchanged", [])) != n):
            sys.exit(f"installed case: a no-op sync reported a change: {json.dumps(report)[:2000]}")
        if t.installed() != solution:
            sys.exit("installed case: the prefix no longer holds the locked packages after a no-op sync")
        if (t.project / "plugins.lock.json").read_bytes() != lock_bytes:
            sys.exit("installed case: a no-op sync rewrote the lockfile")
        return wall, cpu, rss

    settle(t.project / "plugins.lock.json", t.prefix / "state" / "installed.json")
    for full_check in (False, False, True, True):
        noop(full_check)
    samples = {False: [], True: []}
    for i in range(max(runs, 5)):
        for full_check in ((False, True) if i % 2 == 0 else (True, False)):
            samples[full_check].append(noop(full_check))
    for full_check, key in ((False, "noop_sync"), (True, "noop_sync_full_check")):
        summarize(res, key, samples[full_check])
        res[key + "_rss_mib"] = max(s[2] for s in samples[full_check])
    return res


COLD_RUNS = 3


def measure(case, tools, graph, roots, runs, expected, log):
    res = {"case": case, "tools": {}}
    # Cold runs (metadata cache emptied first), alternating like the warm
    # ones; one cold run alone varies with the file system by half its time.
    colds = {t.name: [] for t in tools}
    for i in range(COLD_RUNS):
        for t in (tools if i % 2 == 0 else tools[::-1]):
            t.cold()
            colds[t.name].append(t.run())
    for t in tools:
        c = colds[t.name]
        res["tools"][t.name] = {
            "cold_runs_s": [x[0] for x in c],
            "cold_s": statistics.median(x[0] for x in c),
            "cold_cpu_s": statistics.median(x[1] for x in c),
            "cold_rss_mib": max(x[2] for x in c),
            "wall_s": [], "cpu_s": [], "rss_mib": []}
        log(f"  {case}: {t.name} cold " +
            ", ".join(f"{x[0] * 1000:.0f}" for x in c) + " ms")
    sols = {}
    for t in tools:
        sol = t.solution()
        problems = check_solution(graph, roots, sol)
        if problems:
            sys.exit(f"{t.name} ({case}) gave an invalid solution:\n  " + "\n  ".join(problems[:20]))
        sols[t.name] = sol
    a = sols[tools[0].name]
    for t in tools[1:]:
        b = sols[t.name]
        if a != b:
            diff = sorted(set(a) ^ set(b)) + sorted(n for n in set(a) & set(b) if a[n] != b[n])
            sys.exit(f"the solutions differ ({case}), both valid: " + ", ".join(
                f"{n}: {vstr(a[n]) if n in a else '-'} vs {vstr(b[n]) if n in b else '-'}"
                for n in diff[:20]))
    if expected is not None and a != expected:
        sys.exit(f"{case}: the resolvers agree, but not on the designed solution")
    res["packages_in_solution"] = len(a)
    res["not_newest"] = sum(1 for n, v in a.items()
                            if v != max(r.version for r in graph[n] if not r.yanked))
    res["newest_yanked"] = sum(1 for n in a if graph[n][-1].yanked)
    for i in range(runs):
        for t in (tools if i % 2 == 0 else tools[::-1]):
            wall, cpu, rss = t.run()
            r = res["tools"][t.name]
            r["wall_s"].append(wall)
            r["cpu_s"].append(cpu)
            r["rss_mib"].append(rss)
            if t.solution() != a:
                sys.exit(f"{t.name} ({case}) changed its solution between runs")
    for r in res["tools"].values():
        r["median_s"] = statistics.median(r["wall_s"])
        r["min_s"] = min(r["wall_s"])
        r["median_cpu_s"] = statistics.median(r["cpu_s"])
        r["peak_rss_mib"] = max(r["rss_mib"])
    if isinstance(tools[0], Ireepkg):
        mine = res["tools"][tools[0].name]
        for t in tools[1:]:
            key = "ratio_over_uv_index" if t.index else "ratio_over_uv"
            res[key] = mine["median_s"] / res["tools"][t.name]["median_s"]
            res["cold_" + key] = mine["cold_s"] / res["tools"][t.name]["cold_s"]
        # A no-op lock: the lockfile the last run wrote is up to date. The
        # first run after a fresh lock resolves with it as preferred and
        # finds it unchanged; the ones after that are what is measured.
        t = tools[0]

        def unchanged():
            if t.solution() != a:
                sys.exit(f"a no-op lock ({case}) changed the solution")
        t.run_noop()  # resolves once with the lockfile as preferred
        settle(t.project / "plugins.lock.json")
        summarize(res, "noop_lock", repeated(t.run_noop, runs, unchanged))
        # `sync --dry-run` of the unchanged project into an empty prefix:
        # what a sync does before it looks at the installed packages (the
        # project, the lockfile checked against plugins.json, the prefix's
        # state), then a plan to install every locked package. It opens no
        # registry, as a sync of an up-to-date lockfile does not. (The
        # bench registry has no archives; the real no-op sync, every locked
        # package installed, is measured on the installed case: see
        # measure_installed().)
        summarize(res, "empty_sync_plan", repeated(t.run_sync_plan, runs))
    return res


def measure_http(base, uv, python, solution, runs, log):
    """The main case over HTTP: the registry and the PEP 503 index served by
    nginx on 127.0.0.1, `ireepkg lock` against `uv pip compile
    --index-url`, each with its own empty cache (cold, three runs each,
    alternating) and then its cache kept (warm). Both must give the main
    case's solution. A cold ireepkg reads the index files ahead of its
    resolver, several requests at a time; uv fetches in parallel too."""
    with nginx_server(base) as server:
        url = server[0]
        proj = base / "http-project"
        shutil.rmtree(proj, ignore_errors=True)
        proj.mkdir()
        plugins = json.loads((base / "project" / "plugins.json").read_text())
        for r in plugins["registries"]:
            r["url"] = f"{url}/registry"
        (proj / "plugins.json").write_text(json.dumps(plugins, indent=2) + "\n")
        shutil.copy(base / "project" / "requirements.in", proj / "requirements.in")
        tools = [Ireepkg(proj, base / "ireepkg-cache-http"),
                 Uv(uv, python, proj, base, index=True, index_url=f"{url}/simple/")]
        tools[0].name = "ireepkg lock (HTTP)"
        colds = {t.name: [] for t in tools}
        for i in range(3):
            for t in (tools if i % 2 == 0 else tools[::-1]):
                t.cold()
                colds[t.name].append(t.run())
                if t.solution() != solution:
                    sys.exit(f"{t.name} over HTTP gave another solution")
        warms = {t.name: [] for t in tools}
        for i in range(runs):
            for t in (tools if i % 2 == 0 else tools[::-1]):
                warms[t.name].append(t.run())
    res = {}
    for t in tools:
        c, w = colds[t.name], warms[t.name]
        res[t.name] = {"cold_runs_s": [x[0] for x in c],
                       "cold_s": statistics.median(x[0] for x in c),
                       "cold_cpu_s": statistics.median(x[1] for x in c),
                       "median_s": statistics.median(x[0] for x in w),
                       "min_s": min(x[0] for x in w),
                       "median_cpu_s": statistics.median(x[1] for x in w),
                       "peak_rss_mib": max(x[2] for x in c + w)}
        log(f"  main over HTTP: {t.name} cold " +
            ", ".join(f"{x[0] * 1000:.0f}" for x in c) + " ms")
    mine, theirs = res[tools[0].name], res[tools[1].name]
    res["ratio"] = mine["median_s"] / theirs["median_s"]
    res["cold_ratio"] = mine["cold_s"] / theirs["cold_s"]
    return res


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1),
            "system": f"{platform.system()} {platform.release()}"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", type=int, default=10000)
    ap.add_argument("--versions", type=int, default=20)
    ap.add_argument("--roots", type=int, default=30, help="packages plugins.json asks for")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=7, help="warm runs of each tool per case")
    ap.add_argument("--quick", action="store_true", help="1,000 packages x 20 versions, 3 runs")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="processes writing wheels")
    ap.add_argument("--work", default=str(REPO / "build" / "bench-resolve"))
    ap.add_argument("--regenerate", action="store_true", help="ignore cached generated data")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--uv-only", action="store_true",
                    help="run only uv (to check the generated data without ireepkg)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    if args.quick:
        args.packages, args.runs = 1000, 3
    if args.versions < 12:
        ap.error("--versions must be at least 12 (the hard case needs them)")

    def log(msg):
        print(msg, file=sys.stderr if args.json else sys.stdout, flush=True)

    t0 = time.perf_counter()
    graph, roots, hard_roots = generate(args.packages, args.versions, args.roots, args.seed)
    log(f"generated the graph in {time.perf_counter() - t0:.1f} s")
    base = prepare(args, graph, roots, hard_roots, log)
    if args.generate_only:
        return
    uv, python = ensure_uv(args.work, log)

    results = {"machine": machine(), "ireepkg": str(IREEPKG), "uv": UV_VERSION,
               "packages": args.packages, "versions": args.versions,
               "published_versions": sum(len(r) for r in graph.values()),
               "yanked": sum(r.yanked for rs in graph.values() for r in rs),
               "dependency_edges": sum(len(r.deps) for rs in graph.values() for r in rs),
               "runs": args.runs, "cases": []}
    for case, sub, rs, expected in (("main", "project", roots, None),
                                    ("hard", "hard", hard_roots, hard_expected(args.versions))):
        proj = base / sub
        tools = [Ireepkg(proj, base / "ireepkg-cache"), Uv(uv, python, proj, base),
                 Uv(uv, python, proj, base, index=True)]
        if args.uv_only:
            tools = tools[1:]
        res = measure(case, tools, graph, rs, args.runs, expected, log)
        results["cases"].append(res)
        if case == "main" and not args.uv_only:
            # The real no-op sync, on a registry of the main solution's
            # versions with real archives (see prepare_installed()).
            solution = tools[0].solution()
            data = prepare_installed(base, graph, rs, solution, args.jobs, log)
            # When it was generated: packing and publishing times.
            gen = json.loads((data / "generation.json").read_text())
            res["installed_data"] = {"path": str(data), "pack_s": gen["pack_s"],
                                     "publish_s": gen["publish_s"]}
            res.update(measure_installed(data, base, solution, args.runs, log))
            res["http"] = measure_http(base, uv, python, solution, args.runs, log)

    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print()
    print(f"{args.packages:,} packages x {args.versions} versions "
          f"({results['published_versions']:,} published, {results['yanked']:,} yanked, "
          f"{results['dependency_edges']:,} dependency edges); uv {UV_VERSION}; "
          f"{args.runs} warm runs of each")
    for c in results["cases"]:
        print(f"\n{c['case']}: {c['packages_in_solution']} packages in the solution, "
              f"{c['not_newest']} below their newest non-yanked version, "
              f"{c['newest_yanked']} with a yanked newest version; "
              f"{'the same from every tool' if len(c['tools']) > 1 else 'valid'}")
        print(f"  {'':<18} {'median':>8} {'min':>8} {'CPU':>8} {'cold':>8} {'peak RSS':>10}")
        for name, r in c["tools"].items():
            print(f"  {name:<18} {r['median_s'] * 1000:6.0f}ms {r['min_s'] * 1000:6.0f}ms "
                  f"{r['median_cpu_s'] * 1000:6.0f}ms {r['cold_s'] * 1000:6.0f}ms "
                  f"{r['peak_rss_mib']:7.1f}MiB")
        if "ratio_over_uv" in c:
            print(f"  ireepkg / uv pip compile --find-links: {c['ratio_over_uv']:.2f}x warm, "
                  f"{c['cold_ratio_over_uv']:.2f}x cold")
            print(f"  ireepkg / uv over the local index: {c['ratio_over_uv_index']:.2f}x warm "
                  f"(target <= 0.5x), {c['cold_ratio_over_uv_index']:.2f}x cold "
                  f"(target <= 1.0x)")
        if "noop_lock_s" in c:
            print(f"  no-op ireepkg lock (lockfile up to date): "
                  f"{c['noop_lock_s'] * 1000:.1f} ms median, "
                  f"{c['noop_lock_min_s'] * 1000:.1f} ms min, "
                  f"{c['noop_lock_cpu_s'] * 1000:.1f} ms CPU (target < 10 ms)")
        if "empty_sync_plan_s" in c:
            print(f"  ireepkg sync --dry-run into an empty prefix (a plan only): "
                  f"{c['empty_sync_plan_s'] * 1000:.1f} ms median, "
                  f"{c['empty_sync_plan_min_s'] * 1000:.1f} ms min, "
                  f"{c['empty_sync_plan_cpu_s'] * 1000:.1f} ms CPU")
        if "noop_sync_s" in c:
            n = c["installed_packages"]
            print(f"  first ireepkg sync (installs {n} packages): "
                  f"{c['first_sync_s'] * 1000:.0f} ms, {c['first_sync_cpu_s'] * 1000:.0f} ms CPU")
            print(f"  no-op ireepkg sync ({n} packages installed): "
                  f"{c['noop_sync_s'] * 1000:.1f} ms median, "
                  f"{c['noop_sync_min_s'] * 1000:.1f} ms min, "
                  f"{c['noop_sync_cpu_s'] * 1000:.1f} ms CPU (target < 10 ms)")
            print(f"  no-op ireepkg sync, full check (<cache>/syncs deleted): "
                  f"{c['noop_sync_full_check_s'] * 1000:.1f} ms median, "
                  f"{c['noop_sync_full_check_min_s'] * 1000:.1f} ms min, "
                  f"{c['noop_sync_full_check_cpu_s'] * 1000:.1f} ms CPU")
        if "http" in c:
            h = c["http"]
            print("  over HTTP (registry and index served by nginx on 127.0.0.1):")
            for name, r in h.items():
                if isinstance(r, dict):
                    print(f"  {name:<20} {r['median_s'] * 1000:6.0f}ms {r['min_s'] * 1000:6.0f}ms "
                          f"{r['median_cpu_s'] * 1000:6.0f}ms {r['cold_s'] * 1000:6.0f}ms "
                          f"{r['peak_rss_mib']:7.1f}MiB")
            print(f"  ireepkg / uv over HTTP: {h['ratio']:.2f}x warm, "
                  f"{h['cold_ratio']:.2f}x cold")

if __name__ == "__main__":
    main()
