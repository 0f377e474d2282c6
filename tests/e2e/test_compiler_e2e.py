"""Compiler integration end to end, with the real iree-compile from the
pinned wheel: the configuration package's flags are accepted and change the
compiled result; invalid option values are refused by ireepkg before any
compiler runs, naming the plugin, the option and the rule; single-valued
hooks conflict unless plugins.json chooses; an iree-dynamic package packs,
and is activated only for a compiler that can load plugins (probed: IREE
3.13's released iree-compile has the experimental --iree-load-plugin; a
compiler without it gets a clear error) and whose plugin ABI hash is the
library's (a small C library of the test's own, built with clang-22; a
wrong hash is refused at pack, and at activation for a hand-made archive,
before iree-compile sees it; never on Windows)."""
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


# The plugin API header hash of the iree-base-compiler 3.13.0 wheel.
WHEEL_HASH = "27493ee2eddc0611"
WRONG_HASH = "deadbeef00000001"
# IreeCompilerPluginInfo as the 3.13 wheel reads it. The library registers
# no session: one that does needs IREE's C++ symbols, which the wheel does
# not export.
PLUGIN_SOURCE = """#include <stdbool.h>
#include <stdint.h>
struct Info { uint64_t abiHash; const char *pluginId; const char *pluginVersion;
              bool (*registerPlugin)(void *registrar); };
static bool registerNothing(void *registrar) { (void)registrar; return true; }
static const struct Info kInfo = {0x%sull, "%s", "1.0", registerNothing};
__attribute__((visibility("default"))) const struct Info *
iree_get_compiler_plugin_info(void) { return &kInfo; }
"""


def dynamic_library(tmp_path, abi_hash=WHEEL_HASH, plugin_id="dyn_plugin", name="libdyn.so"):
    src = tmp_path / f"{name}.c"
    src.write_text(PLUGIN_SOURCE % (abi_hash, plugin_id))
    out = tmp_path / name
    subprocess.run(["clang-22", "-shared", "-fPIC", src, "-o", out], check=True, timeout=120)
    return out


def dynamic_package_dir(tmp_path, abi_hash=WHEEL_HASH, plugin_id="dyn_plugin"):
    pkg = tmp_path / "dyn"
    (pkg / "lib").mkdir(parents=True)
    shutil.copy(dynamic_library(tmp_path, abi_hash, plugin_id), pkg / "lib" / "libdyn.so")
    (pkg / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "dyn-plugin", "version": "0.1.0",
        "compiler": {"plugins": [{"id": "dyn_plugin", "kind": "iree-dynamic",
                                  "library": {"linux-x86_64": "lib/libdyn.so"}}]}}, indent=2))
    return pkg


def dynamic_package(tmp_path, *pack_args, **kwargs):
    return pack(dynamic_package_dir(tmp_path, **kwargs), tmp_path / "dist", *pack_args)


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
    # Probed once and cached, the compiler's hash with it: the compiler
    # named it refusing ireepkg's sentinel library.
    (entry,) = json.loads((tmp_path / "c" / "compilers.json").read_text()).values()
    assert (entry["plugin_abi_hash"], entry["plugin_abi_hash_from"]) == (
        WHEEL_HASH, "its refusal of a plugin built against other headers")
    # The released compiler loads the library through these flags; the
    # library registers no session, so activating the id fails, in IREE's
    # words.
    r = run("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET,
            "--compile-to=input", env=env, timeout=120)
    assert r.code == 1
    assert ("could not activate requested IREE plugin 'dyn_plugin' because it is not "
            "registered (available plugins: ") in r.err, r.err
    assert "IREE Dynamic Plugin ERROR" not in r.err


def test_dynamic_plugin_with_a_wrong_hash_is_refused_at_pack(tmp_path):
    pkg = dynamic_package_dir(tmp_path, abi_hash=WRONG_HASH)
    r = run("pack", pkg, "-o", tmp_path / "dist")
    assert r.code == 1
    assert (f'/compiler/plugins/0/library/linux-x86_64: iree-dynamic plugin "dyn_plugin" '
            f"(lib/libdyn.so, read in IREE's hash64 layout) was built against plugin API "
            f"headers {WRONG_HASH}, but IREE 3.13.0 has {WHEEL_HASH}: its compiler would "
            "refuse it") in r.err, r.err
    assert not (tmp_path / "dist").exists() or not list((tmp_path / "dist").iterdir())


def test_dynamic_plugin_with_another_id_is_refused_at_pack(tmp_path):
    pkg = dynamic_package_dir(tmp_path, plugin_id="other_id")
    r = run("pack", pkg, "-o", tmp_path / "dist")
    assert r.code == 1
    assert ('/compiler/plugins/0/id: iree-dynamic plugin "dyn_plugin" (lib/libdyn.so, read '
            "in IREE's hash64 layout) reports the id \"other_id\", not \"dyn_plugin\"") in r.err


