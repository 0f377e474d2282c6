"""The aarch64 lane: a linux-aarch64 prefix prepared on this x86_64 host,
run by IREE's own aarch64 runtime (the iree-base-runtime
manylinux_2_28_aarch64 wheel) under qemu-user.

The prefix holds simple-mul's kernel as an embedded ELF and as an aarch64
shared library (built here with clang-22 against Debian's aarch64 glibc).
It is installed with --platform linux-aarch64, moved to a path with a space
and letters beyond ASCII, its flagfile is written there by the aarch64
ireepkg-runtime, and IREE's aarch64 iree-run-module runs a program compiled
for aarch64 through each plugin."""
import pathlib
import shutil
import subprocess

import pytest

from lanefix import (EXAMPLES, PRODUCT, REPO, RUN_ARGS, compile_program,
                     install_env, iree_tools, lane_package, run, target_build)

GLIBC = pathlib.Path("/usr/aarch64-linux-gnu")
TOOLS = iree_tools("manylinux_2_28_aarch64")
RUNTIME_TOOL = target_build("linux-aarch64") / "bin" / "ireepkg-runtime"
PACKAGE_DIR = "packages/simple-mul-aarch64/1.2.0/runtime"


def qemu(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(["qemu-aarch64", "-L", GLIBC, *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def system_library(tmp_path_factory) -> pathlib.Path:
    """simple_mul.c as an aarch64 shared library, linked as
    cmake/toolchains/linux-aarch64.cmake links (glibc's start files and
    libc only: there is no aarch64 libgcc here)."""
    out = tmp_path_factory.mktemp("aarch64-lib") / "libsimple_mul.so"
    subprocess.run(["clang-22", "--target=aarch64-linux-gnu",
                    "-isystem", GLIBC / "include", "-mno-outline-atomics",
                    "-O2", "-fPIC", "-shared", "-fuse-ld=lld", "-nostartfiles",
                    "-nodefaultlibs", f"-L{GLIBC / 'lib'}",
                    f"-I{REPO / 'include'}", "-o", out,
                    REPO / "examples" / "simple-mul" / "src" / "simple_mul.c",
                    "-lc"], check=True, timeout=120)
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> pathlib.Path:
    return compile_program(
        tmp_path_factory.mktemp("aarch64-vmfb") / "simple_mul.vmfb",
        "--iree-llvmcpu-target-triple=aarch64-unknown-linux-gnu")


@pytest.fixture(scope="module")
def deployed(tmp_path_factory, system_library) -> pathlib.Path:
    """A linux-aarch64 prefix installed here and moved elsewhere."""
    root = tmp_path_factory.mktemp("aarch64-prefix")
    archive = lane_package(
        root, "simple-mul-aarch64",
        [{"name": "simple_mul", "format": "embedded-elf",
          "library": {"aarch64": "runtime/simple_mul.aarch64.so"},
          "imports": ["simple_mul_workgroup"]},
         {"name": "simple_mul_system", "format": "system-library",
          "library": {"linux-aarch64": "runtime/linux-aarch64/libsimple_mul.so"},
          "imports": ["simple_mul_workgroup"]}],
        {"runtime/simple_mul.aarch64.so":
             EXAMPLES / "simple-mul" / "runtime" / "simple_mul.aarch64.so",
         "runtime/linux-aarch64/libsimple_mul.so": system_library})
    prepared = root / "prepared"
    r = run("install", "--platform", "linux-aarch64", "--prefix", prepared,
            archive, env=install_env())
    assert r.code == 0, r.err
    moved = root / "on the device, ünïcode"
    shutil.move(prepared, moved)
    return moved


@pytest.fixture(scope="module")
def written(deployed):
    """The moved prefix's flagfile, written there by the aarch64
    ireepkg-runtime: (how it ran, the file's text)."""
    r = qemu(RUNTIME_TOOL, "write-flagfile", "--prefix", deployed)
    return r, (deployed / "state" / "runtime.flags").read_text()


def test_flagfile_written_by_aarch64_ireepkg_runtime(deployed, written):
    r, text = written
    flagfile = deployed / "state" / "runtime.flags"
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith(
        f"ireepkg-runtime: note: the prefix {deployed} was moved or copied "
        "from "), r.stderr
    assert r.stderr.endswith(
        f": wrote {flagfile} for where it is now (2 runtime plugins for "
        "linux-aarch64)\n"), r.stderr
    assert text.splitlines()[-2:] == [
        f"--executable_plugin=embedded:{deployed}/{PACKAGE_DIR}/simple_mul.aarch64.so",
        f"--executable_plugin={deployed}/{PACKAGE_DIR}/linux-aarch64/libsimple_mul.so"]
    # What ireepkg writes when it finds the prefix moved is the same file.
    r = run("list", "--prefix", deployed)
    assert r.code == 0, r.err
    assert f"its state files, {flagfile} among them, were written again" in r.err
    assert flagfile.read_text() == text


@pytest.mark.parametrize("fmt", ["args", "flagfile", "json"])
def test_flags_match_the_cli(deployed, written, fmt):
    tool = qemu(RUNTIME_TOOL, "flags", "--prefix", deployed, "--format", fmt)
    cli = run("flags", "runtime", "--prefix", deployed, "--format", fmt,
              "--platform", "linux-aarch64")
    assert (tool.returncode, cli.code) == (0, 0), tool.stderr + cli.err
    assert tool.stdout == cli.out


@pytest.mark.parametrize("plugin", ["embedded", "system"])
@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_iree_runs_each_plugin(written, program, plugin, device):
    """Each line of the flagfile on its own: IREE's aarch64 runtime loads
    the embedded ELF and the shared library."""
    lines = [l for l in written[1].splitlines()
             if l.startswith("--executable_plugin=")]
    flag = lines[0] if plugin == "embedded" else lines[1]
    r = qemu(TOOLS / "iree-run-module", flag, f"--module={program}",
             f"--device={device}", *RUN_ARGS)
    assert r.returncode == 0, r.stdout + r.stderr
    assert PRODUCT in r.stdout, r.stdout


def test_iree_runs_with_the_flagfile(deployed, written, program):
    r = qemu(TOOLS / "iree-run-module",
             f"--flagfile={deployed / 'state' / 'runtime.flags'}",
             f"--module={program}", "--device=local-task", *RUN_ARGS)
    assert r.returncode == 0, r.stdout + r.stderr
    assert PRODUCT in r.stdout, r.stdout
