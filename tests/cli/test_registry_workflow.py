"""Projects against a real (directory) registry: install by name, lock, sync,
update, outdated, search and offline bundles, through the CLI."""
import json
import os
import pathlib
import re
import shutil
import subprocess

from conftest import EXAMPLES, data_package, make_writable, pack, run
from regfix import (IREE_SOURCE, VENV_BIN, WITH_IREE, WITHOUT_IREE, installed,
                    project, without_summary)

# What the `reg` fixture (conftest.py) publishes for each test.
REGISTRY = [
    ("base-kernels", "0.9.0"),
    ("base-kernels", "1.0.0"),
    ("base-kernels", "1.1.0"),
    ("fft-kit", "1.0.0", {"base-kernels": "^1.0"}),
    ("old-fft", "2.0.0", {"base-kernels": "<1.0.0"}),
]


def _json(r):
    assert r.code == 0, r
    return json.loads(r.out)


# --- install by name ---------------------------------------------------------

def test_install_by_name_resolves_dependencies(tmp_path, reg, cache):
    prefix = tmp_path / "prefix"
    r = run("install", "fft-kit", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", prefix, "--json")
    out = _json(r)
    assert {(c["name"], c["to"]) for c in out["changes"]} == {
        ("fft-kit", "1.0.0"), ("base-kernels", "1.1.0")}
    st = json.loads((prefix / "state" / "installed.json").read_text())
    names = [p["name"] for p in st["packages"]]
    assert names == ["base-kernels", "fft-kit"]  # dependencies first
    by = {p["name"]: p for p in st["packages"]}
    assert by["fft-kit"]["reason"] == "explicit"
    assert by["base-kernels"]["reason"] == "dependency"
    # The archive installed is the one the index pins.
    entry = [e for e in reg.index("fft-kit")["versions"]][0]
    assert by["fft-kit"]["archive_sha256"] == entry["sha256"]
    # Again: nothing to do.
    r = run("install", "fft-kit", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", prefix)
    assert r.code == 0, r
    assert r.out == "fft-kit 1.0.0 is already installed\n"
    # Asking by name for a package installed for a dependency makes it
    # explicit, without changing its files.
    r = run("install", "base-kernels", "--registry", reg.dir,
            "--registry-key", reg.pub, "--prefix", prefix)
    assert r.code == 0, r
    assert r.out == "base-kernels 1.1.0 is already installed\n"
    assert installed(prefix)["base-kernels"]["reason"] == "explicit"
    r = run("remove", "fft-kit", "--prefix", prefix)
    assert r.code == 0, r
    assert set(installed(prefix)) == {"base-kernels"}


def test_install_by_name_with_constraint(tmp_path, reg, cache):
    prefix = tmp_path / "prefix"
    r = run("install", "base-kernels@<1.1", "--registry", reg.dir,
            "--registry-key", reg.pub, "--prefix", prefix)
    assert r.code == 0, r
    assert installed(prefix)["base-kernels"]["version"] == "1.0.0"


def test_install_by_name_needs_a_trusted_key(tmp_path, reg, cache):
    prefix = tmp_path / "prefix"
    r = run("install", "fft-kit", "--registry", reg.dir, "--prefix", prefix)
    assert r.code == 1, r
    keyid = reg.pub_file.read_text().split()[-1]
    assert keyid in r.err
    assert "--registry-key" in r.err
    assert not (prefix / "packages").exists()


def test_install_by_name_wrong_key_installs_nothing(tmp_path, reg, cache):
    other = tmp_path / "other"
    assert run("key", "generate", "-o", other).code == 0
    wrong = pathlib.Path(str(other) + ".pub").read_text().splitlines()[1]
    prefix = tmp_path / "prefix"
    r = run("install", "fft-kit", "--registry", reg.dir, "--registry-key",
            wrong, "--prefix", prefix)
    assert r.code == 1, r
    assert "key" in r.err
    assert not (prefix / "packages").exists()


def test_install_unknown_name(tmp_path, reg, cache):
    r = run("install", "fft-kitt", "--registry", reg.dir, "--registry-key",
            reg.pub, "--prefix", tmp_path / "p")
    assert r.code == 1, r
    assert "fft-kitt" in r.err


def test_install_refuses_mixing_files_and_names(tmp_path, reg):
    archive = next(reg.dist.glob("fft-kit-*.ireepkg"))
    r = run("install", archive, "base-kernels", "--prefix", tmp_path / "p")
    assert r.code == 2
    assert "either archive files or package names" in r.err


# --- add ----------------------------------------------------------------------

def test_add_writes_the_newest_version(tmp_path, reg, cache):
    d = project(tmp_path, reg, [])
    r = run("add", "base-kernels", cwd=d)
    assert r.code == 0, r
    p = json.loads((d / "plugins.json").read_text())
    assert p["plugins"] == [{"name": "base-kernels", "version": "^1.1.0"}]
    reg.yank("base-kernels@1.1.0")
    r = run("add", "fft-kit", cwd=d)
    assert r.code == 0, r
    r = run("add", "base-kernels", cwd=d)  # yanked versions are not offered
    assert r.code == 0, r
    p = json.loads((d / "plugins.json").read_text())
    assert p["plugins"][0] == {"name": "base-kernels", "version": "^1.0.0"}
    r = run("add", "fft-kitt", cwd=d)
    assert r.code == 1, r
    assert 'did you mean "fft-kit"' in r.err


# --- lock ----------------------------------------------------------------------

def test_lock_is_deterministic_and_pins_hashes(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit", "version": "^1.0"}],
                platforms=["linux-x86_64", "linux-aarch64"])
    r = run("lock", "--iree-version", "3.13.0", cwd=d)
    assert r.code == 0, r
    assert "+ base-kernels 1.1.0" in r.out
    lock_path = d / "plugins.lock.json"
    first = lock_path.read_bytes()
    lock = json.loads(first)
    assert [p["name"] for p in lock["packages"]] == ["base-kernels", "fft-kit"]
    assert lock["activation"] == ["base-kernels", "fft-kit"]
    assert lock["platforms"] == ["linux-aarch64", "linux-x86_64"]
    assert lock["input_hash"].startswith("sha256:")
    by = {p["name"]: p for p in lock["packages"]}
    entry = [e for e in reg.index("base-kernels")["versions"]
             if e["version"] == "1.1.0"][0]
    assert by["base-kernels"]["sha256"] == entry["sha256"]
    assert by["base-kernels"]["size"] == entry["size"]
    assert by["fft-kit"]["dependencies"] == ["base-kernels@1.1.0"]
    # Unchanged input: the same bytes, and the file is not rewritten.
    mtime = lock_path.stat().st_mtime_ns
    r = run("lock", "--iree-version", "3.13.0", cwd=d)
    assert r.code == 0, r
    assert "up to date" in r.out
    assert lock_path.read_bytes() == first
    assert lock_path.stat().st_mtime_ns == mtime
    # A fresh lock from scratch gives the same bytes too.
    lock_path.unlink()
    assert run("lock", "--iree-version", "3.13.0", cwd=d).code == 0
    assert lock_path.read_bytes() == first
    assert run("lock", "--check", "--iree-version", "3.13.0", cwd=d).code == 0


def test_lock_keeps_locked_versions_and_yanked_ones(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "base-kernels"}])
    assert run("lock", cwd=d).code == 0
    lock = json.loads((d / "plugins.lock.json").read_text())
    assert lock["packages"][0]["version"] == "1.1.0"
    reg.publish("base-kernels", "1.2.0")
    reg.yank("base-kernels@1.1.0")
    # The locked (now yanked) version stays.
    assert run("lock", cwd=d).code == 0
    lock = json.loads((d / "plugins.lock.json").read_text())
    assert lock["packages"][0]["version"] == "1.1.0"
    # --upgrade moves on; a fresh lock never picks the yanked version.
    r = run("lock", "--upgrade", cwd=d)
    assert r.code == 0, r
    assert "~ base-kernels 1.1.0 -> 1.2.0" in r.out
    reg.yank("base-kernels@1.2.0")
    (d / "plugins.lock.json").unlink()
    assert run("lock", cwd=d).code == 0
    lock = json.loads((d / "plugins.lock.json").read_text())
    assert lock["packages"][0]["version"] == "1.0.0"


