"""Hook pass pipelines checked with MLIR's own parser (ireepkg-mlir-check).

`pack` and `install` run ireepkg-mlir-check, which links Debian's libMLIR 22,
registers MLIR's passes, loads MLIR pass plugins and parses every pass it
knows with MLIR's pass pipeline parser. These tests pack and install small
packages whose hooks hold:

  - MLIR passes, valid (`canonicalize`, `cse`,
    `func.func(canonicalize{max-iterations=3})`) and not (an unknown option,
    a bad option value, a pass nested on the wrong operation);
  - passes of the example MLIR pass plugin (examples/mlir-passes), with a
    good and a bad option, with and without the plugin loaded (the package's
    own at pack; the prefix's, installed or incoming, at install);
  - IREE's passes, which MLIR does not know: not checked, and accepted;

and check the exact messages (file, line:column, package, JSON pointer,
column in the pipeline), the "pipeline_check" JSON report, plugins that
crash or hang, and what happens without the checker.
"""
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, EXAMPLES, data_package, make_writable, run, snapshot

CHECKER = BUILD / "bin" / "ireepkg-mlir-check"
CLANG = shutil.which("clang-22")
ON_LINUX_X86_64 = (sys.platform.startswith("linux") and
                   platform.machine().lower() in ("x86_64", "amd64"))
TAG_PASSES = EXAMPLES / "mlir-passes"  # the built mlir-tag-passes package
TAG_LIBRARY = "lib/linux-x86_64/libmlir_tag_passes.so"

pytestmark = pytest.mark.skipif(
    not CHECKER.exists(), reason="ireepkg-mlir-check is not built (needs libmlir-22-dev)")
needs_tag_plugin = pytest.mark.skipif(
    not ON_LINUX_X86_64 or not (TAG_PASSES / TAG_LIBRARY).exists(),
    reason="the example MLIR pass plugin is built for linux-x86_64 only")
needs_clang = pytest.mark.skipif(not CLANG or not ON_LINUX_X86_64,
                                 reason="needs clang-22 on linux-x86_64")


@pytest.fixture(autouse=True)
def no_iree_check(monkeypatch):
    """These tests are about the MLIR check; the check against IREE
    (test_iree_pipeline_check.py) would add its own findings."""
    monkeypatch.setenv("IREEPKG_IREE_OPT", "off")


@pytest.fixture(scope="module")
def mlir():
    """"MLIR 22.1.x", as messages name it."""
    out = subprocess.run([CHECKER, "--version"], capture_output=True, text=True,
                         check=True).stdout
    return out[out.index("(") + 1:out.index(")")]


#===-----------------------------------------------------------------------===#
# Helpers
#===-----------------------------------------------------------------------===#

def hooks_package(root, name, hooks, version="1.0.0", plugins=None, files=None):
    """A package whose manifest has `hooks` (list of (point, pipeline)) and
    compiler `plugins`; returns its directory."""
    d = data_package(root, name, version, files=files)
    m = json.loads((d / "ireeplugin.json").read_text())
    m["compiler"] = {"hooks": [{"point": p, "pipeline": text} for p, text in hooks]}
    if plugins:
        m["compiler"]["plugins"] = plugins
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return d


def with_tag_plugin(root, name, hooks, version="1.0.0"):
    """A package shipping the example pass plugin, with `hooks`."""
    d = root / f"{name}-{version}"
    (d / "lib" / "linux-x86_64").mkdir(parents=True)
    shutil.copy(TAG_PASSES / TAG_LIBRARY, d / TAG_LIBRARY)
    m = json.loads((TAG_PASSES / "ireeplugin.json").read_text())
    m.update(name=name, version=version)
    m["compiler"]["hooks"] = [{"point": p, "pipeline": text} for p, text in hooks]
    if not hooks:
        del m["compiler"]["hooks"]
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return d


def position(manifest_text, index):
    """line:column of the value of the index-th "pipeline" in the text."""
    at = -1
    for _ in range(index + 1):
        at = manifest_text.index('"pipeline": ', at + 1)
    value = at + len('"pipeline": ')
    line = manifest_text.count("\n", 0, value) + 1
    column = value - (manifest_text.rfind("\n", 0, value) + 1) + 1
    return f"{line}:{column}"


def where(pkg_dir, name, hook=0, file=None):
    """`file:line:col: package 'name': /compiler/hooks/N/pipeline:`"""
    text = (pkg_dir / "ireeplugin.json").read_text()
    file = file or str(pkg_dir / "ireeplugin.json")
    return f"{file}:{position(text, hook)}: package '{name}': /compiler/hooks/{hook}/pipeline:"


def pack(pkg_dir, out, *extra, env=None):
    return run("pack", pkg_dir, "-o", out, "--json", *extra, env=env)


