"""The compiler embedding API (include/ireepkg/compiler_integration/compiler_embedding.h) with the
real libIREECompiler.so of the venv's iree-base-compiler wheel, through the
test tool ireepkg-embed-compile.

The tool builds a prefix's compiler configuration, loads libIREECompiler.so
into its own process with dlopen, applies the configuration (process-global
flags through one ireeCompilerSetupGlobalCL call, the others through
ireeCompilerSessionSetFlags, one call per flag), compiles with the standard
pipeline and writes VM bytecode. The program is
examples/programs/hermetic_mul.mlir, which only compiles with the
process-global --iree-hal-executable-object-search-path that the
hermetic-mul package contributes.
"""
import json
import os
import pathlib
import platform
import subprocess
import sys

import pytest

from conftest import BUILD, REPO, ireepkg_path, pack, run

TIMEOUT = 300
VENV_BIN = pathlib.Path(sys.executable).parent
EMBED = ireepkg_path().parent / "ireepkg-embed-compile"
DIST = BUILD / "examples" / "dist"
ARCHIVES = [DIST / "hermetic-mul-0.1.0.ireepkg", DIST / "simple-mul-1.2.0.ireepkg",
            DIST / "mul-pipeline-0.3.0.ireepkg"]
PROGRAM = REPO / "examples" / "programs" / "hermetic_mul.mlir"
HOST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64",
             "arm64": "aarch64"}.get(platform.machine().lower())
TARGET = ["--iree-hal-target-device=local",
          "--iree-hal-local-target-device-backends=llvm-cpu",
          "--iree-llvmcpu-target-cpu=host"]
GLOBAL = "process-global (ireeCompilerSetupGlobalCL):"
SESSION = "session (ireeCompilerSessionSetFlags):"

pytestmark = pytest.mark.skipif(HOST_ARCH is None, reason="no hermetic-mul object for this host")


def venv_compiler_library() -> pathlib.Path:
    """libIREECompiler.so of the venv's iree.compiler package."""
    out = subprocess.run(
        [sys.executable, "-c",
         "import iree.compiler, os; print(os.path.dirname(iree.compiler.__file__))"],
        capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, f"the venv has no iree.compiler: {out.stderr}"
    lib = pathlib.Path(out.stdout.strip()) / "_mlir_libs" / "libIREECompiler.so"
    assert lib.is_file(), lib
    return lib


LIB = venv_compiler_library()


def embed(*args, env=None, lib=LIB):
    """Runs ireepkg-embed-compile; `lib` None leaves the library to discovery."""
    assert EMBED.exists(), f"{EMBED} is missing: build the project (ninja -C build)"
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("IREE_COMPILER_LIB", "VIRTUAL_ENV")}
    full_env.update(env or {})
    cmd = [str(EMBED)]
    if lib is not None:
        cmd += ["--compiler-lib", str(lib)]
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          env=full_env, timeout=TIMEOUT)


def sections(out: str) -> dict:
    """The tool's listing: section title -> [(flag, package)]."""
    result, current = {}, None
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            current = result.setdefault(line, [])
        elif current is not None and line.startswith("  ") and line.strip() != "(none)":
            flag, _, who = line.strip().rpartition(" [")
            current.append((flag, who.rstrip("]")))
        elif not line.startswith("  "):
            current = None
    return result


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    for a in ARCHIVES:
        assert a.is_file(), f"{a} is missing: build the project (ninja -C build)"
    prefix = tmp_path_factory.mktemp("embed") / "prefix"
    r = run("install", "--prefix", prefix, *ARCHIVES, timeout=TIMEOUT)
    assert r.code == 0, r.err
    return prefix


def run_module(vmfb):
    return subprocess.run(
        [str(VENV_BIN / "iree-run-module"), "--device=local-sync", f"--module={vmfb}",
         "--function=hermetic_mul", "--input=8xf32=2", "--input=8xf32=4"],
        capture_output=True, text=True, timeout=TIMEOUT)


#===-----------------------------------------------------------------------===#
# Applying a prefix's configuration in-process
#===-----------------------------------------------------------------------===#

