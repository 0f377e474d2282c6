"""End-to-end tests of the MLIR plugin example packages with Debian's MLIR 22.

The build (examples/mlir-passes/, examples/mlir-dialect/) lays out three
package directories in <build>/examples/ and packs them into
<build>/examples/dist/:

  mlir-tag-passes    libmlir_tag_passes.so (mlir-pass-plugin) and the hook
                     builtin.module(func.func(ireepkg-tag-functions{tag=first}))
  mlir-tag-passes-b  the same library, hook ...{tag=second},ireepkg-count-ops
  mlir-demo-dialect  libmlir_demo_dialect.so (mlir-dialect-plugin): the
                     ireepkg_demo dialect with its op ireepkg_demo.marker

These tests install the archives into a prefix in tmp_path, then run the real
host tool, mlir-opt-22, with --load-pass-plugin / --load-dialect-plugin on
the installed libraries and the installed hooks' pipelines, and check its
output with LLVM's FileCheck. The last tests drive the same through ireepkg
(`ireepkg exec -- mlir-opt-22`, `ireepkg flags compiler --tool mlir-opt`).
With CI set, a missing mlir-opt-22 or FileCheck fails them (conftest.py).
"""
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, run

BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
EXAMPLES = BUILD / "examples"
DIST = EXAMPLES / "dist"
LLVM_BIN = pathlib.Path("/usr/lib/llvm-22/bin")
MLIR_OPT = shutil.which("mlir-opt-22") or str(LLVM_BIN / "mlir-opt")
FILECHECK = LLVM_BIN / "FileCheck"
LLVM_NM = LLVM_BIN / "llvm-nm"
TIMEOUT = 60

PASSES_A, PASSES_B, DIALECT = "mlir-tag-passes", "mlir-tag-passes-b", "mlir-demo-dialect"
PACKAGE_DIRS = {PASSES_A: EXAMPLES / "mlir-passes",
                PASSES_B: EXAMPLES / "mlir-passes-b",
                DIALECT: EXAMPLES / "mlir-dialect"}
SOURCE_MANIFESTS = {
    PASSES_A: REPO / "examples" / "mlir-passes" / "ireeplugin.json",
    PASSES_B: REPO / "examples" / "mlir-passes" / "variant-b" / "ireeplugin.json",
    DIALECT: REPO / "examples" / "mlir-dialect" / "ireeplugin.json",
}
ENTRY_POINTS = {"mlir-pass-plugin": "mlirGetPassPluginInfo",
                "mlir-dialect-plugin": "mlirGetDialectPluginInfo"}
LOAD_FLAGS = {"mlir-pass-plugin": "--load-pass-plugin",
              "mlir-dialect-plugin": "--load-dialect-plugin"}

ON_LINUX_X86_64 = (sys.platform.startswith("linux") and
                   platform.machine().lower() in ("x86_64", "amd64"))
pytestmark = [
    pytest.mark.skipif(not ON_LINUX_X86_64,
                       reason="the MLIR plugin examples are built for linux-x86_64 only"),
    pytest.mark.skipif(not pathlib.Path(MLIR_OPT).exists() or not FILECHECK.exists(),
                       reason="needs mlir-opt-22 and FileCheck (mlir-22-tools)"),
]

# Two functions: @add has three operations (two of them arith), @empty one.
FUNCTIONS = """\
func.func @add(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  %1 = arith.muli %0, %b : i32
  return %1 : i32
}
func.func @empty() {
  return
}
"""

# The same with two ireepkg_demo.marker ops: needs the dialect plugin.
WITH_MARKERS = """\
func.func @add(%a: i32, %b: i32) -> i32 {
  ireepkg_demo.marker "inputs" %a, %b : i32, i32
  %0 = arith.addi %a, %b : i32
  ireepkg_demo.marker "after-add"
  return %0 : i32
}
"""


#===-----------------------------------------------------------------------===#
# Helpers
#===-----------------------------------------------------------------------===#

def archive(name):
    path = DIST / f"{name}-0.1.0.ireepkg"
    assert path.is_file(), f"{path} is missing: build the project (ninja -C build)"
    return path


def install(prefix, *names):
    """Installs the example archives, in this order (= activation order)."""
    for name in names:
        r = run("install", "--prefix", prefix, archive(name), timeout=TIMEOUT)
        assert r.code == 0, r.err
    return prefix


def installed(prefix):
    """name -> entry of `ireepkg list --json` (in activation order)."""
    r = run("list", "--prefix", prefix, "--json", timeout=TIMEOUT)
    assert r.code == 0, r.err
    return {p["name"]: p for p in json.loads(r.out)["packages"]}


