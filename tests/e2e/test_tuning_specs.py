"""Tuning specs from several packages, linked into one, with the real 3.13
wheel: each package names its spec per target (a ROCm architecture, every
CPU); `ireepkg exec` reads the compile's target from the user's own flags,
links the active packages' specs for it with the wheel's iree-opt, in
activation order, and passes the one file. IREE's own dumps show it: both
packages' matchers in the spec it used (--iree-codegen-dump-tuning-specs-to=)
and their actions' attributes in the configured executables
(--iree-hal-dump-executable-configurations-to=), the first package winning
where both match. The wheel compiles for ROCm gfx942 without a GPU."""
import json
import os
import pathlib
import re
import sys

import pytest

from conftest import BUILD, REPO, pack, run

VENV_BIN = pathlib.Path(sys.executable).parent
ENV = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
ROCM = ["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"]
CPU = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
       "--iree-llvmcpu-target-cpu=host"]

# A matmul and an elementwise add, each its own dispatch.
PROGRAM = """\
func.func @mm(%a: tensor<128x256xf32>, %b: tensor<256x64xf32>) -> tensor<128x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}
func.func @add(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
"""

MATCH_MM = """\
  transform.named_sequence @match_mm(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    %b, %m, %n, %k = transform.iree.match.contraction %op, lhs_type = f32, rhs_type = f32, output_type = f32, indexing_maps = [#mA, #mB, #mC] : !transform.any_op -> !transform.param<i64>
    transform.yield %op : !transform.any_op
  }
"""
MATCH_EW = """\
  transform.named_sequence @match_ew(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
"""


def spec(tag: str, elementwise: bool, entry_arg: str = "transform.consumed") -> str:
    """A spec whose actions mark what they match with `tag`: the matmul,
    and with `elementwise` the elementwise op too. Every spec is named
    @tuning and uses #aliases, as tuners write them."""
    mark = tag.replace(".", "_").replace("-", "_")
    pairs = [f"@match_mm -> @mark_{mark}"] + ([f"@match_ew -> @mark_{mark}"] if elementwise else [])
    return f"""\
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
module @tuning attributes {{transform.with_named_sequence, iree_codegen.tuning_spec_with_default_entrypoint}} {{
  transform.named_sequence @mark_{mark}(%op: !transform.any_op {{transform.readonly}}) {{
    transform.annotate %op "{tag}" : !transform.any_op
    transform.yield
  }}
{MATCH_MM}{MATCH_EW if elementwise else ""}  transform.named_sequence @__kernel_config(%root: !transform.any_op {{{entry_arg}}}) -> !transform.any_op attributes {{iree_codegen.tuning_spec_entrypoint}} {{
    %r = transform.foreach_match in %root {", ".join(pairs)} : (!transform.any_op) -> !transform.any_op
    transform.yield %r : !transform.any_op
  }}
}}
"""


def tuning_package(root, name, specs, iree=None):
    """A package with one tuning-spec hook: target -> spec text."""
    d = root / name
    (d / "specs").mkdir(parents=True)
    targets = {}
    for target, text in specs.items():
        (d / "specs" / f"{target}.mlir").write_text(text)
        targets[target] = f"specs/{target}.mlir"
    hook = {"point": "tuning-spec", "targets": targets}
    if iree:
        hook["iree"] = iree
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": name, "version": "1.0.0",
        "compiler": {"hooks": [hook]}}, indent=2))
    return pack(d, root / "dist")


def project(tmp_path, archives, order, **more):
    """A project whose plugins.json activates `order`, installed."""
    proj = tmp_path / "project"
    proj.mkdir()
    (proj / "plugins.json").write_text(json.dumps({
        "schema_version": 1, "plugins": [{"name": n} for n in order], **more}, indent=2))
    env = {**ENV, "IREEPKG_PREFIX": "", "IREEPKG_CACHE_DIR": str(tmp_path / "cache")}
    r = run("install", *archives, cwd=proj, env=env)
    assert r.code == 0, r.err
    return proj, env


def two_archives(tmp_path):
    z = tuning_package(tmp_path, "tune-z", {
        "gfx942": spec("tune-z.gfx942", False), "llvm-cpu": spec("tune-z.cpu", False)})
    a = tuning_package(tmp_path, "tune-a", {
        "gfx942": spec("tune-a.gfx942", True), "llvm-cpu": spec("tune-a.cpu", True),
        "gfx1100": spec("tune-a.gfx1100", True)})
    return [z, a]


