"""Prefixes prepared in one place and used in another: moved with `mv`,
copied with `cp -a`, at paths with spaces and non-ASCII letters, and
read-only where they land. Every reader (the CLI, libireepkg_runtime, the
compiler index) finds the prefix's files where it is now, a copy never
uses the original's files, and IREE's flagfile, which IREE reads
literally, is written again by the first command on the moved prefix
(docs/guide-deploying.md)."""
import ctypes
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import (BUILD, EXAMPLES, compile_simple_mul, read_only, run,
                      simple_mul_build)

VENV_BIN = pathlib.Path(sys.executable).parent
ENV = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
RUN_ARGS = ["--device=local-sync", "--function=simple_mul",
            "--input=8xf32=1,2,3,4,5,6,7,8", "--input=8xf32=3"]
PRODUCT = "8xf32=3 6 9 12 15 18 21 24"
ARCHIVES = [EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg",
            EXAMPLES / "dist" / "mul-pipeline-0.3.0.ireepkg"]
# Where the prefixes go: a space and letters beyond ASCII, as people name
# directories.
ELSEWHERE = "deployed here, ünïcode"


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_simple_mul(tmp_path_factory.mktemp("vmfb"))


def prepared(root: pathlib.Path) -> pathlib.Path:
    prefix = root / "prepared"
    r = run("install", "--prefix", prefix, *ARCHIVES)
    assert r.code == 0, r.err
    return prefix


def moved_note(moved, original):
    return (f"ireepkg: note: the prefix {moved} was moved or copied from {original}: "
            f"its state files, {moved}/state/runtime.flags among them, were written "
            "again for where it is now\n")


def iree_run(flagfile, module):
    return subprocess.run([VENV_BIN / "iree-run-module", f"--flagfile={flagfile}",
                           f"--module={module}", *RUN_ARGS],
                          capture_output=True, text=True, timeout=120)


def runtime_library():
    lib = ctypes.CDLL(str(BUILD / "lib" / "libireepkg_runtime.so"))
    lib.ireepkg_runtime_open.argtypes = [ctypes.c_char_p, ctypes.c_uint32,
                                         ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.c_void_p]
    lib.ireepkg_runtime_index_moved_from.restype = ctypes.c_char_p
    lib.ireepkg_runtime_index_moved_from.argtypes = [ctypes.c_void_p]
    lib.ireepkg_runtime_index_prefix.restype = ctypes.c_char_p
    lib.ireepkg_runtime_index_prefix.argtypes = [ctypes.c_void_p]
    lib.ireepkg_runtime_close.argtypes = [ctypes.c_void_p]
    return lib


def library_view(prefix):
    """(where the prefix is, where it was written) as libireepkg_runtime
    sees them, in this process."""
    lib = runtime_library()
    index = ctypes.c_void_p()
    assert lib.ireepkg_runtime_open(str(prefix).encode(), 0, ctypes.byref(index),
                                    None) == 0
    try:
        moved = lib.ireepkg_runtime_index_moved_from(index)
        return (lib.ireepkg_runtime_index_prefix(index).decode(),
                moved.decode() if moved else None)
    finally:
        lib.ireepkg_runtime_close(index)


def runtime_paths(prefix):
    r = run("flags", "runtime", "--prefix", prefix, "--format", "json")
    assert r.code == 0, r.err
    return [p["path"] for p in json.loads(r.out)["plugins"]], r.err


def test_a_moved_prefix_is_found_where_it_is_by_every_reader(tmp_path, module):
    original = prepared(tmp_path)
    moved = tmp_path / ELSEWHERE / "prefix"
    moved.parent.mkdir()
    original.rename(moved)
    # The library, before any command wrote anything: the index still names
    # the old place, and the library gives the new one.
    assert library_view(moved) == (str(moved), str(original))
    # The first command says what happened and writes the state again.
    paths, err = runtime_paths(moved)
    assert err == moved_note(moved, original)
    assert paths == [
        f"{moved}/packages/simple-mul/1.2.0/runtime/simple_mul.{simple_mul_build()}.so",
        f"{moved}/packages/simple-mul/1.2.0/runtime/linux-x86_64/libsimple_mul.so"]
    assert library_view(moved) == (str(moved), None)
    # Once: the next command has nothing to say.
    assert runtime_paths(moved) == (paths, "")
    for name in ("runtime.flags", "compiler.flags", "activation.json",
                 "compiler.json"):
        text = (moved / "state" / name).read_text()
        assert str(original) + "/" not in text, name
    # IREE's own tool, given the flagfile at the new place.
    r = iree_run(moved / "state" / "runtime.flags", module)
    assert r.returncode == 0, r.stderr
    assert PRODUCT in r.stdout
    r = run("verify", "--prefix", moved)
    assert (r.code, r.err) == (0, ""), r
    r = run("flags", "compiler", "--prefix", moved)
    assert r.code == 0, r.err
    assert (f"--iree-preprocessing-transform-spec-filename={moved}/packages/"
            "mul-pipeline/0.3.0/specs/mul_spec.mlir") in r.out.splitlines()