def plugin_library(package):
    """The installed package's one compiler plugin: (kind, absolute library)."""
    (plugin,) = package["compiler_plugins"]
    return plugin["kind"], pathlib.Path(package["path"]) / plugin["library"]["linux-x86_64"]


def hook_pipeline(package):
    (hook,) = [h for h in package["hooks"] if h["point"] == "mlir-pipeline"]
    return hook["pipeline"]


def compose(*pipelines):
    """Several `builtin.module(...)` hook pipelines as one, in order."""
    inner = []
    for p in pipelines:
        m = re.fullmatch(r"builtin\.module\((.*)\)", p)
        assert m, p
        inner.append(m.group(1))
    return "builtin.module(" + ",".join(inner) + ")"


def mlir_opt(tmp_path, source, *args):
    src = tmp_path / "input.mlir"
    src.write_text(source)
    return subprocess.run([MLIR_OPT, *map(str, args), str(src)],
                          capture_output=True, text=True, timeout=TIMEOUT)


def filecheck(tmp_path, output, checks, name="checks"):
    """Runs FileCheck with `checks` (CHECK lines) against `output`."""
    check_file = tmp_path / f"{name}.txt"
    check_file.write_text(checks)
    proc = subprocess.run([str(FILECHECK), str(check_file)], input=output,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """A prefix with all three packages, activated A, B, dialect."""
    return install(tmp_path_factory.mktemp("prefix"), PASSES_A, PASSES_B, DIALECT)


@pytest.fixture(scope="module")
def packages(prefix):
    return installed(prefix)


#===-----------------------------------------------------------------------===#
# The package directories and archives
#===-----------------------------------------------------------------------===#

@pytest.mark.parametrize("name", sorted(PACKAGE_DIRS))
def test_package_directory_matches_manifest(name):
    pkg = PACKAGE_DIRS[name]
    manifest = json.loads((pkg / "ireeplugin.json").read_text())
    assert manifest == json.loads(SOURCE_MANIFESTS[name].read_text())
    assert (manifest["name"], manifest["version"]) == (name, "0.1.0")
    files = sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*") if p.is_file())
    (plugin,) = manifest["compiler"]["plugins"]
    assert files == sorted(["ireeplugin.json", plugin["library"]["linux-x86_64"]])
    assert plugin["entry_point"] == ENTRY_POINTS[plugin["kind"]]


@pytest.mark.parametrize("name", sorted(PACKAGE_DIRS))
def test_library_exports_only_the_entry_point(name):
    pkg = PACKAGE_DIRS[name]
    (plugin,) = json.loads((pkg / "ireeplugin.json").read_text())["compiler"]["plugins"]
    lib = pkg / plugin["library"]["linux-x86_64"]
    proc = subprocess.run([str(LLVM_NM), "-D", "--defined-only", "--format=just-symbols",
                           str(lib)], capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [plugin["entry_point"]]
    needed = subprocess.run([str(LLVM_BIN / "llvm-readelf"), "-d", str(lib)],
                            capture_output=True, text=True, timeout=TIMEOUT).stdout
    assert "[libMLIR.so.22.1]" in needed, "must share mlir-opt-22's libMLIR"


def test_archives_install_in_order(packages):
    assert list(packages) == [PASSES_A, PASSES_B, DIALECT]
    for name, package in packages.items():
        kind, lib = plugin_library(package)
        assert lib.is_file(), lib
        assert kind == ("mlir-dialect-plugin" if name == DIALECT else "mlir-pass-plugin")
    assert hook_pipeline(packages[PASSES_A]) == \
        "builtin.module(func.func(ireepkg-tag-functions{tag=first}))"
    assert hook_pipeline(packages[PASSES_B]) == \
        "builtin.module(func.func(ireepkg-tag-functions{tag=second},ireepkg-count-ops))"
    assert not packages[DIALECT]["hooks"]


#===-----------------------------------------------------------------------===#
# The pass plugin in mlir-opt-22
#===-----------------------------------------------------------------------===#

def test_pass_plugin_runs_its_hook_pipeline(tmp_path, packages):
    _, lib = plugin_library(packages[PASSES_A])
    proc = mlir_opt(tmp_path, FUNCTIONS, f"--load-pass-plugin={lib}",
                    f"--pass-pipeline={hook_pipeline(packages[PASSES_A])}")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    attributes {ireepkg.tags = ["first"]}
CHECK-NEXT:    arith.addi
CHECK-LABEL: func.func @empty()
CHECK-SAME:    attributes {ireepkg.tags = ["first"]}
CHECK-NOT:   ireepkg.op_count
""")


def test_two_packages_in_activation_order(tmp_path, packages):
    a, b = packages[PASSES_A], packages[PASSES_B]
    load = [f"--load-pass-plugin={plugin_library(p)[1]}" for p in (a, b)]
    # Each package ships its own copy of the library; both load side by side.
    proc = mlir_opt(tmp_path, FUNCTIONS, *load,
                    f"--pass-pipeline={compose(hook_pipeline(a), hook_pipeline(b))}")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    ireepkg.op_count = 3 : i64, ireepkg.tags = ["first", "second"]
CHECK-LABEL: func.func @empty()
CHECK-SAME:    ireepkg.op_count = 1 : i64, ireepkg.tags = ["first", "second"]
""", "a_then_b")

    proc = mlir_opt(tmp_path, FUNCTIONS, *reversed(load),
                    f"--pass-pipeline={compose(hook_pipeline(b), hook_pipeline(a))}")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    ireepkg.op_count = 3 : i64, ireepkg.tags = ["second", "first"]
CHECK-LABEL: func.func @empty()
CHECK-SAME:    ireepkg.op_count = 1 : i64, ireepkg.tags = ["second", "first"]
""", "b_then_a")


def test_pass_options(tmp_path, packages):
    _, lib = plugin_library(packages[PASSES_A])
    proc = mlir_opt(tmp_path, FUNCTIONS, f"--load-pass-plugin={lib}",
                    "--pass-pipeline=builtin.module(func.func("
                    "ireepkg-tag-functions,ireepkg-count-ops{dialect=arith}))")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    ireepkg.op_count = 2 : i64, ireepkg.tags = ["ireepkg"]
CHECK-LABEL: func.func @empty()
CHECK-SAME:    ireepkg.op_count = 0 : i64, ireepkg.tags = ["ireepkg"]
""")


