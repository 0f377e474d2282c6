"""`ireepkg doctor` and `ireepkg-plugin-probe`.

The real example package must come out clean (both the system library and the
embedded ELF, and a FatELF-only variant), with the IREE tools of the venv
found. Then fixture plugins built here with clang-22, each broken in one way
(crash in load or query, NULL query, future ABI version, ASan, FULL_STATUS,
missing or undeclared imports, a leak, a hang, a failed load, exit() in load,
abort in resolve), must each be reported with an exact message while doctor
itself exits 1 and never crashes. Finally the probe binary is checked
directly (usage errors, non-libraries, a library without the query symbol,
load parameters)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from archive_forge import file, forge
from conftest import (BUILD, EXAMPLES, REPO, copy_package, ireepkg_path, pack, run,
                      simple_mul_build)

VENV_BIN = pathlib.Path(sys.executable).parent
CLANG = shutil.which("clang-22")
PROBE = ireepkg_path().parent / "ireepkg-plugin-probe"
SIMPLE_MUL_ARCHIVE = BUILD / "examples" / "dist" / "simple-mul-1.2.0.ireepkg"

UNDECLARED_NOTE = ("Undeclared imports are found by name only: each plugin was asked "
                   "for the imports the other plugins of its package declare and for "
                   "\"ireepkg_doctor_unknown_import\".")


def doctor(prefix, *extra, env=None):
    full_env = {"PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    full_env.update(env or {})
    return run("doctor", "--prefix", prefix, *extra, env=full_env)


def install(prefix, *archives):
    r = run("install", "--prefix", prefix, *archives)
    assert r.code == 0, r.err


#===------------------------------------------------------------------------===#
# The real example package
#===------------------------------------------------------------------------===#

def test_example_package_is_healthy(tmp_path):
    prefix = tmp_path / "prefix"
    install(prefix, SIMPLE_MUL_ARCHIVE)
    r = doctor(prefix, "--json")
    assert r.code == 0, r
    report = json.loads(r.out)
    assert report["ok"] is True
    assert report["platform"] == "linux-x86_64"
    assert list(report) == ["prefix", "platform", "host", "probe_path", "timeout_seconds",
                            "tools", "iree", "plugins", "compiler_plugins",
                            "hook_pipelines", "shadowed_imports", "ok"]
    assert report["compiler_plugins"] == []
    # The IREE in use is the wheel's version, not the release candidate
    # `iree-compile --version` names.
    assert report["iree"] == {
        "version": "3.13.0",
        "source": f"iree-base-compiler 3.13.0 ({VENV_BIN}/iree-compile)",
        "problem": None,
        "requirements": [{"package": "simple-mul", "version": "1.2.0",
                          "requires": ">=3.10.0, <4.0.0", "ok": True}]}
    # Both plugins are simple-mul's own: no other package is shadowed.
    assert report["shadowed_imports"] == []

    tools = {t["name"]: t for t in report["tools"]}
    assert list(tools) == ["iree-compile", "iree-run-module", "iree-benchmark-module"]
    for name, tool in tools.items():
        assert tool["found"] is True, tool
        assert tool["path"] == str(VENV_BIN / name)
        assert "problem" not in tool
    compile_version = tools["iree-compile"]["version"]
    assert compile_version.startswith("IREE compiler version 3.13.0"), compile_version
    assert " @ " in compile_version
    assert tools["iree-compile"]["package"] == "iree-base-compiler 3.13.0"
    # iree-run-module has no --version: present, with the wheel's version.
    assert tools["iree-run-module"]["version"] == "present"
    assert tools["iree-run-module"]["package"] == "iree-base-runtime 3.13.0"

    plugins = report["plugins"]
    assert [(p["package"], p["version"], p["plugin"], p["format"]) for p in plugins] == [
        ("simple-mul", "1.2.0", "simple_mul", "embedded-elf"),
        ("simple-mul", "1.2.0", "simple_mul_system", "system-library"),
    ]
    pkg_dir = prefix.resolve() / "packages" / "simple-mul" / "1.2.0"
    assert plugins[0]["path"] == str(pkg_dir / "runtime" / f"simple_mul.{simple_mul_build()}.so")
    assert plugins[1]["path"] == str(pkg_dir / "runtime" / "linux-x86_64" / "libsimple_mul.so")
    for p in plugins:
        assert p["ok"] is True and p["problems"] == [] and p["skipped"] is None, p
        assert p["imports"] == ["simple_mul_workgroup"]
        assert p["undeclared_checked"] == ["ireepkg_doctor_unknown_import"]
        probe = p["probe"]
        assert probe["query"] == "ok" and probe["load"] == "ok"
        assert probe["version"] == 1 and probe["name"] == "simple_mul"
        assert probe["sanitizer"] == "none"
        assert probe["resolved"] == ["simple_mul_workgroup"]
        assert probe["missing_required"] == [] and probe["undeclared_resolved"] == []
        assert probe["unload"] == "ok" and probe["leaked_allocations"] == 0
        assert probe["allocations"] == 1
        assert p["process"]["end"] == "exited" and p["process"]["exit_code"] == 0
    assert plugins[0]["probe"]["features"] == ["STANDALONE"]
    assert plugins[1]["probe"]["features"] == []

    text = doctor(prefix)
    assert text.code == 0, text
    lines = text.out.splitlines()
    assert lines[0] == "IREE tools:"
    assert lines[1].startswith(f"  iree-compile           {VENV_BIN}/iree-compile — "
                               "IREE compiler version 3.13.0")
    assert lines[1].endswith(" (iree-base-compiler 3.13.0)")
    assert lines[2] == (f"  iree-run-module        {VENV_BIN}/iree-run-module — present "
                        "(iree-base-runtime 3.13.0)")
    rest = lines[4:]
    if simple_mul_build() != "x86_64":  # which build of simple_mul was probed, and why
        assert rest[6].startswith(f"      build {simple_mul_build()}, chosen for this CPU: "), rest
        del rest[6]
    assert rest == [
        "",
        f"IREE in use: 3.13.0 — iree-base-compiler 3.13.0 ({VENV_BIN}/iree-compile)",
        "ok    simple-mul 1.2.0 requires IREE >=3.10.0, <4.0.0",
        "",
        f"Runtime plugins in {prefix.resolve()} (linux-x86_64):",
        "ok    simple-mul 1.2.0 simple_mul (embedded-elf) — resolves simple_mul_workgroup",
        "ok    simple-mul 1.2.0 simple_mul_system (system-library) — resolves "
        "simple_mul_workgroup",
        "",
        "2 plugins checked: 2 ok, 0 with problems",
        UNDECLARED_NOTE,
    ]


def test_fatelf_only_plugin_is_extracted_for_the_host(tmp_path):
    """A package whose embedded plugin only ships a .sos: doctor selects the
    x86_64 image and loads that."""
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "simple-mul")
    rt = pkg / "runtime"
    r = run("fatelf", "join", "-o", rt / "simple_mul.sos",
            rt / "simple_mul.x86_64.so", rt / "simple_mul.aarch64.so")
    assert r.code == 0, r.err
    m = json.loads((pkg / "ireeplugin.json").read_text())
    m["runtime"]["plugins"][0]["library"] = {"fat": "runtime/simple_mul.sos"}
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2))
    (rt / "simple_mul.x86_64.so").unlink()
    (rt / "simple_mul.aarch64.so").unlink()
    prefix = tmp_path / "prefix"
    install(prefix, pack(pkg, tmp_path / "dist"))
    r = doctor(prefix, "--json")
    assert r.code == 0, r
    p = json.loads(r.out)["plugins"][0]
    assert p["ok"] is True, p
    assert p["path"].endswith("/runtime/simple_mul.sos")
    assert p["fatelf_image"] == "x86_64"
    assert p["probe"]["features"] == ["STANDALONE"]
    assert p["probe"]["path"] != p["path"]  # the extracted temporary copy
    assert not pathlib.Path(p["probe"]["path"]).exists()  # and it is gone


def test_plugins_of_other_platforms_are_skipped(tmp_path):
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, "--platform", "linux-aarch64",
            SIMPLE_MUL_ARCHIVE)
    assert r.code == 0, r.err
    r = doctor(prefix)
    assert r.code == 0, r
    reason = ("the prefix targets linux-aarch64; only plugins for this host "
              "(linux-x86_64) can be loaded")
    assert r.out.split("(linux-aarch64):\n", 1)[1] == (
        f"skip  simple-mul 1.2.0 simple_mul (embedded-elf) — {reason}\n"
        f"skip  simple-mul 1.2.0 simple_mul_system (system-library) — {reason}\n"
        "\n"
        "0 plugins checked: 0 ok, 0 with problems, 2 skipped\n")
    plugins = json.loads(doctor(prefix, "--json").out)["plugins"]
    assert [(p["ok"], p["skipped"], p["probe"]) for p in plugins] == [(True, reason, None)] * 2


def test_plugin_without_a_build_for_the_host_is_skipped(tmp_path):
    pkg = copy_package(EXAMPLES / "simple-mul", tmp_path / "simple-mul")
    m = json.loads((pkg / "ireeplugin.json").read_text())
    for key in ("x86_64", "x86_64_v3"):  # aarch64 only
        del m["runtime"]["plugins"][0]["library"][key]
        (pkg / "runtime" / f"simple_mul.{key}.so").unlink()
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2))
    prefix = tmp_path / "prefix"
    install(prefix, pack(pkg, tmp_path / "dist"))
    r = doctor(prefix)
    assert r.code == 0, r
    tail = r.out.split("(linux-x86_64):\n", 1)[1].splitlines()
    assert tail[:4] == [
        "skip  simple-mul 1.2.0 simple_mul (embedded-elf) — no build for linux-x86_64",
        "ok    simple-mul 1.2.0 simple_mul_system (system-library) — resolves "
        "simple_mul_workgroup",
        "",
        "1 plugin checked: 1 ok, 0 with problems, 1 skipped",
    ]


def test_empty_prefix_and_missing_tools(tmp_path):
    r = run("doctor", "--prefix", tmp_path / "empty", env={"PATH": "/nonexistent",
                                                           "VIRTUAL_ENV": ""})
    assert r.code == 0, r
    assert r.out == (
        "IREE tools:\n"
        "  iree-compile           not found on PATH or in $VIRTUAL_ENV/bin\n"
        "  iree-run-module        not found on PATH or in $VIRTUAL_ENV/bin\n"
        "  iree-benchmark-module  not found on PATH or in $VIRTUAL_ENV/bin\n"
        "\n"
        "IREE in use: unknown — no IREE found: neither iree-compile nor iree-run-module is on "
        "PATH or in $VIRTUAL_ENV/bin\n"
        "\n"
        f"Runtime plugins in {tmp_path / 'empty'} (linux-x86_64):\n"
        "  none installed\n")
    # $VIRTUAL_ENV/bin is the fallback.
    r = run("doctor", "--prefix", tmp_path / "empty", "--json",
            env={"PATH": "/nonexistent", "VIRTUAL_ENV": str(VENV_BIN.parent)})
    tools = json.loads(r.out)["tools"]
    assert [(t["found"], t["source"]) for t in tools] == [(True, "VIRTUAL_ENV")] * 3


def test_iree_requirements_of_installed_packages(tmp_path):
    """doctor checks every installed package's requires.iree against the
    IREE in use (the wheels' 3.13.0), and says once when no IREE is found."""
    prefix = tmp_path / "prefix"
    install(prefix, SIMPLE_MUL_ARCHIVE)
    four = copy_package(EXAMPLES / "simple-mul", tmp_path / "four", name="needs-four",
                        requires={"iree": ">=4.0.0"})
    r = run("install", "--prefix", prefix, "--ignore-iree-version", pack(four, tmp_path / "dist"),
            env={"PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert r.code == 0, r
    r = doctor(prefix)
    assert r.code == 1, r
    assert (f"\nIREE in use: 3.13.0 — iree-base-compiler 3.13.0 ({VENV_BIN}/iree-compile)\n"
            "ok    simple-mul 1.2.0 requires IREE >=3.10.0, <4.0.0\n"
            "FAIL  needs-four 1.2.0 requires IREE >=4.0.0, but IREE 3.13.0 is in use (change the "
            "IREE, or install a version of needs-four whose manifest's requires.iree accepts "
            "it)\n\n") in r.out
    report = json.loads(doctor(prefix, "--json").out)
    assert report["ok"] is False
    assert report["iree"]["requirements"] == [
        {"package": "simple-mul", "version": "1.2.0", "requires": ">=3.10.0, <4.0.0", "ok": True},
        {"package": "needs-four", "version": "1.2.0", "requires": ">=4.0.0", "ok": False}]
    # The runtime plugins themselves are fine.
    assert all(p["ok"] for p in report["plugins"])
    # Without any IREE: not checked, said once.
    r = run("doctor", "--prefix", prefix, env={"PATH": "/nonexistent", "VIRTUAL_ENV": ""})
    assert r.code == 0, r
    assert ("\nIREE in use: unknown — no IREE found: neither iree-compile nor iree-run-module is "
            "on PATH or in $VIRTUAL_ENV/bin\n"
            "skip  the IREE requirements of 2 packages are not checked: no IREE version is "
            "known\n\n") in r.out
    report = json.loads(run("doctor", "--prefix", prefix, "--json",
                            env={"PATH": "/nonexistent", "VIRTUAL_ENV": ""}).out)
    assert report["iree"]["version"] is None
    assert [q["ok"] for q in report["iree"]["requirements"]] == [None, None]


def test_which_iree_is_in_use(tmp_path):
    """The one definition of the IREE in use: the version of the IREE wheel
    whose RECORD lists the tool (iree-compile first, then iree-run-module),
    else what the tool's --version prints."""
    def tool(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\necho '{text}'\n")
        path.chmod(0o755)
        return path

    def iree(env):
        r = run("doctor", "--prefix", tmp_path / "empty", "--json", env=env)
        return json.loads(r.out)["iree"]

    # A tool outside any Python environment: its --version.
    plain = tool(tmp_path / "plain" / "iree-compile",
                 "IREE compiler version 3.14.0rc20270101 @ 0123abcd")
    got = iree({"PATH": str(plain.parent), "VIRTUAL_ENV": ""})
    assert got["version"] == "3.14.0-rc20270101"
    assert got["source"] == f"`{plain} --version`"
    # A runtime-only environment: iree-run-module's wheel, from its dist-info.
    env = tmp_path / "venv"
    run_module = tool(env / "bin" / "iree-run-module", "no --version here")
    dist = env / "lib" / "python3.12" / "site-packages" / "iree_base_runtime-3.12.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.4\nName: iree-base-runtime\n"
                                   "Version: 3.12.1\n\nVersion: 9.9.9 in the description\n")
    (dist / "RECORD").write_text("../../../bin/iree-run-module,sha256=x,10\n")
    got = iree({"PATH": str(run_module.parent), "VIRTUAL_ENV": ""})
    assert got["version"] == "3.12.1"
    assert got["source"] == f"iree-base-runtime 3.12.1 ({run_module})"
    # iree-compile comes first.
    got = iree({"PATH": f"{run_module.parent}:{plain.parent}", "VIRTUAL_ENV": ""})
    assert got["version"] == "3.14.0-rc20270101"
    # A tool that prints no version.
    tool(tmp_path / "odd" / "iree-compile", "hello")
    got = iree({"PATH": str(tmp_path / "odd"), "VIRTUAL_ENV": ""})
    assert got["version"] is None
    assert got["problem"] == f"`{tmp_path / 'odd' / 'iree-compile'} --version` prints no IREE version"


#===------------------------------------------------------------------------===#
# Broken fixture plugins
#===------------------------------------------------------------------------===#

FIXTURE_C = r"""
#include "ireepkg/iree_executable_plugin.h"

#include <stdlib.h>
#include <unistd.h>

#ifndef FX_VERSION
#define FX_VERSION IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1
#endif
#ifndef FX_FEATURES
#define FX_FEATURES 0
#endif
#ifndef FX_SANITIZER
#define FX_SANITIZER IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE
#endif

typedef ireepkg_hal_executable_plugin_status_t status_t;
typedef struct {
  ireepkg_hal_executable_plugin_allocator_t allocator;
} fx_state_t;

static int *volatile fx_null = 0;

static int fx_fn(void *params, void *context, void *reserved) { return 0; }

static const char *const fx_exports[] = {FX_EXPORTS};

static int fx_known(const char *name) {
#ifdef FX_GREEDY
  return 1;
#endif
  for (size_t i = 0; i < sizeof(fx_exports) / sizeof(fx_exports[0]); ++i)
    if (fx_exports[i][0] && ireepkg_hal_executable_plugin_strcmp(name, fx_exports[i]) == 0)
      return 1;
  return 0;
}

static status_t fx_load(const ireepkg_hal_executable_plugin_environment_v0_t *env,
                        size_t param_count,
                        const ireepkg_hal_executable_plugin_string_pair_t *params,
                        void **out_self) {
#ifdef FX_CRASH_LOAD
  *fx_null = 1;
#endif
#ifdef FX_HANG_LOAD
  for (;;) sleep(1000);
#endif
#ifdef FX_EXIT_LOAD
  _exit(3);
#endif
#ifdef FX_LOAD_FAIL
  return ireepkg_hal_executable_plugin_status_from_code(
      IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
#endif
  void *memory = 0;
  status_t status = ireepkg_hal_executable_plugin_allocator_malloc(
      env->host_allocator, sizeof(fx_state_t), &memory);
  if (!ireepkg_hal_executable_plugin_status_is_ok(status)) return status;
  ((fx_state_t *)memory)->allocator = env->host_allocator;
#ifdef FX_LEAK
  void *leaked = 0;
  ireepkg_hal_executable_plugin_allocator_malloc(env->host_allocator, 64, &leaked);
#endif
  *out_self = memory;
  return ireepkg_hal_executable_plugin_ok_status();
}

static void fx_unload(void *self) {
  fx_state_t *state = (fx_state_t *)self;
  ireepkg_hal_executable_plugin_allocator_free(state->allocator, state);
}

static status_t fx_resolve(void *self,
                           const ireepkg_hal_executable_plugin_resolve_params_v0_t *params,
                           ireepkg_hal_executable_plugin_resolution_t *out_resolution) {
#ifdef FX_ABORT_RESOLVE
  abort();
#endif
  *out_resolution = 0;
  int missing = 0;
  for (size_t i = 0; i < params->count; ++i) {
    if (params->out_fn_ptrs[i]) continue;
    const char *name = params->symbol_names[i];
    int optional = ireepkg_hal_executable_plugin_import_is_optional(name);
    if (fx_known(optional ? name + 1 : name)) {
      params->out_fn_ptrs[i] = (void *)fx_fn;
      params->out_fn_contexts[i] = self;
    } else if (optional) {
      *out_resolution |= IREEPKG_HAL_EXECUTABLE_PLUGIN_RESOLUTION_MISSING_OPTIONAL;
    } else {
      missing = 1;
    }
  }
  return ireepkg_hal_executable_plugin_status_from_code(
      missing ? IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND
              : IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
}

static const ireepkg_hal_executable_plugin_header_t fx_header = {
    .version = FX_VERSION,
    .name = FX_NAME,
    .description = "ireepkg doctor test fixture",
    .features = FX_FEATURES,
    .sanitizer = FX_SANITIZER,
};

static const ireepkg_hal_executable_plugin_v0_t fx_plugin = {
    .header = &fx_header, .load = fx_load, .unload = fx_unload, .resolve = fx_resolve};

IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT const ireepkg_hal_executable_plugin_header_t **
iree_hal_executable_plugin_query(ireepkg_hal_executable_plugin_version_t max_version,
                                 void *reserved) {
#ifdef FX_CRASH_QUERY
  *fx_null = 1;
#endif
#ifdef FX_QUERY_NULL
  return 0;
#endif
  return (const ireepkg_hal_executable_plugin_header_t **)&fx_plugin;
}
"""

# name -> (extra -D defines, names the library resolves, manifest imports)
FIXTURES = {
    "good": ([], ["fx_good"], ["fx_good"]),
    "crash_load": (["FX_CRASH_LOAD"], ["fx_crash_load"], ["fx_crash_load"]),
    "crash_query": (["FX_CRASH_QUERY"], ["fx_crash_query"], ["fx_crash_query"]),
    "query_null": (["FX_QUERY_NULL"], ["fx_query_null"], ["fx_query_null"]),
    "future_version": (["FX_VERSION=2"], ["fx_future"], ["fx_future"]),
    "asan": (["FX_SANITIZER=IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS"],
             ["fx_asan"], ["fx_asan"]),
    "full_status": (["FX_FEATURES=IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_FULL_STATUS"],
                    ["fx_full"], ["fx_full"]),
    "missing_import": ([], ["fx_a"], ["fx_a", "fx_b"]),
    "undeclared": ([], ["fx_u", "fx_good"], ["fx_u"]),
    "leak": (["FX_LEAK"], ["fx_leak"], ["fx_leak"]),
    "hang_load": (["FX_HANG_LOAD"], ["fx_hang"], ["fx_hang"]),
    "load_fail": (["FX_LOAD_FAIL"], ["fx_load_fail"], ["fx_load_fail"]),
    "exit_load": (["FX_EXIT_LOAD"], ["fx_exit"], ["fx_exit"]),
    "abort_resolve": (["FX_ABORT_RESOLVE"], ["fx_abort"], ["fx_abort"]),
}

EXPECTED_PROBLEMS = {
    "good": [],
    "crash_load": ["crashed in load: killed by SIGSEGV (signal 11)"],
    "crash_query": ["crashed in iree_hal_executable_plugin_query: killed by SIGSEGV "
                    "(signal 11)"],
    "query_null": ["iree_hal_executable_plugin_query returned NULL for ABI version 0.1"],
    "future_version": ["ABI version mismatch: the plugin declares version 0x00000002; "
                       "IREE's runtime supports 0x00000001 (v0.1)"],
    "asan": ["sanitizer mismatch: the plugin was built with the address sanitizer and "
             "the runtime with none"],
    "full_status": ["declares the FULL_STATUS feature, which IREE runtimes built without "
                    "full status support (such as the released tools) refuse"],
    "missing_import": ['does not resolve declared import "fx_b"'],
    "undeclared": ['resolves "fx_good", which its manifest does not declare'],
    "leak": ["leaked 1 allocation (64 bytes) after unload"],
    "hang_load": ["timed out in load after 2 s (killed)"],
    "load_fail": ["load failed: INVALID_ARGUMENT"],
    "exit_load": ["the probe exited with status 3 in load without a report (did the "
                  "plugin call exit()?)"],
    "abort_resolve": ["crashed in resolve: killed by SIGABRT (signal 6)"],
}


def build_fixture(out: pathlib.Path, name: str, defines, exports) -> pathlib.Path:
    src = out / "fixture.c"
    if not src.exists():
        src.write_text(FIXTURE_C)
    lib = out / f"lib{name}.so"
    args = [CLANG, "-shared", "-fPIC", "-O1", "-std=c17", "-w", f"-I{REPO / 'include'}",
            f"-DFX_NAME=\"{name}\"",
            "-DFX_EXPORTS=" + (",".join(f'"{e}"' for e in exports) or '""'),
            *[f"-D{d}" for d in defines], "-o", lib, src]
    subprocess.run(list(map(str, args)), check=True)
    return lib


def fixture_package(root: pathlib.Path, name: str, fixtures: dict, version="1.0.0"):
    """A package directory with one system-library plugin per fixture."""
    pkg = root / name
    libdir = pkg / "runtime" / "linux-x86_64"
    libdir.mkdir(parents=True)
    plugins = []
    for fx, (defines, exports, imports) in fixtures.items():
        shutil.copy(build_fixture(root, fx, defines, exports), libdir / f"lib{fx}.so")
        plugins.append({"name": fx, "format": "system-library",
                        "library": {"linux-x86_64": f"runtime/linux-x86_64/lib{fx}.so"},
                        "imports": imports})
    manifest = {"schema_version": 1, "name": name, "version": version,
                "summary": "ireepkg doctor fixtures", "runtime": {"plugins": plugins}}
    (pkg / "ireeplugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return pkg


def forge_package(pkg: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The archive of a package directory, written without `pack`: pack
    loads each plugin and refuses one that does not resolve a declared
    import (and would wait for the hanging one), but doctor must find such
    plugins in prefixes (packed elsewhere, or by an older ireepkg)."""
    files = [file(str(f.relative_to(pkg)), f.read_bytes())
             for f in sorted(pkg.rglob("*")) if f.is_file() and f.name != "ireeplugin.json"]
    manifest = json.loads((pkg / "ireeplugin.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    return forge(out / f"{manifest['name']}-{manifest['version']}.ireepkg", files,
                 manifest=manifest)


@pytest.fixture(scope="module")
def broken_prefix(tmp_path_factory):
    if not CLANG:
        pytest.skip("clang-22 is not installed")
    root = tmp_path_factory.mktemp("fixtures")
    pkg = fixture_package(root / "src", "doctor-fixtures", FIXTURES)
    prefix = root / "prefix"
    install(prefix, forge_package(pkg, root / "dist"))
    return prefix


@pytest.fixture(scope="module")
def broken_report(broken_prefix):
    r = doctor(broken_prefix, "--json", env={"IREEPKG_DOCTOR_TIMEOUT": "2"})
    return r


def test_doctor_survives_broken_plugins(broken_report):
    r = broken_report
    # Exit status 1, not a signal (a negative returncode) nor a usage error.
    assert r.code == 1, r
    report = json.loads(r.out)
    assert report["ok"] is False
    assert report["timeout_seconds"] == 2
    assert report["probe_path"] == str(PROBE)


@pytest.mark.parametrize("fixture", list(FIXTURES))
def test_each_problem_is_reported_exactly(broken_report, fixture):
    plugins = {p["plugin"]: p for p in json.loads(broken_report.out)["plugins"]}
    assert list(plugins) == list(FIXTURES)
    p = plugins[fixture]
    assert p["problems"] == EXPECTED_PROBLEMS[fixture], p
    assert p["ok"] is (not EXPECTED_PROBLEMS[fixture])
    assert p["package"] == "doctor-fixtures" and p["format"] == "system-library"
    # Every plugin was asked for the other plugins' imports and the unknown name.
    others = sorted({i for f, (_, _, imports) in FIXTURES.items() if f != fixture
                     for i in imports} - set(FIXTURES[fixture][2])
                    | {"ireepkg_doctor_unknown_import"})
    assert p["undeclared_checked"] == others


def test_probe_details_of_broken_plugins(broken_report):
    plugins = {p["plugin"]: p for p in json.loads(broken_report.out)["plugins"]}
    # Refused plugins are never loaded, like IREE's runtime refuses them.
    assert plugins["future_version"]["probe"]["load"] == "not attempted"
    assert plugins["future_version"]["probe"]["version"] == 2
    assert plugins["asan"]["probe"]["sanitizer"] == "address"
    assert plugins["asan"]["probe"]["load"] == "not attempted"
    assert plugins["full_status"]["probe"]["features"] == ["FULL_STATUS"]
    assert plugins["full_status"]["probe"]["load"] == "not attempted"
    assert plugins["query_null"]["probe"]["query"] == "returned null"
    # Crashes: no report, but the stage and the signal.
    crash = plugins["crash_load"]
    assert crash["probe"] is None
    assert crash["process"]["end"] == "signaled"
    assert crash["process"]["signal_name"] == "SIGSEGV"
    assert crash["process"]["stage"] == "load"
    assert plugins["crash_query"]["process"]["stage"] == "query"
    hang = plugins["hang_load"]["process"]
    assert hang["end"] == "timed out" and hang["stage"] == "load"
    missing = plugins["missing_import"]["probe"]
    assert missing["resolved"] == ["fx_a"] and missing["missing_required"] == ["fx_b"]
    assert missing["resolve"] == "NOT_FOUND"
    assert plugins["undeclared"]["probe"]["undeclared_resolved"] == ["fx_good"]
    leak = plugins["leak"]["probe"]
    assert leak["allocations"] == 2 and leak["leaked_allocations"] == 1
    assert leak["leaked_bytes"] == 64 and leak["unload"] == "ok"
    assert plugins["good"]["probe"]["leaked_allocations"] == 0


def test_text_report_of_broken_plugins(broken_prefix):
    r = doctor(broken_prefix, env={"IREEPKG_DOCTOR_TIMEOUT": "2"})
    assert r.code == 1, r
    plugin_lines = r.out.split("(linux-x86_64):\n", 1)[1].splitlines()
    expected = []
    for fx in FIXTURES:
        who = f"doctor-fixtures 1.0.0 {fx} (system-library)"
        if not EXPECTED_PROBLEMS[fx]:
            expected.append(f"ok    {who} — resolves {', '.join(FIXTURES[fx][2])}")
        for problem in EXPECTED_PROBLEMS[fx]:
            expected.append(f"FAIL  {who}: {problem}")
    assert plugin_lines == expected + [
        "",
        f"{len(FIXTURES)} plugins checked: 1 ok, {len(FIXTURES) - 1} with problems",
        UNDECLARED_NOTE,
    ]


def test_plugin_that_resolves_anything(tmp_path):
    if not CLANG:
        pytest.skip("clang-22 is not installed")
    pkg = fixture_package(tmp_path / "src", "greedy",
                          {"greedy": (["FX_GREEDY"], ["fx_g"], ["fx_g"])})
    prefix = tmp_path / "prefix"
    install(prefix, pack(pkg, tmp_path / "dist"))
    r = doctor(prefix)
    assert r.code == 1, r
    assert ("FAIL  greedy 1.0.0 greedy (system-library): resolves "
            "\"ireepkg_doctor_unknown_import\", which its manifest does not declare\n") in r.out


def test_missing_probe_is_a_problem_not_a_crash(tmp_path):
    prefix = tmp_path / "prefix"
    install(prefix, SIMPLE_MUL_ARCHIVE)
    r = doctor(prefix, "--json", env={"IREEPKG_PROBE": str(tmp_path / "nope")})
    assert r.code == 1, r
    problems = [p["problems"] for p in json.loads(r.out)["plugins"]]
    assert problems == [[f"could not be checked: the plugin probe {tmp_path / 'nope'} "
                         "was not found (set IREEPKG_PROBE)"]] * 2


def test_bad_timeout_is_a_warning(tmp_path):
    r = doctor(tmp_path / "empty", env={"IREEPKG_DOCTOR_TIMEOUT": "soon"})
    assert r.code == 0, r
    assert ("ireepkg: warning: IREEPKG_DOCTOR_TIMEOUT=\"soon\" is not a number of "
            "seconds; using 30\n") in r.err


#===------------------------------------------------------------------------===#
# The probe itself
#===------------------------------------------------------------------------===#

def probe(*args):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def test_probe_usage_errors():
    r = probe()
    assert r.returncode == 2
    assert r.stderr.startswith("ireepkg-plugin-probe: error: no library given\nusage:")
    assert probe("a.so", "b.so").returncode == 2
    assert probe("a.so", "--import").returncode == 2
    assert probe("a.so", "--param", "novalue").returncode == 2
    assert probe("a.so", "--bogus").returncode == 2
    r = probe("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: ireepkg-plugin-probe")


def test_probe_reports_unloadable_files(tmp_path):
    not_elf = tmp_path / "not-a-library.so"
    not_elf.write_text("this is not a shared library\n" * 8)
    r = probe(not_elf)
    assert r.returncode == 0
    report = json.loads(r.stdout)
    assert report["dlopen"] == f"{not_elf}: invalid ELF header"
    assert report["query"] is None and report["load"] is None


@pytest.mark.skipif(not CLANG, reason="clang-22 is not installed")
def test_probe_without_query_symbol(tmp_path):
    src = tmp_path / "empty.c"
    src.write_text("int not_a_plugin(void) { return 0; }\n")
    lib = tmp_path / "libempty.so"
    subprocess.run([CLANG, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    report = json.loads(probe(lib).stdout)
    assert report["dlopen"] == "ok" and report["query"] == "missing symbol"
    assert report["load"] is None


def test_probe_passes_parameters_and_sorts_imports():
    lib = EXAMPLES / "simple-mul" / "runtime" / "linux-x86_64" / "libsimple_mul.so"
    report = json.loads(probe(lib, "--import", "simple_mul_workgroup", "--import", "?zz",
                              "--import", "?aa", "--param", "scale=3").stdout)
    assert report["params"] == ["scale=3"]
    assert report["load"] == "ok"
    assert report["resolve"] == "ok"
    assert report["resolution"] == 1  # the missing-optional bit
    assert report["resolved"] == ["simple_mul_workgroup"]
    assert report["optional_missing"] == ["?aa", "?zz"]
    assert report["missing_required"] == []
    # simple_mul refuses a scale that is not an integer.
    report = json.loads(probe(lib, "--param", "scale=abc").stdout)
    assert report["load"] == "INVALID_ARGUMENT"
    assert report["resolve"] is None and report["unload"] is None


def test_probe_keeps_stdout_for_the_report(tmp_path):
    """A plugin printing on stdout must not corrupt the report."""
    if not CLANG:
        pytest.skip("clang-22 is not installed")
    src = tmp_path / "chatty.c"
    src.write_text(FIXTURE_C.replace("static status_t fx_load(", "#include <stdio.h>\n"
                                     "static status_t fx_load_real(") + r"""
static status_t fx_load(const ireepkg_hal_executable_plugin_environment_v0_t *env,
                        size_t n, const ireepkg_hal_executable_plugin_string_pair_t *p,
                        void **out_self) {
  printf("hello from the plugin\n");
  fflush(stdout);
  return fx_load_real(env, n, p, out_self);
}
""")
    # fx_plugin refers to fx_load, defined after it: declare it first.
    text = src.read_text().replace("static const ireepkg_hal_executable_plugin_v0_t fx_plugin",
                                   "static status_t fx_load(const ireepkg_hal_executable_plugin_environment_v0_t *,"
                                   " size_t, const ireepkg_hal_executable_plugin_string_pair_t *, void **);\n"
                                   "static const ireepkg_hal_executable_plugin_v0_t fx_plugin")
    src.write_text(text)
    lib = tmp_path / "libchatty.so"
    subprocess.run([CLANG, "-shared", "-fPIC", "-w", f"-I{REPO / 'include'}",
                    '-DFX_NAME="chatty"', '-DFX_EXPORTS="fx_c"', "-o", str(lib), str(src)],
                   check=True)
    r = probe(lib, "--import", "fx_c")
    assert r.returncode == 0
    report = json.loads(r.stdout)
    assert report["load"] == "ok" and report["resolved"] == ["fx_c"]
    assert "hello from the plugin" in r.stderr


#===------------------------------------------------------------------------===#
# Compiler plugins: MLIR plugins in mlir-opt-22, IREE plugins in iree-compile
#===------------------------------------------------------------------------===#

MLIR_OPT = shutil.which("mlir-opt-22")
MLIR_DIST = BUILD / "examples" / "dist"
MLIR_ENTRY = {"mlir-pass-plugin": "mlirGetPassPluginInfo",
              "mlir-dialect-plugin": "mlirGetDialectPluginInfo"}


def compiler_package(root, name, plugins, sources=None):
    """A package with compiler `plugins`; `sources` maps a library path in
    the package to the C source it is built from (with clang-22)."""
    d = root / name
    for rel, code in (sources or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        src = root / f"{name}-{pathlib.Path(rel).stem}.c"
        src.write_text(code)
        subprocess.run([CLANG, "-shared", "-fPIC", src, "-o", d / rel], check=True)
    d.mkdir(parents=True, exist_ok=True)
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": name, "version": "1.0.0",
        "summary": f"compiler plugins {name}",
        "compiler": {"plugins": plugins}}, indent=2))
    return d


def mlir_plugin_source(kind, api=1, in_entry=""):
    param = "void *registry" if kind == "mlir-dialect-plugin" else "void"
    return ("#include <stdint.h>\n"
            f"struct Info {{ uint32_t api; const char *name, *version; void (*cb)({param}); }};\n"
            f"static void reg({param}) {{}}\n"
            f'__attribute__((visibility("default"))) struct Info {MLIR_ENTRY[kind]}(void) {{\n'
            f'  {in_entry}\n'
            f'  struct Info i = {{{api}, "fixture", "0.1", reg}}; return i; }}\n')


def install_unchecked(prefix, pkg_dir, dist):
    """Packs and installs without the MLIR load check (nor pack's reading of
    dynamic plugins' info), as an archive built elsewhere (or with an older
    ireepkg) may be."""
    off = {"IREEPKG_MLIR_CHECK": "off"}
    r = run("pack", pkg_dir, "-o", dist, "--json", env={**off, "IREEPKG_LOAD_CHECKS": "0"})
    assert r.code == 0, r.err
    r = run("install", "--prefix", prefix, json.loads(r.out)["archive"], env=off)
    assert r.code == 0, r.err


@pytest.fixture(scope="module")
def compiler_prefix(tmp_path_factory):
    """The MLIR example packages, and plugins broken in ways only loading
    them shows."""
    root = tmp_path_factory.mktemp("compiler")
    prefix = root / "prefix"
    for name in ("mlir-tag-passes", "mlir-demo-dialect"):
        install(prefix, MLIR_DIST / f"{name}-0.1.0.ireepkg")
    pkg = compiler_package(root, "broken-compiler", [
        {"id": "future_api", "kind": "mlir-pass-plugin",
         "library": {"linux-x86_64": "lib/libfuture.so"}},
        {"id": "crashing_dialect", "kind": "mlir-dialect-plugin",
         "library": {"linux-x86_64": "lib/libcrash.so"}},
        {"id": "input_torch", "kind": "iree-static"},
        {"id": "no_such_plugin", "kind": "iree-static"},
        {"id": "no_info", "kind": "iree-dynamic",
         "library": {"linux-x86_64": "lib/libnoinfo.so"}},
    ], {
        "lib/libfuture.so": mlir_plugin_source("mlir-pass-plugin", api=999),
        "lib/libcrash.so": mlir_plugin_source("mlir-dialect-plugin",
                                              in_entry="*(volatile int *)0 = 1;"),
        "lib/libnoinfo.so": '__attribute__((visibility("default"))) const void* '
                            "iree_get_compiler_plugin_info(void) { return 0; }\n",
    })
    install_unchecked(prefix, pkg, root / "dist")
    return prefix


@pytest.mark.skipif(not CLANG or not MLIR_OPT, reason="needs clang-22 and mlir-opt-22")
def test_compiler_plugins_are_checked_with_the_real_tools(compiler_prefix):
    r = doctor(compiler_prefix, env={"IREEPKG_CACHE_DIR": str(compiler_prefix.parent / "c")})
    assert r.code == 1, r
    out = r.out.split(f"Compiler plugins in {compiler_prefix} (linux-x86_64):\n", 1)[1]
    pkgs = compiler_prefix.resolve() / "packages"
    broken = pkgs / "broken-compiler" / "1.0.0" / "lib"
    mlir = subprocess.run([BUILD / "bin" / "ireepkg-mlir-check", "--version"],
                          capture_output=True, text=True, check=True).stdout
    mlir = mlir[mlir.index("(") + 1:mlir.index(")")]
    listed = ("hal_target_cuda, hal_target_llvm_cpu, hal_target_local, "
              "hal_target_metal_spirv, hal_target_rocm, hal_target_vmvx, "
              "hal_target_vulkan_spirv, input_stablehlo, input_torch, input_tosa")
    assert out.splitlines() == [
        "ok    mlir-tag-passes 0.1.0 mlir_tag_passes (mlir-pass-plugin) — checked with "
        f"{MLIR_OPT}: mlir-tag-passes 0.1.0, passes ireepkg-count-ops, ireepkg-tag-functions",
        "ok    mlir-demo-dialect 0.1.0 mlir_demo_dialect (mlir-dialect-plugin) — checked "
        f"with {MLIR_OPT}: mlir-demo-dialect 0.1.0, dialects ireepkg_demo",
        "FAIL  broken-compiler 1.0.0 future_api (mlir-pass-plugin): mlir-opt-22 does not "
        f"load it and goes on without it (\"Failed to load passes from '{broken}/libfuture.so'. "
        "Request ignored.\"): mlirGetPassPluginInfo returned plugin API version 999, but "
        f"{mlir} supports only version 1 (MLIR_PLUGIN_API_VERSION)",
        "FAIL  broken-compiler 1.0.0 crashing_dialect (mlir-dialect-plugin): with it "
        "loaded, mlir-opt-22 was killed by signal 11 (Segmentation fault)",
        f"ok    broken-compiler 1.0.0 input_torch (iree-static) — checked with "
        f"{VENV_BIN / 'iree-compile'}",
        "FAIL  broken-compiler 1.0.0 no_such_plugin (iree-static): iree-compile does not "
        "have a plugin \"no_such_plugin\" (`iree-compile --iree-list-plugins` lists "
        f"{listed})",
        "FAIL  broken-compiler 1.0.0 no_info (iree-dynamic): the compiler does not load it: "
        "iree-compile failed (exit status 1): [IREE Dynamic Plugin ERROR]: plugin "
        f"'{broken}/libnoinfo.so' returned no plugin info",
    ]
    report = json.loads(doctor(compiler_prefix, "--json").out)
    assert report["ok"] is False
    checks = {c["plugin"]: c for c in report["compiler_plugins"]}
    assert checks["crashing_dialect"]["path"] == str(broken / "libcrash.so")
    assert checks["input_torch"] == {
        "package": "broken-compiler", "version": "1.0.0", "plugin": "input_torch",
        "kind": "iree-static", "path": None, "ok": True, "skipped": None,
        "checked_with": str(VENV_BIN / "iree-compile"), "details": None, "problems": [],
        "warnings": []}


@pytest.mark.skipif(not CLANG, reason="needs clang-22")
def test_without_mlir_opt_mlir_plugins_are_loaded_by_the_checker(compiler_prefix, tmp_path):
    # No mlir-opt-22 on PATH (the IREE tools only).
    r = run("doctor", "--prefix", compiler_prefix, "--json",
            env={"PATH": str(VENV_BIN), "VIRTUAL_ENV": ""})
    assert r.code == 1
    checks = {c["plugin"]: c for c in json.loads(r.out)["compiler_plugins"]}
    tags = checks["mlir_tag_passes"]
    assert tags["ok"] and tags["checked_with"].startswith("ireepkg-mlir-check (MLIR 22.")
    assert tags["checked_with"].endswith("; mlir-opt-22 was not found)")
    assert checks["crashing_dialect"]["problems"][0].endswith(
        "cannot load it: while it was loaded, the plugin crashed (SIGSEGV)")
