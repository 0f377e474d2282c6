"""The set-up's promise: the pinned IREE wheels are in .venv and their tools
run, and the Debian peers the end-to-end tests use are installed."""
import pathlib
import shutil
import subprocess
import sys

from conftest import REPO

VENV_BIN = pathlib.Path(sys.executable).parent


def pinned(package):
    for line in (REPO / "scripts" / "requirements.txt").read_text().splitlines():
        if line.startswith(package + "=="):
            return line.split("==")[1]
    raise AssertionError(f"{package} is not pinned")


def test_iree_compile_runs_and_is_the_pinned_version():
    out = subprocess.run([VENV_BIN / "iree-compile", "--version"],
                         capture_output=True, text=True, check=True).stdout
    assert f"IREE compiler version {pinned('iree-base-compiler')}" in out


def test_iree_run_module_runs():
    p = subprocess.run([VENV_BIN / "iree-run-module", "--help"], capture_output=True, text=True)
    assert p.returncode == 0
    assert "iree-run-module" in p.stdout
    assert "--executable_plugin" in p.stdout


def test_runtime_python_package_imports():
    import importlib.metadata
    assert importlib.metadata.version("iree-base-runtime") == pinned("iree-base-runtime")
    subprocess.run([sys.executable, "-c", "import iree.runtime"], check=True)


def test_debian_peers_are_installed():
    for tool in ("clang-22", "ld.lld-22", "mlir-opt-22", "minisign", "zstd"):
        assert shutil.which(tool), f"{tool} is missing: run scripts/setup.sh"


def test_exec_gives_python_the_runtime_flags_in_its_environment(tmp_path, example_archives):
    """`exec -- python` is recognised by its --help (not its name) and gets
    the runtime flags as IREE_PY_RUNTIME_FLAGS, which iree.runtime reads;
    Python's own arguments are left alone."""
    import shlex
    from conftest import make_writable, run
    prefix = tmp_path / "p"
    assert run("install", "--prefix", prefix, example_archives["simple-mul"]).code == 0
    python = tmp_path / "interpreter"
    python.symlink_to(sys.executable)
    r = run("exec", "--prefix", prefix, "--", python, "-c",
            "import os; print(os.environ['IREE_PY_RUNTIME_FLAGS']); "
            "print(os.environ['IREEPKG_PREFIX'])",
            env={"IREEPKG_CACHE_DIR": str(tmp_path / "cache")})
    assert r.code == 0, r.err
    flags = [line for line in (prefix / "state" / "runtime.flags").read_text().splitlines()
             if line and not line.startswith("#")]
    assert len(flags) == 2
    py_flags, where = r.out.splitlines()
    assert shlex.split(py_flags) == flags
    assert where == str(prefix)
    make_writable(prefix)


def test_wheel_versions_are_in_their_dist_info():
    """What ireepkg reads as the IREE in use: each wheel's METADATA Version
    (the pinned release), and the RECORD that ties the console scripts to
    the wheel. `iree-compile --version` names the release candidate the
    release was promoted from instead, so it is only the fallback."""
    site = next(VENV_BIN.parent.glob("lib/python*/site-packages"))
    for dist, tool in [("iree_base_compiler", "iree-compile"),
                       ("iree_base_runtime", "iree-run-module")]:
        version = pinned(dist.replace("_", "-"))
        info = site / f"{dist}-{version}.dist-info"
        assert f"Version: {version}" in (info / "METADATA").read_text().splitlines()
        assert any(line.startswith(f"../../../bin/{tool},")
                   for line in (info / "RECORD").read_text().splitlines())


def test_exec_gives_pytest_and_named_interpreters_the_python_environment(tmp_path,
                                                                         example_archives):
    """pytest prints its own --help: its #! line says that Python runs it, so
    it gets the Python environment (IREE_PY_RUNTIME_FLAGS, IREEPKG_PREFIX and
    iree.compiler's IREE_TOOL_PATH), as do interpreters named python3.11;
    a script of another interpreter is still refused."""
    import os
    from conftest import ireepkg_path, make_writable, run
    prefix = tmp_path / "p"
    assert run("install", "--prefix", prefix, example_archives["simple-mul"]).code == 0
    cache = {"IREEPKG_CACHE_DIR": str(tmp_path / "cache")}
    test_file = tmp_path / "test_env.py"
    test_file.write_text(
        "import os\n"
        "def test_env():\n"
        f"    assert os.environ['IREEPKG_PREFIX'] == {str(prefix)!r}\n"
        "    assert '--executable_plugin=embedded:' in os.environ['IREE_PY_RUNTIME_FLAGS']\n"
        "    assert os.environ['IREE_TOOL_PATH'].endswith('/libexec/ireepkg/iree-tools')\n")
    r = run("exec", "--prefix", prefix, "--", VENV_BIN / "pytest", "-q", "-p",
            "no:cacheprovider", test_file, cwd=tmp_path, env=cache)
    assert r.code == 0, r.out + r.err
    assert "1 passed" in r.out
    wrapper = pathlib.Path(os.path.realpath(ireepkg_path())).parent.parent / "libexec" / \
        "ireepkg" / "iree-tools" / "iree-compile"
    assert os.access(wrapper, os.X_OK)

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.11").symlink_to(sys.executable)
    r = run("exec", "--prefix", prefix, "--", "python3.11", "-c",
            "import os; print(os.environ['IREEPKG_PREFIX'])",
            env={**cache, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert r.code == 0, r.err
    assert r.out.strip() == str(prefix)

    other = bin_dir / "tool"
    other.write_text("#!/bin/sh\necho hello\n")
    other.chmod(0o755)
    r = run("exec", "--prefix", prefix, "--", other, env=cache)
    assert r.code == 1
    assert f"cannot tell what kind of tool {other} is" in r.err
    make_writable(prefix)
