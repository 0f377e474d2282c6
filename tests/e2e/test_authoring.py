"""Plugin authoring: `ireepkg new`, the CMake helpers, package tests.

For each kind of project `ireepkg new` writes, the README's commands (cmake
configure with find_package(ireepkg CONFIG), build, ctest) build the plugin
with the helpers of ireepkg's build tree (-Direepkg_DIR=<build>), lay out the
package and pack it, running its tests with the real tools (clang-22/lld-22,
the IREE wheels of .venv, mlir-opt-22); then the archive is installed and
`ireepkg test` passes. One project is built against an installed ireepkg
(`cmake --install` into a scratch prefix). A plugin that returns wrong
numbers fails `pack`, `ireepkg test` and `doctor --run-tests`, with the
expected and the actual output shown."""
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import BUILD, REPO, ireepkg_path, run

VENV_BIN = pathlib.Path(sys.executable).parent
HOST_X86_64 = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
MLIR_OPT = shutil.which("mlir-opt-22")
CLANG = shutil.which("clang-22")
CLANGXX = shutil.which("clang++-22")
LLD = shutil.which("ld.lld-22")
ENV = dict(os.environ, PATH=f"{VENV_BIN}:{os.environ['PATH']}")

KINDS = {
    # kind: (package name, test name, tool)
    "runtime": ("my-mul", "multiply", "iree-run-module"),
    "mlir-passes": ("tag-passes", "count-ops", "mlir-opt"),
    "mlir-dialect": ("demo-dialect", "marker", "mlir-opt"),
    "compiler-config": ("my-config", "add", "iree-run-module"),
}


def sh(*args, cwd=None, check=True, timeout=600):
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"{args}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def configure(project, *extra, check=True):
    return sh("cmake", "-S", project, "-B", project / "build", "-G", "Ninja",
              f"-DCMAKE_C_COMPILER={CLANG}", f"-DCMAKE_CXX_COMPILER={CLANGXX}",
              *extra, check=check)


def build(project, check=True):
    return sh("cmake", "--build", project / "build", check=check)


def new(root, kind, name):
    r = run("new", root / name, "--kind", kind)
    assert r.code == 0, r.err
    return root / name


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """Every kind of project, written by `ireepkg new` and built with the
    build tree's helpers; the build packs each (running its tests)."""
    root = tmp_path_factory.mktemp("projects")
    out, timings = {}, {}
    for kind, (name, _, _) in KINDS.items():
        if kind.startswith("mlir-") and not (HOST_X86_64 and MLIR_OPT):
            continue
        start = time.monotonic()
        project = new(root, kind, name)
        configure(project, f"-Direepkg_DIR={BUILD}")
        proc = build(project)
        out[kind] = (project, proc)
        timings[kind] = time.monotonic() - start
    print("scaffold build times:", {k: round(v, 1) for k, v in timings.items()})
    return out


def test_new_writes_each_kind(tmp_path):
    r = run("new", tmp_path / "my-mul", "--kind", "runtime")
    assert r.code == 0, r.err
    assert r.out.startswith(f"created the runtime package project my-mul in {tmp_path / 'my-mul'}:\n"
                            "  CMakeLists.txt\n  README.md\n  ireeplugin.json\n"
                            "  src/my_mul.c\n  tests/my_mul.mlir\n")
    manifest = json.loads((tmp_path / "my-mul" / "ireeplugin.json").read_text())
    assert manifest["name"] == "my-mul"
    assert [(p["name"], p["format"], p["imports"]) for p in manifest["runtime"]["plugins"]] == [
        ("my_mul_system", "system-library", ["my_mul_workgroup"]),
        ("my_mul", "embedded-elf", ["my_mul_workgroup"])]
    readme = (tmp_path / "my-mul" / "README.md").read_text()
    for command in ("cmake -S . -B build", "cmake --build build",
                    "ctest --test-dir build"):
        assert command in readme
    # The manifest of every kind is valid as written.
    for kind in KINDS:
        r = run("new", tmp_path / kind, "--kind", kind, "--name", f"x-{kind}")
        assert r.code == 0, r.err
        r = run("manifest", "check", tmp_path / kind / "ireeplugin.json")
        assert r.code == 0, r.out + r.err


