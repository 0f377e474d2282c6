"""`ireepkg tree`, `ireepkg why` and `ireepkg cache dir|clean|prune`, on a
prefix installed from a real (directory) registry."""
import json
import os
import pathlib

import pytest

from conftest import run
from regfix import Registry


@pytest.fixture
def world(tmp_path, cache):
    """app -> lib -> base, app -> base, tool -> base; app and tool asked
    for by name, lib and base pulled in as dependencies."""
    reg = Registry(tmp_path)
    reg.publish("base", "1.2.0")
    reg.publish("lib", "2.0.0", {"base": "^1.0"})
    reg.publish("app", "1.0.0", {"lib": "^2.0", "base": "^1.0"})
    reg.publish("tool", "0.3.0", {"base": "^1.0"})
    prefix = tmp_path / "prefix"
    r = run("install", "app", "tool", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", prefix)
    assert r.code == 0, r
    return reg, prefix


def test_tree(world):
    _, prefix = world
    r = run("tree", "--prefix", prefix)
    assert (r.code, r.err) == (0, ""), r
    assert r.out == ("app 1.0.0\n"
                     "├── base 1.2.0\n"
                     "└── lib 2.0.0\n"
                     "    └── base 1.2.0\n"
                     "\n"
                     "tool 0.3.0\n"
                     "└── base 1.2.0\n")
    r = run("tree", "--prefix", prefix, "--depth", "0")
    assert (r.code, r.out) == (0, "app 1.0.0\n\ntool 0.3.0\n"), r
    r = run("tree", "--prefix", prefix, "--depth", "1")
    assert r.out == ("app 1.0.0\n├── base 1.2.0\n└── lib 2.0.0\n\n"
                     "tool 0.3.0\n└── base 1.2.0\n"), r
    r = run("tree", "--prefix", prefix, "--depth", "x")
    assert r.code == 2, r
    assert "--depth: expected a number of levels" in r.err


def test_tree_marks_packages_shown_before(world):
    reg, prefix = world
    # top depends on app and lib: lib's subtree is shown once.
    reg.publish("top", "1.0.0", {"app": "^1.0", "lib": "^2.0"})
    r = run("install", "top", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", prefix)
    assert r.code == 0, r
    r = run("tree", "--prefix", prefix)
    assert r.out == ("app 1.0.0\n"
                     "├── base 1.2.0\n"
                     "└── lib 2.0.0\n"
                     "    └── base 1.2.0\n"
                     "\n"
                     "tool 0.3.0\n"
                     "└── base 1.2.0\n"
                     "\n"
                     "top 1.0.0\n"
                     "├── app 1.0.0 (*)\n"
                     "└── lib 2.0.0 (*)\n"), r


def test_tree_inverted(world):
    _, prefix = world
    for flag in ("-i", "--invert"):
        r = run("tree", "--prefix", prefix, flag, "base")
        assert (r.code, r.err) == (0, ""), r
        assert r.out == ("base 1.2.0\n"
                         "├── app 1.0.0\n"
                         "├── lib 2.0.0\n"
                         "│   └── app 1.0.0\n"
                         "└── tool 0.3.0\n")
    r = run("tree", "--prefix", prefix, "-i", "bsae")
    assert r.code == 1, r
    assert r.err.startswith(f'ireepkg: error: bsae is not installed in {prefix} '
                            '(did you mean "base"?)\n'), r


def test_tree_json(world):
    _, prefix = world
    r = run("tree", "--prefix", prefix, "--json")
    assert r.code == 0, r
    out = json.loads(r.out)
    assert out["inverted"] is False
    app, tool = out["roots"]
    assert (app["name"], app["version"], app["explicit"]) == ("app", "1.0.0", True)
    assert [d["name"] for d in app["dependencies"]] == ["base", "lib"]
    lib = app["dependencies"][1]
    assert lib["explicit"] is False
    assert lib["dependencies"] == [{"name": "base", "version": "1.2.0",
                                    "explicit": False, "provides": [],
                                    "dependencies": []}]
    assert tool["dependencies"][0]["name"] == "base"
    r = run("tree", "--prefix", prefix, "--json", "-i", "lib")
    out = json.loads(r.out)
    assert out["inverted"] is True
    assert [d["name"] for d in out["roots"][0]["dependents"]] == ["app"]


def test_tree_shows_what_packages_contribute(tmp_path, cache, example_archives):
    prefix = tmp_path / "prefix"
    r = run("install", example_archives["simple-mul"], "--prefix", prefix,
            "--ignore-iree-version")
    assert r.code == 0, r
    r = run("tree", "--prefix", prefix)
    assert r.out == ("simple-mul 1.2.0: simple_mul (embedded-elf), "
                     "simple_mul_system (system-library)\n"), r
    r = run("tree", "--prefix", tmp_path / "empty")
    assert (r.code, r.out) == (0, f"no packages installed in {tmp_path / 'empty'}\n"), r


def test_why(world):
    _, prefix = world
    r = run("why", "base", "--prefix", prefix)
    assert (r.code, r.err) == (0, ""), r
    assert r.out == ("app 1.0.0 -> base 1.2.0\n"
                     "app 1.0.0 -> lib 2.0.0 -> base 1.2.0\n"
                     "tool 0.3.0 -> base 1.2.0\n")
    r = run("why", "app", "--prefix", prefix)
    assert r.out == "app 1.0.0 (installed explicitly)\n", r
    r = run("why", "lib", "--prefix", prefix, "--json")
    out = json.loads(r.out)
    assert out["explicit"] is False
    assert out["paths"] == [[{"name": "app", "version": "1.0.0"},
                             {"name": "lib", "version": "2.0.0"}]]
    r = run("why", "bsae", "--prefix", prefix)
    assert r.code == 1, r
    assert r.out == ""
    assert r.err == (f'ireepkg: error: bsae is not installed in {prefix} '
                     '(did you mean "base"?)\n'
                     '  hint: `ireepkg list` shows what is installed\n')
    r = run("why", "--prefix", prefix)
    assert r.code == 2, r


def test_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "c"))
    r = run("cache", "dir")
    assert (r.code, r.out) == (0, f"{tmp_path / 'c'}\n"), r
    monkeypatch.delenv("IREEPKG_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    r = run("cache", "dir")
    assert (r.code, r.out) == (0, f"{tmp_path / 'xdg'}/ireepkg\n"), r


def _files(root: pathlib.Path):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if not p.is_dir())