def test_lock_explains_conflicts(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit", "version": "^1.0"},
                                {"name": "old-fft", "version": "^2.0"}])
    r = run("lock", cwd=d)
    assert r.code == 1, r
    assert "Because" in r.err
    assert "fft-kit" in r.err and "old-fft" in r.err
    assert "version solving failed" in r.err or "no solution" in r.err
    assert not (d / "plugins.lock.json").exists()


def _other_key(tmp_path):
    other = tmp_path / "keys" / "other"
    other.parent.mkdir(parents=True, exist_ok=True)
    assert run("key", "generate", "-o", other).code == 0
    return pathlib.Path(str(other) + ".pub").read_text().splitlines()[1]


def test_lock_hints_name_only_flags_lock_takes(tmp_path, reg, cache):
    # A project's registry signed by a key the project does not trust: lock
    # has no --registry-key, so its hint names only plugins.json.
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    p = json.loads((d / "plugins.json").read_text())
    p["registries"][0]["public_key"] = _other_key(tmp_path)
    (d / "plugins.json").write_text(json.dumps(p, indent=2) + "\n")
    r = run("lock", cwd=d)
    assert r.code == 1, r
    assert "which is not a key you trust for this registry" in r.err
    assert ("  hint: if the registry moved to a new key, confirm the new key "
            "with its maintainer through a channel you trust and add it "
            "(\"public_key\" in plugins.json); otherwise someone other than "
            "the registry signed this snapshot: do not use it\n") in r.err
    assert "--registry-key" not in r.err
    # No key at all: the hint shows the "public_key" entry to add.
    del p["registries"][0]["public_key"]
    (d / "plugins.json").write_text(json.dumps(p, indent=2) + "\n")
    r = run("lock", cwd=d)
    assert r.code == 1, r
    assert "no trusted key is configured for" in r.err
    assert (f'with "public_key": "{reg.pub}" in the registry\'s entry in '
            "plugins.json (for a project's registries)\n") in r.err
    assert "--registry-key" not in r.err
    # install takes --registry-key, and its hint still names it.
    r = run("install", "fft-kit", "--registry", reg.dir, "--registry-key",
            _other_key(tmp_path / "k2"), "--prefix", tmp_path / "prefix")
    assert r.code == 1, r
    assert "(--registry-key, or \"public_key\" in plugins.json)" in r.err


