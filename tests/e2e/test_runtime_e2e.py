"""Runtime plugins, end to end with the real IREE tools from the pinned
wheels: a program whose dispatch calls the example plugin's import is
compiled with iree-compile, the plugin package is installed with ireepkg, and
`ireepkg exec -- iree-run-module ...` (and Python's iree.runtime, through
`ireepkg env`) gives the right numbers — with the system-library build, the
embedded-ELF build and the FatELF .sos. Activation order decides which of two
plugins providing the same import wins, and removing the plugin brings back
IREE's missing-import error."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLES, REPO, compile_simple_mul, ireepkg_path, pack, run

VENV_BIN = pathlib.Path(sys.executable).parent
ENV = {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
MISSING_IMPORT = "NOT_FOUND; no executable loader registered for the given executable format 'embedded-elf-"
RUN_ARGS = ["--device=local-sync", "--function=simple_mul",
            "--input=8xf32=1,2,3,4,5,6,7,8", "--input=8xf32=3"]
PRODUCT = "8xf32=3 6 9 12 15 18 21 24"


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_simple_mul(tmp_path_factory.mktemp("vmfb"))


def variant(tmp, name, runtime_plugins, libs=(), package="simple-mul"):
    """A package directory from the built example with only some plugins."""
    d = tmp / name
    shutil.copytree(EXAMPLES / "simple-mul", d)
    m = json.loads((d / "ireeplugin.json").read_text())
    m["name"] = package
    m["runtime"]["plugins"] = runtime_plugins
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2))
    for rel, src in libs:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, d / rel)
    return d


SYSTEM = {"name": "simple_mul_system", "format": "system-library",
          "library": {"linux-x86_64": "runtime/linux-x86_64/libsimple_mul.so"},
          "imports": ["simple_mul_workgroup"]}
EMBEDDED = {"name": "simple_mul", "format": "embedded-elf",
            "library": {"x86_64": "runtime/simple_mul.x86_64.so",
                        "aarch64": "runtime/simple_mul.aarch64.so"},
            "imports": ["simple_mul_workgroup"]}
FAT = {"name": "simple_mul", "format": "embedded-elf",
       "library": {"fat": "runtime/simple_mul.sos"}, "imports": ["simple_mul_workgroup"]}


def exec_run(prefix, module, *extra):
    return run("exec", "--prefix", prefix, "--", "iree-run-module", f"--module={module}",
               *RUN_ARGS, *extra, env=ENV, timeout=120)


def install_variant(tmp_path, name, plugins, libs=()):
    d = variant(tmp_path, name, plugins, libs)
    for p in list(d.rglob("*.so")):  # keep only what the manifest names
        rel = str(p.relative_to(d))
        if not any(rel in json.dumps(pl) for pl in plugins):
            p.unlink()
    archive = pack(d, tmp_path / "dist" / name)
    prefix = tmp_path / f"prefix-{name}"
    r = run("install", archive, "--prefix", prefix)
    assert r.code == 0, r.err
    return prefix


def test_system_library_build(tmp_path, module):
    prefix = install_variant(tmp_path, "system", [SYSTEM])
    flags = (prefix / "state" / "runtime.flags").read_text()
    assert "--executable_plugin=/" in flags and "embedded:" not in flags
    r = exec_run(prefix, module)
    assert r.code == 0, r.err
    assert PRODUCT in r.out


def test_embedded_elf_build(tmp_path, module):
    prefix = install_variant(tmp_path, "embedded", [EMBEDDED])
    assert "--executable_plugin=embedded:" in (prefix / "state" / "runtime.flags").read_text()
    r = exec_run(prefix, module)
    assert r.code == 0, r.err
    assert PRODUCT in r.out


def test_fatelf_build(tmp_path, module):
    sos = tmp_path / "simple_mul.sos"
    rt = EXAMPLES / "simple-mul" / "runtime"
    j = run("fatelf", "join", "-o", sos, rt / "simple_mul.x86_64.so", rt / "simple_mul.aarch64.so")
    assert j.code == 0, j.err
    prefix = install_variant(tmp_path, "fat", [FAT], [("runtime/simple_mul.sos", sos)])
    flags = (prefix / "state" / "runtime.flags").read_text()
    assert "--executable_plugin=embedded:" in flags and flags.rstrip().endswith(".sos")
    r = exec_run(prefix, module)
    assert r.code == 0, r.err
    assert PRODUCT in r.out


def test_users_flags_still_win(tmp_path, module):
    prefix = install_variant(tmp_path, "system", [SYSTEM])
    r = exec_run(prefix, module, "--function=does_not_exist")
    assert r.code != 0
    assert "does_not_exist" in r.out + r.err


def test_python_runtime_through_env(tmp_path, module):
    prefix = install_variant(tmp_path, "embedded", [EMBEDDED])
    script = (
        "import numpy as np, iree.runtime as rt\n"
        "config = rt.Config('local-sync')\n"
        f"vm = rt.load_vm_flatbuffer_file({str(module)!r}, driver='local-sync')\n"
        "a = np.arange(1, 9, dtype=np.float32); b = np.full(8, 3, dtype=np.float32)\n"
        "print(' '.join(str(int(x)) for x in vm.simple_mul(a, b).to_host()))\n")
    cmd = f'eval "$({ireepkg_path()} env --prefix {prefix})" && "{sys.executable}" -c "$SCRIPT"'
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "SCRIPT": script})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "3 6 9 12 15 18 21 24"
    # Without the plugins, the same script fails with IREE's missing import.
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env={k: v for k, v in os.environ.items()
                                         if k != "IREE_PY_RUNTIME_FLAGS"})
    assert p.returncode != 0
    assert MISSING_IMPORT in p.stderr


def test_env_shells(tmp_path):
    prefix = install_variant(tmp_path, "system", [SYSTEM])
    lib = f"{prefix}/packages/simple-mul/1.2.0/runtime/linux-x86_64/libsimple_mul.so"
    exe = ireepkg_path().resolve()
    wrapper = exe.parent.parent / "libexec" / "ireepkg" / "iree-tools"
    env = {"IREE_TOOL_PATH": "/opt/tools"}
    posix = (f"export IREEPKG_PREFIX={prefix}\n"
             f"export IREE_PY_RUNTIME_FLAGS=--executable_plugin={lib}\n"
             f"export IREE_TOOL_PATH={wrapper}:/opt/tools\n"
             f"export IREEPKG_IREE_TOOL_PATH=/opt/tools\n"
             f"export IREEPKG_EXECUTABLE={exe}\n")
    assert run("env", "--prefix", prefix, env=env).out == posix
    # The names people type: bash, zsh, ... as a positional or --shell.
    for shell in ("sh", "bash", "zsh", "dash", "ksh"):
        assert run("env", shell, "--prefix", prefix, env=env).out == posix
        assert run("env", "--shell", shell, "--prefix", prefix, env=env).out == posix
    fish = run("env", "fish", "--prefix", prefix).out
    assert f"set -gx IREE_PY_RUNTIME_FLAGS '--executable_plugin={lib}';" in fish
    assert f"set -gx IREE_TOOL_PATH '{wrapper}';" in fish
    for pwsh_name in ("pwsh", "powershell"):
        pwsh = run("env", "--shell", pwsh_name, "--prefix", prefix).out
        assert f"$env:IREE_PY_RUNTIME_FLAGS = '--executable_plugin={lib}'" in pwsh
    j = run("env", "--json", "--prefix", prefix, env=env)
    assert j.code == 0, j.err
    assert json.loads(j.out) == {"prefix": str(prefix), "variables": {
        "IREEPKG_PREFIX": str(prefix), "IREE_PY_RUNTIME_FLAGS": f"--executable_plugin={lib}",
        "IREE_TOOL_PATH": f"{wrapper}:/opt/tools", "IREEPKG_IREE_TOOL_PATH": "/opt/tools",
        "IREEPKG_EXECUTABLE": str(exe)}}
    assert json.loads(run("env", "json", "--prefix", prefix, env=env).out) == json.loads(j.out)
    bad = run("env", "--shell", "fihs", "--prefix", prefix)
    assert bad.code == 2 and "unknown shell 'fihs' (did you mean \"fish\"?)" in bad.err
    both = run("env", "zsh", "--shell", "fish", "--prefix", prefix)
    assert both.code == 2 and "the shell is given twice ('zsh' and --shell fish)" in both.err


@pytest.fixture(scope="module")
def times_ten(tmp_path_factory):
    """A second plugin providing simple_mul_workgroup, multiplying by 10 more."""
    tmp = tmp_path_factory.mktemp("x10")
    lib = tmp / "libsimple_mul_x10.so"
    subprocess.run(["clang-22", "-shared", "-fPIC", "-std=c17", "-fvisibility=hidden",
                    "-DSIMPLE_MUL_DEFAULT_SCALE=10", f"-I{REPO / 'include'}",
                    REPO / "examples" / "simple-mul" / "src" / "simple_mul.c", "-o", lib],
                   check=True)
    plugin = dict(SYSTEM, name="simple_mul_x10",
                  library={"linux-x86_64": "runtime/linux-x86_64/libsimple_mul_x10.so"})
    d = variant(tmp, "x10", [plugin], [("runtime/linux-x86_64/libsimple_mul_x10.so", lib)],
                package="mul-times-ten")
    base = variant(tmp, "base", [SYSTEM])
    return pack(d, tmp / "dist"), pack(base, tmp / "dist")


def test_later_in_activation_order_wins(tmp_path, module, times_ten):
    x10, base = times_ten
    prefix = tmp_path / "p"
    assert run("install", base, "--prefix", prefix).code == 0
    assert run("install", x10, "--prefix", prefix).code == 0
    assert "8xf32=30 60 90 120 150 180 210 240" in exec_run(prefix, module).out
    other = tmp_path / "q"
    assert run("install", x10, "--prefix", other).code == 0
    assert run("install", base, "--prefix", other).code == 0
    assert PRODUCT in exec_run(other, module).out


def test_reordering_plugins_json_flips_the_winner(tmp_path, module, times_ten):
    x10, base = times_ten
    project = tmp_path / "project"
    project.mkdir()

    def write_order(*names):
        (project / "plugins.json").write_text(json.dumps({
            "schema_version": 1,
            "plugins": [{"name": n, "path": f"./{n}"} for n in names]}, indent=2))

    def run_in_project(*args):
        return subprocess.run([str(ireepkg_path()), *map(str, args)], cwd=project,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, **ENV, "IREEPKG_PREFIX": ""})

    write_order("simple-mul", "mul-times-ten")
    r = run_in_project("install", base, x10)
    assert r.returncode == 0, r.stderr
    assert (project / ".iree-plugins" / "state" / "runtime.flags").exists()
    r = run_in_project("exec", "--", "iree-run-module", f"--module={module}", *RUN_ARGS)
    assert "8xf32=30 60 90 120 150 180 210 240" in r.stdout, r.stderr
    write_order("mul-times-ten", "simple-mul")
    r = run_in_project("install", base, x10)
    assert r.returncode == 0, r.stderr
    assert "activation order updated from plugins.json" in r.stdout
    r = run_in_project("exec", "--", "iree-run-module", f"--module={module}", *RUN_ARGS)
    assert PRODUCT in r.stdout, r.stderr


def test_remove_then_reinstall(tmp_path, module):
    prefix = install_variant(tmp_path, "system", [SYSTEM])
    archive = next((tmp_path / "dist" / "system").glob("*.ireepkg"))
    assert run("remove", "simple-mul", "--prefix", prefix).code == 0
    r = exec_run(prefix, module)
    assert r.code != 0
    assert MISSING_IMPORT in r.out + r.err
    assert run("install", archive, "--prefix", prefix).code == 0
    assert PRODUCT in exec_run(prefix, module).out


# An embedded plugin written the short way, as outside authors do, without
# the STANDALONE feature bit: IREE's runtime does not check the bit.
MUL_BY_TWO_C = r"""
#include "ireepkg/iree_executable_plugin.h"