def packed(pkg_dir, out, env=None):
    r = pack(pkg_dir, out, env=env)
    assert r.code == 0, r.err
    return json.loads(r.out)


def build_plugin(pkg_dir, name, body):
    """A C "MLIR pass plugin" whose registration callback runs `body`."""
    lib = pkg_dir / "lib" / "linux-x86_64" / f"lib{name}.so"
    lib.parent.mkdir(parents=True, exist_ok=True)
    src = pkg_dir.parent / f"{name}.c"
    src.write_text(
        "#include <stdint.h>\n#include <unistd.h>\n"
        "struct Info { uint32_t api; const char *name, *version; void (*cb)(void); };\n"
        f"static void reg(void) {{ {body} }}\n"
        '__attribute__((visibility("default"))) struct Info mlirGetPassPluginInfo(void) {\n'
        f'  struct Info i = {{1, "{name}", "0", reg}}; return i; }}\n')
    subprocess.run([CLANG, "-shared", "-fPIC", src, "-o", lib], check=True)
    return f"lib/linux-x86_64/lib{name}.so"


def plugin_entry(library):
    return [{"id": "passes", "kind": "mlir-pass-plugin",
             "library": {"linux-x86_64": library}}]


#===-----------------------------------------------------------------------===#
# pack: MLIR's own passes
#===-----------------------------------------------------------------------===#

def test_valid_mlir_pipelines_are_checked(tmp_path):
    d = hooks_package(tmp_path, "good", [
        ("preprocessing", "canonicalize,cse"),
        ("preprocessing", "func.func(canonicalize{max-iterations=3})"),
        ("mlir-pipeline", "builtin.module(func.func(cse), canonicalize{top-down=false})"),
        ("executable-preprocessing", "canonicalize{region-simplify=aggressive}")])
    j = packed(d, tmp_path / "out")
    check = j["pipeline_check"]
    assert check["ran"] and check["checker"] == str(CHECKER)
    assert check["mlir_version"].startswith("22.")
    assert [(p["pointer"], p["point"], p["status"], p["errors"]) for p in check["pipelines"]] == [
        ("/compiler/hooks/0/pipeline", "preprocessing", "checked", 0),
        ("/compiler/hooks/1/pipeline", "preprocessing", "checked", 0),
        ("/compiler/hooks/2/pipeline", "mlir-pipeline", "checked", 0),
        ("/compiler/hooks/3/pipeline", "executable-preprocessing", "checked", 0)]
    assert check["pipelines"][0]["package"] == "good"
    assert check["plugins"] == []


@pytest.mark.parametrize("pipeline, message, hint", [
    ("canonicalize{no-such-option=1}",
     'pass "canonicalize" has no option "no-such-option" (at column 14)',
     'the options of "canonicalize" are: disable-patterns, enable-patterns, '
     "max-iterations, max-num-rewrites, region-simplify, test-convergence, top-down"),
    ("cse,func.func(canonicalize{max-iteration=2})",
     'pass "canonicalize" has no option "max-iteration"; did you mean "max-iterations"? '
     "(at column 28)", None),
    ("func.func(cse,canonicalize{max-iterations=many})",
     'invalid value for option "max-iterations" of pass "canonicalize": "many" is not '
     "an integer (at column 28)", None),
    ("builtin.module(canonicalize{top-down=maybe})",
     'invalid value for option "top-down" of pass "canonicalize": "maybe" is not a '
     "boolean (at column 29)", "write true or false (or 1 or 0)"),
    ("canonicalize{region-simplify=always}",
     'invalid value for option "region-simplify" of pass "canonicalize": "always" is '
     "not one of its values (at column 14)",
     'the values of "region-simplify" are: disabled, normal, aggressive'),
    ("cse, promote-buffers-to-stack",
     'pass "promote-buffers-to-stack" runs on "func.func" operations, but here it is '
     'nested on "builtin.module" (at column 6)',
     "nest it in the operation it runs on, as in func.func(promote-buffers-to-stack)"),
    ("cse{aggressive=1}",
     'pass "cse" has no option "aggressive" (at column 5)', '"cse" takes no options'),
    # A pipeline inside a pipeline-valued option.
    ("inline{op-pipelines=func.func(cse{x=1})}",
     'in the options of "inline": pass "cse" has no option "x" (at column 1)',
     '"cse" takes no options'),
    # MLIR stops with a fatal error on this one (mlir-opt-22 would too): the
    # checker's worker dies, and the pipeline is reported.
    ("func.func(sparsifier)",
     "while adding pass \"sparsifier\", MLIR's pass pipeline parser hit an LLVM fatal "
     "error: Can't add pass 'SparsificationAndBufferization' restricted to "
     "'builtin.module' on a PassManager intended to run on 'func.func', did you intend "
     "to nest? (at column 11)",
     'nest "sparsifier" in the operation its passes run on'),
])
def test_mlir_refuses_a_pipeline(tmp_path, mlir, pipeline, message, hint):
    d = hooks_package(tmp_path, "bad", [("preprocessing", "canonicalize"),
                                        ("preprocessing", pipeline)])
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1, r
    lines = r.err.splitlines()
    assert lines[0] == (f"ireepkg: error: {where(d, 'bad', hook=1)} "
                        f"invalid pass pipeline ({mlir}): {message}")
    if hint:
        assert lines[1] == f"  hint: {hint}"
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_every_error_of_every_pipeline_is_reported(tmp_path, mlir):
    d = hooks_package(tmp_path, "bad", [
        ("preprocessing", "canonicalize{a=1 max-iterations=x}"),
        ("mlir-pipeline", "builtin.module(func.func(cse{b=2}))")])
    r = run("pack", d, "-o", tmp_path / "out", "--json")
    assert r.code == 1
    diags = json.loads(r.out)["error"]["diagnostics"]
    assert [(x["pointer"], x["message"]) for x in diags] == [
        ("/compiler/hooks/0/pipeline",
         f'invalid pass pipeline ({mlir}): pass "canonicalize" has no option "a" (at column 14)'),
        ("/compiler/hooks/1/pipeline",
         f'invalid pass pipeline ({mlir}): pass "cse" has no option "b" (at column 30)')]