def test_a_copy_uses_its_own_files(tmp_path, module):
    original = prepared(tmp_path)
    copy = tmp_path / ELSEWHERE / "copy"
    copy.parent.mkdir()
    subprocess.run(["cp", "-a", original, copy], check=True)
    # The original loses its plugin; the copy must not notice.
    r = run("remove", "--prefix", original, "--cascade", "simple-mul")
    assert r.code == 0, r.err
    r = run("exec", "--prefix", copy, "--", "iree-run-module", f"--module={module}",
            *RUN_ARGS, env=ENV, timeout=120)
    assert r.code == 0, r.err
    assert PRODUCT in r.out
    assert r.err.startswith(moved_note(copy, original)), r.err
    r = run("doctor", "--prefix", copy, env=ENV, timeout=300)
    assert r.code == 0, r.out + r.err
    assert str(original) + "/" not in r.out
    r = iree_run(copy / "state" / "runtime.flags", module)
    assert r.returncode == 0, r.stderr
    # The original is still a prefix of its own.
    assert run("verify", "--prefix", original).code == 0
    assert library_view(original) == (str(original), None)


def test_dry_run_on_a_moved_prefix_changes_nothing(tmp_path):
    from conftest import snapshot
    original = prepared(tmp_path)
    moved = tmp_path / "moved"
    original.rename(moved)
    before = snapshot(moved)
    r = run("remove", "--prefix", moved, "mul-pipeline", "--dry-run")
    assert r.code == 0, r.err
    assert r.err.startswith(
        f"ireepkg: note: the prefix {moved} was moved or copied from {original}; "
        "without --dry-run its state files are written again for where it is "
        "now\n"), r.err
    assert snapshot(moved) == before


def test_a_read_only_moved_prefix_still_works_and_says_what_is_stale(tmp_path, module):
    original = prepared(tmp_path)
    moved = tmp_path / "image" / "prefix"
    moved.parent.mkdir()
    original.rename(moved)
    r = read_only(moved, "flags", "runtime", "--prefix", moved)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        f"--executable_plugin=embedded:{moved}/packages/simple-mul/1.2.0/runtime/"
        f"simple_mul.{simple_mul_build()}.so",
        f"--executable_plugin={moved}/packages/simple-mul/1.2.0/runtime/linux-x86_64/"
        "libsimple_mul.so"]
    assert r.stderr.startswith(
        f"ireepkg: warning: the prefix {moved} was moved or copied from {original}, "
        "and its state files cannot be written again here ("), r.stderr
    assert (f"but IREE's --flagfile={moved}/state/runtime.flags still names "
            f"{original}; run any ireepkg command on the prefix where it can be "
            "written") in r.stderr
    # Nothing was written, and the flagfile still names the old place.
    assert str(original) in (moved / "state" / "runtime.flags").read_text()
    # env gives Python the plugins where they are.
    r = read_only(moved, "env", "--prefix", moved, "--json")
    assert r.returncode == 0, r.stderr
    flags = json.loads(r.stdout)["variables"]["IREE_PY_RUNTIME_FLAGS"]
    assert f"{moved}/packages/simple-mul" in flags and str(original) not in flags
    # exec gives IREE the plugins where they are.
    r = read_only(moved, "exec", "--prefix", moved, "--", str(VENV_BIN / "iree-run-module"),
                  f"--module={module}", *RUN_ARGS)
    assert r.returncode == 0, r.stderr
    assert PRODUCT in r.stdout


ACTIVATE_AND_RUN = '''
import json, sys
import numpy as np
import ireepkg
from ireepkg import _runtime
prefix = ireepkg.activate(sys.argv[1])
import iree.runtime as rt
vm = rt.load_vm_flatbuffer_file(sys.argv[2], driver="local-sync")
a = np.arange(1, 9, dtype=np.float32)
b = np.full(8, 3, dtype=np.float32)
print(json.dumps({"library": _runtime.available(),
                  "flags": prefix.runtime_flags(),
                  "product": " ".join(str(int(x)) for x in vm.simple_mul(a, b).to_host())}))
'''


@pytest.mark.parametrize("reader", ["library", "command"])
def test_python_activate_on_a_moved_prefix(tmp_path, module, reader):
    """`ireepkg.activate()` on a prefix moved, with no ireepkg command run on
    it since: with the discovery library (as the wheel ships it) and with
    the command (a source checkout), the plugins load from where the prefix
    is now, and the module gives the right numbers in iree.runtime."""
    from conftest import REPO, ireepkg_path
    import shutil
    original = prepared(tmp_path)
    moved = tmp_path / ELSEWHERE / "prefix"
    moved.parent.mkdir()
    original.rename(moved)
    package = tmp_path / "site" / "ireepkg"
    shutil.copytree(REPO / "python" / "ireepkg", package)
    env = dict(os.environ, PYTHONPATH=str(package.parent),
               IREEPKG_EXECUTABLE=str(ireepkg_path()))
    if reader == "library":
        (package / "_lib").mkdir()
        shutil.copy(BUILD / "lib" / "libireepkg_runtime.so", package / "_lib")
    script = tmp_path / "activate_and_run.py"
    script.write_text(ACTIVATE_AND_RUN)
    r = subprocess.run([sys.executable, script, moved, module], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["library"] == (reader == "library")
    assert report["flags"] == [
        f"--executable_plugin=embedded:{moved}/packages/simple-mul/1.2.0/runtime/"
        f"simple_mul.{simple_mul_build()}.so",
        f"--executable_plugin={moved}/packages/simple-mul/1.2.0/runtime/linux-x86_64/"
        "libsimple_mul.so"]
    assert report["product"] == PRODUCT.split("=")[1]