def test_compile_in_process_and_run(prefix, tmp_path):
    out = tmp_path / "out.vmfb"
    r = embed("--prefix", prefix, PROGRAM, "-o", out, "--", *TARGET)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == f"compiler library: {LIB} (explicit), embedding API 1.4"
    s = sections(r.stdout)
    objects = f"{prefix}/packages/hermetic-mul/0.1.0/objects/{HOST_ARCH}"
    mp = f"{prefix}/packages/mul-pipeline/0.3.0"
    # The search path is process-global: one ireeCompilerSetupGlobalCL call.
    # --iree-plugin goes there too: this compiler's sessions do not accept
    # it (it is not among ireeCompilerSessionGetFlags' options), so it can
    # only be set process-wide.
    assert s[GLOBAL] == [
        ("--iree-plugin=input_torch", "mul-pipeline"),
        ("--iree-plugin=hal_target_llvm_cpu", "mul-pipeline"),
        (f"--iree-hal-executable-object-search-path={objects}", "hermetic-mul"),
    ]
    assert s[SESSION] == [
        ("--iree-torch-decompose-complex-ops=true", "mul-pipeline"),
        (f"--iree-preprocessing-transform-spec-filename={mp}/specs/mul_spec.mlir",
         "mul-pipeline"),
        ("--iree-preprocessing-pass-pipeline=builtin.module(func.func(canonicalize))",
         "composed"),
        *[(f, "command line") for f in TARGET],
    ]
    assert r.stdout.splitlines()[-1] == f"wrote {out}"
    proc = run_module(out)
    assert proc.returncode == 0, proc.stderr
    assert "8xf32=8 8 8 8 8 8 8 8" in proc.stdout, proc.stdout


def test_without_the_global_search_path_the_compile_fails(tmp_path):
    # Only hermetic-mul's process-global flag makes the program compile: an
    # empty prefix gives the compiler's own error, captured through the
    # diagnostic callback into the tool's error.
    out = tmp_path / "out.vmfb"
    r = embed("--prefix", tmp_path / "empty", PROGRAM, "-o", out, "--", *TARGET)
    assert r.returncode == 1
    assert f"ireepkg-embed-compile: error: compiling {PROGRAM} failed" in r.stderr, r.stderr
    assert "referenced object file not found on any path" in r.stderr
    assert sections(r.stdout)[GLOBAL] == []
    assert not out.exists()


def test_global_flag_on_the_command_line(tmp_path, prefix):
    # An extra process-global flag joins the same single SetupGlobalCL call.
    out = tmp_path / "out.vmfb"
    extra = f"--iree-hal-executable-object-search-path={tmp_path}"
    r = embed("--prefix", prefix, PROGRAM, "-o", out, "--", *TARGET, extra)
    assert r.returncode == 0, r.stderr
    assert sections(r.stdout)[GLOBAL][-1] == (extra, "command line")
    assert run_module(out).returncode == 0


def test_session_flags_take_effect(tmp_path, prefix):
    # A session flag from the command line: the executables are dumped.
    dump = tmp_path / "binaries"
    r = embed("--prefix", prefix, PROGRAM, "-o", tmp_path / "o.vmfb", "--", *TARGET,
              f"--iree-hal-dump-executable-binaries-to={dump}")
    assert r.returncode == 0, r.stderr
    assert (f"--iree-hal-dump-executable-binaries-to={dump}", "command line") in \
        sections(r.stdout)[SESSION]
    assert list(dump.glob("*.so")), "nothing dumped"


