"""ireepkg as a Python package, as a new user meets it: in a fresh virtual
environment with the pinned IREE wheels and nothing else, `pip install` of
this checkout puts the `ireepkg` command (and its helper programs) on the
environment's PATH and makes `import ireepkg` work; packages are installed
from Python; after `ireepkg.activate()` a module that calls a runtime
plugin's import runs in iree.runtime and gives the right numbers; a compile
through iree.compiler with `prefix.compiler_flags()` applies a package's
hook; and `ireepkg exec -- python script.py` gives the same results.

The wheel is built once per test session with pip (scikit-build-core from
PyPI drives the project's CMake). By default it packages the programs of the
already-built tree (IREEPKG_BUILD_DIR, with IREEPKG_WHEEL_FROM_BUILD: the
same files, no second compilation); IREEPKG_TEST_WHEEL_FROM_SOURCE=1 makes
it compile everything from source instead, as `pip install <checkout>` does
(docs/python.md says how long that takes; IREEPKG_TEST_WHEEL_BUILD_DIR
keeps that build between runs)."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, REPO, simple_mul_build

DIST = BUILD / "examples" / "dist"
PROGRAM = REPO / "examples" / "programs" / "simple_mul.mlir"
PRODUCT = "3 6 9 12 15 18 21 24"
MISSING_IMPORT = ("no executable loader registered for the given executable "
                  "format 'embedded-elf-")
PIP_TIMEOUT = 1800


def base_python() -> str:
    # The interpreter scripts/setup.sh makes .venv with (an ordinary user
    # can run it).
    if os.path.exists("/usr/bin/python3"):
        return "/usr/bin/python3"
    return getattr(sys, "_base_executable", sys.executable)


def pinned_iree() -> list[str]:
    lines = (REPO / "scripts" / "requirements.txt").read_text().splitlines()
    return [l.strip() for l in lines if l.strip().startswith("iree-base-")]


class Venv:
    def __init__(self, root: pathlib.Path):
        self.root = root
        self.bin = root / "bin"
        self.python = self.bin / "python"

    def env(self, **extra) -> dict:
        """The environment of a user who activated the venv: its bin/ first
        on PATH; nothing of the test runner's own venv or of ireepkg's
        build tree."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "IREEPKG_PREFIX", "IREEPKG_BIN",
                            "IREE_PY_RUNTIME_FLAGS", "IREE_TOOL_PATH",
                            "IREEPKG_EXECUTABLE", "IREEPKG_IREE_TOOL_PATH",
                            "IREEPKG_IREE_COMPILE")}
        env["PATH"] = f"{self.bin}:/usr/local/bin:/usr/bin:/bin"
        env["VIRTUAL_ENV"] = str(self.root)
        env.update(extra)
        return env

    def run(self, *cmd, cwd=None, timeout=600, **extra):
        return subprocess.run([str(c) for c in cmd], cwd=cwd, env=self.env(**extra),
                              capture_output=True, text=True, timeout=timeout)


# scripts/setup.sh keeps the pinned wheels and the wheel build's
# requirements here, readable by every user: no test reaches PyPI.
WHEELHOUSE = REPO / ".venv" / "wheelhouse"