def test_dynamic_plugin_with_a_declared_hash_other_than_its_own(tmp_path):
    pkg = dynamic_package_dir(tmp_path)
    manifest = json.loads((pkg / "ireeplugin.json").read_text())
    manifest["compiler"]["plugins"][0]["abi_hash"] = WRONG_HASH
    (pkg / "ireeplugin.json").write_text(json.dumps(manifest, indent=2))
    r = run("pack", pkg, "-o", tmp_path / "dist")
    assert r.code == 1
    assert (f"was built against plugin API headers {WHEEL_HASH}, but the manifest's abi_hash "
            f"is {WRONG_HASH}") in r.err, r.err
    manifest["compiler"]["plugins"][0]["abi_hash"] = WHEEL_HASH
    (pkg / "ireeplugin.json").write_text(json.dumps(manifest, indent=2))
    assert run("pack", pkg, "-o", tmp_path / "dist").code == 0


def test_hand_made_archive_with_a_wrong_hash_is_refused_before_the_compiler_sees_it(tmp_path):
    # Packed without reading the library (as a hand-made archive would be).
    archive = dynamic_package(tmp_path, "--no-load-checks", abi_hash=WRONG_HASH)
    prefix = tmp_path / "p"
    assert run("install", archive, "--prefix", prefix).code == 0
    lib = f"{prefix}/packages/dyn-plugin/0.1.0/lib/libdyn.so"
    env = {**ENV, "IREEPKG_CACHE_DIR": str(tmp_path / "c")}
    refusal = (f"ireepkg: error: package 'dyn-plugin': plugin \"dyn_plugin\" is not activated: "
               f"{lib} was built against plugin API headers {WRONG_HASH}, but "
               f"{VENV_BIN / 'iree-compile'} (IREE 3.13.0) has {WHEEL_HASH} (learned from its "
               "refusal of a plugin built against other headers); that compiler would refuse it\n"
               "  hint: install a build of dyn-plugin for this compiler, or remove the package\n")
    for args in (("flags", "compiler"), ("flags", "compiler", "--format", "flagfile"),
                 ("exec", "--prefix", prefix, "--", "iree-compile", PROGRAM, *TARGET)):
        if args[0] == "flags":
            args = (*args, "--prefix", prefix)
        r = run(*args, env=env, timeout=120)
        assert (r.code, r.out) == (1, ""), r
        assert r.err.endswith(refusal), r.err
        assert "IREE Dynamic Plugin ERROR" not in r.err  # iree-compile never ran


def test_the_compilers_own_refusal_is_shown_whole(tmp_path):
    # What ireepkg checks can still reach the compiler another way (here a
    # library the user names); then the compiler's own text is shown whole,
    # by exec (iree-compile's own stderr) and by doctor.
    bad = dynamic_library(tmp_path, abi_hash=WRONG_HASH, name="libbad.so")
    whole = (f"[IREE Dynamic Plugin ERROR]: plugin '{bad}' was built against plugin API "
             f"headers {WRONG_HASH}, this compiler has {WHEEL_HASH}; rebuild the plugin "
             "against this compiler")
    prefix = tmp_path / "p"
    assert run("install", dynamic_package(tmp_path), "--prefix", prefix).code == 0
    env = {**ENV, "IREEPKG_CACHE_DIR": str(tmp_path / "c")}
    r = run("exec", "--prefix", prefix, "--", "iree-compile", f"--iree-load-plugin={bad}",
            PROGRAM, *TARGET, env=env, timeout=120)
    assert r.code == 1
    assert whole + "\n" in r.err, r.err
    made = dynamic_package(tmp_path / "made", "--no-load-checks", abi_hash=WRONG_HASH)
    other = tmp_path / "other"
    assert run("install", made, "--prefix", other).code == 0
    lib = f"{other}/packages/dyn-plugin/0.1.0/lib/libdyn.so"
    r = run("doctor", "--prefix", other, env=env, timeout=300)
    assert r.code == 1
    assert ("FAIL  dyn-plugin 0.1.0 dyn_plugin (iree-dynamic): the compiler does not load it: "
            "iree-compile failed (exit status 1): "
            + whole.replace(str(bad), lib)) in r.out, r.out


def test_dynamic_plugins_are_not_activated_for_windows(tmp_path):
    pkg = tmp_path / "win"
    (pkg / "lib").mkdir(parents=True)
    src = tmp_path / "win.c"
    src.write_text('__declspec(dllexport) const void *iree_get_compiler_plugin_info(void) '
                   "{ return 0; }\n")
    subprocess.run(["x86_64-w64-mingw32-gcc", "-shared", src, "-o", pkg / "lib" / "dyn.dll"],
                   check=True, timeout=120)
    (pkg / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "win-plugin", "version": "0.1.0",
        "compiler": {"plugins": [{"id": "win_plugin", "kind": "iree-dynamic",
                                  "library": {"windows-x86_64": "lib/dyn.dll"}}]}}))
    r = run("pack", pkg, "-o", tmp_path / "dist")
    assert r.code == 0, r.err
    assert ('/compiler/plugins/0/library/windows-x86_64: iree-dynamic plugin "win_plugin": '
            "the windows-x86_64 build is never activated: IREE's compilers do not load "
            "dynamic plugins on Windows") in r.err, r.err
    prefix = tmp_path / "p"
    r = run("install", next((tmp_path / "dist").iterdir()), "--prefix", prefix,
            "--platform", "windows-x86_64")
    assert r.code == 0, r.err
    env = {**ENV, "IREEPKG_CACHE_DIR": str(tmp_path / "c")}
    r = run("flags", "compiler", "--prefix", prefix, env=env)
    assert (r.code, r.out) == (0, ""), r
    assert ("package 'win-plugin': iree-dynamic plugin \"win_plugin\" is not activated: "
            "IREE's compilers do not load dynamic plugins on Windows") in r.err, r.err
    r = run("info", "win-plugin", "--prefix", prefix)
    assert r.code == 0, r.err
    assert ("  compiler plugin win_plugin (iree-dynamic)\n"
            "      windows-x86_64: lib/dyn.dll (never activated: IREE loads no dynamic plugins "
            "on Windows)\n"
            "      activated (--iree-load-plugin, --iree-plugin=win_plugin) when its plugin ABI "
            "hash is the compiler's\n") in r.out, r.out


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


