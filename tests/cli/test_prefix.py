"""The package lifecycle on local files: install, list, info, verify,
remove, dependencies, platforms, prefix selection, activation order, and
what the prefix's state files say."""
import json
import os
import stat
import subprocess

import pytest

from conftest import (copy_package, data_package, EXAMPLES, make_writable,
                      pack, run, simple_mul_build, snapshot)


@pytest.fixture
def prefix(tmp_path):
    return tmp_path / "prefix"


def installed(prefix):
    r = run("list", "--json", "--prefix", prefix)
    assert r.code == 0, r.err
    return [(p["name"], p["version"], p["reason"]) for p in json.loads(r.out)["packages"]]


def test_install_list_info_verify_remove(prefix, example_archives):
    sm, mp = example_archives["simple-mul"], example_archives["mul-pipeline"]
    r = run("install", sm, mp, "--prefix", prefix)
    assert r.code == 0, r.err
    assert r.out == (f"installed simple-mul 1.2.0\ninstalled mul-pipeline 0.3.0\n"
                     f"prefix: {prefix}\n")
    assert installed(prefix) == [("simple-mul", "1.2.0", "explicit"),
                                 ("mul-pipeline", "0.3.0", "explicit")]
    listing = run("list", "--prefix", prefix).out
    assert listing.splitlines() == [
        f"prefix {prefix} (linux-x86_64), in activation order:",
        "simple-mul    1.2.0       explicit    simple_mul (embedded-elf), simple_mul_system (system-library)",
        "mul-pipeline  0.3.0       explicit    input_torch (iree-static), hal_target_llvm_cpu (iree-static), hook preprocessing, hook transform-spec",
    ]
    info = json.loads(run("info", "simple-mul", "--json", "--prefix", prefix).out)
    assert info["version"] == "1.2.0" and info["reason"] == "explicit"
    assert info["path"] == f"{prefix}/packages/simple-mul/1.2.0"
    assert info["requires"] == {"iree": ">=3.10.0, <4.0.0"}
    assert [p["name"] for p in info["runtime_plugins"]] == ["simple_mul", "simple_mul_system"]
    assert info["runtime_plugins"][0]["imports"] == ["simple_mul_workgroup"]
    assert info["platforms"] == ["aarch64", "linux-x86_64", "windows-aarch64",
                                 "windows-x86_64", "x86_64", "x86_64_v3"]
    assert info["installed_size"] > 0
    text = run("info", "mul-pipeline", "--prefix", prefix).out
    assert "mul-pipeline 0.3.0 (installed explicitly)" in text
    assert "dependencies: simple-mul ^1.2" in text
    assert "compiler plugin input_torch (iree-static)" in text
    assert "option --iree-torch-decompose-complex-ops: boolean (default true) - Decompose complex torch operations" in text
    assert "option --iree-llvmcpu-distribution-size: integer - Default distribution tile size" in text
    assert "hook preprocessing: func.func(canonicalize)" in text
    assert "hook transform-spec: specs/mul_spec.mlir" in text
    v = run("verify", "--prefix", prefix)
    assert v.code == 0 and v.out == "verified 2 package(s), 9 file(s): ok\n"
    r = run("remove", "mul-pipeline", "simple-mul", "--prefix", prefix)
    assert r.code == 0, r.err
    assert installed(prefix) == []
    assert sorted(os.listdir(prefix / "packages")) == []
    assert run("verify", "--prefix", prefix).code == 0


def test_info_on_an_archive(example_archives):
    r = run("info", example_archives["simple-mul"], "--json")
    assert r.code == 0, r.err
    j = json.loads(r.out)
    assert (j["name"], j["version"], j["files"]) == ("simple-mul", "1.2.0", 7)
    assert j["archive"] == str(example_archives["simple-mul"])