@pytest.mark.parametrize("pipeline,error", [
    ("builtin.module(func.func(ireepkg-tag-functions{tag=}))",
     "ireepkg-tag-functions: option 'tag' must not be empty"),
    ("builtin.module(func.func(ireepkg-tag-functions{colour=red}))",
     "no such option colour"),
])
def test_bad_pass_options_are_errors(tmp_path, packages, pipeline, error):
    _, lib = plugin_library(packages[PASSES_A])
    proc = mlir_opt(tmp_path, FUNCTIONS, f"--load-pass-plugin={lib}",
                    f"--pass-pipeline={pipeline}")
    assert proc.returncode != 0
    assert error in proc.stderr, proc.stderr


def test_passes_are_unknown_without_the_plugin(tmp_path, packages):
    proc = mlir_opt(tmp_path, FUNCTIONS,
                    f"--pass-pipeline={hook_pipeline(packages[PASSES_A])}")
    assert proc.returncode != 0
    assert "'ireepkg-tag-functions' does not refer to a registered pass" in proc.stderr, \
        proc.stderr


#===-----------------------------------------------------------------------===#
# The dialect plugin in mlir-opt-22
#===-----------------------------------------------------------------------===#

def test_dialect_plugin_parses_the_custom_op(tmp_path, packages):
    _, lib = plugin_library(packages[DIALECT])
    proc = mlir_opt(tmp_path, WITH_MARKERS, f"--load-dialect-plugin={lib}")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    %[[A:.*]]: i32, %[[B:.*]]: i32)
CHECK-NEXT:    ireepkg_demo.marker "inputs" %[[A]], %[[B]] : i32, i32
CHECK-NEXT:    %[[SUM:.*]] = arith.addi %[[A]], %[[B]] : i32
CHECK-NEXT:    ireepkg_demo.marker "after-add"{{$}}
CHECK-NEXT:    return %[[SUM]] : i32
""")
    # The generic form names the registered op and its label attribute.
    proc = mlir_opt(tmp_path, WITH_MARKERS, f"--load-dialect-plugin={lib}",
                    "--mlir-print-op-generic")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK: "ireepkg_demo.marker"(%{{.*}}, %{{.*}}) <{label = "inputs"}> : (i32, i32) -> ()
CHECK: "ireepkg_demo.marker"() <{label = "after-add"}> : () -> ()
""", "generic")


def test_dialect_plugin_verifies_the_op(tmp_path, packages):
    _, lib = plugin_library(packages[DIALECT])
    proc = mlir_opt(tmp_path, 'ireepkg_demo.marker ""\n', f"--load-dialect-plugin={lib}")
    assert proc.returncode != 0
    assert "'ireepkg_demo.marker' op label must not be empty" in proc.stderr, proc.stderr


