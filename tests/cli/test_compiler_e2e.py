"""Compiler integration end to end, with the real iree-compile from the
pinned wheel: the configuration package's flags are accepted and change the
compiled result; invalid option values are refused by ireepkg before any
compiler runs, naming the plugin, the option and the rule; single-valued
hooks conflict unless plugins.json chooses; an iree-dynamic package packs,
and is activated only for a compiler that can load plugins (probed: IREE
3.13's released iree-compile has the experimental --iree-load-plugin; a
compiler without it gets a clear error)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, EXAMPLES, REPO, ireepkg_path, pack, run

VENV_BIN = pathlib.Path(sys.executable).parent
ENV = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
DIST = BUILD / "examples" / "dist"
PROGRAM = REPO / "examples" / "programs" / "simple_mul.mlir"
TARGET = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
          "--iree-llvmcpu-target-cpu=host"]


@pytest.fixture
def prefix(tmp_path):
    p = tmp_path / "prefix"
    r = run("install", DIST / "simple-mul-1.2.0.ireepkg", DIST / "mul-pipeline-0.3.0.ireepkg",
            "--prefix", p)
    assert r.code == 0, r.err
    return p


def test_configuration_changes_the_compiled_result(prefix, tmp_path):
    r = run("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET,
            "--compile-to=preprocessing", env=ENV, timeout=300)
    assert r.code == 0, r.err
    assert "ireepkg.mul_pipeline" in r.out  # the package's transform spec ran
    plain = subprocess.run([VENV_BIN / "iree-compile", PROGRAM, *TARGET, "--compile-to=preprocessing"],
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0
    assert "ireepkg.mul_pipeline" not in plain.stdout


def test_full_compile_and_run_through_exec(prefix, tmp_path):
    vmfb = tmp_path / "m.vmfb"
    r = run("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET, "-o", vmfb,
            env=ENV, timeout=300)
    assert r.code == 0, r.err
    r = run("exec", "--prefix", prefix, "--", "iree-run-module", f"--module={vmfb}",
            "--device=local-sync", "--function=simple_mul", "--input=4xf32=2", "--input=4xf32=5",
            env=ENV, timeout=120)
    assert r.code == 0, r.err
    assert "4xf32=10 10 10 10" in r.out


def test_exec_knows_iree_tools_by_their_help_not_their_names(prefix, tmp_path):
    """Under other names, IREE's compiler still gets the response file and
    the runtime tool the flagfile (before, any name but iree-compile* and
    iree-opt* got the runtime's --flagfile, which the compiler refuses)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "compiler").symlink_to(VENV_BIN / "iree-compile")
    (bin_dir / "runner").symlink_to(VENV_BIN / "iree-run-module")
    env = {**ENV, "IREEPKG_CACHE_DIR": str(tmp_path / "cache")}
    r = run("exec", "--prefix", prefix, "--", bin_dir / "compiler", PROGRAM, *TARGET,
            "--compile-to=preprocessing", env=env, timeout=300)
    assert r.code == 0, r.err
    assert "ireepkg.mul_pipeline" in r.out
    vmfb = tmp_path / "m.vmfb"
    r = run("exec", "--prefix", prefix, "--", bin_dir / "compiler", PROGRAM, *TARGET,
            "-o", vmfb, env=env, timeout=300)
    assert r.code == 0, r.err
    r = run("exec", "--prefix", prefix, "--", bin_dir / "runner", f"--module={vmfb}",
            "--device=local-sync", "--function=simple_mul", "--input=4xf32=2",
            "--input=4xf32=5", env=env, timeout=120)
    assert r.code == 0, r.err
    assert "4xf32=10 10 10 10" in r.out
    kinds = json.loads((tmp_path / "cache" / "tools.json").read_text())
    assert sorted(kinds.values()) == ["compiler", "runtime"]


def test_flags_compiler_lists_every_contribution(prefix):
    r = run("flags", "compiler", "--format", "json", "--prefix", prefix)
    assert r.code == 0, r.err
    flags = json.loads(r.out)["flags"]
    mp = f"{prefix}/packages/mul-pipeline/0.3.0"
    assert [(f["flag"], f["package"]) for f in flags] == [
        ("--iree-plugin=input_torch", "mul-pipeline"),
        ("--iree-torch-decompose-complex-ops=true", "mul-pipeline"),
        ("--iree-plugin=hal_target_llvm_cpu", "mul-pipeline"),
        (f"--iree-preprocessing-transform-spec-filename={mp}/specs/mul_spec.mlir", "mul-pipeline"),
        ("--iree-preprocessing-pass-pipeline=builtin.module(func.func(canonicalize))", ""),
    ]
    r = run("flags", "compiler", "--set", "iree-llvmcpu-distribution-size=64",
            "--set", "--iree-torch-decompose-complex-ops=false", "--prefix", prefix)
    assert r.code == 0, r.err
    assert "--iree-llvmcpu-distribution-size=64\n" in r.out
    assert "--iree-torch-decompose-complex-ops=false\n" in r.out


def test_invalid_option_values_are_refused(prefix):
    r = run("flags", "compiler", "--set", "iree-llvmcpu-distribution-size=4096", "--prefix", prefix)
    assert r.code == 1
    assert ("package 'mul-pipeline': option --iree-llvmcpu-distribution-size of plugin "
            "hal_target_llvm_cpu (package mul-pipeline): 4096 is greater than the maximum 1024") in r.err
    r = run("flags", "compiler", "--set", "iree-torch-decompose-complex-ops=maybe", "--prefix", prefix)
    assert r.code == 1
    assert '"maybe" is not a boolean (true or false)' in r.err
    r = run("flags", "compiler", "--set", "iree-llvmcpu-distribution-sise=8", "--prefix", prefix)
    assert r.code == 1
    assert ('no active plugin has an option "iree-llvmcpu-distribution-sise" '
            '(did you mean "iree-llvmcpu-distribution-size"?)') in r.err


def test_project_option_is_refused_before_the_compiler_runs(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "plugins.json").write_text(json.dumps({
        "schema_version": 1,
        "plugins": [{"name": "simple-mul", "version": "^1.2"},
                    {"name": "mul-pipeline", "version": "^0.3",
                     "options": {"iree-llvmcpu-distribution-size": 0}}]}, indent=2))
    env = {**ENV, "IREEPKG_PREFIX": ""}
    r = run("install", DIST / "simple-mul-1.2.0.ireepkg", DIST / "mul-pipeline-0.3.0.ireepkg",
            cwd=project, env=env)
    assert r.code == 0, r.err
    assert "0 is less than the minimum 1" in r.err  # reported as a warning at install
    out = tmp_path / "never.vmfb"
    r = run("exec", "--", "iree-compile", PROGRAM, *TARGET, "-o", out, cwd=project, env=env,
            timeout=120)
    assert r.code == 1
    assert ("ireepkg: error: plugins.json: package 'mul-pipeline': option "
            "--iree-llvmcpu-distribution-size of plugin hal_target_llvm_cpu (package "
            "mul-pipeline): 0 is less than the minimum 1") in r.err
    assert not out.exists()


def spec_package(root, name, spec_text):
    d = root / name
    (d / "specs").mkdir(parents=True)
    (d / "specs" / "spec.mlir").write_text(spec_text)
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": name, "version": "1.0.0",
        "compiler": {"hooks": [{"point": "transform-spec", "file": "specs/spec.mlir"}]}}, indent=2))
    return pack(d, root / "dist")