#===-----------------------------------------------------------------------===#
# pack: passes MLIR does not know
#===-----------------------------------------------------------------------===#

def test_iree_passes_are_not_checked_and_accepted(tmp_path):
    d = hooks_package(tmp_path, "iree", [
        ("preprocessing", "iree-preprocessing-convert-conv2d-to-img2col,"
                          "iree-flow-fold-unit-extent-dims{whatever=1}"),
        ("preprocessing", "func.func(iree-codegen-foo),canonicalize{max-iterations=2}"),
        ("preprocessing", "inline{op-pipelines=func.func(iree-codegen-bar)}")])
    r = pack(d, tmp_path / "out")
    assert r.code == 0, r.err
    assert r.err == ""  # nothing to warn about
    pipelines = json.loads(r.out)["pipeline_check"]["pipelines"]
    assert [(p["status"], p["unknown_passes"]) for p in pipelines] == [
        ("not-checked", ["iree-preprocessing-convert-conv2d-to-img2col",
                         "iree-flow-fold-unit-extent-dims"]),
        ("partial", ["iree-codegen-foo"]),
        ("partial", ["iree-codegen-bar"])]


def test_the_known_passes_of_a_partly_known_pipeline_are_checked(tmp_path, mlir):
    d = hooks_package(tmp_path, "mixed", [
        ("preprocessing", "iree-flow-foo,canonicalize{max-iterations=-}")])
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"ireepkg: error: {where(d, 'mixed')} invalid pass pipeline ({mlir}): "
        'invalid value for option "max-iterations" of pass "canonicalize": "-" is not an '
        "integer (at column 28)")


def test_a_near_miss_of_an_mlir_pass_is_a_warning(tmp_path, mlir):
    d = hooks_package(tmp_path, "typo", [("preprocessing", "cse,canonicalise")])
    r = pack(d, tmp_path / "out")
    assert r.code == 0, r.err
    assert r.err.splitlines() == [
        f"ireepkg: warning: {where(d, 'typo')} pass \"canonicalise\" is not known to "
        f'{mlir} or to a loaded pass plugin; did you mean "canonicalize"? (at column 5)',
        '  hint: passes MLIR does not know are not checked; if "canonicalise" comes from '
        "IREE or from a pass plugin that is not installed here, ignore this warning"]
    assert json.loads(r.out)["pipeline_check"]["pipelines"][0]["status"] == "partial"


#===-----------------------------------------------------------------------===#
# pack: the example MLIR pass plugin
#===-----------------------------------------------------------------------===#

@needs_tag_plugin
def test_plugin_passes_are_checked_with_the_packages_own_plugin(tmp_path):
    d = with_tag_plugin(tmp_path, "tags", [
        ("mlir-pipeline", "builtin.module(func.func(ireepkg-tag-functions{tag=x},"
                          "ireepkg-count-ops{dialect=arith}))")])
    check = packed(d, tmp_path / "out")["pipeline_check"]
    assert check["pipelines"][0]["status"] == "checked"
    (plugin,) = check["plugins"]
    assert plugin["loaded"] and plugin["name"] == "mlir-tag-passes"
    assert plugin["passes"] == ["ireepkg-count-ops", "ireepkg-tag-functions"]
    assert plugin["path"] == str(d / TAG_LIBRARY)