def test_new_refuses(tmp_path):
    r = run("new", tmp_path / "p")
    assert r.code == 2
    assert r.err == ("ireepkg: error: missing --kind\n  hint: give the kind of package: "
                     "compiler-config, mlir-dialect, mlir-passes, runtime\n")
    r = run("new", tmp_path / "p", "--kind", "python")
    assert r.code == 2
    assert "\"python\" is not a kind of package project" in r.err
    r = run("new", tmp_path / "Bad_Name", "--kind", "runtime")
    assert r.code == 2
    assert "\"Bad_Name\" is not a valid package name" in r.err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine\n")
    r = run("new", tmp_path / "full", "--kind", "runtime")
    assert r.code == 1
    assert "already exists and is not an empty directory" in r.err
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == ["keep.txt"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_scaffold_builds_tests_packs_installs(kind, projects, tmp_path):
    if kind not in projects:
        pytest.skip("MLIR plugins need linux-x86_64 and mlir-opt-22")
    name, test, tool = KINDS[kind]
    project, proc = projects[kind]
    # The build packed the package, after its test passed.
    assert f"ok    {name} 0.1.0 {test} ({tool})\n1 test: 1 passed, 0 failed, 0 skipped\n" in proc.stdout
    archive = project / "build" / "dist" / f"{name}-0.1.0.ireepkg"
    assert archive.is_file()
    # ctest runs `ireepkg test build/package`.
    r = sh("ctest", "--test-dir", project / "build", "--output-on-failure")
    assert "100% tests passed, 0 tests failed out of 1" in r.stdout
    # Packing is reproducible.
    again = tmp_path / "again"
    r = run("pack", project / "build" / "package", "-o", again, env=ENV)
    assert r.code == 0, r.err
    assert (again / archive.name).read_bytes() == archive.read_bytes()
    # Installed, its test passes against the tools in use.
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, archive, env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, env=ENV)
    assert r.code == 0, r.out + r.err
    assert r.out == f"ok    {name} 0.1.0 {test} ({tool})\n1 test: 1 passed, 0 failed, 0 skipped\n"
    r = run("test", "--prefix", prefix, name, "--json", env=ENV)
    assert r.code == 0
    report = json.loads(r.out)
    assert report["ok"] is True
    assert [(t["package"], t["test"], t["outcome"]) for t in report["tests"]] == [
        (name, test, "passed")]
    r = run("doctor", "--run-tests", "--prefix", prefix, env=ENV)
    assert r.code == 0, r.out + r.err
    assert f"\nPackage tests:\nok    {name} 0.1.0 {test} ({tool})\n" in r.out


def test_runtime_scaffold_layout(projects):
    project, _ = projects["runtime"]
    package = project / "build" / "package"
    files = sorted(str(p.relative_to(package)) for p in package.rglob("*") if p.is_file())
    assert files == ["ireeplugin.json", "runtime/linux-x86_64/libmy_mul.so",
                     "runtime/my_mul.aarch64.so", "runtime/my_mul.x86_64.so",
                     "tests/my_mul.mlir"] if HOST_X86_64 else files
    # Embedded ELF as IREE's loader needs it: ELF64 shared objects for the
    # architecture, no interpreter, no dynamic dependencies.
    for arch, machine in (("x86_64", 0x3E), ("aarch64", 0xB7)):
        data = (package / "runtime" / f"my_mul.{arch}.so").read_bytes()
        assert data[:4] == b"\x7fELF" and data[4] == 2
        assert int.from_bytes(data[16:18], "little") == 3  # ET_DYN
        assert int.from_bytes(data[18:20], "little") == machine
    r = sh("readelf-22" if shutil.which("readelf-22") else "readelf", "-d",
           package / "runtime" / "my_mul.x86_64.so", check=False)
    assert "NEEDED" not in r.stdout


def test_wrong_numbers_fail_pack_test_and_doctor(tmp_path):
    project = new(tmp_path, "runtime", "off-by-one")
    source = project / "src" / "off_by_one.c"
    text = source.read_text()
    assert "out[i] = a[i] * b[i];" in text
    source.write_text(text.replace("out[i] = a[i] * b[i];", "out[i] = a[i] * b[i] + 1.0f;"))
    configure(project, f"-Direepkg_DIR={BUILD}")
    proc = build(project, check=False)
    assert proc.returncode != 0
    assert ("FAIL  off-by-one 0.1.0 multiply: iree-run-module did not print the "
            "expected line \"8xf32=8 8 8 8 8 8 8 8\"\n") in proc.stdout
    assert "  expected output:\n    8xf32=8 8 8 8 8 8 8 8\n" in proc.stdout
    assert "  actual output:\n    EXEC @off_by_one\n    result[0]: hal.buffer_view\n    8xf32=9 9 9 9 9 9 9 9\n" in proc.stdout
    assert ("ireepkg: error: 1 of the package's tests fails; no archive was written\n"
            "  hint: fix the package, or pack with --no-test to skip its tests\n") in proc.stdout + proc.stderr
    assert not (project / "build" / "dist" / "off-by-one-0.1.0.ireepkg").exists()

    # --no-test packs it anyway; installed, `ireepkg test` catches it.
    dist = tmp_path / "dist"
    r = run("pack", project / "build" / "package", "-o", dist, "--no-test", env=ENV)
    assert r.code == 0, r.err
    assert r.out.startswith("skip  off-by-one 0.1.0 multiply — not run (--no-test); the "
                            "archive records that its tests were skipped\n"
                            "1 test: 0 passed, 0 failed, 1 skipped\n"
                            "packed off-by-one 0.1.0 -> ")
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, dist / "off-by-one-0.1.0.ireepkg", env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, env=ENV)
    assert r.code == 1
    assert r.out.startswith("FAIL  off-by-one 0.1.0 multiply: iree-run-module did not "
                            "print the expected line \"8xf32=8 8 8 8 8 8 8 8\"\n"
                            "  command: ")
    assert f"--flagfile={prefix}/state/runtime.flags" in r.out
    assert "  expected output:\n    8xf32=8 8 8 8 8 8 8 8\n  actual output:\n" in r.out
    assert "    8xf32=9 9 9 9 9 9 9 9\n" in r.out
    assert r.out.endswith("1 test: 0 passed, 1 failed, 0 skipped\n")
    r = run("test", "--prefix", prefix, "--json", env=ENV)
    assert r.code == 1
    t = json.loads(r.out)["tests"][0]
    assert t["outcome"] == "failed"
    assert t["expected"] == ["8xf32=8 8 8 8 8 8 8 8"]
    assert "8xf32=9 9 9 9 9 9 9 9" in t["output"]
    r = run("doctor", "--run-tests", "--prefix", prefix, env=ENV)
    assert r.code == 1
    assert "\nPackage tests:\nFAIL  off-by-one 0.1.0 multiply: " in r.out
    # Without --run-tests, doctor only loads the plugin and resolves its
    # imports, which works.
    r = run("doctor", "--prefix", prefix, env=ENV)
    assert r.code == 0, r.out + r.err