def test_single_valued_hook_conflict_and_choice(prefix, tmp_path):
    other = spec_package(tmp_path, "other-spec", (EXAMPLES / "mul-pipeline" / "specs" / "mul_spec.mlir").read_text())
    r = run("install", other, "--prefix", prefix)
    assert r.code == 0, r.err
    assert ('packages "mul-pipeline" and "other-spec" both set "transform-spec", which takes one value'
            in r.err)  # a warning at install; compiler.flags says why it is empty
    notes = json.loads((prefix / "state" / "activation.json").read_text())["compiler"]["notes"]
    assert [n["severity"] for n in notes] == ["error"]
    assert "both set \"transform-spec\"" in notes[0]["message"]
    assert (prefix / "state" / "compiler.flags").read_text() == ""  # no flags at all
    r = run("flags", "compiler", "--prefix", prefix)
    assert r.code == 1
    assert 'packages "mul-pipeline" and "other-spec" both set "transform-spec", which takes one value' in r.err
    assert 'hint: pick one in plugins.json: "choose": {"transform-spec": "mul-pipeline"}' in r.err


def test_choose_in_a_project_picks_one(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    other = spec_package(tmp_path, "other-spec", (EXAMPLES / "mul-pipeline" / "specs" / "mul_spec.mlir").read_text())
    (project / "plugins.json").write_text(json.dumps({
        "schema_version": 1,
        "plugins": [{"name": "simple-mul"}, {"name": "mul-pipeline"}, {"name": "other-spec"}],
        "choose": {"transform-spec": "other-spec"}}, indent=2))
    env = {**ENV, "IREEPKG_PREFIX": ""}
    r = run("install", DIST / "simple-mul-1.2.0.ireepkg", DIST / "mul-pipeline-0.3.0.ireepkg", other,
            cwd=project, env=env)
    assert r.code == 0, r.err
    r = run("flags", "compiler", cwd=project, env=env)
    assert r.code == 0, r.err
    specs = [l for l in r.out.splitlines() if "transform-spec-filename" in l]
    assert specs == [f"--iree-preprocessing-transform-spec-filename={project}/.iree-plugins/packages/other-spec/1.0.0/specs/spec.mlir"]


def dynamic_package(tmp_path):
    pkg = tmp_path / "dyn"
    (pkg / "lib").mkdir(parents=True)
    src = tmp_path / "dyn.c"
    src.write_text('__attribute__((visibility("default"))) const void* '
                   'iree_get_compiler_plugin_info(void) { return 0; }\n')
    subprocess.run(["clang-22", "-shared", "-fPIC", src, "-o", pkg / "lib" / "libdyn.so"], check=True)
    (pkg / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "dyn-plugin", "version": "0.1.0",
        "compiler": {"plugins": [{"id": "dyn_plugin", "kind": "iree-dynamic", "api_version": 1,
                                  "library": {"linux-x86_64": "lib/libdyn.so"}}]}}, indent=2))
    return pack(pkg, tmp_path / "dist")