@needs_tag_plugin
def test_a_bad_plugin_pass_option_is_refused(tmp_path, mlir):
    d = with_tag_plugin(tmp_path, "tags", [
        ("mlir-pipeline", "builtin.module(func.func(ireepkg-tag-functions{colour=red}))")])
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1
    assert r.err.splitlines() == [
        f"ireepkg: error: {where(d, 'tags')} invalid pass pipeline ({mlir}): pass "
        '"ireepkg-tag-functions" has no option "colour" (at column 48)',
        '  hint: the options of "ireepkg-tag-functions" are: tag']


@needs_tag_plugin
def test_plugin_pass_nested_on_the_wrong_operation(tmp_path, mlir):
    d = with_tag_plugin(tmp_path, "tags", [("mlir-pipeline", "ireepkg-tag-functions")])
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"ireepkg: error: {where(d, 'tags')} invalid pass pipeline ({mlir}): pass "
        '"ireepkg-tag-functions" runs on "func.func" operations, but here it is nested on '
        '"builtin.module" (at column 1)')


def test_plugin_passes_without_the_plugin_are_not_checked(tmp_path):
    d = hooks_package(tmp_path, "uses-tags", [
        ("mlir-pipeline", "builtin.module(func.func(ireepkg-tag-functions{colour=red}))")])
    r = pack(d, tmp_path / "out")
    assert r.code == 0, r.err
    (p,) = json.loads(r.out)["pipeline_check"]["pipelines"]
    assert (p["status"], p["unknown_passes"]) == ("not-checked", ["ireepkg-tag-functions"])


#===-----------------------------------------------------------------------===#
# pack: plugins that fail
#===-----------------------------------------------------------------------===#

@needs_clang
@pytest.mark.parametrize("body, what", [
    ("*(volatile int *)0 = 1;", "while it was loaded, the plugin crashed (SIGSEGV)"),
    ("_exit(3);", "while it was loaded, the plugin ended the process (exit status 3)"),
    ("for (;;) sleep(1);", "while it was loaded, the plugin did not finish within 1000 ms "
                           "(stopped)"),
])
def test_a_plugin_that_crashes_or_hangs_is_the_plugins_failure(tmp_path, mlir, body, what):
    d = hooks_package(tmp_path, "broken", [("preprocessing", "canonicalize{bogus=1}")])
    lib = build_plugin(d, "broken", body)
    m = json.loads((d / "ireeplugin.json").read_text())
    m["compiler"]["plugins"] = plugin_entry(lib)
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    r = run("pack", d, "-o", tmp_path / "out", env={"IREEPKG_MLIR_CHECK_TIMEOUT": "1"},
            timeout=60)
    assert r.code == 1
    lines = r.err.splitlines()
    text = (d / "ireeplugin.json").read_text()
    lib_at = text.index(f'"{lib}"')
    line = text.count("\n", 0, lib_at) + 1
    col = lib_at - text.rfind("\n", 0, lib_at)
    # The plugin is named as its failure; the other pipelines are still checked.
    assert lines[0] == (f"ireepkg: error: {d / 'ireeplugin.json'}:{line}:{col}: package "
                        f"'broken': /compiler/plugins/0/library/linux-x86_64: MLIR pass "
                        f'plugin "{lib}" cannot be loaded by {mlir}: {what}')
    assert any('pass "canonicalize" has no option "bogus"' in l for l in lines)


@needs_clang
def test_a_plugin_that_cannot_be_loaded(tmp_path, mlir):
    d = hooks_package(tmp_path, "old-api", [("preprocessing", "cse")])
    lib = build_plugin(d, "oldapi", "")
    # The same library, claiming a plugin API version MLIR 22 does not have.
    src = (d.parent / "oldapi.c").read_text().replace("{1, ", "{99, ")
    (d.parent / "oldapi.c").write_text(src)
    subprocess.run([CLANG, "-shared", "-fPIC", d.parent / "oldapi.c", "-o", d / lib], check=True)
    m = json.loads((d / "ireeplugin.json").read_text())
    m["compiler"]["plugins"] = plugin_entry(lib)
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1
    assert (f'MLIR pass plugin "{lib}" cannot be loaded by {mlir}: mlirGetPassPluginInfo '
            f"returned plugin API version 99, but {mlir} supports only version 1 "
            "(MLIR_PLUGIN_API_VERSION)") in r.err


#===-----------------------------------------------------------------------===#
# pack and install: every MLIR plugin is load-checked, with or without hooks
#===-----------------------------------------------------------------------===#

ENTRY = {"pass": "mlirGetPassPluginInfo", "dialect": "mlirGetDialectPluginInfo"}
KIND = {"pass": "mlir-pass-plugin", "dialect": "mlir-dialect-plugin"}