def test_test_names_an_uninstalled_package(tmp_path):
    project = new(tmp_path, "compiler-config", "cfg")
    dist = tmp_path / "dist"
    r = run("pack", project, "-o", dist, env=ENV)
    assert r.code == 0, r.err
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, dist / "cfg-0.1.0.ireepkg").code == 0
    r = run("test", "--prefix", prefix, "nothing-here", env=ENV)
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: package \"nothing-here\" is not installed in {prefix}")


# No IREE tools: PATH without the virtual environment's bin/.
BARE = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
BARE["PATH"] = "/usr/bin:/bin"
NO_IREE = ("FAIL  cfg 0.1.0 add: iree-compile was not found (on PATH or in $VIRTUAL_ENV/bin)\n"
           "  hint: install IREE's tools (pip install iree-base-compiler iree-base-runtime) "
           "or activate their virtual environment\n")


def bare_run(*args):
    """ireepkg without the IREE tools (run() adds to os.environ, which has
    VIRTUAL_ENV when the suite runs from the virtual environment)."""
    proc = subprocess.run([str(ireepkg_path()), *map(str, args)], env=BARE,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_missing_iree_tools_fail_pack_test_and_ctest(tmp_path):
    """A test that cannot run fails: pack, `ireepkg test` and the project's
    ctest without the IREE tools; only --no-test (NO_TEST) skips tests, and
    then says so, in its output and in the archive's RECORD."""
    project = new(tmp_path, "compiler-config", "cfg")
    dist = tmp_path / "dist"
    code, out, err = bare_run("pack", project, "-o", dist)
    assert code == 1, out + err
    assert out == NO_IREE + "1 test: 0 passed, 1 failed, 0 skipped\n"
    # The package's hook pipeline could not be checked against IREE either.
    assert err == (f"ireepkg: warning: {project}/ireeplugin.json: package 'cfg': pass "
                   "pipelines were not checked against IREE: iree-opt was not found on "
                   "PATH or in $VIRTUAL_ENV/bin\n"
                   "  hint: install IREE's compiler (pip install iree-base-compiler) or "
                   "activate its virtual environment, so that a pipeline IREE cannot "
                   "parse is found before iree-compile ignores it\n"
                   "ireepkg: error: 1 of the package's tests fails; no archive was written\n"
                   "  hint: fix the package, or pack with --no-test to skip its tests\n")
    assert not (dist / "cfg-0.1.0.ireepkg").exists()
    code, out, err = bare_run("pack", project, "-o", dist, "--json")
    assert code == 1
    t = json.loads(out)["tests"][0]
    assert (t["outcome"], t["reason"]) == ("failed", "iree-compile was not found (on PATH or in $VIRTUAL_ENV/bin)")
    assert t["hint"].startswith("install IREE's tools")

    # --no-test: packed, the output and RECORD say the tests were skipped.
    code, out, err = bare_run("pack", project, "-o", dist, "--no-test")
    assert code == 0, out + err
    assert out.startswith("skip  cfg 0.1.0 add — not run (--no-test); the archive records "
                          "that its tests were skipped\n1 test: 0 passed, 0 failed, 1 skipped\n"
                          "packed cfg 0.1.0 -> ")
    archive = dist / "cfg-0.1.0.ireepkg"
    assert archive_record(archive)["tests_skipped"] is True
    code, out, err = bare_run("pack", project, "-o", dist, "--no-test", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["tests_skipped"] is True
    assert [(t["test"], t["outcome"]) for t in report["tests"]] == [("add", "skipped")]
    # Tested, the RECORD has no such key.
    r = run("pack", project, "-o", tmp_path / "tested", "--json", env=ENV)
    assert r.code == 0, r.out + r.err
    assert json.loads(r.out)["tests_skipped"] is False
    assert "tests_skipped" not in archive_record(tmp_path / "tested" / "cfg-0.1.0.ireepkg")

    # Installed (with the tools), `ireepkg test` without them fails.
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, archive, env=ENV).code == 0
    code, out, err = bare_run("test", "--prefix", prefix)
    assert code == 1, out + err
    assert out == NO_IREE + "1 test: 0 passed, 1 failed, 0 skipped\n"
    code, out, err = bare_run("doctor", "--run-tests", "--prefix", prefix)
    assert code == 1
    assert "\nPackage tests:\n" + NO_IREE in out

    # The project's ctest (`ireepkg test build/package`) fails too.
    configure(project, f"-Direepkg_DIR={BUILD}")
    build(project)
    proc = subprocess.run(["ctest", "--test-dir", project / "build", "--output-on-failure"],
                          env=BARE, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    assert "0% tests passed, 1 tests failed out of 1" in proc.stdout
    assert NO_IREE in proc.stdout


def test_helper_options(tmp_path):
    """INCLUDE_DIRECTORIES and DEFINES reach both builds of a plugin;
    DIRECTORY and OUTPUT_DIRECTORY place the package; NO_TEST packs without
    the tests, says so, records it in the archive and adds no ctest test."""
    project = new(tmp_path, "runtime", "opts")
    (project / "include").mkdir()
    (project / "include" / "scale.h").write_text("#define OPTS_SCALE (OPTS_FACTOR * 1.0f)\n")
    source = project / "src" / "opts.c"
    edit(source, "#include <stdint.h>\n", "#include <stdint.h>\n\n#include \"scale.h\"\n")
    edit(source, "out[i] = a[i] * b[i];", "out[i] = a[i] * b[i] * OPTS_SCALE;")
    edit_manifest(project, lambda m: m["tests"][0].update(expected_output=["8xf32=16 16 16 16 16 16 16 16"]))
    cmake = project / "CMakeLists.txt"
    edit(cmake, "  SYSTEM_LIBRARY)", "  SYSTEM_LIBRARY\n  INCLUDE_DIRECTORIES include\n  DEFINES OPTS_FACTOR=2)")
    cmake.write_text(cmake.read_text().replace("  FILES tests/opts.mlir)", (
        "  FILES tests/opts.mlir\n"
        "  DIRECTORY ${CMAKE_BINARY_DIR}/laid-out\n"
        "  OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/archives)\n"
        "ireepkg_add_package(opts_untested\n"
        "  PLUGINS opts\n"
        "  FILES tests/opts.mlir\n"
        "  DIRECTORY ${CMAKE_BINARY_DIR}/untested\n"
        "  OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/untested-archives\n"
        "  NO_TEST)")))
    configure(project, f"-Direepkg_DIR={BUILD}")
    proc = build(project)
    assert "ok    opts 0.1.0 multiply (iree-run-module)\n" in proc.stdout
    assert ("skip  opts 0.1.0 multiply — not run (--no-test); the archive records that "
            "its tests were skipped\n") in proc.stdout
    out = project / "build"
    assert (out / "laid-out" / "runtime" / "opts.aarch64.so").is_file()
    tested = out / "archives" / "opts-0.1.0.ireepkg"
    untested = out / "untested-archives" / "opts-0.1.0.ireepkg"
    assert "tests_skipped" not in archive_record(tested)
    assert archive_record(untested)["tests_skipped"] is True
    assert not (out / "package").exists() and not (out / "dist").exists()
    r = sh("ctest", "--test-dir", out, "-N")
    assert "Test #1: opts_package_tests\n" in r.stdout
    assert "Total Tests: 1\n" in r.stdout
    # Both builds computed 2 * 4 * OPTS_SCALE.
    for library in ("runtime/linux-x86_64/libopts.so", "runtime/opts.x86_64.so"):
        package = tmp_path / library.replace("/", "_")
        shutil.copytree(out / "laid-out", package)
        def only(m, library=library):
            m["runtime"]["plugins"] = [p for p in m["runtime"]["plugins"]
                                       if library in p["library"].values()]
        manifest = json.loads((package / "ireeplugin.json").read_text())
        only(manifest)
        (package / "ireeplugin.json").write_text(json.dumps(manifest))
        r = run("test", package, env=ENV)
        assert r.code == 0, r.out + r.err


def install_ireepkg(prefix, component=None):
    """What `cmake --install BUILD --prefix <prefix> [--component ...]`
    does, directory by directory, since it would also write
    install_manifest.txt into the build tree (which an unprivileged run
    cannot write)."""
    only = [f"-DCMAKE_INSTALL_COMPONENT={component}"] if component else []
    for sub in ("manifest_schema", "pkg", "registry", "runtime_integration",
                "compiler_integration", "cli"):
        sh("cmake", f"-DCMAKE_INSTALL_PREFIX={prefix}", *only, "-P",
           BUILD / sub / "cmake_install.cmake")


def test_helpers_from_an_installed_ireepkg(tmp_path):
    """`cmake --install` of ireepkg, then a project found with
    CMAKE_PREFIX_PATH: the installed helpers, header and ireepkg."""
    installed = tmp_path / "installed"
    install_ireepkg(installed)
    assert (installed / "bin" / "ireepkg").is_file()
    assert (installed / "lib" / "cmake" / "ireepkg" / "ireepkgHelpers.cmake").is_file()
    assert (installed / "include" / "ireepkg" / "iree_executable_plugin.h").is_file()
    project = new(tmp_path, "runtime", "from-install")
    configure(project, f"-DCMAKE_PREFIX_PATH={installed}")
    cache = (project / "build" / "CMakeCache.txt").read_text()
    assert f"ireepkg_DIR:PATH={installed}/lib/cmake/ireepkg" in cache
    proc = build(project)
    assert f"{installed}/bin/ireepkg pack" in (project / "build" / "build.ninja").read_text()
    assert "ok    from-install 0.1.0 multiply (iree-run-module)\n" in proc.stdout
    assert (project / "build" / "dist" / "from-install-0.1.0.ireepkg").is_file()


def test_cmake_package_without_pip(tmp_path):
    """The guide's recipe: `cmake --install --component runtime` of an
    ireepkg build, moved elsewhere (the tree is relocatable), and a C++
    project that finds it with CMAKE_PREFIX_PATH and links the runtime
    library, shared and static."""
    staged = tmp_path / "staged"
    install_ireepkg(staged, "runtime")
    assert not (staged / "bin" / "ireepkg").exists()
    prefix = tmp_path / "opt" / "ireepkg"
    prefix.parent.mkdir()
    staged.rename(prefix)
    app = tmp_path / "app"
    app.mkdir()
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\n"
        "project(app LANGUAGES C CXX)\n"
        "find_package(ireepkg 0.1 CONFIG REQUIRED COMPONENTS runtime)\n"
        "if(NOT COMMAND ireepkg_add_package OR NOT EXISTS\n"
        "   ${IREEPKG_HELPERS_INCLUDE_DIR}/ireepkg/iree_executable_plugin.h)\n"
        "  message(FATAL_ERROR \"no helpers\")\n"
        "endif()\n"
        "add_executable(app main.cpp)\n"
        "target_link_libraries(app PRIVATE ireepkg::runtime)\n"
        "add_executable(app_static main.cpp)\n"
        "target_link_libraries(app_static PRIVATE ireepkg::runtime_static)\n")
    (app / "main.cpp").write_text(
        "#include <ireepkg/runtime.h>\n#include <cstdio>\n"
        "int main() {\n"
        "  std::printf(\"%s %s\\n\", ireepkg_runtime_version(),\n"
        "              ireepkg_runtime_host_platform());\n"
        "}\n")
    sh("cmake", "-S", app, "-B", app / "build", "-G", "Ninja",
       f"-DCMAKE_C_COMPILER={CLANG}", f"-DCMAKE_CXX_COMPILER={CLANGXX}",
       f"-DCMAKE_PREFIX_PATH={prefix}")
    cache = (app / "build" / "CMakeCache.txt").read_text()
    assert f"ireepkg_DIR:PATH={prefix}/lib/cmake/ireepkg" in cache
    sh("cmake", "--build", app / "build")
    for exe in ("app", "app_static"):
        version, platform_ = sh(app / "build" / exe).stdout.split()
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
        assert platform_.startswith("linux-")


IREE_PORT = REPO / "examples" / "iree-port"
# The helpers' embedded-ELF flags (docs/guide-plugin-authors.md lists them).
ELF_CFLAGS = ["-std=c17", "-O2", "-fPIC", "-ffreestanding", "-fvisibility=hidden",
              "-fno-plt", "-fdata-sections", "-ffunction-sections"]
ELF_LDFLAGS = ["--build-id=none", "-nostdlib", "-static", "-shared", "--no-undefined",
               "--gc-sections", "-z", "now", "-z", "relro", "--hash-style=sysv"]
PORT_TESTS = ("ok    iree-port 0.1.0 system (iree-run-module)\n"
              "ok    iree-port 0.1.0 standalone (iree-run-module)\n"
              "2 tests: 2 passed, 0 failed, 0 skipped\n")


def test_iree_named_plugin_sources(tmp_path):
    """Plugin sources written as IREE's samples are (examples/iree-port:
    `#include "iree/hal/local/executable_plugin.h"` and IREE's names; a
    system plugin using libc, a standalone one) build unchanged against an
    installed ireepkg: with its CMake helpers, and with plain compiler
    command lines given only <prefix>/include/ireepkg/iree-compat. Both
    archives pack (their tests pass), install, and give the right numbers
    through iree-run-module."""
    installed = tmp_path / "installed"
    install_ireepkg(installed)

    # The helpers: SYSTEM_LIBRARY_ONLY, FATELF, FATELF_ONLY.
    project = tmp_path / "iree-port"
    shutil.copytree(IREE_PORT, project)
    configure(project, f"-DCMAKE_PREFIX_PATH={installed}")
    proc = build(project)
    assert PORT_TESTS in proc.stdout
    by_helpers = project / "build" / "dist" / "iree-port-0.1.0.ireepkg"
    assert archive_listing(by_helpers) == [
        ".ireepkg/RECORD.json", "ireeplugin.json", "runtime/linux-x86_64/libsystem_plugin.so",
        "runtime/standalone_plugin.sos", "tests/standalone_mul.mlir", "tests/system_mul.mlir"]

    # By hand: the compiler, lld and `ireepkg fatelf join`.
    compat = installed / "include" / "ireepkg" / "iree-compat"
    assert (compat / "iree" / "hal" / "local" / "executable_plugin.h").is_file()
    package = tmp_path / "by-hand" / "package"
    (package / "runtime" / "linux-x86_64").mkdir(parents=True)
    shutil.copy(IREE_PORT / "ireeplugin.json", package)
    shutil.copytree(IREE_PORT / "tests", package / "tests")
    src = IREE_PORT / "src"
    sh(CLANG, "-std=c17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", f"-I{compat}",
       src / "system_plugin.c", "-o", package / "runtime" / "linux-x86_64" / "libsystem_plugin.so")
    elfs = []
    for arch in ("x86_64", "aarch64"):
        obj = tmp_path / "by-hand" / f"standalone_plugin.{arch}.o"
        sh(CLANG, "-target", f"{arch}-none-elf", *ELF_CFLAGS, f"-I{compat}", "-c",
           src / "standalone_plugin.c", "-o", obj)
        elfs.append(tmp_path / "by-hand" / f"standalone_plugin.{arch}.so")
        sh(LLD, *ELF_LDFLAGS, obj, "-o", elfs[-1])
    r = run("fatelf", "join", *elfs, "-o", package / "runtime" / "standalone_plugin.sos")
    assert r.code == 0, r.err
    r = run("pack", package, "-o", tmp_path / "by-hand", env=ENV)
    assert r.code == 0, r.out + r.err
    assert r.out.startswith(PORT_TESTS), r.out
    by_hand = tmp_path / "by-hand" / "iree-port-0.1.0.ireepkg"

    vmfbs = {}
    for name in ("system", "standalone"):
        vmfbs[name] = tmp_path / f"{name}.vmfb"
        sh(VENV_BIN / "iree-compile", IREE_PORT / "tests" / f"{name}_mul.mlir",
           "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
           "--iree-llvmcpu-target-cpu=host", "-o", vmfbs[name])
    for how, archive in (("helpers", by_helpers), ("by-hand", by_hand)):
        prefix = tmp_path / f"prefix-{how}"
        r = run("install", "--prefix", prefix, archive, env=ENV)
        assert r.code == 0, r.err
        r = run("test", "--prefix", prefix, env=ENV)
        assert (r.code, r.out) == (0, PORT_TESTS), r.err
        r = run("doctor", "--prefix", prefix, env=ENV)
        assert r.code == 0, r.out + r.err
        for name, expected in (("system", "mul[0:7](3 * 5 = 15)\n"), ("standalone", "")):
            r = run("exec", "--prefix", prefix, "--", "iree-run-module", f"--module={vmfbs[name]}",
                    "--device=local-sync", f"--function={name}_mul", "--input=8xf32=3",
                    "--input=8xf32=5", env=ENV, timeout=120)
            assert r.code == 0, (how, name, r.err)
            assert expected in r.out, (how, name, r.out)
            assert r.out.endswith("8xf32=15 15 15 15 15 15 15 15\n"), (how, name, r.out)


def test_fatelf_and_riscv64(tmp_path):
    """ARCHES with riscv64 and FATELF: one .sos with three images, which the
    package ships under "fat" and its test loads."""
    project = new(tmp_path, "runtime", "fat-mul")
    cmake = project / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace(
        "ARCHES x86_64 aarch64\n", "ARCHES x86_64 aarch64 riscv64\n  FATELF\n"))
    manifest_path = project / "ireeplugin.json"
    manifest = json.loads(manifest_path.read_text())
    # Only the FatELF: the system library is still built, but not named.
    del manifest["runtime"]["plugins"][0]
    manifest["runtime"]["plugins"][0]["library"] = {"fat": "runtime/fat_mul.sos"}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    proc = configure(project, f"-Direepkg_DIR={BUILD}")
    warning = " ".join(proc.stderr.split())
    assert ("ireepkg_add_package(fat_mul_package): the package gets "
            "runtime/linux-x86_64/libfat_mul.so, which ireeplugin.json does not "
            "name; name it in a plugin's \"library\" (or drop it from the build)") in warning
    proc = build(project)
    assert "ok    fat-mul 0.1.0 multiply (iree-run-module)\n" in proc.stdout
    package = project / "build" / "package"
    r = run("fatelf", "dump", package / "runtime" / "fat_mul.sos")
    assert r.code == 0, r.err
    assert [line.split()[1] for line in r.out.splitlines()[1:]] == ["x86_64", "aarch64", "riscv64"]
    riscv = (package / "runtime" / "fat_mul.riscv64.so").read_bytes()
    assert int.from_bytes(riscv[18:20], "little") == 0xF3  # EM_RISCV
    r = run("test", package, env=ENV)
    assert r.code == 0, r.out + r.err
    assert r.out == "ok    fat-mul 0.1.0 multiply (iree-run-module)\n1 test: 1 passed, 0 failed, 0 skipped\n"


