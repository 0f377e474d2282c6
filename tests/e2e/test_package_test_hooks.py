"""Package tests run with the package, and its installed dependencies,
activated: iree-compile gets the package's compiler configuration (its
hooks), as `ireepkg exec` gives it to users, before the test's own
compile_flags.

The test program holds an assertion that always fails at run time;
IREE's `iree-util-strip-debug-ops` removes it. A compiler-configuration
package whose preprocessing hook is that pass passes its test (pack, `test`
of the directory and of the installed package, `doctor --run-tests`); the
same package with its hook changed to another pass fails them all, showing
the assertion's message. A hook IREE cannot parse (iree-compile prints the
error and exits with 0) fails the test too. A package that depends on the
hook's package passes only with that package installed in the prefix, and
one whose program calls a dependency's runtime plugin (simple-mul's
import) runs with that plugin."""
import json
import os
import pathlib
import sys

from conftest import REPO, run

VENV_BIN = pathlib.Path(sys.executable).parent
ENV = {"PATH": f"{VENV_BIN}:{os.environ['PATH']}"}

PROGRAM = """\
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %false = arith.constant false
  %never = util.optimization_barrier %false : i1
  cf.assert %never, "the preprocessing hook did not strip this assertion"
  %sum = arith.addf %a, %b : tensor<4xf32>
  return %sum : tensor<4xf32>
}
"""

TEST = {"name": "add", "tool": "iree-run-module", "program": "tests/add.mlir",
        "function": "add", "inputs": ["4xf32=1 2 3 4", "4xf32=10"],
        "expected_output": ["4xf32=11 12 13 14"]}

ASSERTION = ("    <vm>:0: FAILED_PRECONDITION; the preprocessing hook did not "
             "strip this assertion; ")


def package(root, name, pipeline=None, dependencies=None, tests=True):
    d = root / name
    (d / "tests").mkdir(parents=True)
    manifest = {"schema_version": 1, "name": name, "version": "0.1.0",
                "summary": f"{name}: a compiler configuration",
                "license": "Apache-2.0",
                "requires": {"iree": ">=3.10.0, <4.0.0"}}
    if dependencies:
        manifest["dependencies"] = dependencies
    if pipeline:
        manifest["compiler"] = {"hooks": [{"point": "preprocessing",
                                           "pipeline": pipeline}]}
    if tests:
        (d / "tests" / "add.mlir").write_text(PROGRAM)
        manifest["tests"] = [TEST]
    (d / "ireeplugin.json").write_text(json.dumps(manifest, indent=2))
    return d


def test_the_hook_makes_the_test_pass(tmp_path):
    d = package(tmp_path, "strip", "iree-util-strip-debug-ops")
    r = run("test", d, env=ENV)
    assert (r.code, r.out) == (0, "ok    strip 0.1.0 add (iree-run-module)\n"
                                  "1 test: 1 passed, 0 failed, 0 skipped\n"), r.err
    r = run("pack", d, "-o", tmp_path / "dist", env=ENV)
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("ok    strip 0.1.0 add (iree-run-module)\n")
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, tmp_path / "dist" / "strip-0.1.0.ireepkg", env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, "strip", env=ENV)
    assert (r.code, r.out) == (0, "ok    strip 0.1.0 add (iree-run-module)\n"
                                  "1 test: 1 passed, 0 failed, 0 skipped\n"), r.err
    r = run("doctor", "--run-tests", "--prefix", prefix, env=ENV)
    assert "\nPackage tests:\nok    strip 0.1.0 add (iree-run-module)\n" in r.out


def check_broken(out):
    assert out.startswith("FAIL  strip 0.1.0 add: iree-run-module failed (exit code 1)\n"
                          "  command: "), out
    assert "\n  output:\n    EXEC @add\n" + ASSERTION in out
    assert out.endswith("1 test: 0 passed, 1 failed, 0 skipped\n")


def test_a_broken_hook_fails_the_test(tmp_path):
    # A valid pipeline, but not the one that makes the program run.
    d = package(tmp_path, "strip", "canonicalize")
    r = run("test", d, env=ENV)
    assert r.code == 1
    check_broken(r.out)
    dist = tmp_path / "dist"
    r = run("pack", d, "-o", dist, env=ENV)
    assert r.code == 1
    check_broken(r.out)
    assert "ireepkg: error: 1 of the package's tests fails; no archive was written\n" in r.err
    assert not (dist / "strip-0.1.0.ireepkg").exists()
    # Installed (packed without its tests), `test` and `doctor` fail it.
    assert run("pack", d, "-o", dist, "--no-test", env=ENV).code == 0
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, dist / "strip-0.1.0.ireepkg", env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, env=ENV)
    assert r.code == 1
    check_broken(r.out)
    r = run("doctor", "--run-tests", "--prefix", prefix, env=ENV)
    assert r.code == 1
    assert "\nPackage tests:\nFAIL  strip 0.1.0 add: iree-run-module failed (exit code 1)\n" in r.out
    assert ASSERTION in r.out