def _accepted_flags(command):
    """The flags `ireepkg <command>` takes: its own and the global ones."""
    text = run(*command.split(), "--help").out + run("--help").out
    return set(re.findall(r"^\s+(?:-\w, )?--([a-z][a-z0-9-]*)", text, re.M))


COMMANDS = None


def _commands():
    global COMMANDS
    if COMMANDS is None:
        out = run("help").out
        body = out.split("Commands:\n")[1].split("\n\n")[0]
        COMMANDS = [m.group(1) for m in re.finditer(
            r"^  ([a-z][a-z-]*(?: [a-z][a-z-]*)?)(?:  |\n|$)", body, re.M)]
    return COMMANDS


def hint_flag_problems(command, err):
    """Flags a hint in `err` names that the command showing it does not take.
    A flag inside a quoted `ireepkg <other> ...` belongs to that command;
    other programs' flags (`iree-opt --help`, --iree-*, what follows ` -- `)
    are not ireepkg's."""
    problems = []
    for hint in re.findall(r"^  hint: (.*)$", err, re.M):
        hint = re.sub(r" -- [^;`]*", "", hint)
        spans = [(command, re.sub(r"`(?!-)[^`]*`", "", hint))]
        for quoted in re.findall(r"`([^`]*)`", hint):
            if not quoted.startswith("ireepkg "):
                continue
            words = quoted.split()[1:]
            other = next((c for c in sorted(_commands(), key=len, reverse=True)
                          if words[:len(c.split())] == c.split()), None)
            if other:
                spans.append((other, quoted))
        for cmd, text in spans:
            takes = _accepted_flags(cmd)
            for flag in re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", text):
                if flag not in takes and not flag.startswith("iree-"):
                    problems.append(f"{command}: --{flag} in: {hint}")
    return problems