def edit(path, old, new):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new))


def edit_manifest(project, change):
    path = project / "ireeplugin.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def archive_listing(archive):
    r = subprocess.run(f"zstd -dc {archive} | tar -t", shell=True, capture_output=True,
                       text=True, check=True)
    return sorted(r.stdout.split())


def archive_record(archive):
    r = subprocess.run(f"zstd -dc {archive} | tar -xO .ireepkg/RECORD.json", shell=True,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def test_system_library_only_plugin_uses_libc(tmp_path):
    """SYSTEM_LIBRARY_ONLY: a plugin that uses libc (as IREE's
    system_plugin.c does) is built as a host shared library alone, with no
    embedded ELF (which could not include <stdio.h>)."""
    project = new(tmp_path, "runtime", "libc-mul")
    source = project / "src" / "libc_mul.c"
    edit(source, "#include <stdint.h>\n",
         "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n")
    edit(source, "  *out_self = NULL; // no state\n",
         "  char *self = malloc(32);\n  if (!self)\n"
         "    return ireepkg_hal_executable_plugin_status_from_code(\n"
         "        IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_RESOURCE_EXHAUSTED);\n"
         "  snprintf(self, 32, \"%s\", \"libc_mul\");\n  *out_self = self;\n")
    edit(source, "static void libc_mul_unload(void *self) { (void)self; }",
         "static void libc_mul_unload(void *self) { free(self); }")
    edit(project / "CMakeLists.txt", "  ARCHES x86_64 aarch64\n  SYSTEM_LIBRARY)",
         "  SYSTEM_LIBRARY_ONLY)")
    edit_manifest(project, lambda m: m["runtime"]["plugins"].pop(1))
    proc = configure(project, f"-Direepkg_DIR={BUILD}")
    assert "CMake Warning at" not in proc.stderr, proc.stderr
    proc = build(project)
    assert "embedded ELF" not in proc.stdout
    assert "ok    libc-mul 0.1.0 multiply (iree-run-module)\n" in proc.stdout
    archive = project / "build" / "dist" / "libc-mul-0.1.0.ireepkg"
    assert archive_listing(archive) == [
        ".ireepkg/RECORD.json", "ireeplugin.json",
        "runtime/linux-x86_64/liblibc_mul.so", "tests/libc_mul.mlir"]
    r = sh("readelf-22" if shutil.which("readelf-22") else "readelf", "-d",
           project / "build" / "package" / "runtime" / "linux-x86_64" / "liblibc_mul.so")
    assert "libc.so" in r.stdout
    # Asking for embedded ELF as well is refused, with what to do.
    edit(project / "CMakeLists.txt", "  SYSTEM_LIBRARY_ONLY)", "  ARCHES x86_64\n  SYSTEM_LIBRARY_ONLY)")
    proc = sh("cmake", project / "build", check=False)
    assert proc.returncode != 0
    assert ("ireepkg_add_executable_plugin(libc_mul): SYSTEM_LIBRARY_ONLY builds no "
            "embedded ELF; drop ARCHES and FATELF, or SYSTEM_LIBRARY_ONLY") in " ".join(proc.stderr.split())


def test_plain_shared_library_target_is_packaged(tmp_path):
    """PLUGINS takes any shared library target, laid out where the manifest
    names its file."""
    project = new(tmp_path, "runtime", "plain-lib")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\n"
        "project(plain_lib LANGUAGES C)\n"
        "enable_testing()\n"
        "find_package(ireepkg CONFIG REQUIRED)\n"
        "add_library(kernels SHARED src/plain_lib.c)\n"
        "target_include_directories(kernels PRIVATE ${IREEPKG_HELPERS_INCLUDE_DIR})\n"
        "set_target_properties(kernels PROPERTIES OUTPUT_NAME plain_kernels\n"
        "                      C_VISIBILITY_PRESET hidden)\n"
        "ireepkg_add_package(plain_lib_package PLUGINS kernels FILES tests/plain_lib.mlir)\n")

    def name_library(path):
        def change(m):
            del m["runtime"]["plugins"][1]
            m["runtime"]["plugins"][0]["library"] = {"linux-x86_64": path}
        return change
    edit_manifest(project, name_library("runtime/linux-x86_64/libplain_lib.so"))
    proc = configure(project, f"-Direepkg_DIR={BUILD}", check=False)
    assert proc.returncode != 0
    assert ("ireepkg_add_package(plain_lib_package): kernels builds libplain_kernels.so, "
            "which ireeplugin.json does not name; name its path in the package (e.g. "
            "runtime/linux-x86_64/libplain_kernels.so) in a plugin's \"library\"") in " ".join(proc.stderr.split())
    edit_manifest(project, lambda m: m["runtime"]["plugins"][0].update(
        library={"linux-x86_64": "runtime/linux-x86_64/libplain_kernels.so"}))
    proc = configure(project, f"-Direepkg_DIR={BUILD}")
    assert "CMake Warning at" not in proc.stderr, proc.stderr
    proc = build(project)
    assert "ok    plain-lib 0.1.0 multiply (iree-run-module)\n" in proc.stdout
    assert archive_listing(project / "build" / "dist" / "plain-lib-0.1.0.ireepkg") == [
        ".ireepkg/RECORD.json", "ireeplugin.json",
        "runtime/linux-x86_64/libplain_kernels.so", "tests/plain_lib.mlir"]