def c_plugin(pkg_dir, name, kind="pass", api=1, callback="reg", entry=None, in_entry=""):
    """An MLIR plugin written in C as an outside author might: `entry`
    (default: the kind's entry point) runs `in_entry`, then returns
    {api, name, version, callback}."""
    lib = pkg_dir / "lib" / "linux-x86_64" / f"lib{name}.so"
    lib.parent.mkdir(parents=True, exist_ok=True)
    src = pkg_dir.parent / f"{name}.c"
    param = "void *registry" if kind == "dialect" else "void"
    src.write_text(
        "#include <stdint.h>\n"
        f"struct Info {{ uint32_t api; const char *name, *version; void (*cb)({param}); }};\n"
        f"static void reg({param}) {{}}\n"
        f'__attribute__((visibility("default"))) struct Info {entry or ENTRY[kind]}(void) {{\n'
        f'  {in_entry}\n'
        f'  struct Info i = {{{api}, "{name}", "0.1", {callback}}}; return i; }}\n')
    subprocess.run([CLANG, "-shared", "-fPIC", "-Wno-unused-function", src, "-o", lib],
                   check=True)
    return f"lib/linux-x86_64/lib{name}.so"


def plugin_package(root, name, lib, kind="pass", entry_point=None, version="1.0.0"):
    """A package with one MLIR plugin and no hooks."""
    d = root / f"{name}-{version}"
    m = {"schema_version": 1, "name": name, "version": version,
         "summary": f"MLIR {kind} plugin {name}",
         "compiler": {"plugins": [{"id": name.replace("-", "_"), "kind": KIND[kind],
                                   "library": {"linux-x86_64": lib}}]}}
    if entry_point:
        m["compiler"]["plugins"][0]["entry_point"] = entry_point
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return d


def library_at(pkg_dir, lib, file=None):
    """`file:line:col: package 'name': /compiler/plugins/0/library/linux-x86_64:`"""
    text = (pkg_dir / "ireeplugin.json").read_text()
    at = text.index(f'"{lib}"')
    line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    name = json.loads(text)["name"]
    file = file or str(pkg_dir / "ireeplugin.json")
    return f"{file}:{line}:{col}: package '{name}': /compiler/plugins/0/library/linux-x86_64:"


def hint(kind):
    flag = "--load-dialect-plugin" if kind == "dialect" else "--load-pass-plugin"
    return ("  hint: MLIR tools skip a plugin they cannot load and go on without it "
            f"(`mlir-opt-22 {flag}=<library>` only prints a warning); build it against "
            f"libMLIR.so.22 (libmlir-22-dev) and export {ENTRY[kind]}, returning "
            "MLIR_PLUGIN_API_VERSION (1) and a non-null callback")


BROKEN = [
    # kind, c_plugin arguments, what the check says
    ("pass", dict(api=999),
     "mlirGetPassPluginInfo returned plugin API version 999, but {mlir} supports only "
     "version 1 (MLIR_PLUGIN_API_VERSION)"),
    ("pass", dict(callback="0"),
     "mlirGetPassPluginInfo returned a null registerPassRegistryCallbacks callback"),
    ("pass", dict(in_entry="*(volatile int *)0 = 1;"),
     "while it was loaded, the plugin crashed (SIGSEGV)"),
    ("dialect", dict(api=999),
     "mlirGetDialectPluginInfo returned plugin API version 999, but {mlir} supports only "
     "version 1 (MLIR_PLUGIN_API_VERSION)"),
    ("dialect", dict(callback="0"),
     "mlirGetDialectPluginInfo returned a null registerDialectRegistryCallbacks callback"),
    ("dialect", dict(in_entry="for (;;) {}"),
     "while it was loaded, the plugin did not finish within 1000 ms (stopped)"),
]