def test_hints_name_only_flags_of_the_command(tmp_path, reg, cache,
                                              monkeypatch):
    # Every command, run where it fails early (no project, no prefix) and in
    # projects whose registry is signed by a key they do not trust or whose
    # registry has no key: each flag a hint names is one the command takes.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))
    for v in ("IREEPKG_PREFIX", "IREEPKG_REGISTRY", "IREEPKG_REGISTRY_KEY"):
        monkeypatch.delenv(v, raising=False)
    wrong = _other_key(tmp_path)
    problems, hints = [], 0
    for command in _commands():
        here = tmp_path / command.replace(" ", "-")
        empty = here / "empty"
        empty.mkdir(parents=True)
        d = project(here, reg, [{"name": "fft-kit"}])
        p = json.loads((d / "plugins.json").read_text())
        p["registries"][0]["public_key"] = wrong
        (d / "plugins.json").write_text(json.dumps(p, indent=2) + "\n")
        (here / "keyless").mkdir()
        keyless = project(here / "keyless", reg, [{"name": "fft-kit"}])
        p = json.loads((keyless / "plugins.json").read_text())
        p["registries"][0].pop("public_key")
        (keyless / "plugins.json").write_text(json.dumps(p, indent=2) + "\n")
        for cwd, extra in ((empty, []), (empty, ["fft-kit"]), (d, []),
                           (d, ["fft-kit"]), (keyless, [])):
            r = run(*command.split(), *extra, cwd=cwd, timeout=60)
            hints += r.err.count("  hint: ")
            problems += hint_flag_problems(command, r.err)
    assert hints > 20
    assert not problems, "\n".join(problems)


def test_lock_filters_by_iree_version(tmp_path, reg, cache):
    reg.publish("new-only", "1.0.0", requires={"iree": ">=4.0.0"})
    d = project(tmp_path, reg, [{"name": "new-only"}])
    r = run("lock", "--iree-version", "3.13.0", cwd=d)
    assert r.code == 1, r
    # The hint names the file that holds the requirement: the package's
    # manifest, not plugins.json.
    assert r.err == (
        f"ireepkg: error: {d}/plugins.json: Because plugins.json depends on new-only and "
        "new-only 1.0.0 requires IREE >=4.0.0, but IREE 3.13.0 is in use, version solving "
        "failed.\n"
        '  hint: the IREE versions a package works with are "requires.iree" in its own manifest '
        "(ireeplugin.json of new-only), not in plugins.json: use an IREE those versions accept, "
        "or versions of new-only made for IREE 3.13.0 (resolving for IREE 3.13.0 from "
        "--iree-version; --iree-version picks another)\n")
    assert run("lock", "--iree-version", "4.1.0", cwd=d).code == 0
    assert json.loads((d / "plugins.lock.json").read_text())["iree_version"] == "4.1.0"


def test_lock_with_the_iree_wheels(tmp_path, reg, cache):
    """The IREE in use is the wheel's version (3.13.0), so a package that
    requires >=3.13.0 locks, and the lockfile records that version."""
    reg.publish("new-enough", "1.0.0", requires={"iree": ">=3.13.0"})
    d = project(tmp_path, reg, [{"name": "new-enough"}])
    r = run("lock", "--json", cwd=d, env=WITH_IREE)
    assert r.code == 0, r
    assert json.loads(r.out)["iree_version"] == "3.13.0"
    lock = json.loads((d / "plugins.lock.json").read_text())
    assert lock["iree_version"] == "3.13.0"
    assert [p["name"] for p in lock["packages"]] == ["new-enough"]
    r = run("sync", cwd=d, env=WITH_IREE)
    assert r.code == 0, r
    assert without_summary(r.err) == ""
    # Found through $VIRTUAL_ENV as well.
    r = run("lock", "--check", cwd=d, env={"PATH": "/usr/bin:/bin",
                                           "VIRTUAL_ENV": str(VENV_BIN.parent)})
    assert r.code == 0, r