def test_fatelf_only_ships_the_fatelf_alone(tmp_path):
    """FATELF_ONLY: a manifest that names only the .sos configures without
    warnings, and the per-architecture files stay out of the archive."""
    project = new(tmp_path, "runtime", "fat-only")
    edit(project / "CMakeLists.txt", "  ARCHES x86_64 aarch64\n  SYSTEM_LIBRARY)",
         "  ARCHES x86_64 aarch64\n  FATELF)")
    edit(project / "CMakeLists.txt", "  PLUGINS fat_only\n", "  PLUGINS fat_only\n  FATELF_ONLY\n")

    def only_the_sos(m):
        del m["runtime"]["plugins"][0]
        m["runtime"]["plugins"][0]["library"] = {"fat": "runtime/fat_only.sos"}
    edit_manifest(project, only_the_sos)
    proc = configure(project, f"-Direepkg_DIR={BUILD}")
    assert "CMake Warning at" not in proc.stderr, proc.stderr
    proc = build(project)
    assert "ok    fat-only 0.1.0 multiply (iree-run-module)\n" in proc.stdout
    archive = project / "build" / "dist" / "fat-only-0.1.0.ireepkg"
    assert archive_listing(archive) == [
        ".ireepkg/RECORD.json", "ireeplugin.json", "runtime/fat_only.sos", "tests/fat_only.mlir"]
    # A plugin without FATELF cannot be shipped FatELF only.
    edit(project / "CMakeLists.txt", "  ARCHES x86_64 aarch64\n  FATELF)", "  ARCHES x86_64 aarch64)")
    proc = sh("cmake", project / "build", check=False)
    assert proc.returncode != 0
    assert ("ireepkg_add_package(fat_only_package): FATELF_ONLY ships only FatELF files, "
            "and fat_only is not built with FATELF; add FATELF to its "
            "ireepkg_add_executable_plugin") in " ".join(proc.stderr.split())


