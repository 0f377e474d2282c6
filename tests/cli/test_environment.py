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
