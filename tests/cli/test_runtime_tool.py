"""ireepkg-runtime, the program built from libireepkg_runtime alone for
targets without the CLI (runtime_integration/tool/): `flags` prints what
`ireepkg flags runtime` prints for the prefix where it is now, and
`write-flagfile` writes state/runtime.flags again there, the same file
ireepkg writes. The Windows and aarch64 builds of it run in tests/lanes/."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, EXAMPLES, copy_package, pack, run

TOOL = BUILD / "bin" / "ireepkg-runtime"
SIMPLE_MUL = EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg"


def tool(*args, env=None):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([TOOL, *map(str, args)], capture_output=True,
                          text=True, env=full, timeout=60)


def prepared(root, *install_args):
    prefix = root / "prepared"
    r = run("install", "--prefix", prefix, *install_args, SIMPLE_MUL)
    assert r.code == 0, r.err
    return prefix


@pytest.fixture
def moved(tmp_path):
    """A prefix moved after ireepkg wrote it (nothing has run on it since)."""
    original = prepared(tmp_path)
    there = tmp_path / "moved here, ünïcode"
    shutil.move(original, there)
    return original, there


@pytest.mark.parametrize("fmt", ["args", "flagfile", "json"])
@pytest.mark.parametrize("platform", ["linux-x86_64", "linux-riscv64"])
def test_flags_are_the_clis_for_a_moved_prefix(moved, fmt, platform):
    original, there = moved
    t = tool("flags", "--prefix", there, "--format", fmt, "--platform", platform)
    assert t.returncode == 0, t.stderr
    assert str(original) not in t.stdout
    c = run("flags", "runtime", "--prefix", there, "--format", fmt,
            "--platform", platform)
    assert c.code == 0, c.err
    assert t.stdout == c.out
    notes = [l.replace("ireepkg: note:", "ireepkg-runtime: note:")
             for l in c.err.splitlines(keepends=True) if "is not activated" in l]
    assert t.stderr == "".join(notes)
    if platform == "linux-riscv64" and fmt != "json":
        assert t.stderr == (
            'ireepkg-runtime: note: simple-mul 1.2.0: runtime plugin "simple_mul" '
            "is not activated: no build for linux-riscv64\n"
            'ireepkg-runtime: note: simple-mul 1.2.0: runtime plugin '
            '"simple_mul_system" is not activated: no build for linux-riscv64\n')


@pytest.mark.parametrize("platform", ["linux-x86_64", "linux-riscv64"])
def test_json_with_parameters_and_no_imports_is_the_clis(tmp_path, platform):
    """Parameters sorted by key, strings escaped as the CLI escapes them
    (quote, backslash, tab, other control characters; UTF-8 as it is), an
    empty list of imports."""
    import json
    m = json.loads((EXAMPLES / "simple-mul" / "ireeplugin.json").read_text())
    plugins = m["runtime"]["plugins"]
    plugins[0]["parameters"] = {"scale": "2", "b\u00e9ta": "t\tab \"q\" \\ \u0001",
                                "a": "1"}
    plugins[1]["imports"] = []
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "pkg",
                       runtime=m["runtime"])
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, pack(pkg, tmp_path / "dist")).code == 0
    t = tool("flags", "--prefix", prefix, "--format", "json", "--platform", platform)
    c = run("flags", "runtime", "--prefix", prefix, "--format", "json",
            "--platform", platform)
    assert (t.returncode, c.code) == (0, 0), t.stderr + c.err
    assert '"b\u00e9ta": "t\\tab \\"q\\" \\\\ \\u0001"' in t.stdout
    assert t.stdout == c.out


def test_flags_default_to_the_prefixs_platform(tmp_path):
    prefix = prepared(tmp_path, "--platform", "linux-aarch64")
    t = tool("flags", "--prefix", prefix)
    assert t.returncode == 0, t.stderr
    assert t.stdout == (f"--executable_plugin=embedded:{prefix}/packages/simple-mul/"
                        "1.2.0/runtime/simple_mul.aarch64.so\n")
    c = run("flags", "runtime", "--prefix", prefix, "--platform", "linux-aarch64")
    assert t.stdout == c.out


def test_write_flagfile_writes_what_ireepkg_writes(moved):
    original, there = moved
    flagfile = there / "state" / "runtime.flags"
    assert str(original) in flagfile.read_text()
    t = tool("write-flagfile", "--prefix", there)
    assert t.returncode == 0, t.stderr
    assert t.stdout == ""
    assert t.stderr == (
        f"ireepkg-runtime: note: the prefix {there} was moved or copied from "
        f"{original}: wrote {flagfile} for where it is now (2 runtime plugins "
        "for linux-x86_64)\n")
    written = flagfile.read_text()
    assert str(original) not in written
    assert [p.name for p in flagfile.parent.iterdir() if ".tmp." in p.name] == []
    # ireepkg rewrites the moved prefix's state files: the same flagfile.
    r = run("list", "--prefix", there)
    assert r.code == 0, r.err
    assert "were written again for where it is now" in r.err
    assert flagfile.read_text() == written
    # Not moved now (ireepkg rewrote the index too).
    t = tool("write-flagfile", "--prefix", there)
    assert t.returncode == 0, t.stderr
    assert t.stderr == (f"ireepkg-runtime: note: wrote {flagfile} (2 runtime "
                        "plugins for linux-x86_64)\n")
    assert flagfile.read_text() == written


def test_prefix_from_the_environment(moved):
    _, there = moved
    t = tool("flags", env={"IREEPKG_PREFIX": str(there)})
    assert t.returncode == 0, t.stderr
    assert t.stdout == tool("flags", "--prefix", there).stdout != ""


def test_no_prefix(tmp_path):
    missing = tmp_path / "nowhere"
    t = tool("flags", "--prefix", missing)
    assert t.returncode == 1
    assert t.stdout == ""
    assert t.stderr == (
        f"ireepkg-runtime: error: no ireepkg prefix at '{missing}' (chosen by "
        f"--prefix): "
        f"'{missing}/state' does not exist\n"
        "  hint: install a package into it first (ireepkg install --prefix "
        "...), or choose another prefix\n")


@pytest.mark.parametrize("args,message", [
    ([], "no command given"),
    (["list"], "unknown command list"),
    (["flags", "--format", "yaml"], "unknown format yaml"),
    (["flags", "--prefix"], "missing value after --prefix"),
    (["flags", "--bogus"], "unknown option --bogus"),
    (["write-flagfile", "--platform", "linux-aarch64"],
     "write-flagfile writes the flags of the prefix's own platform; it takes "
     "only --prefix"),
])
def test_usage_errors(args, message):
    t = tool(*args)
    assert t.returncode == 2
    assert t.stderr.startswith(f"ireepkg-runtime: error: {message}\nusage: "
                               "ireepkg-runtime flags ")


def test_version():
    t = tool("--version")
    assert (t.returncode, t.stdout) == (0, "ireepkg-runtime 0.1.0\n")


def test_write_flagfile_on_a_read_only_prefix(moved, monkeypatch):
    """The flagfile cannot be written: the error names the file it tried,
    and the prefix is left as it was."""
    from conftest import read_only
    original, there = moved
    flagfile = there / "state" / "runtime.flags"
    before = flagfile.read_text()
    monkeypatch.setenv("IREEPKG_BIN", str(TOOL))
    r = read_only(there, "write-flagfile", "--prefix", there)
    assert r.returncode == 1
    reason = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    assert re.fullmatch(
        re.escape(f"ireepkg-runtime: error: cannot create '{flagfile}.tmp.")
        + r"\d+\.0" + re.escape(f"': {reason}\n"), r.stderr), r.stderr
    assert flagfile.read_text() == before
    assert sorted(p.name for p in flagfile.parent.iterdir()) == sorted(
        p.name for p in (there / "state").iterdir() if ".tmp." not in p.name)