def test_build_tree_package_honours_ireepkg_executable(tmp_path):
    """-DIREEPKG_EXECUTABLE= chooses the ireepkg that packs, with the build
    tree's CMake package as with the installed one."""
    marker = tmp_path / "used"
    wrapper = tmp_path / "bin" / "my-ireepkg"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexec {ireepkg_path()} \"$@\"\n")
    wrapper.chmod(0o755)
    project = new(tmp_path, "compiler-config", "chosen")
    configure(project, f"-Direepkg_DIR={BUILD}", f"-DIREEPKG_EXECUTABLE={wrapper}")
    ninja = (project / "build" / "build.ninja").read_text()
    assert f"{wrapper} pack" in ninja
    assert f"{ireepkg_path()} pack" not in ninja
    build(project)
    assert marker.read_text().startswith(f"pack {project}/build/package -o {project}/build/dist")
    assert (project / "build" / "dist" / "chosen-0.1.0.ireepkg").is_file()


@pytest.mark.parametrize("body,timeout,reason", [
    ("volatile int spin = 1; while (spin) {}", 8,
     "iree-run-module did not finish within 8 s (timeout_seconds) and was killed"),
    ("*(volatile int *)0 = 1;", 120,
     # The wheels' iree-run-module is a Python wrapper of the native tool.
     "iree-run-module failed (exit code 245, as a Python wrapper reports a "
     "tool killed by signal 11: Segmentation fault)"
     if (VENV_BIN / "iree-run-module").read_bytes().startswith(b"#!")
     else "iree-run-module crashed (signal 11)"),
], ids=["hang", "crash"])
def test_an_import_that_hangs_or_crashes(tmp_path, body, timeout, reason):
    """Each tool runs in a child process with the test's time limit: a plugin
    whose import hangs or crashes fails its test, and ireepkg goes on."""
    project = new(tmp_path, "runtime", "bad-import")
    source = project / "src" / "bad_import.c"
    text = source.read_text()
    source.write_text(text.replace("  for (size_t i = begin; i < end; ++i)\n    out[i] = a[i] * b[i];\n",
                                   f"  {body}\n  for (size_t i = begin; i < end; ++i)\n    out[i] = a[i] * b[i];\n"))
    manifest_path = project / "ireeplugin.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["tests"][0]["timeout_seconds"] = timeout
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    configure(project, f"-Direepkg_DIR={BUILD}")
    proc = build(project, check=False)
    assert proc.returncode != 0
    assert f"FAIL  bad-import 0.1.0 multiply: {reason}\n  command: " in proc.stdout
    assert not (project / "build" / "dist" / "bad-import-0.1.0.ireepkg").exists()
    r = run("test", project / "build" / "package", "--json", env=ENV)
    assert r.code == 1
    t = json.loads(r.out)["tests"][0]
    assert (t["outcome"], t["reason"]) == ("failed", reason)