def pip(venv: Venv, *args, timeout=PIP_TIMEOUT):
    assert WHEELHOUSE.is_dir(), "run scripts/setup.sh: it fills .venv/wheelhouse"
    r = venv.run(venv.python, "-m", "pip", "--disable-pip-version-check",
                 "--no-input", *args, "--no-index", "--find-links", WHEELHOUSE,
                 timeout=timeout)
    assert r.returncode == 0, f"pip {' '.join(map(str, args))}:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    return r


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Venv:
    tmp = tmp_path_factory.mktemp("python-package")
    v = Venv(tmp / "venv")
    subprocess.run([base_python(), "-m", "venv", v.root], check=True, timeout=300)
    # The wheel, built by pip from the checkout (build isolation: pip
    # fetches scikit-build-core from PyPI; CMake and Ninja are Debian's).
    wheel_dir = tmp / "wheel"
    settings = [f"--config-settings=build-dir={tmp / 'wheel-build'}"]
    if os.environ.get("IREEPKG_TEST_WHEEL_FROM_SOURCE") == "1":
        # IREEPKG_TEST_WHEEL_BUILD_DIR keeps the build between runs.
        if os.environ.get("IREEPKG_TEST_WHEEL_BUILD_DIR"):
            settings = ["--config-settings=build-dir="
                        + os.environ["IREEPKG_TEST_WHEEL_BUILD_DIR"]]
        if shutil.which("ccache"):
            settings += ["--config-settings=cmake.define.CMAKE_C_COMPILER_LAUNCHER=ccache",
                         "--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    else:
        settings.append(f"--config-settings=cmake.define.IREEPKG_WHEEL_FROM_BUILD={BUILD}")
    pip(v, "wheel", REPO, "--no-deps", "-w", wheel_dir, *settings)
    wheels = list(wheel_dir.glob("ireepkg-*.whl"))
    assert len(wheels) == 1, wheels
    # py3-none: no CPython extension, one wheel for every Python 3.
    assert wheels[0].name.endswith("-py3-none-linux_x86_64.whl"), wheels[0].name
    pip(v, "install", *pinned_iree(), wheels[0])
    return v


@pytest.fixture
def archives():
    return [DIST / "simple-mul-1.2.0.ireepkg", DIST / "mul-pipeline-0.3.0.ireepkg"]


def test_ireepkg_command_is_on_the_environments_path(venv, tmp_path):
    assert shutil.which("ireepkg", path=venv.env()["PATH"]) == str(venv.bin / "ireepkg")
    r = venv.run("ireepkg", "--version", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    version = (REPO / "CMakeLists.txt").read_text().split("project(ireepkg VERSION ")[1].split()[0]
    assert r.stdout.splitlines()[0] == f"ireepkg {version}"
    # `python -m ireepkg` is the same command.
    m = venv.run(venv.python, "-m", "ireepkg", "--version", cwd=tmp_path)
    assert m.returncode == 0 and m.stdout == r.stdout
    # Its helpers are found beside it: packing a package runs ireepkg-inspect.
    pkg = tmp_path / "pkg"
    shutil.copytree(BUILD / "examples" / "simple-mul", pkg)
    p = venv.run("ireepkg", "pack", pkg, "-o", tmp_path / "out", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "simple-mul-1.2.0.ireepkg").is_file()
    # ... and the HTTP module: a registry on a closed port fails with the
    # connection error, not "cannot load the HTTP module".
    s = venv.run("ireepkg", "search", "mul", "--registry", "http://127.0.0.1:9/", cwd=tmp_path)
    assert s.returncode == 1
    assert "cannot load the HTTP module" not in s.stderr
    assert "127.0.0.1:9" in s.stderr
    # What the package ships: typed, with the command it runs.
    q = venv.run(venv.python, "-c",
                 "import ireepkg, importlib.resources as r, json; "
                 "print(json.dumps([ireepkg.executable(), ireepkg.version(), "
                 "r.files('ireepkg').joinpath('py.typed').is_file()]))", cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    assert json.loads(q.stdout) == [str(venv.bin / "ireepkg"), version, True]


USE_FROM_PYTHON = r'''
import json, sys
import numpy as np
import ireepkg
import iree.compiler

prefix_dir, program, out, *archives = sys.argv[1:]
report = {}
prefix = ireepkg.Prefix(prefix_dir)
r = ireepkg.install(*archives, prefix=prefix)
report["installed"] = [(c["name"], c["to"]) for c in r["changes"]]
report["packages"] = [(p.name, p.version, p.explicit, list(p.plugins))
                      for p in prefix.packages()]
report["verify"] = prefix.verify()["ok"]
flags = prefix.compiler_flags(options={"iree-llvmcpu-distribution-size": 32})
report["compiler_flags"] = flags
target = dict(target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
ir = iree.compiler.compile_file(program, target_backends=["llvm-cpu"],
                                extra_args=[*flags, "--iree-llvmcpu-target-cpu=host",
                                            "--compile-to=preprocessing"])
report["hook_applied"] = "ireepkg.mul_pipeline" in ir.decode()
plain = iree.compiler.compile_file(program, target_backends=["llvm-cpu"],
                                   extra_args=["--iree-llvmcpu-target-cpu=host",
                                               "--compile-to=preprocessing"])
report["hook_without_flags"] = "ireepkg.mul_pipeline" in plain.decode()
vmfb = ireepkg.compile_file(program, prefix=prefix, output_file=out, **target)
try:
    prefix.compiler_flags(options={"iree-llvmcpu-distribution-size": 5000})
except ireepkg.Error as e:
    report["bad_option"] = [e.message, e.code, e.exit_code]
active = ireepkg.activate(prefix_dir)
report["active"] = str(active.path)
import iree.runtime as rt
vm = rt.load_vm_flatbuffer_file(out, driver="local-sync")
a = np.arange(1, 9, dtype=np.float32)
b = np.full(8, 3, dtype=np.float32)
report["product"] = " ".join(str(int(x)) for x in vm.simple_mul(a, b).to_host())
print(json.dumps(report))
'''


def test_install_compile_and_run_from_python(venv, tmp_path, archives):
    prefix = tmp_path / "prefix"
    script = tmp_path / "use.py"
    script.write_text(USE_FROM_PYTHON)
    vmfb = tmp_path / "simple_mul.vmfb"
    r = venv.run(venv.python, script, prefix, PROGRAM, vmfb, *archives, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["installed"] == [["simple-mul", "1.2.0"], ["mul-pipeline", "0.3.0"]]
    assert report["packages"] == [
        ["simple-mul", "1.2.0", True, ["simple_mul", "simple_mul_system"]],
        ["mul-pipeline", "0.3.0", True, ["input_torch", "hal_target_llvm_cpu"]]]
    assert report["verify"] is True
    mp = f"{prefix}/packages/mul-pipeline/0.3.0"
    assert report["compiler_flags"] == [
        "--iree-plugin=input_torch", "--iree-torch-decompose-complex-ops=true",
        "--iree-plugin=hal_target_llvm_cpu", "--iree-llvmcpu-distribution-size=32",
        f"--iree-preprocessing-transform-spec-filename={mp}/specs/mul_spec.mlir",
        "--iree-preprocessing-pass-pipeline=builtin.module(func.func(canonicalize))"]
    assert report["hook_applied"] is True
    assert report["hook_without_flags"] is False
    assert report["bad_option"] == [
        "package 'mul-pipeline': option --iree-llvmcpu-distribution-size of plugin hal_target_llvm_cpu (package "
        "mul-pipeline): 5000 is greater than the maximum 1024", "invalid", 1]
    assert report["active"] == str(prefix)
    assert report["product"] == PRODUCT

    # Without activation the same module fails with IREE's missing import.
    run_only = tmp_path / "run_only.py"
    run_only.write_text(
        "import sys, numpy as np, iree.runtime as rt\n"
        "vm = rt.load_vm_flatbuffer_file(sys.argv[1], driver='local-sync')\n"
        "a = np.arange(1, 9, dtype=np.float32); b = np.full(8, 3, dtype=np.float32)\n"
        "print(' '.join(str(int(x)) for x in vm.simple_mul(a, b).to_host()))\n")
    plain = venv.run(venv.python, run_only, vmfb, cwd=tmp_path)
    assert plain.returncode != 0
    assert MISSING_IMPORT in plain.stderr

    # `ireepkg exec -- python script.py` gives the same numbers: the flags
    # reach iree.runtime through IREE_PY_RUNTIME_FLAGS, not Python's argv.
    for python in ("python", "python3", venv.python):
        e = venv.run("ireepkg", "exec", "--prefix", prefix, "--", python, run_only, vmfb,
                     cwd=tmp_path)
        assert e.returncode == 0, e.stderr
        assert e.stdout.strip() == PRODUCT

    # Under exec, ireepkg.Prefix() is exec's prefix, and activate() of it
    # is a no-op (iree.runtime took the flags from IREE_PY_RUNTIME_FLAGS).
    activate_and_run = tmp_path / "activate_and_run.py"
    activate_and_run.write_text("import ireepkg\nprint(ireepkg.activate().path)\n"
                                + run_only.read_text())
    e = venv.run("ireepkg", "exec", "--prefix", prefix, "--", "python", activate_and_run,
                 vmfb, cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    assert e.stdout.splitlines() == [str(prefix), PRODUCT]

    # ... and iree.compiler under exec applies the packages' hooks with no
    # extra_args at all, in compile_file and compile_str (input on stdin),
    # through ireepkg's iree-compile wrapper.
    compile_only = tmp_path / "compile_only.py"
    compile_only.write_text(
        "import sys, iree.compiler\n"
        "ir = iree.compiler.compile_file(sys.argv[1], target_backends=['llvm-cpu'],\n"
        "    extra_args=['--iree-llvmcpu-target-cpu=host', '--compile-to=preprocessing'])\n"
        "ir2 = iree.compiler.compile_str(open(sys.argv[1]).read(), target_backends=['llvm-cpu'],\n"
        "    extra_args=['--iree-llvmcpu-target-cpu=host', '--compile-to=preprocessing'])\n"
        "print('ireepkg.mul_pipeline' in ir.decode(), 'ireepkg.mul_pipeline' in ir2.decode())\n")
    c = venv.run("ireepkg", "exec", "--prefix", prefix, "--", "python", compile_only, PROGRAM,
                 cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    assert c.stdout.strip() == "True True"
    c = venv.run(venv.python, compile_only, PROGRAM, cwd=tmp_path)
    assert c.returncode == 0 and c.stdout.strip() == "False False"

    # The same through `eval "$(ireepkg env)"` in a shell.
    e = venv.run("bash", "-c", f'eval "$(ireepkg env bash --prefix {prefix})" && '
                 f'python {run_only} {vmfb} && python {compile_only} {PROGRAM}', cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    assert e.stdout.split() == PRODUCT.split() + ["True", "True"]


def test_prefix_is_found_as_the_cli_finds_it(venv, tmp_path, archives):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    assert venv.run("ireepkg", "init", cwd=project).returncode == 0
    script = ("import ireepkg, json; p = ireepkg.Prefix(); "
              "print(json.dumps([str(p.path), [x.name for x in p.packages()]]))")
    r = venv.run(venv.python, "-c", script, cwd=project / "src")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [str(project / ".iree-plugins"), []]
    r = venv.run(venv.python, "-c", script, cwd=project / "src",
                 IREEPKG_PREFIX=str(tmp_path / "elsewhere"))
    assert json.loads(r.stdout) == [str(tmp_path / "elsewhere"), []]


def test_activate_refuses_once_a_device_exists(venv, tmp_path, archives):
    prefix = tmp_path / "prefix"
    assert venv.run("ireepkg", "install", "--prefix", prefix, archives[0]).returncode == 0
    script = ("import ireepkg, json, iree.runtime as rt\n"
              "rt.get_device('local-sync')\n"
              "try:\n"
              f"    ireepkg.activate({str(prefix)!r})\n"
              "except ireepkg.Error as e:\n"
              "    print(json.dumps([e.message, e.hint]))\n")
    r = venv.run(venv.python, "-c", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    message, hint = json.loads(r.stdout)
    assert message == (f"cannot activate the runtime plugins of {prefix}: iree.runtime "
                       "already has a device (local-sync), which would not load them")
    assert hint.startswith("call ireepkg.activate() before creating any device")


def test_errors_carry_the_commands_message_and_hint(venv, tmp_path):
    (tmp_path / "p").mkdir()
    script = ("import ireepkg, json\n"
              "try:\n"
              f"    ireepkg.remove('nosuch', prefix={str(tmp_path / 'p')!r})\n"
              "except ireepkg.Error as e:\n"
              "    print(json.dumps([str(e), e.code, e.exit_code, e.diagnostics[0]['message']]))\n")
    r = venv.run(venv.python, "-c", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    cli = venv.run("ireepkg", "remove", "nosuch", "--prefix", tmp_path / "p", cwd=tmp_path)
    text, code, exit_code, diagnostic = json.loads(r.stdout)
    assert cli.stderr == f"ireepkg: error: {text}\n"
    assert text == (f'{tmp_path / "p"}: package "nosuch" is not installed\n'
                    "  hint: see `ireepkg list`")
    assert (code, exit_code, cli.returncode) == ("not-found", 1, 1)
    assert diagnostic == 'package "nosuch" is not installed'


def test_lock_sync_and_remove_from_python(venv, tmp_path, archives):
    """A project with a signed registry (made with the command), locked,
    synced and changed from Python; each call returns the --json report."""
    keys = tmp_path / "keys"
    keys.mkdir()
    for args in (["key", "generate", "-o", keys / "r"],
                 ["registry", "init", tmp_path / "reg", "--key", keys / "r.key", "--name", "t"],
                 ["publish", *archives, "--registry", tmp_path / "reg", "--key", keys / "r.key"]):
        r = venv.run("ireepkg", *args, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    project = tmp_path / "project"
    project.mkdir()
    public = (keys / "r.pub").read_text().splitlines()[1].strip()
    (project / "plugins.json").write_text(json.dumps({
        "schema_version": 1,
        "registries": [{"name": "t", "url": "../reg", "public_key": public}],
        "plugins": [{"name": "mul-pipeline"}]}, indent=2) + "\n")
    script = ("import ireepkg, json, sys\n"
              "lock = ireepkg.lock(sys.argv[1])\n"
              "sync = ireepkg.sync(sys.argv[1], locked=True)\n"
              "prefix = ireepkg.Prefix()\n"
              "before = [(p.name, p.version, p.reason) for p in prefix.packages()]\n"
              "removed = prefix.remove('mul-pipeline')\n"
              "print(json.dumps([lock, sync, str(prefix.path), before, removed['changes'],\n"
              "                  [p.name for p in prefix.packages()]]))\n")
    r = venv.run(venv.python, "-c", script, project, cwd=project)
    assert r.returncode == 0, r.stderr
    lock, sync, path, before, removed, after = json.loads(r.stdout)
    both = [{"from": None, "name": "mul-pipeline", "to": "0.3.0"},
            {"from": None, "name": "simple-mul", "to": "1.2.0"}]
    assert lock["ok"] and lock["changes"] == both and lock["written"] is True
    assert lock["lockfile"] == str(project / "plugins.lock.json")
    assert (project / "plugins.lock.json").is_file()
    assert sync["ok"] and sync["changes"] == both
    assert path == sync["prefix"] == str(project / ".iree-plugins")
    assert before == [["simple-mul", "1.2.0", "dependency"],
                      ["mul-pipeline", "0.3.0", "explicit"]]
    assert removed == [{"from": "0.3.0", "name": "mul-pipeline", "to": None}]
    assert after == ["simple-mul"]


def test_runtime_side_runs_in_process_with_the_c_library(venv, tmp_path, archives):
    """Prefix() and runtime_flags() use the C discovery library shipped in
    the package (ctypes, no child process), and say exactly what
    `ireepkg flags runtime` says, errors included."""
    prefix = tmp_path / "prefix"
    assert venv.run("ireepkg", "install", "--prefix", prefix, archives[0]).returncode == 0
    script = ("import ireepkg, ireepkg._runtime as r, json, sys\n"
              "p = ireepkg.Prefix(sys.argv[1])\n"
              "try:\n"
              "    ireepkg.Prefix(sys.argv[2]).runtime_flags()\n"
              "except ireepkg.Error as e:\n"
              "    error = str(e)\n"
              "print(json.dumps([r.available(), p.runtime_flags(),\n"
              "                  p.runtime_flags('linux-aarch64'), error,\n"
              "                  str(ireepkg.Prefix().path)]))\n")
    r = venv.run(venv.python, "-c", script, prefix, tmp_path / "none", cwd=tmp_path,
                 IREEPKG_PREFIX=str(tmp_path / "from-env"))
    assert r.returncode == 0, r.stderr
    available, host, aarch64, error, located = json.loads(r.stdout)
    assert available is True
    assert list(venv.root.glob("lib/python3*/site-packages/ireepkg/_lib/libireepkg_runtime.so"))

    def cli(*args):
        c = venv.run("ireepkg", "flags", "runtime", "--prefix", *args, cwd=tmp_path)
        return c
    assert host == json.loads(cli(prefix, "--format", "json").stdout)["flags"]
    assert aarch64 == json.loads(cli(prefix, "--format", "json", "--platform",
                                     "linux-aarch64").stdout)["flags"]
    assert host == [f"--executable_plugin=embedded:{prefix}/packages/simple-mul/1.2.0/runtime/"
                    f"simple_mul.{simple_mul_build()}.so",
                    f"--executable_plugin={prefix}/packages/simple-mul/1.2.0/runtime/"
                    "linux-x86_64/libsimple_mul.so"]
    assert aarch64 == [f"--executable_plugin=embedded:{prefix}/packages/simple-mul/1.2.0/"
                       "runtime/simple_mul.aarch64.so"]
    missing = cli(tmp_path / "none")
    assert missing.returncode == 1
    assert missing.stderr == f"ireepkg: error: {error}\n"
    assert located == str(tmp_path / "from-env")


def test_verify_names_the_problems(venv, tmp_path, archives):
    from conftest import make_writable
    prefix = tmp_path / "prefix"
    assert venv.run("ireepkg", "install", "--prefix", prefix, archives[0]).returncode == 0
    script = ("import ireepkg, json, sys\n"
              "p = ireepkg.Prefix(sys.argv[1])\n"
              "ok = p.verify()\n"
              "manifest = p.path / 'packages/simple-mul/1.2.0/ireeplugin.json'\n"
              "manifest.chmod(0o644)\n"
              "manifest.write_text(manifest.read_text() + ' ')\n"
              "manifest.chmod(0o444)\n"
              "try:\n"
              "    p.verify()\n"
              "except ireepkg.Error as e:\n"
              "    print(json.dumps([ok['ok'], ok['packages'], e.message, e.code, e.exit_code,\n"
              "                      e.report['ok']]))\n")
    r = venv.run(venv.python, "-c", script, prefix, cwd=tmp_path)
    make_writable(prefix)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [
        True, ["simple-mul"],
        f"{prefix}: 1 problem(s): modified: simple-mul/ireeplugin.json: content differs "
        "from RECORD (size 1168, expected 1167)", "verify", 1, False]


def test_plugin_authors_cmake_helpers_from_the_wheel(venv, tmp_path):
    """The wheel carries the CMake package for plugin authors: with the
    environment's bin/ on PATH, find_package(ireepkg CONFIG) finds it, and a
    project `ireepkg new` writes builds, tests and packs with the
    environment's ireepkg."""
    assert (venv.root / "lib" / "cmake" / "ireepkg" / "ireepkgConfig.cmake").is_file()
    r = venv.run("ireepkg", "new", tmp_path / "mul", "--kind", "runtime", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    project = tmp_path / "mul"
    r = venv.run("cmake", "-S", project, "-B", project / "build", "-G", "Ninja",
                 "-DCMAKE_C_COMPILER=clang-22", "-DCMAKE_CXX_COMPILER=clang++-22",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    cache = (project / "build" / "CMakeCache.txt").read_text()
    assert f"ireepkg_DIR:PATH={venv.root}/lib/cmake/ireepkg" in cache
    r = venv.run("cmake", "--build", project / "build", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{venv.bin}/ireepkg pack" in (project / "build" / "build.ninja").read_text()
    assert "ok    mul 0.1.0 multiply (iree-run-module)\n" in r.stdout
    assert (project / "build" / "dist" / "mul-0.1.0.ireepkg").is_file()
    # IREE's header name, for sources written as IREE's samples are: with
    # the helpers, and with a plain compiler command line.
    port = tmp_path / "iree-port"
    shutil.copytree(REPO / "examples" / "iree-port", port)
    r = venv.run("cmake", "-S", port, "-B", port / "build", "-G", "Ninja",
                 "-DCMAKE_C_COMPILER=clang-22", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = venv.run("cmake", "--build", port / "build", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 tests: 2 passed, 0 failed, 0 skipped\n" in r.stdout
    compat = venv.root / "include" / "ireepkg" / "iree-compat"
    r = venv.run("clang-22", "-std=c17", "-shared", "-fPIC", f"-I{compat}",
                 port / "src" / "system_plugin.c", "-o", tmp_path / "libsystem_plugin.so")
    assert r.returncode == 0, r.stderr


def test_pip_builds_a_read_only_checkout_out_of_tree(tmp_path):
    """`pip wheel <checkout>` with no build settings writes nothing into the
    checkout (its build directory is a temporary one), so a read-only
    checkout builds. The checkout's files are copied and made read-only;
    the programs come from the built tree (IREEPKG_WHEEL_FROM_BUILD), so
    CMake configures the whole project but nothing is compiled again."""
    # (safe.directory: the unprivileged run reads root's checkout)
    files = subprocess.run(["git", "-c", "safe.directory=*", "-C", REPO, "ls-files", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    checkout = tmp_path / "checkout"
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, checkout / rel)
    for dirpath, dirnames, filenames in os.walk(checkout):
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o444)
        os.chmod(dirpath, 0o555)
    from conftest import make_writable, snapshot
    before = snapshot(checkout)
    v = Venv(tmp_path / "venv")
    subprocess.run([base_python(), "-m", "venv", v.root], check=True, timeout=300)
    pip(v, "wheel", checkout, "--no-deps", "-w", tmp_path / "wheel",
        f"--config-settings=cmake.define.IREEPKG_WHEEL_FROM_BUILD={BUILD}")
    assert len(list((tmp_path / "wheel").glob("ireepkg-*.whl"))) == 1
    assert snapshot(checkout) == before
    make_writable(checkout)