def test_package_session_flag_takes_effect(tmp_path):
    # A package's transform spec is a session flag; a broken spec fails the
    # compile, and the compiler's diagnostic (captured through the callback)
    # names the package's file.
    d = tmp_path / "bad-spec"
    (d / "specs").mkdir(parents=True)
    (d / "specs" / "spec.mlir").write_text("this is not MLIR\n")
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "bad-spec", "version": "1.0.0",
        "compiler": {"hooks": [{"point": "transform-spec", "file": "specs/spec.mlir"}]}}))
    prefix = tmp_path / "p"
    assert run("install", "--prefix", prefix, pack(d, tmp_path / "dist"), timeout=TIMEOUT).code == 0
    spec = f"{prefix}/packages/bad-spec/1.0.0/specs/spec.mlir"
    program = tmp_path / "id.mlir"
    program.write_text("func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                       "  return %a : tensor<4xf32>\n}\n")
    r = embed("--prefix", prefix, program, "-o", tmp_path / "id.vmfb", "--", *TARGET)
    assert r.returncode == 1
    assert (f"--iree-preprocessing-transform-spec-filename={spec}", "bad-spec") in \
        sections(r.stdout)[SESSION]
    assert f"ireepkg-embed-compile: error: compiling {program} failed\n{spec}:1:1: error: " in r.stderr, r.stderr
    assert not (tmp_path / "id.vmfb").exists()


#===-----------------------------------------------------------------------===#
# What IREE allows once per process
#===-----------------------------------------------------------------------===#

def test_global_flags_only_once_per_process(tmp_path, prefix):
    r = embed("--prefix", prefix, "--check-process-rules", PROGRAM, "-o", tmp_path / "o.vmfb",
              "--", *TARGET)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(l.startswith(
        "global flags after a session: refused: process-global compiler flags were already "
        "set in this process (flag --iree-plugin=input_torch (from package mul-pipeline), ")
        and l.endswith("; cannot set flag --iree-hal-executable-object-search-path=/nonexistent")
        for l in lines), r.stdout
    assert "the same global flags again: accepted" in lines
    assert (f"global flags on a second CompilerLibrary: refused: process-global compiler flags "
            f"can only be set by the first user of {LIB}, but it was already loaded in this "
            f"process when ireepkg opened it; cannot set flag "
            f"--iree-hal-executable-object-search-path=/nonexistent") in lines


def test_global_flags_refused_after_a_session(tmp_path):
    # No global flags in the configuration: the session comes first, and
    # process-global flags are refused after it.
    program = tmp_path / "id.mlir"
    program.write_text("func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                       "  return %a : tensor<4xf32>\n}\n")
    r = embed("--prefix", tmp_path / "empty", "--check-process-rules", program,
              "-o", tmp_path / "id.vmfb", "--", *TARGET)
    assert r.returncode == 0, r.stderr
    assert ("global flags after a session: refused: process-global compiler flags must be set "
            "before the first compiler session is created, and this process already created "
            "one; cannot set flag --iree-hal-executable-object-search-path=/nonexistent"
            ) in r.stdout.splitlines(), r.stdout


#===-----------------------------------------------------------------------===#
# Flags the compiler refuses
#===-----------------------------------------------------------------------===#

def option_package(root, name, plugin_id, options):
    d = root / name
    d.mkdir(parents=True)
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": name, "version": "1.0.0",
        "compiler": {"plugins": [{"id": plugin_id, "kind": "iree-static",
                                  "options": options}]}}, indent=2))
    return pack(d, root / "dist")


def test_session_flag_refused_names_flag_and_package(tmp_path):
    # ireepkg accepts any string; the compiler's parser refuses O7.
    archive = option_package(tmp_path, "opt-level", "hal_target_llvm_cpu", {
        "iree-opt-level": {"type": "string", "description": "optimization level"}})
    prefix = tmp_path / "p"
    assert run("install", "--prefix", prefix, archive, timeout=TIMEOUT).code == 0
    out = tmp_path / "out.vmfb"
    r = embed("--prefix", prefix, "--set", "iree-opt-level=O7", PROGRAM, "-o", out, "--", *TARGET)
    assert r.returncode == 1
    assert ("ireepkg-embed-compile: error: package 'opt-level': flag --iree-opt-level=O7 "
            "(from package opt-level): option parse error for: iree-opt-level=O7") in r.stderr, r.stderr
    assert not out.exists()
    # The same option with a good value compiles.
    r = embed("--prefix", prefix, "--set", "iree-opt-level=O2", PROGRAM, "-o", out, "--", *TARGET,
              "--iree-hal-executable-object-search-path="
              f"{BUILD}/examples/hermetic-mul/objects/{HOST_ARCH}")
    assert r.returncode == 0, r.stderr
    assert ("--iree-opt-level=O2", "opt-level") in sections(r.stdout)[SESSION]