@pytest.fixture
def two_packages(tmp_path):
    """tune-z first, then tune-a (not alphabetical): tune-z marks the
    matmul; tune-a marks the matmul and the elementwise op."""
    (tmp_path / "prog.mlir").write_text(PROGRAM)
    return project(tmp_path, two_archives(tmp_path), ["tune-z", "tune-a"])


def compile_with_dumps(proj, env, tmp_path, target, name):
    specs, configs = tmp_path / f"{name}-specs", tmp_path / f"{name}-configs"
    r = run("exec", "--", "iree-compile", tmp_path / "prog.mlir", *target,
            f"--iree-codegen-dump-tuning-specs-to={specs}",
            f"--iree-hal-dump-executable-configurations-to={configs}",
            "-o", tmp_path / f"{name}.vmfb", cwd=proj, env=env, timeout=600)
    assert r.code == 0, r.err
    used = {p.read_text() for p in specs.iterdir()}
    assert len(used) == 1, used  # one spec, the same for every dispatch
    mm = (configs / "configured_module_mm_dispatch_0.mlir").read_text()
    add = (configs / "configured_module_add_dispatch_0.mlir").read_text()
    return r, used.pop(), mm, add


def foreach_match_actions(spec_text):
    block = spec_text[spec_text.index("transform.foreach_match"):]
    block = block[:block.index(":")]
    return re.findall(r"-> @(\w+)", block)


@pytest.mark.parametrize("target,kind", [(ROCM, "gfx942"), (CPU, "cpu")])
def test_two_packages_specs_linked_in_activation_order(two_packages, tmp_path, target, kind):
    proj, env = two_packages
    r, used, mm, add = compile_with_dumps(proj, env, tmp_path, target, kind)
    # Both packages' matchers, tune-z's first: activation order, not names.
    assert foreach_match_actions(used) == [f"mark_tune_z_{kind}", f"mark_tune_a_{kind}",
                                           f"mark_tune_a_{kind}"]
    assert "gfx1100" not in used and ("cpu" in used) == (kind == "cpu")
    # The first package wins on the matmul; the second's own matcher marks
    # the elementwise op.
    assert f"tune-z.{kind}" in mm
    assert f"tune-a.{kind}" not in mm
    assert f"tune-a.{kind}" in add and "tune-z" not in add
    # IREE 3.13's threading bug: the workaround is applied and said.
    assert ("ireepkg: warning: adding --mlir-disable-threading because a tuning spec is "
            "active: IREE's threaded compiles with a tuning spec can hang or crash "
            "(getOrLoadTransformLibraryModule re-locks a mutex) in IREE 3.13.0 and later\n") in r.err


def test_linked_spec_is_cached_by_its_inputs(two_packages, tmp_path):
    """The second compile for the same target links nothing: iree-opt is
    not run again (a wrapper counts its runs); another target links anew."""
    proj, env = two_packages
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "iree-compile").symlink_to(VENV_BIN / "iree-compile")
    calls = tmp_path / "iree-opt-calls"
    (tools / "iree-opt").write_text(
        f'#!/bin/sh\necho "$@" >> {calls}\nexec {VENV_BIN / "iree-opt"} "$@"\n')
    (tools / "iree-opt").chmod(0o755)
    (tmp_path / "prog.mlir").write_text(PROGRAM)

    def compile_for(target):
        r = run("exec", "--", tools / "iree-compile", tmp_path / "prog.mlir", *target,
                "--compile-to=executable-configurations", "-o", tmp_path / "out.mlir",
                cwd=proj, env=env, timeout=600)
        assert r.code == 0, r.err
        return calls.read_text().splitlines() if calls.exists() else []

    first = compile_for(ROCM)
    assert len(first) == 3, first  # each spec printed, then the link
    assert "--iree-codegen-link-tuning-specs" in first[2]
    assert compile_for(ROCM) == first  # no run at all
    cached = list((tmp_path / "cache" / "tuning").iterdir())
    assert len(cached) == 1 and cached[0].suffix == ".mlir"
    assert "tune-a.gfx942" in (tmp_path / "out.mlir").read_text()
    assert len(compile_for(CPU)) == 6  # another target: other inputs