@needs_clang
@pytest.mark.parametrize("kind, args, what", BROKEN)
def test_pack_load_checks_a_plugin_without_hooks(tmp_path, mlir, kind, args, what):
    d = tmp_path / "broken-1.0.0"
    lib = c_plugin(d, "broken", kind, **args)
    plugin_package(tmp_path, "broken", lib, kind)
    if "crashed" not in what and "finish" not in what:
        # What MLIR's own tool does with it: a warning, and on with exit
        # status 0 (so nothing but this check tells the author).
        flag = "--load-dialect-plugin" if kind == "dialect" else "--load-pass-plugin"
        proc = subprocess.run([shutil.which("mlir-opt-22"), f"{flag}={d / lib}", "-"],
                              input="", capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0
        assert "Request ignored." in proc.stderr
    r = run("pack", d, "-o", tmp_path / "out", env={"IREEPKG_MLIR_CHECK_TIMEOUT": "1"},
            timeout=60)
    assert r.code == 1, r
    assert r.err.splitlines() == [
        f"ireepkg: error: {library_at(d, lib)} MLIR {kind} plugin \"{lib}\" cannot be "
        f"loaded by {mlir}: {what.format(mlir=mlir)}", hint(kind)]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


@needs_clang
@pytest.mark.parametrize("kind", ["pass", "dialect"])
def test_install_load_checks_plugins_before_commit(tmp_path, mlir, kind):
    d = tmp_path / "broken-1.0.0"
    lib = c_plugin(d, "broken", kind, api=999)
    plugin_package(tmp_path, "broken", lib, kind)
    a = archive_unchecked(d, tmp_path / "dist")
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, archive_unchecked(
        hooks_package(tmp_path, "fine", [("preprocessing", "cse")]), tmp_path / "dist")).code == 0
    before = snapshot(prefix)
    r = run("install", "--prefix", prefix, a)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"ireepkg: error: {library_at(d, lib, file=f'{a}:ireeplugin.json')} MLIR {kind} "
        f"plugin \"{lib}\" cannot be loaded by {mlir}: {ENTRY[kind]} returned plugin API "
        f"version 999, but {mlir} supports only version 1 (MLIR_PLUGIN_API_VERSION)")
    assert snapshot(prefix) == before  # nothing was committed
    make_writable(prefix)


@needs_clang
@pytest.mark.parametrize("kind", ["pass", "dialect"])
def test_good_plugins_without_hooks_are_loaded_and_reported(tmp_path, kind):
    d = tmp_path / "good-1.0.0"
    lib = c_plugin(d, "good", kind)
    plugin_package(tmp_path, "good", lib, kind)
    check = packed(d, tmp_path / "out")["pipeline_check"]
    assert check["ran"] and check["pipelines"] == []
    expected = {"path": str(d / lib), "kind": KIND[kind], "loaded": True,
                "name": "good", "version": "0.1", "passes": []}
    if kind == "dialect":
        expected["dialects"] = []
    assert check["plugins"] == [expected]
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, pathlib.Path(
        packed(d, tmp_path / "dist")["archive"]), "--json")
    assert r.code == 0, r.err
    (p,) = json.loads(r.out)["pipeline_check"]["plugins"]
    assert (p["kind"], p["loaded"]) == (KIND[kind], True)
    make_writable(prefix)


@needs_clang
@pytest.mark.parametrize("kind, entry", [("pass", "myPassPluginInfo"),
                                         ("dialect", "mlirGetPassPluginInfo")])
def test_an_entry_point_mlir_tools_never_look_up_is_refused(tmp_path, kind, entry):
    d = tmp_path / "renamed-1.0.0"
    lib = c_plugin(d, "renamed", kind, entry=entry)
    plugin_package(tmp_path, "renamed", lib, kind, entry_point=entry)
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1
    text = (d / "ireeplugin.json").read_text()
    at = text.index(f'"{entry}"')
    line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    assert r.err.splitlines()[:2] == [
        f"ireepkg: error: {d / 'ireeplugin.json'}:{line}:{col}: "
        f"/compiler/plugins/0/entry_point: an {KIND[kind]} must export \"{ENTRY[kind]}\", "
        f"the only entry point MLIR tools look up; \"{entry}\" would never be called",
        f"  hint: write \"entry_point\": \"{ENTRY[kind]}\" (or leave it out) and export "
        f"{ENTRY[kind]} from the library"]