typedef ireepkg_hal_executable_plugin_status_t status_t;
typedef struct { const float *a; size_t ao; const float *b; size_t bo;
                 float *out; size_t oo; size_t dim; size_t tile; } params_t;

static int mul(void *p, void *context, void *reserved) {
  const params_t *q = (const params_t *)p;
  size_t end = q->tile * 64 + 64 < q->dim ? q->tile * 64 + 64 : q->dim;
  for (size_t i = q->tile * 64; i < end; ++i)
    q->out[q->oo + i] = q->a[q->ao + i] * q->b[q->bo + i] * 2;
  return 0;
}
static status_t load(const ireepkg_hal_executable_plugin_environment_v0_t *env,
                     size_t n, const ireepkg_hal_executable_plugin_string_pair_t *params,
                     void **self) {
  *self = 0;
  return ireepkg_hal_executable_plugin_ok_status();
}
static void unload(void *self) {}
static status_t resolve(void *self,
                        const ireepkg_hal_executable_plugin_resolve_params_v0_t *p,
                        ireepkg_hal_executable_plugin_resolution_t *resolution) {
  *resolution = 0;
  int missing = 0;
  for (size_t i = 0; i < p->count; ++i) {
    if (p->out_fn_ptrs[i]) continue;
    if (ireepkg_hal_executable_plugin_strcmp(p->symbol_names[i], "simple_mul_workgroup") == 0)
      p->out_fn_ptrs[i] = (void *)mul;
    else
      missing = 1;
  }
  return ireepkg_hal_executable_plugin_status_from_code(
      missing ? IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_NOT_FOUND
              : IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
}
static const ireepkg_hal_executable_plugin_header_t header = {
    .version = IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1, .name = "mul_by_two",
    .description = "times two, no STANDALONE bit", .features = 0,
    .sanitizer = IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE};
static const ireepkg_hal_executable_plugin_v0_t plugin = {
    .header = &header, .load = load, .unload = unload, .resolve = resolve};

IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT const ireepkg_hal_executable_plugin_header_t **
iree_hal_executable_plugin_query(ireepkg_hal_executable_plugin_version_t max, void *r) {
  return (const ireepkg_hal_executable_plugin_header_t **)&plugin;
}
"""


def build_embedded(tmp, name, source):
    """An x86_64 embedded ELF, compiled and linked the way
    examples/simple-mul/CMakeLists.txt builds the example's."""
    c, obj, lib = tmp / f"{name}.c", tmp / f"{name}.o", tmp / f"{name}.x86_64.so"
    c.write_text(source)
    subprocess.run(["clang-22", "-target", "x86_64-none-elf", "-std=c17", "-O2", "-fPIC",
                    "-ffreestanding", "-fvisibility=hidden", "-fno-plt", "-fno-rtti",
                    "-fno-exceptions", "-fdata-sections", "-ffunction-sections",
                    "-funique-section-names", f"-I{REPO / 'include'}", "-c", c, "-o", obj],
                   check=True)
    subprocess.run(["ld.lld-22", "--build-id=none", "-nostdlib", "-static", "-shared",
                    "--no-undefined", "--no-allow-shlib-undefined", "--gc-sections",
                    "-z", "now", "-z", "relro", "--discard-all", "--hash-style=sysv",
                    "--strip-debug", obj, "-o", lib], check=True)
    return lib


def test_embedded_plugin_without_standalone_bit_runs(tmp_path, module):
    """doctor warns about the missing STANDALONE bit but does not fail the
    plugin, and iree-run-module really loads and calls it."""
    lib = build_embedded(tmp_path, "mul_by_two", MUL_BY_TWO_C)
    plugin = {"name": "mul_by_two", "format": "embedded-elf",
              "library": {"x86_64": "runtime/mul_by_two.x86_64.so"},
              "imports": ["simple_mul_workgroup"]}
    prefix = install_variant(tmp_path, "two", [plugin],
                             [("runtime/mul_by_two.x86_64.so", lib)])
    r = run("doctor", "--prefix", prefix, env=ENV)
    assert r.code == 0, r
    who = "simple-mul 1.2.0 mul_by_two (embedded-elf)"
    assert (f"ok    {who} — resolves simple_mul_workgroup\n"
            f"warn  {who}: embedded-elf plugin does not declare the STANDALONE feature; "
            "IREE's runtime loads it anyway (it does not check the bit), but IREE's plugin "
            "headers ask embedded plugins to declare it\n") in r.out
    assert "1 plugin checked: 1 ok, 0 with problems" in r.out
    j = json.loads(run("doctor", "--prefix", prefix, "--json", env=ENV).out)
    assert j["ok"] is True
    p = j["plugins"][0]
    assert p["ok"] is True and p["problems"] == [] and p["probe"]["features"] == []
    assert len(p["warnings"]) == 1 and "STANDALONE" in p["warnings"][0]
    r = exec_run(prefix, module)
    assert r.code == 0, r.err
    assert "8xf32=6 12 18 24 30 36 42 48" in r.out


def test_shadowed_imports_are_reported(tmp_path, times_ten):
    """Two packages providing simple_mul_workgroup: install, list and doctor
    say that IREE uses the one activated last."""
    x10, base = times_ten
    prefix = tmp_path / "p"
    r = run("install", base, "--prefix", prefix)
    assert r.code == 0, r
    assert "import " not in r.out  # simple-mul's two builds shadow nothing
    r = run("install", x10, "--prefix", prefix)
    assert r.code == 0, r
    line = ("import simple_mul_workgroup: IREE uses mul-times-ten (simple_mul_x10), activated "
            "last; shadowed: simple-mul (simple_mul_system)\n")
    assert r.out == f"installed mul-times-ten 1.2.0\nprefix: {prefix}\n" + line
    j = json.loads(run("install", x10, "--prefix", prefix, "--json").out)
    expected = [{"import": "simple_mul_workgroup",
                 "used": {"package": "mul-times-ten", "plugin": "simple_mul_x10"},
                 "shadowed": [{"package": "simple-mul", "plugin": "simple_mul_system"}]}]
    assert j["shadowed_imports"] == expected
    r = run("list", "--prefix", prefix)
    assert r.code == 0 and r.out.endswith(line), r
    assert json.loads(run("list", "--prefix", prefix, "--json").out)["shadowed_imports"] == expected
    r = run("doctor", "--prefix", prefix, env=ENV)
    assert r.out.endswith("\nImports that more than one package provides (IREE resolves imports "
                          "in reverse registration order):\n" + line), r
    assert json.loads(run("doctor", "--prefix", prefix, "--json", env=ENV).out)[
        "shadowed_imports"] == expected
    # The other order: simple-mul is activated last and wins.
    other = tmp_path / "q"
    assert run("install", x10, "--prefix", other).code == 0
    r = run("install", base, "--prefix", other)
    assert r.out.endswith("import simple_mul_workgroup: IREE uses simple-mul (simple_mul_system), "
                          "activated last; shadowed: mul-times-ten (simple_mul_x10)\n"), r


def test_exec_errors(tmp_path):
    r = run("exec", "--prefix", tmp_path / "none", "--", "iree-run-module", "--help")
    assert r.code == 1
    assert f"no plugins are installed in {tmp_path}/none" in r.err
    prefix = install_variant(tmp_path, "system", [SYSTEM])
    r = run("exec", "--prefix", prefix, "--", "no-such-tool-xyz")
    assert r.code == 1 and "cannot find 'no-such-tool-xyz' on PATH" in r.err
    r = run("exec", "--prefix", prefix)
    assert r.code == 2 and "'exec' needs a tool to run after --" in r.err