def test_dialect_is_unknown_without_the_plugin(tmp_path):
    proc = mlir_opt(tmp_path, WITH_MARKERS)
    assert proc.returncode != 0
    assert "Dialect `ireepkg_demo' not found for custom op 'ireepkg_demo.marker'" \
        in proc.stderr, proc.stderr


def test_dialect_and_pass_plugins_together(tmp_path, packages):
    load = [f"{LOAD_FLAGS[kind]}={lib}"
            for kind, lib in map(plugin_library, packages.values())]
    proc = mlir_opt(tmp_path, WITH_MARKERS, *load,
                    "--pass-pipeline=builtin.module(func.func("
                    "ireepkg-count-ops{dialect=ireepkg_demo}))")
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    attributes {ireepkg.op_count = 2 : i64}
CHECK-NEXT:    ireepkg_demo.marker "inputs"
""")


#===-----------------------------------------------------------------------===#
# Through ireepkg: `flags compiler --tool mlir-opt` and `exec -- mlir-opt-22`
#===-----------------------------------------------------------------------===#

TAGS_A_B = """\
CHECK-LABEL: func.func @add(
CHECK-SAME:    ireepkg.op_count = 4 : i64, ireepkg.tags = ["first", "second"]
CHECK-NEXT:    ireepkg_demo.marker "inputs"
"""
TAGS_B_A = TAGS_A_B.replace('["first", "second"]', '["second", "first"]')


def test_flags_compiler_for_mlir_opt(tmp_path, prefix, packages):
    r = run("flags", "compiler", "--tool", "mlir-opt", "--prefix", prefix,
            timeout=TIMEOUT)
    assert r.code == 0, r.err
    flags = r.out.splitlines()
    libs = {name: plugin_library(p)[1] for name, p in packages.items()}
    loads = [f for f in flags if f.startswith(("--load-pass-plugin=",
                                               "--load-dialect-plugin="))]
    assert f"--load-pass-plugin={libs[PASSES_A]}" in loads
    assert f"--load-pass-plugin={libs[PASSES_B]}" in loads
    assert f"--load-dialect-plugin={libs[DIALECT]}" in loads
    assert loads.index(f"--load-pass-plugin={libs[PASSES_A]}") < \
        loads.index(f"--load-pass-plugin={libs[PASSES_B]}")
    assert len([f for f in flags if f.startswith("--pass-pipeline=")]) == 1
    # The flags, as printed, make mlir-opt-22 run both hooks in order.
    proc = mlir_opt(tmp_path, WITH_MARKERS, *flags)
    assert proc.returncode == 0, proc.stderr
    filecheck(tmp_path, proc.stdout, TAGS_A_B)


def test_exec_mlir_opt_runs_hooks_in_activation_order(tmp_path, prefix):
    src = tmp_path / "input.mlir"
    src.write_text(WITH_MARKERS)
    r = run("exec", "--prefix", prefix, "--", "mlir-opt-22", src, timeout=TIMEOUT)
    assert r.code == 0, r.err
    filecheck(tmp_path, r.out, TAGS_A_B, "a_then_b")

    # Activated the other way round (installed B first), the tags flip.
    reordered = install(tmp_path / "reordered", PASSES_B, PASSES_A, DIALECT)
    assert list(installed(reordered)) == [PASSES_B, PASSES_A, DIALECT]
    r = run("exec", "--prefix", reordered, "--", "mlir-opt-22", src, timeout=TIMEOUT)
    assert r.code == 0, r.err
    filecheck(tmp_path, r.out, TAGS_B_A, "b_then_a")


def test_reordering_plugins_json_flips_the_passes(tmp_path):
    """In a project, plugins.json's order is the activation order: swapping
    the two pass packages there (and installing again) swaps their passes."""
    project = tmp_path / "project"
    project.mkdir()
    src = tmp_path / "input.mlir"
    src.write_text(WITH_MARKERS)
    env = {"IREEPKG_PREFIX": ""}

    def write_order(*names):
        (project / "plugins.json").write_text(json.dumps({
            "schema_version": 1,
            "plugins": [{"name": n, "version": "^0.1"} for n in names]}, indent=2))

    def in_project(*args):
        return run(*args, cwd=project, env=env, timeout=TIMEOUT)

    archives = [archive(n) for n in (PASSES_A, PASSES_B, DIALECT)]
    write_order(PASSES_A, PASSES_B, DIALECT)
    assert in_project("install", *archives).code == 0
    r = in_project("exec", "--", "mlir-opt-22", src)
    assert r.code == 0, r.err
    filecheck(tmp_path, r.out, TAGS_A_B, "project_a_b")

    write_order(PASSES_B, PASSES_A, DIALECT)
    r = in_project("install", *archives)
    assert r.code == 0, r.err
    assert "activation order updated from plugins.json" in r.out
    r = in_project("exec", "--", "mlir-opt-22", src)
    assert r.code == 0, r.err
    filecheck(tmp_path, r.out, TAGS_B_A, "project_b_a")


#===-----------------------------------------------------------------------===#
# exec: the kind of tool comes from its --help, and the user's passes win
#===-----------------------------------------------------------------------===#

def mlir_opt_named(tmp_path, name):
    """mlir-opt-22 under another name, as a home-built MLIR tool would be."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / name
    tool.symlink_to(os.path.realpath(MLIR_OPT))
    return tool


@pytest.mark.parametrize("name", ["my-mlir-opt", "standalone-opt"])
def test_exec_knows_an_mlir_tool_by_its_help_not_its_name(tmp_path, prefix, name):
    tool = mlir_opt_named(tmp_path, name)
    src = tmp_path / "input.mlir"
    src.write_text(WITH_MARKERS)
    env = {"IREEPKG_CACHE_DIR": str(tmp_path / "cache")}
    r = run("exec", "--prefix", prefix, "--", tool, src, env=env, timeout=TIMEOUT)
    assert r.code == 0, r.err
    assert r.err == ""
    filecheck(tmp_path, r.out, TAGS_A_B)
    # Probed once, and remembered by path, size and modification time.
    cached = json.loads((tmp_path / "cache" / "tools.json").read_text())
    assert list(cached.values()) == ["mlir"]
    assert list(cached)[0].startswith(f"{tool}:")


NO_TAGS = """\
CHECK-LABEL: func.func @add(
CHECK-NOT:     ireepkg.tags
CHECK:         ireepkg_demo.marker "inputs"
"""


@pytest.mark.parametrize("own", [
    ["--pass-pipeline=builtin.module(func.func(ireepkg-count-ops))"],
    ["-p", "builtin.module(func.func(ireepkg-count-ops))"],
    ["--canonicalize"],
    ["--cse", "--mlir-print-op-generic"],
])
def test_exec_leaves_out_the_packages_pipeline_when_the_user_gives_passes(
        tmp_path, prefix, own):
    src = tmp_path / "input.mlir"
    src.write_text(WITH_MARKERS)
    r = run("exec", "--prefix", prefix, "--", "mlir-opt-22", *own, src, timeout=TIMEOUT)
    assert r.code == 0, r.err
    composed = "builtin.module(func.func(ireepkg-tag-functions{tag=first}),func.func(" \
               "ireepkg-tag-functions{tag=second},ireepkg-count-ops))"
    assert r.err == (f"ireepkg: note: your arguments choose the passes ({own[0]}), so the "
                     f"packages' --pass-pipeline={composed} is left out; their plugins are "
                     "still loaded\n")
    if own[0] == "--cse":
        assert '"ireepkg_demo.marker"' in r.out and "ireepkg.tags" not in r.out
    else:
        filecheck(tmp_path, r.out, NO_TAGS)
    if "ireepkg-count-ops" in own[-1]:
        assert "ireepkg.op_count = 4 : i64" in r.out  # the plugin's pass, the user's pipeline


def test_exec_with_an_explicit_tool_kind(tmp_path, prefix):
    # A wrapper whose --help says nothing ireepkg knows.
    wrapper = tmp_path / "opt-wrapper"
    wrapper.write_text('#!/bin/sh\ncase "$1" in --help) echo "usage: opt-wrapper";; '
                       f'*) exec {MLIR_OPT} "$@";; esac\n')
    wrapper.chmod(0o755)
    src = tmp_path / "input.mlir"
    src.write_text(WITH_MARKERS)
    r = run("exec", "--prefix", prefix, "--", wrapper, src, timeout=TIMEOUT)
    assert r.code == 1
    assert r.err.splitlines() == [
        f"ireepkg: error: cannot tell what kind of tool {wrapper} is: its --help output is "
        "not that of an IREE runtime or compiler tool, an MLIR tool or Python (it printed: "
        "usage: opt-wrapper)",
        "  hint: say what it is with --tool-kind (runtime, compiler, mlir or python)"]
    r = run("exec", "--prefix", prefix, "--tool-kind", "mlir", "--", wrapper, src,
            timeout=TIMEOUT)
    assert r.code == 0, r.err
    filecheck(tmp_path, r.out, TAGS_A_B)
    r = run("exec", "--prefix", prefix, "--tool-kind", "mlr", "--", wrapper, src)
    assert r.code == 2
    assert r.err.splitlines()[0] == \
        "ireepkg: error: unknown tool kind 'mlr' (did you mean \"mlir\"?)"
