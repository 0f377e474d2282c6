"""Prefixes prepared on this host for another platform (install --platform):
they hold exactly what IREE's runtime there loads. On Windows, IREE's
runtime cannot call embedded ELF plugins (iree-org/iree#12801, the table in
include/ireepkg/manifest_schema/platform_facts.h), so a windows-* prefix
activates a package's system-library DLL where it has one, and says why an
embedded build is not activated (install, info, doctor, flags, pack, and the
flagfile itself). flags, env and info default to the prefix's platform, with
a note; exec refuses a prefix for another platform."""
import json
import pathlib
import shutil
import subprocess

import pytest

from conftest import (EXAMPLES, copy_package, ireepkg_path, pack, run,
                      simple_mul_build)

SIMPLE_MUL = EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg"
FACT = ("on windows, embedded ELF (and FatELF) executable plugins cannot be "
        "called: IREE's runtime calls the plugin's load and unload without "
        "the System V thunk it uses for query and resolve, so the plugin "
        "faults in load (iree-org/iree#12801; every IREE version up to at "
        "least 3.13.0)")
HOST = "linux-x86_64"


def plugin_flags(text: str) -> list[str]:
    return [l for l in text.splitlines() if l and not l.startswith("#")]


def install(prefix, *args):
    r = run("install", "--prefix", prefix, *args)
    assert r.code == 0, r.err
    return r


def without_dlls(root: pathlib.Path, platforms) -> pathlib.Path:
    """simple-mul as the build lays it out, without its DLLs for
    `platforms` (the example ships windows-x86_64 and windows-aarch64
    DLLs of its system-library plugin)."""
    pkg = copy_package(EXAMPLES / "simple-mul", root / "simple-mul")
    m = json.loads((pkg / "ireeplugin.json").read_text())
    for platform in platforms:
        del m["runtime"]["plugins"][1]["library"][platform]
        shutil.rmtree(pkg / "runtime" / platform)
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return pkg


@pytest.fixture(scope="module")
def no_dll(tmp_path_factory) -> pathlib.Path:
    """simple-mul without a Windows build of its system-library plugin."""
    root = tmp_path_factory.mktemp("no-dll")
    return pack(without_dlls(root, ["windows-x86_64", "windows-aarch64"]),
                root / "dist")