def test_state_files(prefix, example_archives):
    run("install", example_archives["simple-mul"], example_archives["mul-pipeline"], "--prefix", prefix)
    pkg = f"{prefix}/packages/simple-mul/1.2.0"
    flags = (prefix / "state" / "runtime.flags").read_text().splitlines()
    assert [l for l in flags if not l.startswith("#")] == [
        f"--executable_plugin=embedded:{pkg}/runtime/simple_mul.{simple_mul_build()}.so",
        f"--executable_plugin={pkg}/runtime/linux-x86_64/libsimple_mul.so",
    ]
    act = json.loads((prefix / "state" / "activation.json").read_text())
    assert act["schema_version"] == 1 and act["platform"] == "linux-x86_64"
    assert [p["name"] for p in act["packages"]] == ["simple-mul", "mul-pipeline"]
    assert [(r["name"], r["format"], r["spec"]) for r in act["runtime"]] == [
        ("simple_mul", "embedded-elf", f"embedded:{pkg}/runtime/simple_mul.{simple_mul_build()}.so"),
        ("simple_mul_system", "system-library", f"{pkg}/runtime/linux-x86_64/libsimple_mul.so"),
    ]
    for r in act["runtime"]:
        assert os.path.isabs(r["path"]) and os.path.exists(r["path"])
    comp = (prefix / "state" / "compiler.flags").read_text().splitlines()
    mp = f"{prefix}/packages/mul-pipeline/0.3.0"
    assert [l for l in comp if not l.startswith("#")] == [
        "--iree-plugin=input_torch",
        "--iree-torch-decompose-complex-ops=true",
        "--iree-plugin=hal_target_llvm_cpu",
        f"--iree-preprocessing-transform-spec-filename={mp}/specs/mul_spec.mlir",
        "--iree-preprocessing-pass-pipeline=builtin.module(func.func(canonicalize))",
    ]
    inst = json.loads((prefix / "state" / "installed.json").read_text())
    assert inst["platform"] == "linux-x86_64"
    assert inst["packages"][1]["dependencies"] == ["simple-mul"]
    assert len(inst["packages"][0]["archive_sha256"]) == 64


def test_installed_files_are_read_only(prefix, example_archives):
    """Files are read-only; directories stay the owner's to move and
    delete (a non-root user can neither rename a directory it cannot write
    to a new parent nor `rm -rf` a tree of read-only directories)."""
    run("install", example_archives["simple-mul"], "--prefix", prefix)
    root = prefix / "packages" / "simple-mul" / "1.2.0"
    for p in root.rglob("*"):
        mode = stat.S_IMODE(p.lstat().st_mode)
        if p.is_dir():
            assert mode == 0o755, p
        else:
            assert mode & 0o222 == 0, p
    assert stat.S_IMODE(root.lstat().st_mode) == 0o755


def test_owner_can_upgrade_remove_and_delete_the_prefix(tmp_path, prefix,
                                                        example_archives):
    """What an ordinary user does with a prefix in their home: install,
    upgrade, remove, and finally `rm -rf` it. (Run as root too, where it
    checks the modes; the unprivileged run of this file is the real test.)"""
    v2 = pack(copy_package(EXAMPLES / "simple-mul", tmp_path / "sm2",
                           version="1.3.0"), tmp_path / "d")
    assert run("install", example_archives["simple-mul"], "--prefix", prefix).code == 0
    r = run("install", v2, "--prefix", prefix)
    assert r.code == 0, r.err
    assert "simple-mul 1.2.0 -> 1.3.0" in r.out or "1.3.0" in r.out
    assert run("verify", "--prefix", prefix).code == 0
    assert run("list", "--prefix", prefix).code == 0
    r = run("remove", "simple-mul", "--prefix", prefix)
    assert r.code == 0, r.err
    assert not (prefix / "packages" / "simple-mul").exists()
    assert run("install", v2, "--prefix", prefix).code == 0
    rm = subprocess.run(["rm", "-rf", str(prefix)], capture_output=True, text=True)
    assert rm.returncode == 0, rm.stderr
    assert not prefix.exists()