def _size(b: int) -> str:
    return f"{b} B" if b < 1024 else f"{b / 1024:.1f} KiB"


def _plural(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def test_cache_clean_one_package(world, cache):
    reg, prefix = world
    downloads = [p for p in (cache / "downloads").rglob("*.ireepkg")]
    assert len(downloads) == 4
    lib = [p for p in downloads
           if p.name.startswith(reg.index("lib")["versions"][0]["sha256"])]
    assert len(lib) == 1
    size = lib[0].stat().st_size
    r = run("cache", "clean", "lib")
    assert (r.code, r.err) == (0, ""), r
    assert r.out == ("removed the downloaded archive of lib 2.0.0\n"
                     f"removed 1 file, {_size(size)} from {cache}\n"
                     f"  downloads  1 file, {_size(size)}\n")
    assert not lib[0].exists()
    assert len(list((cache / "downloads").rglob("*.ireepkg"))) == 3
    r = run("cache", "clean", "nothing-like-it")
    assert r.out == f"removed 0 files, 0 B from {cache}\n", r


def test_cache_prune(world, cache):
    reg, prefix = world
    downloads = cache / "downloads"
    sub = next(p for p in downloads.iterdir() if p.is_dir())
    # A partial whose process is gone, and one of a live process (ours).
    stale = sub / "x.ireepkg.part-2147483646-0011223344556677"
    stale.write_bytes(b"x" * 100)
    live = sub / f"y.ireepkg.part-{os.getpid()}-0011223344556677"
    live.write_bytes(b"y" * 10)
    r = run("remove", "tool", "--prefix", prefix)
    assert r.code == 0, r
    files = cache / "files"
    blobs = [p for p in files.rglob("*") if p.is_file() and ".ok-" not in p.name]
    unlinked = [p for p in blobs if p.stat().st_nlink == 1]
    assert unlinked, "tool's files are no longer in a prefix"
    markers = [p for p in files.rglob("*") if ".ok-" in p.name
               and pathlib.Path(str(p).split(".ok-")[0]) in unlinked]
    archives = list((cache / "archives").iterdir())
    expected = {"partial": (1, 100),
                "blobs": (len(unlinked), sum(p.stat().st_size for p in unlinked))}
    if markers:
        expected["markers"] = (len(markers), 0)
    expected["archives"] = (len(archives), sum(p.stat().st_size for p in archives))
    before = set(_files(cache))
    r = run("cache", "prune", "--json")
    assert (r.code, r.err) == (0, ""), r
    out = json.loads(r.out)
    assert {k: (v["files"], v["bytes"]) for k, v in out["by_kind"].items()} == expected
    assert out["removed_files"] == sum(f for f, _ in expected.values())
    gone = before - set(_files(cache))
    assert str(stale.relative_to(cache)) in gone
    assert live.exists()
    assert all(not p.exists() for p in unlinked + markers)
    assert all(p.exists() for p in blobs if p not in unlinked)
    # Downloads stay; the prefix is intact.
    assert len(list(downloads.rglob("*.ireepkg"))) == 4
    r = run("verify", "--prefix", prefix)
    assert r.code == 0, r
    # Nothing more to prune (the live partial stays).
    r = run("cache", "prune")
    assert r.out == f"removed 0 files, 0 B from {cache}\n", r
    live.unlink()


def test_stale_partials_do_not_survive_a_download(world, cache):
    reg, prefix = world
    sub = next(p for p in (cache / "downloads").iterdir() if p.is_dir())
    stale = sub / "x.ireepkg.part-2147483646-0011223344556677"
    stale.write_bytes(b"x")
    reg.publish("extra", "1.0.0")
    r = run("install", "extra", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", prefix)
    assert r.code == 0, r
    assert not stale.exists()
    assert list(cache.rglob("*.part-*")) == []


def test_cache_clean_everything(world, cache):
    _, prefix = world
    before = _files(cache)
    total = sum((cache / f).lstat().st_size for f in before)
    r = run("cache", "clean")
    assert (r.code, r.err) == (0, ""), r
    first = r.out.splitlines()[0]
    assert first == f"removed {_plural(len(before))}, {_size(total)} from {cache}"
    assert list(cache.iterdir()) == []
    r = run("verify", "--prefix", prefix)
    assert r.code == 0, r
    r = run("cache", "clean", "--json")
    assert json.loads(r.out)["removed_files"] == 0


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_download_leaves_no_partial_file(tmp_path, cache, sig):
    import signal
    import subprocess
    import time
    from conftest import ireepkg_path
    from netfix import fault_server
    reg = Registry(tmp_path)
    reg.publish("big", "1.0.0", files={"data/blob.bin": os.urandom(64 << 10)})
    with fault_server(reg.dir) as url:
        # The archive arrives one byte every 2 s: the download is under way
        # (its .part file exists) when the signal comes.
        url.set_faults({"/archives/": ["drip-2000"]})
        proc = subprocess.Popen(
            [str(ireepkg_path()), "install", "big", "--registry", url,
             "--registry-key", reg.pub, "--prefix", tmp_path / "prefix"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not list(cache.rglob("*.part-*")):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no download started"
                time.sleep(0.05)
            proc.send_signal(getattr(signal, sig))
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if sig == "SIGINT":
        # install stops at Ctrl-C and says so (tests/cli/test_progress.py).
        assert proc.returncode == 130
    else:
        assert proc.returncode == -getattr(signal, sig)
    assert list(cache.rglob("*.part-*")) == []
    assert not (tmp_path / "prefix" / "state" / "installed.json").exists()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_metadata_cache_write_leaves_no_partial_file(
        tmp_path, cache, sig):
    """A signal while a file of the HTTP metadata cache is written (stopped
    there with IREEPKG_FAULT=metadata-cache-written:stop): its .part file
    is removed as a download's is."""
    import signal
    import subprocess
    import time
    from conftest import ireepkg_path
    from netfix import fault_server
    reg = Registry(tmp_path)
    reg.publish("big", "1.0.0")
    with fault_server(reg.dir) as url:
        proc = subprocess.Popen(
            [str(ireepkg_path()), "install", "big", "--registry", url,
             "--registry-key", reg.pub, "--prefix", tmp_path / "prefix"],
            env=dict(os.environ, IREEPKG_FAULT="metadata-cache-written:stop"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(600):
                state = pathlib.Path(f"/proc/{proc.pid}/stat").read_text()
                if state.rsplit(")", 1)[1].split()[0] == "T":
                    break
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.05)
            else:
                pytest.fail("no metadata cache file was written")
            parts = list(cache.rglob("*.part-*"))
            assert len(parts) == 1 and parts[0].parent.name == "http", parts
            assert f".part-{proc.pid}-" in parts[0].name
            os.kill(proc.pid, getattr(signal, sig))
            os.kill(proc.pid, signal.SIGCONT)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode in (130, -getattr(signal, sig)), proc.returncode
    assert list(cache.rglob("*.part-*")) == []
    assert not (tmp_path / "prefix" / "state" / "installed.json").exists()


def test_prune_partials_without_a_process_id(tmp_path, cache):
    """The `.part-<random hex>` names the metadata cache wrote before carry
    no process id: they go once an hour old, even when the random part is
    all digits."""
    d = cache / "registries" / "abc" / "http"
    d.mkdir(parents=True)
    fresh = d / "snapshot.json.part-12345678"
    fresh.write_bytes(b"f")
    old = d / "index.json.part-0badcafe"
    old.write_bytes(b"old")
    two_hours_ago = os.path.getmtime(old) - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    staging = cache / "bundles" / "0123.tmp-2147483646"
    (staging / "sub").mkdir(parents=True)
    (staging / "sub" / "a.ireepkg").write_bytes(b"12345")
    r = run("cache", "prune")
    assert (r.code, r.err) == (0, ""), r
    assert r.out == (f"removed 2 files, 8 B from {cache}\n"
                     "  partial    2 files, 8 B\n")
    assert fresh.exists() and not old.exists() and not staging.exists()