def test_command_line_session_flag_refused(tmp_path, prefix):
    r = embed("--prefix", prefix, PROGRAM, "-o", tmp_path / "o.vmfb", "--", *TARGET,
              "--iree-opt-level=O7")
    assert r.returncode == 1
    assert ("ireepkg-embed-compile: error: flag --iree-opt-level=O7: "
            "option parse error for: iree-opt-level=O7") in r.stderr, r.stderr


def test_bogus_flag_is_named(tmp_path, prefix):
    # Neither a session option nor a global one: tried in a child process
    # first, so LLVM's parser cannot end the embedding process.
    r = embed("--prefix", prefix, PROGRAM, "-o", tmp_path / "o.vmfb", "--", *TARGET,
              "--iree-no-such-flag=1")
    assert r.returncode == 1
    assert ("ireepkg-embed-compile: error: flag --iree-no-such-flag=1: the compiler has no "
            "such option (neither a session option nor a process-global one)") in r.stderr, r.stderr
    assert "hint: Did you mean" in r.stderr


def test_unknown_plugin_names_the_package(tmp_path):
    archive = option_package(tmp_path, "ghost", "no_such_plugin", {})
    prefix = tmp_path / "p"
    assert run("install", "--prefix", prefix, archive, timeout=TIMEOUT).code == 0
    r = embed("--prefix", prefix, PROGRAM, "-o", tmp_path / "o.vmfb", "--", *TARGET)
    assert r.returncode == 1
    assert ("ireepkg-embed-compile: error: package 'ghost': flag --iree-plugin=no_such_plugin "
            "(from package ghost): this compiler has no plugin 'no_such_plugin' (its plugins: ") in r.stderr, r.stderr
    assert "input_torch" in r.stderr


def test_dynamic_plugin_needs_iree_load_plugins(tmp_path):
    # An embedded compiler loads dynamic plugins only from IREE_LOAD_PLUGINS
    # at initialization; the flag cannot be applied later.
    pkg = tmp_path / "dyn"
    (pkg / "lib").mkdir(parents=True)
    src = tmp_path / "dyn.c"
    # IREE 3.13's plugin info, with the wheel's hash; it registers nothing.
    src.write_text("#include <stdbool.h>\n#include <stdint.h>\n"
                   "struct Info { uint64_t h; const char *id, *v; bool (*r)(void *); };\n"
                   "static bool none(void *r) { (void)r; return true; }\n"
                   'static const struct Info k = {0x27493ee2eddc0611ull, "dyn_plugin", "1", none};\n'
                   '__attribute__((visibility("default"))) const struct Info *'
                   "iree_get_compiler_plugin_info(void) { return &k; }\n")
    subprocess.run(["clang-22", "-shared", "-fPIC", src, "-o", pkg / "lib" / "libdyn.so"],
                   check=True, timeout=TIMEOUT)
    (pkg / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "dyn-plugin", "version": "0.1.0",
        "compiler": {"plugins": [{"id": "dyn_plugin", "kind": "iree-dynamic",
                                  "library": {f"linux-{HOST_ARCH}": "lib/libdyn.so"}}]}}))
    prefix = tmp_path / "p"
    assert run("install", "--prefix", prefix, pack(pkg, tmp_path / "dist"), timeout=TIMEOUT).code == 0
    lib = f"{prefix}/packages/dyn-plugin/0.1.0/lib/libdyn.so"
    program = tmp_path / "id.mlir"
    program.write_text("func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                       "  return %a : tensor<4xf32>\n}\n")
    args = ("--prefix", prefix, program, "-o", tmp_path / "o.vmfb", "--", *TARGET)
    r = embed(*args)
    assert r.returncode == 1
    assert (f"ireepkg-embed-compile: error: package 'dyn-plugin': flag --iree-load-plugin={lib} "
            f"(from package dyn-plugin): an embedded compiler loads dynamic plugins only from "
            f"IREE_LOAD_PLUGINS, when it initializes, and IREE_LOAD_PLUGINS does not name {lib}"
            ) in r.stderr, r.stderr
    assert f"hint: set IREE_LOAD_PLUGINS={lib}" in r.stderr
    # Named there, the compiler loads the library at initialization; this
    # test library registers no session, so the plugin id is then unknown.
    r = embed(*args, env={"IREE_LOAD_PLUGINS": lib})
    assert r.returncode == 1
    assert "IREE Dynamic Plugin ERROR" not in r.stderr, r.stderr
    assert ("error: package 'dyn-plugin': flag --iree-plugin=dyn_plugin (from package "
            "dyn-plugin): this compiler has no plugin 'dyn_plugin'") in r.stderr