def test_one_spec_is_passed_as_it_is(tmp_path):
    a = tuning_package(tmp_path, "tune-a", {"gfx942": spec("tune-a.gfx942", True)})
    proj, env = project(tmp_path, [a], ["tune-a"])
    r = run("flags", "compiler", "--target", "gfx942", cwd=proj, env=env)
    assert r.code == 0, r.err
    installed = proj / ".iree-plugins" / "packages" / "tune-a" / "1.0.0"
    assert r.out == (f"--iree-codegen-tuning-spec-path={installed}/specs/gfx942.mlir\n"
                     "--mlir-disable-threading=true\n")
    assert not (tmp_path / "cache" / "tuning").exists()  # nothing linked
    # No spec for this target: no flag.
    r = run("flags", "compiler", "--target", "gfx90a", cwd=proj, env=env)
    assert r.code == 0, r.err
    assert r.out == ""


# A spec that parses but reads its argument where the others consume it.
READONLY_SPEC = """\
module @tuning attributes {transform.with_named_sequence} {
  transform.named_sequence @__kernel_config(%root: !transform.any_op {transform.readonly}) -> !transform.any_op attributes {iree_codegen.tuning_spec_entrypoint} {
    transform.yield %root : !transform.any_op
  }
}
"""


def bad_pair(tmp_path, bad_spec):
    a = tuning_package(tmp_path, "tune-a", {"gfx942": spec("tune-a.gfx942", True)})
    bad = tuning_package(tmp_path, "tune-bad", {"gfx942": bad_spec})
    proj, env = project(tmp_path, [a, bad], ["tune-a", "tune-bad"])
    (tmp_path / "prog.mlir").write_text(PROGRAM)
    r = run("exec", "--", "iree-compile", tmp_path / "prog.mlir", *ROCM, "-o",
            tmp_path / "out.vmfb", cwd=proj, env=env, timeout=600)
    assert r.code == 1, r.err
    assert not (tmp_path / "out.vmfb").exists()
    return r, proj / ".iree-plugins" / "packages" / "tune-bad" / "1.0.0" / "specs" / "gfx942.mlir"


def test_spec_that_does_not_link_names_package_and_file(tmp_path):
    r, path = bad_pair(tmp_path, READONLY_SPEC)
    assert r.err.startswith(
        f"ireepkg: error: {path}: package 'tune-bad': tuning spec specs/gfx942.mlir (for "
        "gfx942) does not link with the specs before it (tune-a specs/gfx942.mlir): iree-opt "
        "exited with 1:\n"
        "  <linked tuning specs>:1:1: warning: Expected the argument in all tuning specs to be "
        "consistently readonly or consumed\n"), r.err
    # iree-opt's output whole, down to its failure, then the hint.
    assert r.err.endswith(
        "  hint: each spec must be a module with transform.with_named_sequence and "
        "iree_codegen.tuning_spec_with_default_entrypoint holding one @__kernel_config that "
        "consumes its argument; ask the package's author, or remove the package\n"), r.err
    # The rest of iree-opt's output: the module it refused, each spec renamed.
    assert "  <linked tuning specs>:1:1: note: see current operation: \n" in r.err
    assert "module @ireepkg_0_tune_a_gfx942 attributes" in r.err
    assert "module @ireepkg_1_tune_bad_gfx942 attributes" in r.err


def test_spec_that_does_not_parse_names_package_and_file(tmp_path):
    r, path = bad_pair(tmp_path, spec("tune-bad.gfx942", False, entry_arg="transform.readonly"))
    assert r.err == (
        f"ireepkg: error: {path}: package 'tune-bad': tuning spec specs/gfx942.mlir (for "
        "gfx942) does not parse: iree-opt exited with 1:\n"
        f"  {path}:13:3: error: argument #0 is consumed in the body but is not marked as "
        "such\n"
        "    transform.named_sequence @__kernel_config(%root: !transform.any_op "
        "{transform.readonly}) -> !transform.any_op attributes "
        "{iree_codegen.tuning_spec_entrypoint} {\n"
        "    ^\n"
        "  hint: the spec must be an MLIR module for this IREE version's transform dialect; "
        "ask the package's author, or remove the package\n")