def test_prefix_with_read_only_directories_from_older_versions(tmp_path, prefix,
                                                               example_archives):
    """Earlier versions left package directories 0555: upgrading and
    removing such a package still works for their owner."""
    v2 = pack(copy_package(EXAMPLES / "simple-mul", tmp_path / "sm2",
                           version="1.3.0"), tmp_path / "d")
    assert run("install", example_archives["simple-mul"], "--prefix", prefix).code == 0
    old = prefix / "packages" / "simple-mul" / "1.2.0"
    for d in sorted([old, *[p for p in old.rglob("*") if p.is_dir()]], reverse=True):
        os.chmod(d, 0o555)
    r = run("install", v2, "--prefix", prefix)
    assert r.code == 0, r.err
    assert not old.exists()
    assert run("verify", "--prefix", prefix).code == 0
    assert run("remove", "simple-mul", "--prefix", prefix).code == 0
    assert not (prefix / "packages" / "simple-mul").exists()


def test_missing_dependency_is_named(prefix, example_archives):
    r = run("install", example_archives["mul-pipeline"], "--prefix", prefix)
    assert r.code == 1
    assert ("ireepkg: error: package 'mul-pipeline': mul-pipeline 0.3.0 depends on simple-mul ^1.2, "
            "which is neither installed nor given") in r.err
    assert not (prefix / "packages").exists()


def test_conflicting_dependency_is_named(tmp_path, prefix, example_archives):
    v2 = pack(copy_package(EXAMPLES / "simple-mul", tmp_path / "sm2", version="2.0.0"), tmp_path / "d")
    assert run("install", example_archives["simple-mul"], example_archives["mul-pipeline"],
               "--prefix", prefix).code == 0
    before = snapshot(prefix)
    r = run("install", v2, "--prefix", prefix)
    assert r.code == 1
    assert ("mul-pipeline 0.3.0 depends on simple-mul ^1.2, but simple-mul 2.0.0 is being installed"
            in r.err)
    assert snapshot(prefix) == before


def test_upgrade_keeps_position_and_replaces_files(tmp_path, prefix, example_archives):
    v13 = pack(copy_package(EXAMPLES / "simple-mul", tmp_path / "sm13", version="1.3.0"), tmp_path / "d")
    run("install", example_archives["simple-mul"], example_archives["mul-pipeline"], "--prefix", prefix)
    r = run("install", v13, "--prefix", prefix)
    assert r.code == 0, r.err
    assert "changed simple-mul 1.2.0 -> 1.3.0" in r.out
    assert [n for n, _, _ in installed(prefix)] == ["simple-mul", "mul-pipeline"]
    assert sorted(os.listdir(prefix / "packages" / "simple-mul")) == ["1.3.0"]
    assert "simple-mul/1.3.0/runtime" in (prefix / "state" / "runtime.flags").read_text()
    assert run("verify", "--prefix", prefix).code == 0


def test_reinstalling_the_same_archive_changes_nothing(prefix, example_archives):
    run("install", example_archives["simple-mul"], "--prefix", prefix)
    before = snapshot(prefix)
    r = run("install", example_archives["simple-mul"], "--prefix", prefix)
    assert r.code == 0
    assert r.out == "simple-mul 1.2.0 is already installed\n"
    assert snapshot(prefix) == before


def test_remove_refuses_when_needed_unless_cascade(prefix, example_archives):
    run("install", example_archives["simple-mul"], example_archives["mul-pipeline"], "--prefix", prefix)
    before = snapshot(prefix)
    r = run("remove", "simple-mul", "--prefix", prefix)
    assert r.code == 1
    assert ('cannot remove "simple-mul": "mul-pipeline" 0.3.0 depends on it' in r.err)
    assert 'hint: remove "mul-pipeline" too, or use --cascade' in r.err
    assert snapshot(prefix) == before
    r = run("remove", "simple-mul", "--cascade", "--prefix", prefix)
    assert r.code == 0, r.err
    assert r.out.splitlines()[:2] == ["removed simple-mul 1.2.0", "removed mul-pipeline 0.3.0"]
    assert installed(prefix) == []


def test_remove_unknown_suggests(prefix, example_archives):
    run("install", example_archives["simple-mul"], "--prefix", prefix)
    r = run("remove", "simple-mull", "--prefix", prefix)
    assert r.code == 1
    assert 'package "simple-mull" is not installed (did you mean "simple-mul"?)' in r.err