#===-----------------------------------------------------------------------===#
# Finding and loading the library
#===-----------------------------------------------------------------------===#

def first_line(r):
    return r.stdout.splitlines()[0] if r.stdout else ""


def test_library_from_the_python_on_path(tmp_path):
    # Fails on the missing input, after the library was found and loaded.
    args = ("--prefix", tmp_path / "p", tmp_path / "missing.mlir", "-o", tmp_path / "o.vmfb")
    r = embed(*args, lib=None, env={"PATH": f"{VENV_BIN}:/usr/bin:/bin"})
    assert first_line(r) == f"compiler library: {LIB} (python {VENV_BIN}/python3), embedding API 1.4", r.stderr
    assert f"cannot read {tmp_path / 'missing.mlir'}" in r.stderr


def test_library_from_virtual_env(tmp_path):
    args = ("--prefix", tmp_path / "p", tmp_path / "missing.mlir", "-o", tmp_path / "o.vmfb")
    r = embed(*args, lib=None, env={"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(VENV_BIN.parent)})
    assert first_line(r) == f"compiler library: {LIB} (python {VENV_BIN}/python), embedding API 1.4", r.stderr


def test_library_from_environment(tmp_path):
    args = ("--prefix", tmp_path / "p", tmp_path / "missing.mlir", "-o", tmp_path / "o.vmfb")
    r = embed(*args, lib=None, env={"IREE_COMPILER_LIB": str(LIB)})
    assert first_line(r) == f"compiler library: {LIB} (IREE_COMPILER_LIB), embedding API 1.4", r.stderr


def test_no_library_anywhere(tmp_path):
    r = embed("--prefix", tmp_path / "p", PROGRAM, "-o", tmp_path / "o.vmfb", lib=None,
              env={"PATH": str(tmp_path)})
    assert r.returncode == 1
    assert ("ireepkg-embed-compile: error: cannot find libIREECompiler.so: IREE_COMPILER_LIB is "
            "not set and no Python has the iree.compiler package (tried: no python3 on PATH and "
            "no VIRTUAL_ENV)") in r.stderr, r.stderr


def test_missing_library(tmp_path):
    missing = tmp_path / "libIREECompiler.so"
    r = embed("--prefix", tmp_path / "p", PROGRAM, "-o", tmp_path / "o.vmfb", lib=missing)
    assert r.returncode == 1
    assert (f"ireepkg-embed-compile: error: cannot load the IREE compiler library {missing}: "
            f"{missing}: cannot open shared object file: No such file or directory") in r.stderr, r.stderr


def test_library_without_the_api(tmp_path):
    r = embed("--prefix", tmp_path / "p", PROGRAM, "-o", tmp_path / "o.vmfb", lib="libc.so.6")
    assert r.returncode == 1
    assert ("ireepkg-embed-compile: error: libc.so.6 is not an IREE compiler library: it does "
            "not export ireeCompilerGetAPIVersion") in r.stderr, r.stderr


def test_not_a_library(tmp_path):
    r = embed("--prefix", tmp_path / "p", PROGRAM, "-o", tmp_path / "o.vmfb", lib=PROGRAM)
    assert r.returncode == 1
    assert f"error: cannot load the IREE compiler library {PROGRAM}: " in r.stderr, r.stderr
    assert "invalid ELF header" in r.stderr
