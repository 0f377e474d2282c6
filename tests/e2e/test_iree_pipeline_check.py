"""Hook pipelines checked against the IREE in use (IREE's iree-opt).

iree-compile 3.13 prints a pass-pipeline parse error for a
--iree-preprocessing-pass-pipeline= naming a pass it does not know, then
exits with 0 and compiles without the pipeline. So `pack`, `install` and
`doctor` run the venv's iree-opt on an empty module with each preprocessing
pipeline, and `exec` fails when iree-compile reports such an error although
it exits with 0. Without iree-opt, pack warns that it did not check.
"""
import json
import os
import pathlib
import sys

import pytest

from conftest import REPO, data_package, run

VENV_BIN = pathlib.Path(sys.executable).parent
IREE_OPT = VENV_BIN / "iree-opt"
WITH_IREE = {"PATH": f"{VENV_BIN}:/usr/bin:/bin"}
# No IREE on PATH nor through VIRTUAL_ENV.
WITHOUT_IREE = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": ""}
PROGRAM = REPO / "examples" / "programs" / "simple_mul.mlir"
TARGET = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
          "--iree-llvmcpu-target-cpu=host", "--iree-opt-const-eval=false"]

pytestmark = pytest.mark.skipif(not IREE_OPT.exists(), reason="the IREE wheels are not installed")

UNKNOWN = ("IREE cannot parse the pass pipeline: "
           "'no-such-pass' does not refer to a registered pass or pass pipeline "
           f"(checked with {IREE_OPT})")
HINT = ("hint: iree-compile would print this error, ignore the pipeline and still exit "
        "with 0; `iree-opt --help` lists the passes IREE knows")


def hook_package(root, name, pipeline, version="1.0.0"):
    d = data_package(root, name, version)
    m = json.loads((d / "ireeplugin.json").read_text())
    m["compiler"] = {"hooks": [{"point": "preprocessing", "pipeline": pipeline}]}
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return d


def where(d, name):
    text = (d / "ireeplugin.json").read_text()
    value = text.index('"pipeline": ') + len('"pipeline": ')
    line = text.count("\n", 0, value) + 1
    column = value - (text.rfind("\n", 0, value) + 1) + 1
    return f"{d / 'ireeplugin.json'}:{line}:{column}: package '{name}': /compiler/hooks/0/pipeline: "


def packed_without_iree(tmp_path, name, pipeline):
    """The archive of a package with `pipeline`, packed where IREE is not
    (with the warning that says so)."""
    d = hook_package(tmp_path / "src", name, pipeline)
    r = run("pack", d, "-o", tmp_path / "dist", "--json", env=WITHOUT_IREE)
    assert r.code == 0, r.err
    assert ("pass pipelines were not checked against IREE: iree-opt was not found on PATH "
            "or in $VIRTUAL_ENV/bin") in r.err
    report = json.loads(r.out)["pipeline_check"]["iree"]
    assert report["ran"] is False
    assert [p["status"] for p in report["pipelines"]] == ["not-checked"]
    return pathlib.Path(json.loads(r.out)["archive"])


def test_pack_refuses_a_pipeline_iree_does_not_know(tmp_path):
    d = hook_package(tmp_path, "broken", "no-such-pass")
    r = run("pack", d, "-o", tmp_path / "dist", env=WITH_IREE, timeout=300)
    assert r.code == 1, r.err
    assert f"ireepkg: error: {where(d, 'broken')}{UNKNOWN}" in r.err
    assert HINT in r.err
    assert not (tmp_path / "dist").exists() or not list((tmp_path / "dist").iterdir())


def test_pack_refuses_a_bad_option_of_an_iree_pass(tmp_path):
    d = hook_package(tmp_path, "badopt",
                     "func.func(iree-preprocessing-pad-linalg-ops{pad-size=x})")
    r = run("pack", d, "-o", tmp_path / "dist", env=WITH_IREE, timeout=300)
    assert r.code == 1, r.err
    assert ("/compiler/hooks/0/pipeline: IREE cannot parse the pass pipeline: "
            "iree-opt: for the --pad-size option: 'x' value invalid for integer argument!; "
            "failed to add `iree-preprocessing-pad-linalg-ops` with options `pad-size=x`; "
            "failed to add `func.func` with options `` to inner pipeline "
            f"(checked with {IREE_OPT})\n") in r.err


def test_pack_accepts_iree_and_mlir_passes_iree_knows(tmp_path):
    d = hook_package(tmp_path, "good",
                     "func.func(iree-preprocessing-pad-linalg-ops{pad-size=16},canonicalize)")
    r = run("pack", d, "-o", tmp_path / "dist", "--json", env=WITH_IREE, timeout=300)
    assert r.code == 0, r.err
    report = json.loads(r.out)["pipeline_check"]["iree"]
    assert report == {
        "ran": True, "tool": str(IREE_OPT),
        "pipelines": [{"point": "preprocessing", "status": "ok",
                       "pipeline": "builtin.module(func.func(iree-preprocessing-pad-linalg-ops"
                                   "{pad-size=16},canonicalize))",
                       "package": "good", "pointer": "/compiler/hooks/0/pipeline"}]}