def test_a_hook_iree_cannot_parse_fails_the_test(tmp_path):
    # iree-compile prints the error, compiles without the pipeline and
    # exits with 0; the program would run (no assertion in it).
    d = package(tmp_path, "strip", "no-such-pass")
    (d / "tests" / "add.mlir").write_text(
        "func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %sum = arith.addf %a, %b : tensor<4xf32>\n"
        "  return %sum : tensor<4xf32>\n}\n")
    r = run("test", d, env=ENV)
    assert r.code == 1
    assert r.out.startswith(
        "FAIL  strip 0.1.0 add: iree-compile reported an error in a pass pipeline "
        "(\"MLIR Textual PassPipeline Parser:1:1: error: 'no-such-pass' does not refer "
        "to a registered pass or pass pipeline\") and compiled without it\n"
        "  hint: fix the pipeline: the package's preprocessing hook (`ireepkg flags "
        "compiler` shows what it gives) or the test's compile_flags\n"
        "  command: "), r.out
    assert "'--iree-preprocessing-pass-pipeline=builtin.module(no-such-pass)' -o " in r.out


def test_tests_run_with_installed_dependencies(tmp_path):
    """The hook is a dependency's: the dependent's test passes with it
    installed in the prefix, and fails, naming it, without."""
    dep = package(tmp_path, "strip", "iree-util-strip-debug-ops", tests=False)
    user = package(tmp_path, "uses-strip", dependencies={"strip": "^0.1"})
    prefix = tmp_path / "prefix"
    r = run("test", "--prefix", prefix, user, env=ENV)
    assert r.code == 1
    assert r.out == (
        "FAIL  uses-strip 0.1.0 add: cannot activate the package for its tests: "
        "its dependency \"strip\" is not installed in " + str(prefix) + "\n"
        "  hint: install it (`ireepkg install strip`), or choose the prefix that has "
        "it with --prefix, so that the tests run with the package's dependencies "
        "activated\n1 test: 0 passed, 1 failed, 0 skipped\n")
    dist = tmp_path / "dist"
    assert run("pack", dep, "-o", dist, env=ENV).code == 0
    r = run("install", "--prefix", prefix, dist / "strip-0.1.0.ireepkg", env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, user, env=ENV)
    assert (r.code, r.out) == (0, "ok    uses-strip 0.1.0 add (iree-run-module)\n"
                                  "1 test: 1 passed, 0 failed, 0 skipped\n"), r.err
    # pack takes the dependencies from the prefix ireepkg uses.
    r = run("pack", user, "-o", dist, env=dict(ENV, IREEPKG_PREFIX=str(prefix)))
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("ok    uses-strip 0.1.0 add (iree-run-module)\n")
    r = run("install", "--prefix", prefix, dist / "uses-strip-0.1.0.ireepkg", env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, "uses-strip", env=ENV)
    assert (r.code, r.out) == (0, "ok    uses-strip 0.1.0 add (iree-run-module)\n"
                                  "1 test: 1 passed, 0 failed, 0 skipped\n"), r.err


def test_tests_run_with_a_dependencys_runtime_plugins(tmp_path, example_archives):
    """A package directory whose program calls simple-mul's import: its
    test, run from the directory (`test` and `pack`), gets simple-mul's
    runtime plugins as the prefix installed them."""
    d = tmp_path / "uses-mul"
    (d / "tests").mkdir(parents=True)
    (d / "tests" / "mul.mlir").write_text(
        (REPO / "examples" / "programs" / "simple_mul.mlir").read_text())
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "uses-mul", "version": "0.1.0",
        "summary": "calls simple-mul's import", "license": "Apache-2.0",
        "requires": {"iree": ">=3.10.0, <4.0.0"},
        "dependencies": {"simple-mul": "^1.2"},
        "tests": [{"name": "mul", "tool": "iree-run-module",
                   "program": "tests/mul.mlir", "function": "simple_mul",
                   "inputs": ["8xf32=1 2 3 4 5 6 7 8", "8xf32=3"],
                   "expected_output": ["8xf32=3 6 9 12 15 18 21 24"]}]},
        indent=2))
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, example_archives["simple-mul"], env=ENV)
    assert r.code == 0, r.err
    r = run("test", "--prefix", prefix, d, env=ENV)
    assert (r.code, r.out) == (0, "ok    uses-mul 0.1.0 mul (iree-run-module)\n"
                                  "1 test: 1 passed, 0 failed, 0 skipped\n"), r.out + r.err
    r = run("pack", d, "-o", tmp_path / "dist",
            env=dict(ENV, IREEPKG_PREFIX=str(prefix)))
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("ok    uses-mul 0.1.0 mul (iree-run-module)\n")


def test_the_scaffold_relies_on_its_hook(tmp_path):
    """`ireepkg new --kind compiler-config`: its test does not repeat the
    pipeline in compile_flags; it packs, and a broken hook fails it."""
    project = tmp_path / "cfg"
    assert run("new", project, "--kind", "compiler-config").code == 0
    manifest = json.loads((project / "ireeplugin.json").read_text())
    assert "compile_flags" not in manifest["tests"][0]
    r = run("pack", project, "-o", tmp_path / "dist", env=ENV)
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("ok    cfg 0.1.0 add (iree-run-module)\n")
    manifest["compiler"]["hooks"][0]["pipeline"] = "func.func(canonicalise)"
    (project / "ireeplugin.json").write_text(json.dumps(manifest))
    r = run("test", project, env=ENV)
    assert r.code == 1
    assert r.out.startswith("FAIL  cfg 0.1.0 add: iree-compile reported an error in a "
                            "pass pipeline ("), r.out
