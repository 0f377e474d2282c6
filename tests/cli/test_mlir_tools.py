"""The MLIR tools a package names: an MLIR plugin's "tools" and a package
test whose tool is one of them.

The example pass plugin (mlir-tag-passes, built against MLIR 22) names
mlir-opt and a second tool, `tag-opt`: Debian's mlir-opt-22 under another
name (a symlink in a directory put on PATH), so the test can see which
binary ran. `ireepkg test` runs a test with its own tool, which must be
found (a test never skips); `doctor` loads the plugin into each named tool
that is found, warns of one that is not, and names a tool that fails with
the plugin loaded, with its output (mlir-translate-22, a real MLIR tool that
takes no plugins). And a real duplicate registration: `demo-opt`, a tiny
MlirOptMain tool built here with clang++-22 against Debian's MLIR 22 and the
example dialect's sources, registers the ireepkg_demo dialect itself; the
example dialect plugin, loaded into it, registers its own copy and MLIR
aborts. doctor and the package test name demo-opt and show the abort."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, EXAMPLES, REPO, copy_package, run

MLIR_OPT = shutil.which("mlir-opt-22")
MLIR_TRANSLATE = shutil.which("mlir-translate-22")
CLANGXX = shutil.which("clang++-22")
pytestmark = pytest.mark.skipif(
    not (MLIR_OPT and MLIR_TRANSLATE and CLANGXX and (EXAMPLES / "mlir-passes").is_dir()),
    reason="needs mlir-opt-22, mlir-translate-22, clang++-22 and the built MLIR examples")

VENV_BIN = pathlib.Path(sys.executable).parent
PROGRAM = "func.func @f(%a: i32) -> i32 {\n  return %a : i32\n}\n"
TAGGED = "func.func @f(%arg0: i32) -> i32 attributes {ireepkg.tags = [\"t\"]} {"


def tag_passes(tmp_path, tools, test_tool="tag-opt"):
    src = EXAMPLES / "mlir-passes"
    m = json.loads((src / "ireeplugin.json").read_text())
    compiler = m["compiler"]
    compiler["plugins"][0]["tools"] = tools
    d = copy_package(src, tmp_path / "tag-passes", compiler=compiler, tests=[{
        "name": "tag", "tool": test_tool, "program": "tests/f.mlir",
        "pipeline": "builtin.module(func.func(ireepkg-tag-functions{tag=t}))",
        "expected_output": [TAGGED]}])
    (d / "tests").mkdir()
    (d / "tests" / "f.mlir").write_text(PROGRAM)
    return d


@pytest.fixture
def bindir(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    (d / "tag-opt").symlink_to(MLIR_OPT)
    return d


def env_with(bindir):
    return {"PATH": f"{bindir}:{VENV_BIN}:/usr/bin:/bin"}


NO_TOOL = {"PATH": f"{VENV_BIN}:/usr/bin:/bin"}


def test_a_test_runs_the_tool_it_names(tmp_path, bindir):
    d = tag_passes(tmp_path, ["mlir-opt", "tag-opt"])
    r = run("test", d, "--json", env=env_with(bindir))
    assert r.code == 0, r.out + r.err
    [t] = json.loads(r.out)["tests"]
    assert (t["tool"], t["outcome"]) == ("tag-opt", "passed")
    r = run("test", d, env=env_with(bindir))
    assert r.out == "ok    mlir-tag-passes 0.1.0 tag (tag-opt)\n1 test: 1 passed, 0 failed, 0 skipped\n"
    # The plugin is loaded into the tool the test names: without it the
    # pass is unknown there.
    (bindir / "tag-opt").unlink()
    (bindir / "tag-opt").symlink_to(MLIR_TRANSLATE)
    r = run("test", d, env=env_with(bindir))
    assert r.code == 1
    assert r.out.startswith("FAIL  mlir-tag-passes 0.1.0 tag: tag-opt failed (exit code 1)\n"
                            f"  command: {bindir}/tag-opt --load-pass-plugin={d.resolve()}/lib/"
                            "linux-x86_64/libmlir_tag_passes.so "), r.out


def test_a_test_whose_tool_is_missing_fails(tmp_path):
    d = tag_passes(tmp_path, ["mlir-opt", "tag-opt"])
    r = run("test", d, env=NO_TOOL)
    assert r.code == 1
    assert r.out == (
        "FAIL  mlir-tag-passes 0.1.0 tag: tag-opt was not found on PATH\n"
        "  hint: put tag-opt (the MLIR tool the test runs, which the package's "
        "plugins name in \"tools\") on PATH\n"
        "1 test: 0 passed, 1 failed, 0 skipped\n")


def test_a_test_tool_must_be_named_by_a_plugin(tmp_path):
    d = tag_passes(tmp_path, ["mlir-opt"])
    r = run("manifest", "check", d / "ireeplugin.json")
    assert r.code == 1
    assert "/tests/0/tool: \"tag-opt\" is not a test tool\n" in r.err, r.err


def test_doctor_checks_each_named_tool(tmp_path, bindir):
    d = tag_passes(tmp_path, ["mlir-opt", "tag-opt"])
    dist = tmp_path / "dist"
    r = run("pack", d, "-o", dist, env=env_with(bindir))
    assert r.code == 0, r.out + r.err
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, dist / "mlir-tag-passes-0.1.0.ireepkg",
            env=env_with(bindir))
    assert r.code == 0, r.err
    who = "mlir-tag-passes 0.1.0 mlir_tag_passes (mlir-pass-plugin)"
    r = run("doctor", "--prefix", prefix, env=env_with(bindir))
    assert r.code == 0, r.out + r.err
    assert f"ok    {who} — checked with {MLIR_OPT}, {bindir}/tag-opt: " in r.out, r.out
    r = run("doctor", "--prefix", prefix, "--json", env=env_with(bindir))
    [c] = json.loads(r.out)["compiler_plugins"]
    assert (c["checked_with"], c["warnings"]) == (f"{MLIR_OPT}, {bindir}/tag-opt", [])

    # A named tool that is not on PATH: a warning, the others still checked.
    r = run("doctor", "--prefix", prefix, env=NO_TOOL)
    assert r.code == 0, r.out + r.err
    assert (f"ok    {who} — checked with {MLIR_OPT}: " in r.out
            and f"\nwarn  {who}: tag-opt, which it names in \"tools\", was not found "
                "on PATH: not checked with it\n" in r.out), r.out

    # A named tool that fails with the plugin loaded is named, with its output.
    (bindir / "tag-opt").unlink()
    (bindir / "tag-opt").symlink_to(MLIR_TRANSLATE)
    r = run("doctor", "--prefix", prefix, env=env_with(bindir))
    assert r.code == 1
    assert f"FAIL  {who}: with it loaded, tag-opt failed (exit status 1): " in r.out, r.out
    assert "; it printed:\n      " in r.out
    assert "Unknown command line argument '--load-pass-plugin=" in r.out


def manifest_place(d, text):
    """line:column of the manifest where `text` first appears."""
    for n, line in enumerate((d / "ireeplugin.json").read_text().splitlines(), 1):
        if text in line:
            return f"{n}:{line.index(text) + 1}"
    raise AssertionError(text)


DEMO_OPT_MAIN = """\
#include "DemoDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect>();
  ireepkg::demo::registerDemoDialect(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "demo-opt\\n", registry));
}
"""


@pytest.fixture(scope="module")
def demo_opt(tmp_path_factory):
    """An MLIR tool with the example dialect linked in (as MLIR's
    standalone-opt has its dialect)."""
    d = tmp_path_factory.mktemp("demo-opt")
    (d / "bin").mkdir()
    (d / "main.cpp").write_text(DEMO_OPT_MAIN)
    gen = BUILD / "examples" / "_build" / "mlir-dialect" / "mlir_demo_dialect.gen"
    src = REPO / "examples" / "mlir-dialect" / "src"
    proc = subprocess.run(
        [CLANGXX, "-std=c++17", "-fno-rtti", "-fno-exceptions", f"-I{src}", f"-I{gen}",
         "-isystem", "/usr/lib/llvm-22/include", d / "main.cpp", src / "DemoDialect.cpp",
         "-L/usr/lib/llvm-22/lib", "-Wl,-rpath,/usr/lib/llvm-22/lib", "-lMLIR", "-lLLVM",
         "-o", d / "bin" / "demo-opt"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return d / "bin"


def test_a_tool_with_the_dialect_built_in_aborts(tmp_path, demo_opt):
    src = EXAMPLES / "mlir-dialect"
    m = json.loads((src / "ireeplugin.json").read_text())
    compiler = m["compiler"]
    compiler["plugins"][0]["tools"] = ["mlir-opt", "demo-opt"]
    d = copy_package(src, tmp_path / "demo", compiler=compiler, tests=[{
        "name": "parse", "tool": "demo-opt", "program": "tests/f.mlir",
        "pipeline": "builtin.module(canonicalize)",
        "expected_output": [{"contains": "func.func @f"}]}])
    (d / "tests").mkdir()
    (d / "tests" / "f.mlir").write_text(PROGRAM)
    env = env_with(demo_opt)
    abort = "LLVM ERROR: Trying to register different dialects for the same namespace: ireepkg_demo"
    r = run("test", d, env=env)
    assert r.code == 1
    assert r.out.startswith("FAIL  mlir-demo-dialect 0.1.0 parse: demo-opt crashed (signal 6)\n"
                            f"  command: {demo_opt}/demo-opt --load-dialect-plugin="), r.out
    assert f"\n  output:\n    {abort}\n" in r.out, r.out
    # pack and install load the plugin into each tool it names.
    refusal = ("/compiler/plugins/0/tools/1: the MLIR plugin lib/linux-x86_64/"
               "libmlir_demo_dialect.so cannot be used in demo-opt: with it loaded, "
               f"demo-opt was killed by signal 6 (Aborted); it printed: {abort}\n"
               "  hint: a tool that registers the plugin's dialect or passes itself "
               "aborts on the second registration: link the plugin against the shared "
               "libMLIR without what the tool has, or leave demo-opt out of \"tools\"\n")
    dist = tmp_path / "dist"
    r = run("pack", d, "-o", dist, "--no-test", env=env)
    assert r.code == 1
    place = manifest_place(d, '"demo-opt"')
    assert r.err == (f"ireepkg: error: {d}/ireeplugin.json:{place}: "
                     "package 'mlir-demo-dialect': " + refusal)
    # Without demo-opt on PATH: a warning, and the archive is written.
    r = run("pack", d, "-o", dist, "--no-test", env=NO_TOOL)
    assert r.code == 0, r.err
    assert ("/compiler/plugins/0/tools/1: the MLIR plugin lib/linux-x86_64/"
            "libmlir_demo_dialect.so was not load-checked in demo-opt: it is not on "
            "PATH\n  hint: put demo-opt on PATH to check that the plugin loads into "
            "it\n") in r.err, r.err
    archive = dist / "mlir-demo-dialect-0.1.0.ireepkg"
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, archive, env=env)
    assert r.code == 1
    assert r.err.endswith(refusal), r.err
    r = run("install", "--prefix", prefix, archive, env=dict(env, IREEPKG_LOAD_CHECKS="0"))
    assert r.code == 0, r.err
    r = run("doctor", "--prefix", prefix, env=env)
    assert r.code == 1
    who = "mlir-demo-dialect 0.1.0 mlir_demo_dialect (mlir-dialect-plugin)"
    assert (f"FAIL  {who}: with it loaded, demo-opt was killed by signal 6 (Aborted); "
            f"it printed:\n      {abort}\n") in r.out, r.out