@needs_clang
def test_without_the_checker_plugins_are_not_load_checked(tmp_path):
    d = tmp_path / "good-1.0.0"
    lib = c_plugin(d, "good", "dialect", api=999)
    plugin_package(tmp_path, "good", lib, "dialect")
    alone = tmp_path / "bin"
    alone.mkdir()
    shutil.copy(BUILD / "bin" / "ireepkg", alone / "ireepkg")
    env = {k: v for k, v in os.environ.items() if k != "IREEPKG_MLIR_CHECK"}
    env["IREEPKG_INSPECT"] = str(BUILD / "bin" / "ireepkg-inspect")
    proc = subprocess.run([alone / "ireepkg", "pack", d, "-o", tmp_path / "out"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        f"ireepkg: warning: {d / 'ireeplugin.json'}: package 'good': MLIR plugins were not "
        f"load-checked: ireepkg-mlir-check was not found in {alone}/")


@needs_tag_plugin
def test_the_example_dialect_plugin_loads_at_pack(tmp_path):
    check = packed(EXAMPLES / "mlir-dialect", tmp_path / "out")["pipeline_check"]
    (p,) = check["plugins"]
    assert (p["kind"], p["loaded"], p["name"], p["dialects"]) == (
        "mlir-dialect-plugin", True, "mlir-demo-dialect", ["ireepkg_demo"])


#===-----------------------------------------------------------------------===#
# pack: without the checker
#===-----------------------------------------------------------------------===#

def test_without_the_checker_pipelines_are_checked_for_syntax_only(tmp_path):
    d = hooks_package(tmp_path, "lonely", [("preprocessing", "canonicalize{bogus=1}")])
    alone = tmp_path / "bin"
    alone.mkdir()
    shutil.copy(BUILD / "bin" / "ireepkg", alone / "ireepkg")
    proc = subprocess.run([alone / "ireepkg", "pack", d, "-o", tmp_path / "out", "--json"],
                          capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "IREEPKG_MLIR_CHECK"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"ireepkg: warning: {d / 'ireeplugin.json'}: package 'lonely': pass pipelines were "
        f"checked for syntax only: ireepkg-mlir-check was not found in {alone}/",
        "  hint: it is built and installed beside ireepkg when MLIR 22 (libmlir-22-dev) is "
        "available; or set IREEPKG_MLIR_CHECK to its path (IREEPKG_MLIR_CHECK=off skips "
        "this check)"]
    check = json.loads(proc.stdout)["pipeline_check"]
    assert not check["ran"]
    assert check["skipped"] == f"ireepkg-mlir-check was not found in {alone}/"
    assert check["pipelines"][0]["status"] == "syntax-only"


def test_the_check_can_be_turned_off_or_pointed_elsewhere(tmp_path):
    d = hooks_package(tmp_path, "off", [("preprocessing", "canonicalize{bogus=1}")])
    r = pack(d, tmp_path / "out", env={"IREEPKG_MLIR_CHECK": "off"})
    assert r.code == 0 and r.err == "", r.err
    assert json.loads(r.out)["pipeline_check"]["skipped"] == "disabled by IREEPKG_MLIR_CHECK=off"
    r = pack(d, tmp_path / "out", env={"IREEPKG_MLIR_CHECK": str(tmp_path / "nothing")})
    assert r.code == 1
    assert f"IREEPKG_MLIR_CHECK names '{tmp_path / 'nothing'}', which is not an executable file" in r.err
    r = pack(d, tmp_path / "out", env={"IREEPKG_MLIR_CHECK": str(CHECKER)})
    assert r.code == 1 and 'has no option "bogus"' in r.err


#===-----------------------------------------------------------------------===#
# install: the incoming pipelines, with the prefix's plugins
#===-----------------------------------------------------------------------===#

def archive_unchecked(pkg_dir, out):
    """Packs without the MLIR check, as an archive from elsewhere may be."""
    return pathlib.Path(packed(pkg_dir, out, env={"IREEPKG_MLIR_CHECK": "off"})["archive"])


def test_install_refuses_a_pipeline_mlir_rejects(tmp_path, mlir):
    d = hooks_package(tmp_path, "bad", [("preprocessing", "cse"),
                                        ("preprocessing", "canonicalize{max-iterations=x}")])
    a = archive_unchecked(d, tmp_path / "dist")
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, archive_unchecked(
        hooks_package(tmp_path, "fine", [("preprocessing", "cse")]), tmp_path / "dist")).code == 0
    before = snapshot(prefix)
    r = run("install", "--prefix", prefix, a)
    assert r.code == 1
    assert r.err.splitlines()[0] == (
        f"ireepkg: error: {where(d, 'bad', hook=1, file=f'{a}:ireeplugin.json')} invalid pass "
        f'pipeline ({mlir}): invalid value for option "max-iterations" of pass '
        '"canonicalize": "x" is not an integer (at column 14)')
    assert snapshot(prefix) == before  # the transaction was rolled back
    make_writable(prefix)


@needs_tag_plugin
def test_install_checks_with_the_plugins_of_the_resulting_prefix(tmp_path, mlir):
    dist = tmp_path / "dist"
    plugin = archive_unchecked(with_tag_plugin(tmp_path, "tag-plugin", []), dist)
    good = archive_unchecked(hooks_package(tmp_path, "uses-tags", [
        ("mlir-pipeline", "builtin.module(func.func(ireepkg-tag-functions{tag=ok}))")]), dist)
    bad_dir = hooks_package(tmp_path, "uses-tags", [
        ("mlir-pipeline", "builtin.module(func.func(ireepkg-tag-functions{colour=red}))")],
        version="2.0.0")
    bad = archive_unchecked(bad_dir, dist)

    # Alone, the plugin's passes are unknown: not checked, installed.
    alone = tmp_path / "alone"
    r = run("install", "--prefix", alone, bad, "--json")
    assert r.code == 0, r.err
    (p,) = json.loads(r.out)["pipeline_check"]["pipelines"]
    assert (p["package"], p["status"]) == ("uses-tags", "not-checked")

    # With the plugin coming in the same install, the bad option is found.
    both = tmp_path / "both"
    r = run("install", "--prefix", both, plugin, bad)
    assert r.code == 1
    message = (f"invalid pass pipeline ({mlir}): pass \"ireepkg-tag-functions\" has no "
               'option "colour" (at column 48)')
    assert r.err.splitlines()[0] == (
        f"ireepkg: error: {where(bad_dir, 'uses-tags', file=f'{bad}:ireeplugin.json')} "
        + message)
    assert not (both / "packages").exists() or not list((both / "packages").iterdir())

    # With the plugin installed before: found too; the good pipeline passes.
    prefix = tmp_path / "prefix"
    assert run("install", "--prefix", prefix, plugin).code == 0
    r = run("install", "--prefix", prefix, bad)
    assert r.code == 1 and message in r.err
    r = run("install", "--prefix", prefix, good, "--json")
    assert r.code == 0, r.err
    check = json.loads(r.out)["pipeline_check"]
    assert [(p["package"], p["status"]) for p in check["pipelines"]] == [("uses-tags", "checked")]
    assert [(pl["name"], pl["loaded"]) for pl in check["plugins"]] == [("mlir-tag-passes", True)]
    for root in (alone, prefix):
        make_writable(root)