def test_dynamic_plugin_with_the_released_compiler(tmp_path):
    prefix = tmp_path / "p"
    r = run("install", dynamic_package(tmp_path), "--prefix", prefix)
    assert r.code == 0, r.err
    # Not in compiler.flags: whether it can be loaded depends on the compiler.
    assert "load-plugin" not in (prefix / "state" / "compiler.flags").read_text()
    env = {**ENV, "IREEPKG_CACHE_DIR": str(tmp_path / "c")}
    r = run("flags", "compiler", "--prefix", prefix, env=env)
    assert r.code == 0, r.err
    lib = f"{prefix}/packages/dyn-plugin/0.1.0/lib/libdyn.so"
    assert r.out.splitlines() == [f"--iree-load-plugin={lib}", "--iree-plugin=dyn_plugin"]
    assert (tmp_path / "c" / "compilers.json").exists()  # probed once, cached
    # The released compiler really loads it, and refuses this test library
    # (its entry point returns NULL), naming the library.
    r = run("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET,
            "--compile-to=input", env=env, timeout=120)
    assert r.code != 0
    assert "libdyn.so" in r.err


def test_dynamic_plugin_with_a_compiler_that_cannot_load_plugins(tmp_path):
    prefix = tmp_path / "p"
    assert run("install", dynamic_package(tmp_path), "--prefix", prefix).code == 0
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "iree-compile").write_text(
        "#!/bin/sh\n"
        "case \"$1\" in --version) echo 'IREE compiler version 3.0.0 @ abc';; "
        "*) echo '  --iree-plugin=<string> - Plugins to activate';; esac\n")
    os.chmod(fake / "iree-compile", 0o755)
    env = {"PATH": f"{fake}:{os.environ['PATH']}", "IREEPKG_CACHE_DIR": str(tmp_path / "c")}
    r = run("flags", "compiler", "--prefix", prefix, env=env)
    assert r.code == 1
    assert ('plugin "dyn_plugin" is a dynamically loaded compiler plugin (iree-dynamic), but '
            f"{fake}/iree-compile (IREE 3.0.0) cannot load plugins: it has no --iree-load-plugin flag"
            in r.err)
    assert "hint: use an IREE compiler built with dynamic plugin support" in r.err
    r = run("exec", "--prefix", prefix, "--", "iree-compile", "x.mlir", env=env)
    assert r.code == 1 and "cannot load plugins" in r.err
