"""End-to-end tests of the hermetic-mul example package with the real IREE tools.

The build (examples/hermetic-mul/) compiles hermetic_mul.c into one
freestanding relocatable object per architecture,
objects/<arch>/hermetic_mul.o, and packs the package into
<build>/examples/dist/hermetic-mul-0.1.0.ireepkg. Its only contribution is an
`executable-objects` hook: the directory that iree-compile should search
(--iree-hal-executable-object-search-path) for the objects that
examples/programs/hermetic_mul.mlir names with #hal.executable.object.

These tests install the archive into a prefix in tmp_path, take the object
directory from the installed package, compile the program with the pinned
iree-compile and run it with iree-run-module: the multiply happens in the
linked object, and the module needs no runtime plugin.
"""
import json
import os
import pathlib
import platform
import struct
import subprocess
import sys

import pytest

from conftest import REPO, run

BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
PACKAGE_DIR = BUILD / "examples" / "hermetic-mul"
ARCHIVE = BUILD / "examples" / "dist" / "hermetic-mul-0.1.0.ireepkg"
PROGRAM = REPO / "examples" / "programs" / "hermetic_mul.mlir"
VENV_BIN = pathlib.Path(sys.executable).parent
LLVM_NM = pathlib.Path("/usr/lib/llvm-22/bin/llvm-nm")
TIMEOUT = 300

ARCHES = ("x86_64", "aarch64")
ELF_MACHINE = {"x86_64": 0x3E, "aarch64": 0xB7}
# --iree-llvmcpu-target-triple for compiling to each architecture.
TRIPLE = {"x86_64": "x86_64-unknown-unknown-eabi-elf",
          "aarch64": "aarch64-unknown-unknown-eabi-elf"}
HOST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64",
             "arm64": "aarch64"}.get(platform.machine().lower())
SYMBOL = "hermetic_mul_workgroup"

COMPILE_ARGS = ["--iree-hal-target-device=local",
                "--iree-hal-local-target-device-backends=llvm-cpu"]
RUN_ARGS = ["--device=local-sync", "--input=8xf32=2", "--input=8xf32=4"]
NOT_FOUND = ("referenced object file not found on any path; use "
             "--iree-hal-executable-object-search-path= to add search paths")

needs_host_objects = pytest.mark.skipif(
    HOST_ARCH not in ARCHES, reason="no hermetic-mul object for this host")


def tool(name):
    path = VENV_BIN / name
    assert path.exists(), f"{path} is missing: run scripts/setup first"
    return path


def iree_compile(out, *extra):
    return subprocess.run(
        [str(tool("iree-compile")), str(PROGRAM), *COMPILE_ARGS, *map(str, extra),
         "-o", str(out)],
        capture_output=True, text=True, timeout=TIMEOUT)


def run_module(vmfb, *args):
    return subprocess.run(
        [str(tool("iree-run-module")), f"--module={vmfb}", *args],
        capture_output=True, text=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    assert ARCHIVE.is_file(), f"{ARCHIVE} is missing: build the project (ninja -C build)"
    prefix = tmp_path_factory.mktemp("prefix")
    r = run("install", "--prefix", prefix, ARCHIVE, timeout=TIMEOUT)
    assert r.code == 0, r.err
    return prefix


@pytest.fixture(scope="module")
def object_dirs(prefix):
    """arch -> the installed package's object directory, from its hook."""
    r = run("list", "--prefix", prefix, "--json", timeout=TIMEOUT)
    assert r.code == 0, r.err
    (package,) = json.loads(r.out)["packages"]
    assert (package["name"], package["version"]) == ("hermetic-mul", "0.1.0")
    (hook,) = package["hooks"]
    assert hook["point"] == "executable-objects"
    assert hook["path"] == {"x86_64": "objects/x86_64", "aarch64": "objects/aarch64"}
    root = pathlib.Path(package["path"])
    assert root.is_relative_to(prefix)
    return {arch: root / rel for arch, rel in hook["path"].items()}


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory, object_dirs):
    if HOST_ARCH not in ARCHES:
        pytest.skip("no hermetic-mul object for this host")
    out = tmp_path_factory.mktemp("vmfb") / "hermetic_mul.vmfb"
    proc = iree_compile(out, "--iree-llvmcpu-target-cpu=host",
                        f"--iree-hal-executable-object-search-path={object_dirs[HOST_ARCH]}")
    assert proc.returncode == 0, proc.stderr
    return out


#===-----------------------------------------------------------------------===#
# The package and its objects
#===-----------------------------------------------------------------------===#

def test_package_directory_matches_manifest():
    manifest = json.loads((PACKAGE_DIR / "ireeplugin.json").read_text())
    source = json.loads((REPO / "examples" / "hermetic-mul" / "ireeplugin.json").read_text())
    assert manifest == source
    files = sorted(str(p.relative_to(PACKAGE_DIR))
                   for p in PACKAGE_DIR.rglob("*") if p.is_file())
    assert files == ["ireeplugin.json", "objects/aarch64/hermetic_mul.o",
                     "objects/x86_64/hermetic_mul.o"]