def test_activation_order_is_install_order_with_dependencies_first(tmp_path, prefix):
    src, out = tmp_path / "src", tmp_path / "dist"
    a = pack(data_package(src, "alpha"), out)
    b = pack(data_package(src, "beta", dependencies={"gamma": "^1"}), out)
    c = pack(data_package(src, "gamma"), out)
    assert run("install", a, "--prefix", prefix).code == 0
    assert run("install", b, c, "--prefix", prefix).code == 0
    assert [n for n, _, _ in installed(prefix)] == ["alpha", "gamma", "beta"]


def test_platform_checks(tmp_path, example_archives):
    r = run("install", example_archives["simple-mul"], "--prefix", tmp_path / "rv",
            "--platform", "linux-riscv64")
    assert r.code == 1
    assert ('package "simple-mul" 1.2.0 has no build for linux-riscv64 '
            "(it has: aarch64, linux-x86_64, windows-aarch64, windows-x86_64, x86_64, "
            "x86_64_v3)") in r.err
    arm = tmp_path / "arm"
    r = run("install", example_archives["simple-mul"], "--prefix", arm, "--platform", "linux-aarch64")
    assert r.code == 0, r.err
    assert ('runtime plugin "simple_mul_system" has no build for linux-aarch64; it is not activated'
            in r.err)
    flags = [l for l in (arm / "state" / "runtime.flags").read_text().splitlines() if not l.startswith("#")]
    assert flags == [f"--executable_plugin=embedded:{arm}/packages/simple-mul/1.2.0/runtime/simple_mul.aarch64.so"]
    r = run("install", example_archives["mul-pipeline"], "--prefix", arm, "--platform", "linux-x86_64")
    assert r.code == 1
    assert "this prefix is for linux-aarch64, not linux-x86_64" in r.err
    r = run("install", example_archives["simple-mul"], "--prefix", arm, "--platform", "linux-x86-64")
    assert r.code == 2
    assert "'linux-x86-64' is not a platform (did you mean \"linux-x86_64\"?)" in r.err


def test_verify_reports_modified_missing_extra_and_state(prefix, example_archives):
    run("install", example_archives["simple-mul"], example_archives["mul-pipeline"], "--prefix", prefix)
    root = prefix / "packages" / "simple-mul" / "1.2.0"
    make_writable(prefix)
    so = root / "runtime" / "simple_mul.x86_64.so"
    os.chmod(so, 0o644)
    so.write_bytes(so.read_bytes() + b"x")
    (root / "runtime" / "simple_mul.aarch64.so").unlink()
    (root / "runtime" / "extra.txt").write_text("x")
    with open(prefix / "state" / "runtime.flags", "a") as f:
        f.write("--executable_plugin=/tmp/evil.so\n")
    r = run("verify", "--json", "--prefix", prefix)
    assert r.code == 1
    problems = {(p["package"], p["path"], p["kind"]) for p in json.loads(r.out)["problems"]}
    assert problems == {
        ("simple-mul", "runtime/simple_mul.x86_64.so", "modified"),
        ("simple-mul", "runtime/simple_mul.aarch64.so", "missing"),
        ("simple-mul", "runtime/extra.txt", "extra"),
        ("", "state/runtime.flags", "state"),
    }
    text = run("verify", "mul-pipeline", "--prefix", prefix)
    assert text.code == 1  # the state file problem is prefix-wide
    assert "state: state/runtime.flags: does not match the installed packages" in text.out
    assert "verified 1 package(s)" in text.out