def test_no_iree_found_is_said_once(tmp_path, reg, cache):
    reg.publish("new-enough", "1.0.0", requires={"iree": ">=3.13.0"})
    d = project(tmp_path, reg, [{"name": "new-enough"}])
    r = run("sync", cwd=d, env=WITHOUT_IREE)
    assert r.code == 0, r
    assert without_summary(r.err) == (
        "ireepkg: warning: no IREE found: neither iree-compile nor iree-run-module is on PATH "
        "or in $VIRTUAL_ENV/bin; resolving without checking the packages' IREE requirements "
        "(requires.iree)\n"
        "  hint: put the IREE tools on PATH (or activate their virtual environment), or give "
        "the IREE version with --iree-version\n")
    # Resolved for no IREE: the lock says none.
    assert "iree_version" not in json.loads((d / "plugins.lock.json").read_text())
    # update locks (saying it) and syncs (not saying it again).
    r = run("update", cwd=d, env=WITHOUT_IREE)
    assert r.code == 0, r
    assert r.err.count("no IREE found") == 1, r
    assert "resolving without checking" in r.err
    # sync of an up-to-date lock: the install check says it.
    r = run("sync", cwd=d, env=WITHOUT_IREE)
    assert r.code == 0, r
    assert r.err == (
        "ireepkg: warning: no IREE found: neither iree-compile nor iree-run-module is on PATH "
        "or in $VIRTUAL_ENV/bin; the IREE requirements of new-enough 1.0.0 (>=3.13.0) are not "
        "checked\n"
        "  hint: put the IREE tools on PATH (or activate their virtual environment), or give "
        "the IREE version with --iree-version\n")


def test_install_refuses_an_archive_for_another_iree(tmp_path, reg, cache):
    archive = reg.publish("needs-four", "1.0.0", requires={"iree": ">=4.0.0"})
    prefix = tmp_path / "prefix"
    r = run("install", archive, "--prefix", prefix, env=WITH_IREE)
    assert r.code == 1, r
    assert r.err == (
        f"ireepkg: error: {archive}: package 'needs-four': member 'ireeplugin.json': "
        "/requires/iree: needs-four 1.0.0 requires IREE >=4.0.0, but IREE 3.13.0 is in use: "
        f"{IREE_SOURCE}\n"
        '  hint: the IREE versions needs-four works with are "requires.iree" in its manifest '
        "(ireeplugin.json of needs-four): use an IREE it accepts, or a version of needs-four "
        "made for IREE 3.13.0; --ignore-iree-version installs it anyway\n")
    assert not (prefix / "state" / "installed.json").exists()
    # By name, the resolver does not choose it either.
    r = run("install", "needs-four", "--registry", reg.dir, "--registry-key", reg.pub,
            "--prefix", prefix, env=WITH_IREE)
    assert r.code == 1, r
    assert "needs-four 1.0.0 requires IREE >=4.0.0, but IREE 3.13.0 is in use" in r.err
    assert '"requires.iree" in its own manifest (ireeplugin.json of needs-four)' in r.err
    r = run("install", "needs-four", "--registry", reg.dir, "--registry-key", reg.pub,
            "--prefix", tmp_path / "by-name", "--ignore-iree-version", env=WITH_IREE)
    assert r.code == 0, r
    assert without_summary(r.err).endswith("/requires/iree: needs-four 1.0.0 requires IREE >=4.0.0, but IREE "
                          f"3.13.0 is in use: {IREE_SOURCE}; installing it anyway "
                          "(--ignore-iree-version)\n"), r
    # With the override: installed, with a warning.
    r = run("install", archive, "--prefix", prefix, "--ignore-iree-version", env=WITH_IREE)
    assert r.code == 0, r
    assert without_summary(r.err) == (
        f"ireepkg: warning: {archive}: package 'needs-four': member 'ireeplugin.json': "
        "/requires/iree: needs-four 1.0.0 requires IREE >=4.0.0, but IREE 3.13.0 is in use: "
        f"{IREE_SOURCE}; installing it anyway (--ignore-iree-version)\n")
    assert set(installed(prefix)) == {"needs-four"}
    # An explicit --iree-version is the IREE in use.
    other = tmp_path / "other"
    r = run("install", archive, "--prefix", other, "--iree-version", "4.1.0", env=WITH_IREE)
    assert r.code == 0 and without_summary(r.err) == "", r