@pytest.mark.parametrize("arch", ARCHES)
def test_installed_object_is_freestanding(object_dirs, arch):
    obj = object_dirs[arch] / "hermetic_mul.o"
    data = obj.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, \
        "not a little-endian ELF64 file"
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    assert e_type == 1, "not a relocatable object (ET_REL)"
    assert e_machine == ELF_MACHINE[arch]
    nm = subprocess.run([str(LLVM_NM), "--format=just-symbols", "--defined-only",
                         "--extern-only", str(obj)],
                        capture_output=True, text=True, timeout=TIMEOUT)
    assert nm.returncode == 0, nm.stderr
    assert nm.stdout.split() == [SYMBOL]
    # Nothing for IREE's linker to resolve: no libc, no memcpy/memset.
    undefined = subprocess.run([str(LLVM_NM), "--undefined-only", str(obj)],
                               capture_output=True, text=True, timeout=TIMEOUT)
    assert undefined.returncode == 0 and undefined.stdout.strip() == "", undefined.stdout


#===-----------------------------------------------------------------------===#
# iree-compile and iree-run-module
#===-----------------------------------------------------------------------===#

@needs_host_objects
@pytest.mark.parametrize("function,expected", [
    ("hermetic_mul", "8xf32=8 8 8 8 8 8 8 8"),
    ("hermetic_mul_add", "8xf32=10 10 10 10 10 10 10 10"),
])
def test_run_compiled_program(vmfb, function, expected):
    proc = run_module(vmfb, f"--function={function}", *RUN_ARGS)
    assert proc.returncode == 0, proc.stderr
    assert f"EXEC @{function}" in proc.stdout
    assert expected in proc.stdout, proc.stdout


@needs_host_objects
def test_run_over_several_workgroups(vmfb):
    # 130 elements: three workgroups of 64, the last one partial.
    n = 130
    proc = run_module(vmfb, "--device=local-sync", "--function=hermetic_mul",
                      f"--input={n}xf32=" + " ".join(str(i) for i in range(n)),
                      f"--input={n}xf32=2")
    assert proc.returncode == 0, proc.stderr
    expected = f"{n}xf32=" + " ".join(str(2 * i) for i in range(n))
    assert expected in proc.stdout, proc.stdout


@needs_host_objects
def test_object_is_linked_into_the_executable(tmp_path, object_dirs):
    # The kernel is a defined function of the executable's embedded ELF, not
    # an import that a runtime plugin would have to resolve (the runs above
    # pass no --executable_plugin).
    dump = tmp_path / "binaries"
    proc = iree_compile(tmp_path / "dumped.vmfb", "--iree-llvmcpu-target-cpu=host",
                        f"--iree-hal-executable-object-search-path={object_dirs[HOST_ARCH]}",
                        f"--iree-hal-dump-executable-binaries-to={dump}")
    assert proc.returncode == 0, proc.stderr
    (binary,) = dump.glob("*.so")
    nm = subprocess.run([str(LLVM_NM), str(binary)],
                        capture_output=True, text=True, timeout=TIMEOUT)
    assert nm.returncode == 0, nm.stderr
    symbols = {line.split()[-1]: line.split()[-2] for line in nm.stdout.splitlines()}
    assert symbols.get(SYMBOL) in ("t", "T"), nm.stdout


@needs_host_objects
def test_compile_without_search_path_fails(tmp_path):
    out = tmp_path / "no_objects.vmfb"
    proc = iree_compile(out, "--iree-llvmcpu-target-cpu=host")
    assert proc.returncode != 0
    assert NOT_FOUND in proc.stderr, proc.stderr
    assert 'path = "hermetic_mul.o"' in proc.stderr
    assert not out.exists() or out.stat().st_size == 0


@needs_host_objects
def test_compile_with_other_architecture_objects_fails(tmp_path, object_dirs):
    # The same file name in the other architecture's directory is found, but
    # IREE's linker refuses to link it into the host's executable.
    other = next(a for a in ARCHES if a != HOST_ARCH)
    proc = iree_compile(tmp_path / "wrong.vmfb", "--iree-llvmcpu-target-cpu=host",
                        f"--iree-hal-executable-object-search-path={object_dirs[other]}")
    assert proc.returncode != 0
    assert f"{object_dirs[other] / 'hermetic_mul.o'} is incompatible with" in proc.stderr, \
        proc.stderr


@pytest.mark.parametrize("arch", ARCHES)
def test_cross_compile_for_each_architecture(tmp_path, object_dirs, arch):
    # Each architecture's object links into that architecture's executable.
    out = tmp_path / f"hermetic_mul.{arch}.vmfb"
    proc = iree_compile(out, f"--iree-llvmcpu-target-triple={TRIPLE[arch]}",
                        f"--iree-hal-executable-object-search-path={object_dirs[arch]}")
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0


#===-----------------------------------------------------------------------===#
# Through ireepkg: `flags compiler`
#===-----------------------------------------------------------------------===#

@needs_host_objects
def test_flags_compiler_gives_the_search_path(tmp_path, prefix, object_dirs):
    r = run("flags", "compiler", "--prefix", prefix, timeout=TIMEOUT)
    assert r.code == 0, r.err
    flags = r.out.splitlines()
    assert f"--iree-hal-executable-object-search-path={object_dirs[HOST_ARCH]}" in flags
    out = tmp_path / "via_flags.vmfb"
    proc = iree_compile(out, "--iree-llvmcpu-target-cpu=host", *flags)
    assert proc.returncode == 0, proc.stderr
    proc = run_module(out, "--function=hermetic_mul", *RUN_ARGS)
    assert proc.returncode == 0, proc.stderr
    assert "8xf32=8 8 8 8 8 8 8 8" in proc.stdout