def test_an_unknown_pass_may_come_from_a_dependency_at_pack(tmp_path):
    d = hook_package(tmp_path, "user", "their-pass")
    m = json.loads((d / "ireeplugin.json").read_text())
    m["dependencies"] = {"provider": "^1.0"}
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    r = run("pack", d, "-o", tmp_path / "dist", env=WITH_IREE, timeout=300)
    assert r.code == 0, r.err
    assert ("warning: " + where(d, "user") + "IREE does not know a pass of the pipeline: "
            "'their-pass' does not refer to a registered "
            f"pass or pass pipeline (checked with {IREE_OPT})") in r.err


def test_the_check_can_be_turned_off_or_pointed_elsewhere(tmp_path):
    d = hook_package(tmp_path, "broken", "no-such-pass")
    r = run("pack", d, "-o", tmp_path / "dist", "--json",
            env=dict(WITH_IREE, IREEPKG_IREE_OPT="off"))
    assert (r.code, r.err) == (0, "")
    assert json.loads(r.out)["pipeline_check"]["iree"]["skipped"] == \
        "disabled by IREEPKG_IREE_OPT=off"
    r = run("pack", d, "-o", tmp_path / "dist2", env=dict(WITHOUT_IREE, IREEPKG_IREE_OPT=IREE_OPT))
    assert r.code == 1 and UNKNOWN in r.err
    r = run("pack", d, "-o", tmp_path / "dist3", env=dict(WITHOUT_IREE, IREEPKG_IREE_OPT="nowhere"))
    assert r.code == 1
    assert ("ireepkg: error: IREEPKG_IREE_OPT names 'nowhere', which is not an executable file\n"
            "  hint: point IREEPKG_IREE_OPT at IREE's iree-opt, set it to off to skip the check, "
            "or unset it to find iree-opt on PATH\n") in r.err


def test_install_refuses_a_pipeline_iree_does_not_know(tmp_path):
    archive = packed_without_iree(tmp_path, "broken", "no-such-pass")
    prefix = tmp_path / "prefix"
    r = run("install", archive, "--prefix", prefix, env=WITH_IREE, timeout=300)
    assert r.code == 1, r.err
    assert r.err.startswith(f"ireepkg: error: {archive}:ireeplugin.json:")
    assert f": package 'broken': /compiler/hooks/0/pipeline: {UNKNOWN}\n" in r.err
    assert not (prefix / "packages" / "broken").exists()


@pytest.fixture
def broken_prefix(tmp_path):
    """A prefix where a package with a broken hook was installed without
    IREE around to check it."""
    archive = packed_without_iree(tmp_path, "broken", "no-such-pass")
    prefix = tmp_path / "prefix"
    r = run("install", archive, "--prefix", prefix, env=WITHOUT_IREE)
    assert r.code == 0, r.err
    return prefix


def test_doctor_finds_a_broken_hook(broken_prefix):
    r = run("doctor", "--prefix", broken_prefix, env=WITH_IREE, timeout=300)
    assert r.code == 1, r.out + r.err
    assert (f"\nHook pipelines, checked against IREE with {IREE_OPT}:\n"
            "FAIL  broken 1.0.0 preprocessing: IREE cannot parse builtin.module(no-such-pass): "
            "'no-such-pass' does not refer to a registered pass or pass pipeline "
            "(iree-compile would ignore it and exit with 0)\n") in r.out
    r = run("doctor", "--prefix", broken_prefix, "--json", env=WITH_IREE, timeout=300)
    assert r.code == 1
    hooks = json.loads(r.out)["hook_pipelines"]
    assert [(p["package"], p["status"]) for p in hooks["pipelines"]] == [("broken", "invalid")]


def test_exec_fails_when_iree_compile_ignores_a_broken_pipeline(broken_prefix, tmp_path):
    vmfb = tmp_path / "m.vmfb"
    r = run("exec", "--prefix", broken_prefix, "--", "iree-compile", PROGRAM, *TARGET,
            "-o", vmfb, env=WITH_IREE, timeout=300)
    assert r.code == 1, r.err
    # IREE's own words pass through, then ireepkg's.
    assert "'no-such-pass' does not refer to a registered pass or pass pipeline" in r.err
    assert ("ireepkg: error: iree-compile reported an error in a pass pipeline "
            "(\"MLIR Textual PassPipeline Parser:1:1: error: 'no-such-pass' does not refer "
            "to a registered pass or pass pipeline\"), compiled without that pipeline and "
            "exited with 0\n") in r.err


def test_exec_passes_a_good_pipeline_through(tmp_path):
    archive = packed_without_iree(tmp_path, "good", "func.func(canonicalize)")
    prefix = tmp_path / "prefix"
    assert run("install", archive, "--prefix", prefix, env=WITH_IREE, timeout=300).code == 0
    vmfb = tmp_path / "m.vmfb"
    r = run("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET,
            "-o", vmfb, env=WITH_IREE, timeout=300)
    assert r.code == 0, r.err
    assert vmfb.stat().st_size > 0
    assert "ireepkg: error" not in r.err
    # The user's own broken pipeline is caught too.
    r = run("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET,
            "--iree-preprocessing-pass-pipeline=builtin.module(canonicalize{bogus=1})",
            "-o", vmfb, env=WITH_IREE, timeout=300)
    assert r.code == 1, r.err
    assert ("ireepkg: error: iree-compile reported an error in a pass pipeline "
            "(\"<Pass-Options-Parser>: no such option bogus\")") in r.err