def test_sync_checks_requires_iree(tmp_path, reg, cache):
    """A lock made for IREE 4 does not sync next to IREE 3.13 unless told."""
    reg.publish("needs-four", "1.0.0", requires={"iree": ">=4.0.0"})
    d = project(tmp_path, reg, [{"name": "needs-four"}])
    assert run("lock", "--iree-version", "4.1.0", cwd=d, env=WITH_IREE).code == 0
    r = run("sync", cwd=d, env=WITH_IREE)
    assert r.code == 1, r
    assert r.err == (
        "ireepkg: error: package 'needs-four': member 'ireeplugin.json': /requires/iree: "
        "needs-four 1.0.0 requires IREE >=4.0.0, but IREE 3.13.0 is in use: "
        f"{IREE_SOURCE}\n"
        '  hint: the IREE versions needs-four works with are "requires.iree" in its manifest '
        "(ireeplugin.json of needs-four): use an IREE it accepts, or a version of needs-four "
        "made for IREE 3.13.0; --ignore-iree-version installs it anyway\n")
    assert not (d / ".iree-plugins" / "state" / "installed.json").exists()
    r = run("sync", "--ignore-iree-version", cwd=d, env=WITH_IREE)
    assert r.code == 0, r
    assert "installing it anyway (--ignore-iree-version)" in r.err
    assert set(installed(d / ".iree-plugins")) == {"needs-four"}


def test_lock_for_a_foreign_platform(tmp_path, reg, cache):
    reg.publish_archive(pack(EXAMPLES / "simple-mul", reg.dist))
    # simple-mul has builds for x86_64 and aarch64, not riscv64.
    d = project(tmp_path, reg, [{"name": "simple-mul"}],
                platforms=["linux-aarch64"])
    r = run("lock", cwd=d)
    assert r.code == 0, r
    d2 = tmp_path / "proj"
    p = json.loads((d2 / "plugins.json").read_text())
    p["platforms"] = ["linux-riscv64"]
    (d2 / "plugins.json").write_text(json.dumps(p))
    r = run("lock", cwd=d2)
    assert r.code == 1, r
    assert "simple-mul" in r.err and "linux-riscv64" in r.err


def test_lock_checks_option_values(tmp_path, reg, cache):
    reg.publish_archive(pack(EXAMPLES / "simple-mul", reg.dist))
    reg.publish_archive(pack(EXAMPLES / "mul-pipeline", reg.dist))
    d = project(tmp_path, reg, [
        {"name": "mul-pipeline",
         "options": {"iree-llvmcpu-distribution-size": 4096}}])
    r = run("lock", "--iree-version", "3.13.0", cwd=d)
    assert r.code == 1, r
    assert "mul-pipeline" in r.err
    assert "iree-llvmcpu-distribution-size" in r.err
    assert "1024" in r.err  # the rule
    assert "/plugins/0/options/iree-llvmcpu-distribution-size" in r.err
    assert not (d / "plugins.lock.json").exists()


# --- sync ----------------------------------------------------------------------

def test_sync_installs_exactly_the_lock(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    r = run("sync", cwd=d)  # no lock yet: locks first
    assert r.code == 0, r
    prefix = d / ".iree-plugins"
    assert set(installed(prefix)) == {"base-kernels", "fft-kit"}
    assert installed(prefix)["base-kernels"]["reason"] == "dependency"
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert "up to date" in r.out
    # Dropping the plugin from plugins.json removes it and its dependency.
    p = json.loads((d / "plugins.json").read_text())
    p["plugins"] = [{"name": "base-kernels", "version": "=1.0.0"}]
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    r = run("sync", "--locked", cwd=d)
    assert r.code == 1, r
    assert "out of date" in r.err
    assert set(installed(prefix)) == {"base-kernels", "fft-kit"}
    r = run("sync", "--json", cwd=d)
    out = _json(r)
    assert out["relocked"] is True
    assert installed(prefix) .keys() == {"base-kernels"}
    assert installed(prefix)["base-kernels"]["version"] == "1.0.0"
    assert installed(prefix)["base-kernels"]["reason"] == "explicit"
    assert run("verify", "--prefix", prefix).code == 0


def test_sync_frozen_uses_the_lock_unchecked(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "base-kernels", "version": "=1.0.0"}])
    assert run("lock", cwd=d).code == 0
    p = json.loads((d / "plugins.json").read_text())
    p["plugins"] = [{"name": "fft-kit"}]
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    r = run("sync", "--frozen", cwd=d)
    assert r.code == 0, r
    assert set(installed(d / ".iree-plugins")) == {"base-kernels"}