def test_verify_of_a_prefix_an_older_ireepkg_wrote(prefix, example_archives):
    """runtime.flags as ireepkg wrote it before libireepkg_runtime wrote it,
    in a prefix without installed.json's "state" record: verify says so and
    succeeds; the next change rewrites the file, and removes a state file
    no writer produces any more."""
    run("install", example_archives["simple-mul"], "--prefix", prefix)
    state = prefix / "state"
    pkg = prefix / "packages" / "simple-mul" / "1.2.0"
    flags = state / "runtime.flags"
    current = flags.read_text()
    installed_json = json.loads((state / "installed.json").read_text())
    assert installed_json["state"]["files"] == [
        "activation.json", "compiler.flags", "compiler.json", "runtime.flags", "runtime.index"]
    del installed_json["state"]
    (state / "installed.json").write_text(json.dumps(installed_json, indent=2) + "\n")
    flags.write_text(
        f"# IREE runtime flags for the ireepkg prefix {prefix}\n"
        "# Generated by ireepkg in activation order; do not edit.\n"
        f"# Use: iree-run-module --flagfile={flags} ...\n"
        f"--executable_plugin=embedded:{pkg}/runtime/simple_mul.x86_64.so\n"
        f"--executable_plugin={pkg}/runtime/linux-x86_64/libsimple_mul.so\n")
    r = run("verify", "--prefix", prefix)
    assert r.code == 0, r.out + r.err
    version = run("--version").out.splitlines()[0].split()[-1]
    assert r.out == (
        "outdated: state/runtime.flags: written by an older ireepkg, not by "
        f"ireepkg {version}, which writes it differently; the next install, "
        "remove or sync that changes the prefix rewrites it\n"
        "verified 1 package(s), 7 file(s): ok\n")
    j = json.loads(run("verify", "--json", "--prefix", prefix).out)
    assert j["ok"] and j["problems"] == []
    assert [(o["path"], o["kind"]) for o in j["outdated"]] == [("state/runtime.flags", "outdated")]
    # A file in state/ no ireepkg wrote is a problem; the next change keeps it.
    (state / "notes.txt").write_text("mine\n")
    r = run("verify", "--prefix", prefix)
    assert r.code == 1
    assert ("extra: state/notes.txt: is not part of the prefix's state "
            "(no state writer produces it)\n") in r.out
    assert run("install", example_archives["mul-pipeline"], "--prefix", prefix).code == 0
    assert flags.read_text() == current
    assert (state / "notes.txt").read_text() == "mine\n"
    (state / "notes.txt").unlink()
    r = run("verify", "--prefix", prefix)
    assert (r.code, r.out) == (0, "verified 2 package(s), 9 file(s): ok\n")


def test_verify_flags_writable_files(prefix, example_archives):
    run("install", example_archives["simple-mul"], "--prefix", prefix)
    f = prefix / "packages" / "simple-mul" / "1.2.0" / "ireeplugin.json"
    os.chmod(f, 0o644)
    r = run("verify", "--prefix", prefix)
    assert r.code == 1
    assert "permissions: simple-mul/ireeplugin.json: is writable; installed files are read-only" in r.out


def test_prefix_selection(tmp_path, example_archives):
    env = {"IREEPKG_PREFIX": "", "XDG_DATA_HOME": "", "HOME": str(tmp_path / "home")}
    work = tmp_path / "work"
    (work / "sub" / "dir").mkdir(parents=True)
    # Default: ~/.local/share/ireepkg
    r = run("install", example_archives["simple-mul"], cwd=work, env=env)
    assert r.code == 0, r.err
    assert r.out.endswith(f"prefix: {tmp_path}/home/.local/share/ireepkg\n")
    # XDG_DATA_HOME
    r = run("list", "--json", cwd=work, env={**env, "XDG_DATA_HOME": str(tmp_path / "xdg")})
    assert json.loads(r.out)["prefix"] == f"{tmp_path}/xdg/ireepkg"
    # A project: plugins.json found upward
    (work / "plugins.json").write_text('{"schema_version": 1}\n')
    r = run("list", "--json", cwd=work / "sub" / "dir", env=env)
    assert json.loads(r.out)["prefix"] == f"{work}/.iree-plugins"
    # IREEPKG_PREFIX beats the project; --prefix beats everything.
    r = run("list", "--json", cwd=work, env={**env, "IREEPKG_PREFIX": str(tmp_path / "envp")})
    assert json.loads(r.out)["prefix"] == f"{tmp_path}/envp"
    r = run("list", "--json", "--prefix", tmp_path / "flag", cwd=work,
            env={**env, "IREEPKG_PREFIX": str(tmp_path / "envp")})
    assert json.loads(r.out)["prefix"] == f"{tmp_path}/flag"


def test_list_on_an_empty_prefix(prefix):
    r = run("list", "--prefix", prefix)
    assert r.code == 0
    assert r.out == f"no packages installed in {prefix}\n"
    assert not prefix.exists()  # reading never creates a prefix