def test_the_example_ships_windows_dlls():
    """simple-mul's system-library plugin has a DLL for each Windows
    architecture (mingw-w64 for x86_64, clang and lld-link for aarch64),
    each exporting iree_hal_executable_plugin_query."""
    m = json.loads((EXAMPLES / "simple-mul" / "ireeplugin.json").read_text())
    assert m["runtime"]["plugins"][1]["library"] == {
        "linux-x86_64": "runtime/linux-x86_64/libsimple_mul.so",
        "windows-x86_64": "runtime/windows-x86_64/simple_mul.dll",
        "windows-aarch64": "runtime/windows-aarch64/simple_mul.dll"}
    for platform, machine in [("windows-x86_64", "x86_64"),
                              ("windows-aarch64", "aarch64")]:
        dll = EXAMPLES / "simple-mul" / "runtime" / platform / "simple_mul.dll"
        r = subprocess.run([ireepkg_path().parent / "ireepkg-inspect", dll],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        [f] = json.loads(r.stdout)["files"]
        assert (f["format"], f["os"], f["arch"]) == ("coff", "windows", machine)
        assert f["exports"] == ["iree_hal_executable_plugin_query"]


def test_embedded_elf_is_not_activated_on_windows(tmp_path, no_dll):
    prefix = tmp_path / "win"
    r = install(prefix, "--platform", "windows-x86_64", no_dll)
    assert ("ireepkg: warning: package 'simple-mul': runtime plugin "
            '"simple_mul" is not activated on windows-x86_64: '
            f"{FACT}; the package has no other runtime plugin for "
            "windows-x86_64\n"
            "  hint: ask the package's author for a system-library build for "
            "windows-x86_64\n") in r.err
    state = prefix / "state"
    flagfile = (state / "runtime.flags").read_text()
    assert plugin_flags(flagfile) == []
    assert ("# Not activated: simple-mul 1.2.0 plugin simple_mul (on windows, "
            "embedded ELF (and FatELF) executable plugins cannot be called: "
            "iree-org/iree#12801)\n") in flagfile
    assert ("# Not activated: simple-mul 1.2.0 plugin simple_mul_system (no "
            "build for windows-x86_64)\n") in flagfile
    skipped = json.loads((state / "activation.json").read_text())["skipped"]
    assert skipped[0] == {"package": "simple-mul", "plugin": "simple_mul",
                          "reason": FACT}

    # flags: the prefix's platform by default, with a note.
    r = run("flags", "runtime", "--prefix", prefix)
    assert r.code == 0, r.err
    assert r.out == ""
    assert (f"ireepkg: note: {prefix} is a prefix for windows-x86_64, not this "
            f"host ({HOST}): these are its flags for windows-x86_64 "
            "(--platform chooses another target)\n") in r.err
    assert ('ireepkg: note: simple-mul 1.2.0: runtime plugin "simple_mul" is '
            f"not activated: {FACT}\n") in r.err
    j = json.loads(run("flags", "runtime", "--json", "--prefix", prefix).out)
    assert j["platform"] == "windows-x86_64"
    assert [(s["name"], s["reason"]) for s in j["skipped"]] == [
        ("simple_mul", FACT), ("simple_mul_system", "no build for windows-x86_64")]

    # info and doctor say why.
    r = run("info", "simple-mul", "--prefix", prefix)
    assert r.code == 0, r.err
    assert r.out.endswith(
        "  activated on windows-x86_64 (the prefix's platform):\n"
        f"    runtime plugin simple_mul: not activated: {FACT}; the package "
        "has no other runtime plugin for windows-x86_64\n"
        "    runtime plugin simple_mul_system: not activated: no build for "
        "windows-x86_64\n")
    assert (f"ireepkg: note: {prefix} is a prefix for windows-x86_64, not this "
            f"host ({HOST}): info shows what is activated there\n") in r.err
    info = json.loads(run("info", "simple-mul", "--json", "--prefix", prefix).out)
    assert info["activation"] == {"platform": "windows-x86_64", "runtime_plugins": [
        {"plugin": "simple_mul", "activated": False, "reason": FACT},
        {"plugin": "simple_mul_system", "activated": False,
         "reason": "no build for windows-x86_64"}]}
    r = run("doctor", "--prefix", prefix, "--json")
    plugins = {p["plugin"]: p for p in json.loads(r.out)["plugins"]}
    assert plugins["simple_mul"]["skipped"] == (
        f"{FACT}; the package has no other runtime plugin for windows-x86_64")


def test_windows_prefix_activates_the_dll(tmp_path):
    """The example package on Windows: its DLL, not its embedded ELF."""
    prefix = tmp_path / "win"
    r = install(prefix, "--platform", "windows-x86_64", SIMPLE_MUL)
    assert ("ireepkg: warning: package 'simple-mul': runtime plugin "
            '"simple_mul" is not activated on windows-x86_64: '
            f'{FACT}; the package\'s system-library plugin "simple_mul_system" '
            "is used there\n") in r.err
    assert "hint: ask the package's author" not in r.err
    dll = prefix / "packages/simple-mul/1.2.0/runtime/windows-x86_64/simple_mul.dll"
    flags = [f"--executable_plugin={dll}"]
    assert plugin_flags((prefix / "state" / "runtime.flags").read_text()) == flags
    r = run("flags", "runtime", "--prefix", prefix)
    assert r.code == 0, r.err
    assert plugin_flags(r.out) == flags
    assert f"is a prefix for windows-x86_64, not this host ({HOST})" in r.err
    # Another target on request: this host's, which has its own builds
    # (for this CPU: x86_64_v3 where it can run it).
    r = run("flags", "runtime", "--prefix", prefix, "--platform", HOST)
    assert [l.rsplit("/", 1)[1] for l in plugin_flags(r.out)] == [
        f"simple_mul.{simple_mul_build()}.so", "libsimple_mul.so"]
    assert "is a prefix for" not in r.err
    # Windows on aarch64: the package's other DLL.
    r = run("flags", "runtime", "--prefix", prefix, "--platform", "windows-aarch64")
    assert r.code == 0, r.err
    assert plugin_flags(r.out) == [
        f"--executable_plugin={dll.parent.parent}/windows-aarch64/simple_mul.dll"]

    r = run("env", "--json", "--prefix", prefix)
    assert r.code == 0, r.err
    assert json.loads(r.out)["variables"]["IREE_PY_RUNTIME_FLAGS"] == flags[0]
    assert (f"ireepkg: note: {prefix} is a prefix for windows-x86_64, not this "
            f"host ({HOST}): IREE_PY_RUNTIME_FLAGS names its plugins for "
            "windows-x86_64\n") in r.err

    r = run("info", "simple-mul", "--prefix", prefix)
    assert r.out.endswith(
        "    runtime plugin simple_mul_system: "
        "runtime/windows-x86_64/simple_mul.dll\n")
    r = run("doctor", "--prefix", prefix, "--json")
    plugins = {p["plugin"]: p for p in json.loads(r.out)["plugins"]}
    assert plugins["simple_mul"]["skipped"].endswith(
        'the package\'s system-library plugin "simple_mul_system" is used there')
    assert plugins["simple_mul_system"]["skipped"] == (
        "the prefix targets windows-x86_64; only plugins for this host "
        f"({HOST}) can be loaded")


def test_exec_refuses_a_prefix_for_another_platform(tmp_path):
    prefix = tmp_path / "win"
    install(prefix, "--platform", "windows-x86_64", SIMPLE_MUL)
    r = run("exec", "--prefix", prefix, "--", "iree-run-module", "--help")
    assert r.code == 1
    assert r.out == ""
    assert r.err == (
        f"ireepkg: error: the prefix {prefix} is for windows-x86_64, not this "
        f"host ({HOST}), so its plugins cannot be activated here\n"
        "  hint: run the tool on a windows-x86_64 machine with the prefix copied "
        "there (see docs/guide-deploying.md), or install for this host into "
        f"another prefix: ireepkg install --platform {HOST} --prefix DIR ...\n")


def test_a_linux_prefix_listed_for_windows(tmp_path):
    """libireepkg_runtime applies the same fact to any target it is asked
    for, not only to the prefix's own platform."""
    prefix = tmp_path / "linux"
    install(prefix, SIMPLE_MUL)
    r = run("flags", "runtime", "--prefix", prefix, "--platform", "windows-x86_64")
    assert r.code == 0, r.err
    assert [l.rsplit("/", 1)[1] for l in plugin_flags(r.out)] == ["simple_mul.dll"]
    assert ('runtime plugin "simple_mul" is not activated: '
            f"{FACT}\n") in r.err


def test_linux_aarch64_keeps_embedded_elf(tmp_path):
    prefix = tmp_path / "arm"
    install(prefix, "--platform", "linux-aarch64", SIMPLE_MUL)
    spec = ("--executable_plugin=embedded:"
            f"{prefix}/packages/simple-mul/1.2.0/runtime/simple_mul.aarch64.so")
    assert plugin_flags((prefix / "state" / "runtime.flags").read_text()) == [spec]
    r = run("flags", "runtime", "--prefix", prefix)
    assert r.code == 0, r.err
    assert plugin_flags(r.out) == [spec]
    assert (f"ireepkg: note: {prefix} is a prefix for linux-aarch64, not this "
            f"host ({HOST}): these are its flags for linux-aarch64") in r.err
    r = run("info", "simple-mul", "--prefix", prefix)
    assert "    runtime plugin simple_mul: runtime/simple_mul.aarch64.so\n" in r.out


def test_a_host_prefix_has_no_note(tmp_path):
    prefix = tmp_path / "host"
    install(prefix, SIMPLE_MUL)
    for args in (["flags", "runtime"], ["env"], ["info", "simple-mul"]):
        r = run(*args, "--prefix", prefix)
        assert r.code == 0, r.err
        assert "is a prefix for" not in r.err


def test_pack_warns_about_embedded_builds_windows_cannot_call(tmp_path):
    # The example has a DLL for each Windows architecture: no warning.
    r = run("pack", EXAMPLES / "simple-mul", "-o", tmp_path / "dist", "--no-test")
    assert r.code == 0, r.err
    assert "warning" not in r.err, r.err
    # Without them, both are left without a plugin.
    pkg = without_dlls(tmp_path / "none", ["windows-x86_64", "windows-aarch64"])
    r = run("pack", pkg, "-o", tmp_path / "dist1", "--no-test")
    assert r.code == 0, r.err
    lines = (pkg / "ireeplugin.json").read_text().splitlines()
    line = next(i for i, l in enumerate(lines) if '"library": {' in l)
    where = (f"{pkg / 'ireeplugin.json'}:{line + 1}:{lines[line].index('{') + 1}: "
             "/runtime/plugins/0/library")
    assert (f"ireepkg: warning: {where}: runtime plugin \"simple_mul\" "
            "(embedded-elf) will not be activated on windows-x86_64, "
            f"windows-aarch64: {FACT}; the package has no other runtime "
            "plugin for them\n"
            "  hint: add a system-library runtime plugin with a build for "
            "windows-x86_64, windows-aarch64 (a DLL exporting "
            "iree_hal_executable_plugin_query with __declspec(dllexport))\n") in r.err
    # With the x86_64 DLL only, Windows on aarch64 is left without a plugin.
    pkg = without_dlls(tmp_path / "x86_64", ["windows-aarch64"])
    r = run("pack", pkg, "-o", tmp_path / "dist2", "--no-test")
    assert r.code == 0, r.err
    assert ('runtime plugin "simple_mul" (embedded-elf) will not be activated '
            f"on windows-aarch64: {FACT}; the package has no other runtime "
            "plugin for it\n") in r.err