def test_sync_offline_says_what_is_missing(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    r = run("sync", "--offline", cwd=d)
    assert r.code == 1, r
    assert "--offline" in r.err
    assert "fft-kit 1.0.0" in r.err and "base-kernels 1.1.0" in r.err
    assert not (d / ".iree-plugins" / "packages").exists()
    # Once downloaded, offline works, even into a fresh prefix and with the
    # registry gone.
    assert run("sync", cwd=d).code == 0
    shutil.rmtree(reg.dir)
    r = run("sync", "--offline", "--prefix", tmp_path / "fresh", cwd=d)
    assert r.code == 0, r
    assert set(installed(tmp_path / "fresh")) == {"base-kernels", "fft-kit"}


def test_sync_refuses_an_archive_that_changed_under_the_lock(tmp_path, reg,
                                                             cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    lock = json.loads((d / "plugins.lock.json").read_text())
    lock["packages"][1]["sha256"] = "0" * 64
    (d / "plugins.lock.json").write_text(json.dumps(lock, indent=2))
    r = run("sync", "--frozen", cwd=d)
    assert r.code == 1, r
    assert "not the one the lock pins" in r.err
    assert not (d / ".iree-plugins" / "packages").exists()


# --- update and outdated ---------------------------------------------------------

def test_outdated_and_update(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit", "version": "^1.0"},
                                {"name": "base-kernels", "version": "~1.0"}])
    assert run("sync", cwd=d).code == 0
    assert installed(d / ".iree-plugins")["base-kernels"]["version"] == "1.0.0"
    reg.publish("fft-kit", "1.1.0", {"base-kernels": "^1.0"})
    reg.publish("base-kernels", "1.0.1")
    out = _json(run("outdated", "--json", cwd=d))
    by = {p["name"]: p for p in out["packages"]}
    assert by["fft-kit"]["locked"] == "1.0.0"
    assert by["fft-kit"]["wanted"] == "1.1.0"
    assert by["base-kernels"] == {"name": "base-kernels", "locked": "1.0.0",
                                  "wanted": "1.0.1", "latest": "1.1.0",
                                  "registry": "test"}
    r = run("update", "fft-kit", cwd=d)
    assert r.code == 0, r
    st = installed(d / ".iree-plugins")
    assert st["fft-kit"]["version"] == "1.1.0"
    assert st["base-kernels"]["version"] == "1.0.0"
    r = run("update", cwd=d)
    assert r.code == 0, r
    assert installed(d / ".iree-plugins")["base-kernels"]["version"] == "1.0.1"
    r = run("outdated", cwd=d)
    assert r.code == 0, r
    assert "base-kernels" in r.out  # latest 1.1.0 is outside ~1.0


# --- search ----------------------------------------------------------------------

def test_search(tmp_path, reg, cache):
    out = _json(run("search", "fft", "--registry", reg.dir, "--registry-key",
                    reg.pub, "--json"))
    assert [p["name"] for p in out["packages"]] == ["fft-kit", "old-fft"]
    assert out["packages"][0]["latest"] == "1.0.0"
    assert out["packages"][0]["summary"] == "test package fft-kit"
    r = run("search", "nothing-like-this", "--registry", reg.dir,
            "--registry-key", reg.pub)
    assert r.code == 1
    assert "no package matches" in r.out


# --- bundles ---------------------------------------------------------------------

def test_bundle_round_trip_offline(tmp_path, reg, cache, monkeypatch):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    bundle = tmp_path / "vendor.ireebundle"
    r = run("bundle", "create", "-o", bundle, "--json", cwd=d)
    out = _json(r)
    assert out["packages"] == 2
    # Another machine: no registry, an empty cache, no network.
    shutil.rmtree(reg.dir)
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache2"))
    r = run("sync", "--offline", "--bundle", bundle, cwd=d)
    assert r.code == 0, r
    assert set(installed(d / ".iree-plugins")) == {"base-kernels", "fft-kit"}
    # install --bundle by name, outside the project.
    r = run("install", "--bundle", bundle, "--registry-key", reg.pub,
            "--offline", "fft-kit", "--prefix", tmp_path / "p2",
            cwd=tmp_path)
    assert r.code == 0, r
    assert set(installed(tmp_path / "p2")) == {"base-kernels", "fft-kit"}


def test_tampered_bundle_is_refused(tmp_path, reg, cache, monkeypatch):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    bundle = tmp_path / "vendor.ireebundle"
    assert run("bundle", "create", "-o", bundle, cwd=d).code == 0
    # Rebuild the bundle with one archive's bytes changed.
    work = tmp_path / "unpacked"
    work.mkdir()
    subprocess.run(["tar", "--zstd", "-xf", bundle, "-C", work], check=True)
    archive = next(work.rglob("fft-kit-1.0.0.ireepkg"))
    data = bytearray(archive.read_bytes())
    data[-1] ^= 0xFF
    archive.write_bytes(bytes(data))
    bad = tmp_path / "bad.ireebundle"
    members = sorted(str(p.relative_to(work)) for p in work.rglob("*")
                     if p.is_file())
    members.remove("bundle.json")
    subprocess.run(["tar", "--zstd", "-cf", bad, "-C", work, "bundle.json",
                    *members], check=True)
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache2"))
    r = run("sync", "--offline", "--bundle", bad, cwd=d)
    assert r.code == 1, r
    assert "fft-kit" in r.err
    assert not (d / ".iree-plugins" / "packages").exists()


# --- local path plugins --------------------------------------------------------------

def test_path_plugins_lock_and_sync(tmp_path, reg, cache):
    local = data_package(tmp_path / "local", "local-experiment", "0.1.0",
                         {"base-kernels": "~1.0"})
    d = project(tmp_path, reg, [
        {"name": "local-experiment", "path": os.path.relpath(local, tmp_path / "proj")},
        {"name": "fft-kit"}])
    r = run("lock", cwd=d)
    assert r.code == 0, r
    lock = json.loads((d / "plugins.lock.json").read_text())
    by = {p["name"]: p for p in lock["packages"]}
    assert by["local-experiment"]["source"] == {
        "path": os.path.relpath(local, d)}
    # Its dependency constrains the registry packages too.
    assert by["base-kernels"]["version"] == "1.0.0"
    assert lock["activation"] == ["base-kernels", "local-experiment",
                                  "fft-kit"]
    r = run("sync", "--locked", cwd=d)
    assert r.code == 0, r
    st = installed(d / ".iree-plugins")
    assert set(st) == {"base-kernels", "local-experiment", "fft-kit"}
    # A local package whose version moved on makes --frozen refuse.
    m = json.loads((local / "ireeplugin.json").read_text())
    m["version"] = "0.2.0"
    (local / "ireeplugin.json").write_text(json.dumps(m))
    r = run("sync", "--frozen", cwd=d)
    assert r.code == 1, r
    assert "0.2.0" in r.err and "run `ireepkg lock`" in r.err


def test_bundle_that_does_not_verify_leaves_nothing_in_the_cache(tmp_path, reg, cache,
                                                                 monkeypatch):
    """A bundle is extracted into the cache to be read; one whose signed
    snapshot does not verify with the key given is removed again."""
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    bundle = tmp_path / "vendor.ireebundle"
    assert run("bundle", "create", "-o", bundle, cwd=d).code == 0
    other = tmp_path / "other"
    other.mkdir()
    assert run("key", "generate", "-o", other / "k").code == 0
    wrong = (other / "k.pub").read_text().splitlines()[1].strip()
    cache2 = tmp_path / "cache2"
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(cache2))
    r = run("install", "--bundle", bundle, "--registry-key", wrong, "--offline",
            "fft-kit", "--prefix", tmp_path / "p2", cwd=tmp_path)
    assert r.code == 1, r
    assert not (cache2 / "bundles").exists() or not any((cache2 / "bundles").iterdir())
    # With the right key it is extracted once and kept.
    r = run("install", "--bundle", bundle, "--registry-key", reg.pub, "--offline",
            "fft-kit", "--prefix", tmp_path / "p2", cwd=tmp_path)
    assert r.code == 0, r
    assert len(list((cache2 / "bundles").iterdir())) == 1