@needs_tag_plugin
def test_install_of_another_platform_does_not_load_plugins(tmp_path):
    dist = tmp_path / "dist"
    uses = archive_unchecked(hooks_package(tmp_path, "uses-tags", [
        ("mlir-pipeline", "func.func(ireepkg-tag-functions{colour=red}),cse")]), dist)
    prefix = tmp_path / "prefix"
    # linux-aarch64: the x86_64 library cannot be loaded here; MLIR's own
    # passes are still checked.
    r = run("install", "--prefix", prefix, "--platform", "linux-aarch64", uses, "--json")
    assert r.code == 0, r.err
    (p,) = json.loads(r.out)["pipeline_check"]["pipelines"]
    assert (p["status"], p["unknown_passes"]) == ("partial", ["ireepkg-tag-functions"])
    make_writable(prefix)


#===-----------------------------------------------------------------------===#
# The tool itself
#===-----------------------------------------------------------------------===#

@pytest.mark.parametrize("request_text, problem", [
    ("not json", "the request is not valid JSON"),
    ("[]", "/: must be an object"),
    ('{"fragments": 3}', "/fragments: must be an array"),
    ('{"fragments": [{"anchor": "builtin.module", "text": "cse"}]}',
     "/fragments/0/passes: must be an array"),
    ('{"fragments": [], "plugins": [""]}', "/plugins/0: must be a path"),
    ('{"fragments": [], "plugins": [{"path": "/x.so", "kind": "pas"}]}',
     '/plugins/0/kind: must be "pass" or "dialect"'),
    ('{"fragments": [], "step_timeout_ms": 0}',
     "/step_timeout_ms: must be an integer from 1 to 86400000"),
])
def test_the_tool_refuses_a_malformed_request(request_text, problem):
    proc = subprocess.run([CHECKER], input=request_text, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"ireepkg-mlir-check: error: malformed request: {problem}\n"


def test_the_tool_reads_a_request_file(tmp_path, mlir):
    req = tmp_path / "request.json"
    req.write_text(json.dumps({"fragments": [
        {"anchor": "func.func", "text": "cse,canonicalize{top-down=0}",
         "passes": [{"name": "cse", "anchor": "func.func"},
                    {"name": "canonicalize", "anchor": "func.func", "options": "top-down=0"}]}]}))
    proc = subprocess.run([CHECKER, req], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert f"MLIR {report['mlir_version']}" == mlir
    assert report["plugins"] == []
    assert report["fragments"] == [{
        "passes": [{"known": True, "errors": []}, {"known": True, "errors": []}],
        "unknown": [], "suggestions": {}, "errors": []}]


@needs_clang
@pytest.mark.parametrize("kind", ["pass", "dialect"])
def test_the_tool_says_whole_why_a_plugin_does_not_load(tmp_path, kind):
    d = tmp_path / "p"
    lib = d / c_plugin(d, "other", kind, entry="somethingElse")
    missing = tmp_path / "missing.so"
    req = {"plugins": [{"path": str(lib), "kind": kind}, {"path": str(missing), "kind": kind}],
           "fragments": []}
    proc = subprocess.run([CHECKER], input=json.dumps(req), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    plugins = json.loads(proc.stdout)["plugins"]
    noun = "a dialect plugin" if kind == "dialect" else "a pass plugin"
    assert plugins == [
        {"path": str(lib), "kind": kind, "loaded": False,
         "error": f"the library does not export {ENTRY[kind]}, the entry point MLIR tools "
                  f"look up in {noun}"},
        {"path": str(missing), "kind": kind, "loaded": False,
         "error": f"the library cannot be opened: {missing}: cannot open shared object "
                  "file: No such file or directory"}]