def test_target_that_ignores_specs_is_warned_about(two_packages, tmp_path):
    proj, env = two_packages
    r = run("flags", "compiler", "--target", "cuda", cwd=proj, env=env)
    assert r.code == 0, r.err
    assert r.out == ""
    assert r.err == ("ireepkg: warning: tuning specs of tune-z, tune-a have no effect on the "
                     "cuda target: IREE applies tuning specs to llvm-cpu and ROCm compiles "
                     "only, and ignores them for cuda\n"
                     "  hint: compile for llvm-cpu or a ROCm architecture to use them\n")
    # exec reads the target from the compile's flags: Vulkan ignores specs.
    r = run("exec", "--", "iree-compile", tmp_path / "prog.mlir",
            "--iree-hal-target-device=vulkan", "--compile-to=input", "-o", tmp_path / "out.mlir",
            cwd=proj, env=env, timeout=600)
    assert r.code == 0, r.err
    assert r.err == ("ireepkg: warning: tuning specs of tune-z, tune-a have no effect on the "
                     "vulkan target: IREE applies tuning specs to llvm-cpu and ROCm compiles "
                     "only, and ignores them for vulkan\n"
                     "  hint: compile for llvm-cpu or a ROCm architecture to use them\n")


def test_without_a_target_the_specs_per_target_are_left_out(two_packages):
    proj, env = two_packages
    r = run("flags", "compiler", cwd=proj, env=env)
    assert r.code == 0, r.err
    assert r.out == ""
    assert ("tuning specs per target are left out because the compile's target is not "
            "known: tune-z (gfx942, llvm-cpu); tune-a (gfx1100, gfx942, llvm-cpu)") in r.err
    # `info` says what precedence is.
    r = run("info", "tune-z", cwd=proj, env=env)
    assert r.code == 0, r.err
    assert ("linked with the other active packages' specs for the compile's target; the "
            "first package in activation order wins where two match the same operation") in r.out


def test_choose_still_picks_one_package(tmp_path):
    proj, env = project(tmp_path, two_archives(tmp_path), ["tune-z", "tune-a"],
                        choose={"tuning-spec": "tune-a"})
    r = run("flags", "compiler", "--target", "gfx942", cwd=proj, env=env)
    assert r.code == 0, r.err
    installed = proj / ".iree-plugins" / "packages" / "tune-a" / "1.0.0"
    assert r.out.splitlines()[0] == f"--iree-codegen-tuning-spec-path={installed}/specs/gfx942.mlir"


def test_spec_for_another_iree_version_is_left_out(tmp_path):
    a = tuning_package(tmp_path, "tune-old", {"gfx942": spec("tune-old.gfx942", True)},
                       iree=">=3.10.0, <3.11.0")
    proj, env = project(tmp_path, [a], ["tune-old"])
    r = run("flags", "compiler", "--target", "gfx942", cwd=proj, env=env)
    assert r.code == 0, r.err
    assert r.out == ""
    assert ("ireepkg: warning: package 'tune-old': its tuning spec is for IREE >=3.10.0, "
            "<3.11.0, not 3.13.0, and is left out\n") in r.err


def test_example_package_has_specs_for_two_targets(tmp_path):
    """examples/matmul-tuning: its gfx942 and CPU specs set the matmul's
    lowering configuration of examples/programs/matmul.mlir."""
    archive = BUILD / "examples" / "dist" / "matmul-tuning-0.1.0.ireepkg"
    proj, env = project(tmp_path, [archive], ["matmul-tuning"])
    program = REPO / "examples" / "programs" / "matmul.mlir"
    for target, expected in [(ROCM, ["matmul_tuning.gfx942", "workgroup = [32, 64, 0]"]),
                             (CPU, ["matmul_tuning.cpu", "distribution = [32, 64, 0]"])]:
        r = run("exec", "--", "iree-compile", program, *target,
                "--compile-to=executable-configurations", "-o", tmp_path / "out.mlir",
                cwd=proj, env=env, timeout=600)
        assert r.code == 0, r.err
        text = (tmp_path / "out.mlir").read_text()
        for e in expected:
            assert e in text, (target, e)