def test_json_errors(prefix, example_archives):
    r = run("install", example_archives["mul-pipeline"], "--json", "--prefix", prefix)
    assert r.code == 1
    j = json.loads(r.out)
    assert j["ok"] is False and j["error"]["code"] == "conflict"
    assert j["error"]["diagnostics"][0]["package"] == "mul-pipeline"


def test_cache_links_a_reinstalled_version(tmp_path, prefix, example_archives):
    cache = tmp_path / "cache"
    env = {"IREEPKG_CACHE_DIR": str(cache)}
    sm = example_archives["simple-mul"]
    assert run("install", sm, "--prefix", prefix, env=env).code == 0
    files = sorted(p for p in (cache / "files").rglob("*") if p.is_file())
    blobs = [p for p in files if ".ok-" not in p.name]
    assert len(blobs) == 7  # manifest + six libraries
    # Each blob was written from verified bytes, and says so (the marker
    # spares hashing it again when it is linked).
    markers = [p for p in files if ".ok-" in p.name]
    assert sorted(m.name.split(".ok-")[0] for m in markers) == [b.name for b in blobs]
    for b in blobs:
        assert stat.S_IMODE(b.stat().st_mode) & 0o222 == 0
    assert run("remove", "simple-mul", "--prefix", prefix, env=env).code == 0
    assert run("install", sm, "--prefix", prefix, env=env).code == 0
    so = prefix / "packages" / "simple-mul" / "1.2.0" / "runtime" / "simple_mul.x86_64.so"
    inodes = {b.stat().st_ino for b in blobs}
    assert so.stat().st_ino in inodes  # linked, not extracted again
    assert run("verify", "--prefix", prefix, env=env).code == 0
    # Another prefix shares the same blobs.
    other = tmp_path / "other"
    assert run("install", sm, "--prefix", other, env=env).code == 0
    so2 = other / "packages" / "simple-mul" / "1.2.0" / "runtime" / "simple_mul.x86_64.so"
    assert so2.stat().st_ino == so.stat().st_ino
    # --no-cache extracts.
    third = tmp_path / "third"
    assert run("install", sm, "--prefix", third, "--no-cache", env=env).code == 0
    so3 = third / "packages" / "simple-mul" / "1.2.0" / "runtime" / "simple_mul.x86_64.so"
    assert so3.stat().st_ino not in inodes
    assert so3.read_bytes() == so.read_bytes()


def test_cache_is_not_used_for_a_changed_archive(tmp_path, prefix, example_archives):
    import shutil
    cache = tmp_path / "cache"
    env = {"IREEPKG_CACHE_DIR": str(cache)}
    copy = tmp_path / "copy.ireepkg"
    shutil.copy(example_archives["simple-mul"], copy)
    assert run("install", copy, "--prefix", prefix, env=env).code == 0
    assert run("remove", "simple-mul", "--prefix", prefix, env=env).code == 0
    # Same name and size, other bytes: the identity changed, so the archive
    # is read and verified again (and here refused).
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    r = run("install", copy, "--prefix", prefix, env=env)
    assert r.code == 1
    assert not (prefix / "packages" / "simple-mul").exists()


def test_a_changed_cache_blob_is_not_linked(tmp_path, prefix, example_archives):
    """Hard links share the inode: making an installed file writable also
    makes its cache blob writable. Such a blob is no longer trusted."""
    cache = tmp_path / "cache"
    env = {"IREEPKG_CACHE_DIR": str(cache)}
    sm = example_archives["simple-mul"]
    assert run("install", sm, "--prefix", prefix, env=env).code == 0
    f = prefix / "packages" / "simple-mul" / "1.2.0" / "ireeplugin.json"
    os.chmod(f, 0o644)  # what a user editing an installed file would do
    other = tmp_path / "other"
    assert run("install", sm, "--prefix", other, env=env).code == 0
    g = other / "packages" / "simple-mul" / "1.2.0" / "ireeplugin.json"
    assert g.stat().st_ino != f.stat().st_ino  # extracted again, not linked
    assert stat.S_IMODE(g.stat().st_mode) == 0o444
    assert run("verify", "--prefix", other, env=env).code == 0