def test_mlir_opt_output_mismatch_shows_expected_and_actual(projects, tmp_path):
    if "mlir-passes" not in projects:
        pytest.skip("MLIR plugins need linux-x86_64 and mlir-opt-22")
    project, _ = projects["mlir-passes"]
    package = tmp_path / "package"
    shutil.copytree(project / "build" / "package", package)
    manifest = json.loads((package / "ireeplugin.json").read_text())
    good = manifest["tests"][0]["expected_output"][0]
    wrong = good.replace("op_count = 2", "op_count = 3")
    manifest["tests"][0]["expected_output"] = [wrong]
    (package / "ireeplugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    r = run("test", package, env=ENV)
    assert r.code == 1
    lines = r.out.splitlines()
    assert lines[0] == ("FAIL  tag-passes 0.1.0 count-ops: mlir-opt did not print the "
                        f"expected line \"{wrong}\"")
    assert lines[1].startswith(f"  command: {MLIR_OPT} --load-pass-plugin={package}/lib/linux-x86_64/libtag_passes.so "
                               "'--pass-pipeline=builtin.module(func.func(tag-passes-count-ops))' ")
    assert lines[2:4] == ["  expected output:", f"    {wrong}"]
    assert lines[4] == "  actual output:"
    assert f"      {good}" in lines[5:]
    assert lines[-1] == "1 test: 0 passed, 1 failed, 0 skipped"
    # pack refuses it the same way and leaves no archive; --json says why.
    r = run("pack", package, "-o", tmp_path / "dist", "--json", env=ENV)
    assert r.code == 1
    report = json.loads(r.out)
    assert report["ok"] is False
    assert [(t["test"], t["outcome"]) for t in report["tests"]] == [("count-ops", "failed")]
    assert not (tmp_path / "dist" / "tag-passes-0.1.0.ireepkg").exists()