def test_the_probe_reads_each_layout_without_registering(tmp_path):
    probe = BUILD / "bin" / "ireepkg-plugin-probe"
    lib = dynamic_library(tmp_path)
    r = subprocess.run([probe, "--compiler-plugin", "hash64", lib], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "path": str(lib), "layout": "hash64", "dlopen": "ok", "info": "ok",
        "api_version": None, "abi_hash": WHEEL_HASH, "plugin_id": "dyn_plugin",
        "plugin_version": "1.0", "register": True}
    # IREE's newer sources: a 32-bit API version first, the hash a string.
    # The registration function would abort: the probe never calls it.
    src = tmp_path / "newer.c"
    src.write_text("#include <stdbool.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
                   "struct Info { uint32_t api; const char *hash, *id, *version;\n"
                   "              bool (*registerPlugin)(void *); };\n"
                   "static bool die(void *r) { (void)r; abort(); }\n"
                   'static const struct Info k = {2, "0123abcd", "newer", "0.3", die};\n'
                   '__attribute__((visibility("default"))) const struct Info *'
                   "iree_get_compiler_plugin_info(void) { return &k; }\n")
    newer = tmp_path / "libnewer.so"
    subprocess.run(["clang-22", "-shared", "-fPIC", src, "-o", newer], check=True, timeout=120)
    r = subprocess.run([probe, "--compiler-plugin", "api-version-hash-string", newer],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [report[k] for k in ("api_version", "abi_hash", "plugin_id", "plugin_version",
                                "register")] == [2, "0123abcd", "newer", "0.3", True]
    r = subprocess.run([probe, "--compiler-plugin", "v9", lib], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith('ireepkg-plugin-probe: error: unknown compiler plugin layout '
                               '"v9" (hash64, api-version-hash-string)\nusage:')


def test_exec_keeps_activation_order_with_a_dynamic_plugin(tmp_path):
    # A stand-in compiler that prints its arguments, says it loads plugins
    # and names the 3.13 hash when refusing ireepkg's sentinel library.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "iree-compile").write_text(
        "#!/bin/sh\n"
        "case \"$1\" in\n"
        "  --version) echo 'IREE compiler version 3.13.0 @ abc'; exit 0;;\n"
        "  --help*) echo '  --iree-load-plugin=<string> - Shared library to load'; exit 0;;\n"
        "  --iree-load-plugin=*sentinel*) echo \"[IREE Dynamic Plugin ERROR]: plugin 'x' was "
        f"built against plugin API headers 0000000000000000, this compiler has {WHEEL_HASH}; "
        "rebuild the plugin against this compiler\" >&2; exit 1;;\n"
        "esac\n"
        "for a in \"$@\"; do echo \"$a\"; done\n")
    os.chmod(fake / "iree-compile", 0o755)
    static = tmp_path / "static"
    static.mkdir()
    (static / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "static-after", "version": "1.0.0",
        "compiler": {"plugins": [{"id": "static_after", "kind": "iree-static"}]}}))
    prefix = tmp_path / "p"
    assert run("install", dynamic_package(tmp_path), "--prefix", prefix).code == 0
    assert run("install", pack(static, tmp_path / "dist2"), "--prefix", prefix).code == 0
    env = {"PATH": f"{fake}:{os.environ['PATH']}", "IREEPKG_CACHE_DIR": str(tmp_path / "c")}
    r = run("flags", "compiler", "--prefix", prefix, env=env)
    assert r.code == 0, r.err
    lib = f"{prefix}/packages/dyn-plugin/0.1.0/lib/libdyn.so"
    assert r.out.splitlines() == [f"--iree-load-plugin={lib}", "--iree-plugin=dyn_plugin",
                                  "--iree-plugin=static_after"]
    flags = r.out.splitlines()
    r = run("exec", "--prefix", prefix, "--tool-kind", "compiler", "--",
            fake / "iree-compile", "in.mlir", env=env)
    assert r.code == 0, r.err
    assert r.out.splitlines() == [*flags, "in.mlir"]
