"""Shared by the lanes that run a prefix on another platform under
emulation (test_windows.py under wine, test_aarch64.py under qemu-user):
the CLI helpers of tests/cli/, where IREE's runtime wheels for those
platforms are unpacked (scripts/setup.sh), and the ireepkg-runtime built for
each target (build_runtime.py, run by ctest before the lanes)."""
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))

from conftest import BUILD, EXAMPLES, REPO, run  # noqa: E402,F401

VENV = REPO / ".venv"
VENV_BIN = pathlib.Path(sys.executable).parent
# The numbers every lane checks: simple_mul(a, b) through the plugin.
RUN_ARGS = ["--function=simple_mul", "--input=8xf32=1,2,3,4,5,6,7,8",
            "--input=8xf32=3"]
PRODUCT = "8xf32=3 6 9 12 15 18 21 24"


def iree_tools(wheel_platform: str) -> pathlib.Path:
    """IREE's runtime tools of the wheel for `wheel_platform`, as
    scripts/setup.sh unpacks it."""
    return VENV / f"iree-runtime-{wheel_platform}" / "iree" / "_runtime_libs"


def target_build(platform: str) -> pathlib.Path:
    """Where build_runtime.py built runtime_integration for `platform`."""
    return BUILD / "runtime-targets" / platform


def lane_package(root: pathlib.Path, name: str, plugins: list,
                 files: dict) -> pathlib.Path:
    """A package directory with `plugins` (manifest entries) and `files`
    (path in the package -> file to copy), packed into an archive."""
    import shutil
    d = root / name
    for rel, src in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, d / rel)
    manifest = {"schema_version": 1, "name": name, "version": "1.2.0",
                "summary": "simple-mul's kernel for a test lane",
                "license": "Apache-2.0",
                "requires": {"iree": ">=3.10.0, <4.0.0"},
                "runtime": {"plugins": plugins}}
    (d / "ireeplugin.json").write_text(json.dumps(manifest, indent=2) + "\n")
    r = run("pack", d, "-o", root / "dist", "--json")
    assert r.code == 0, r.err
    return pathlib.Path(json.loads(r.out)["archive"])


def compile_program(out: pathlib.Path, *target_flags) -> pathlib.Path:
    """examples/programs/simple_mul.mlir compiled by the venv's
    iree-compile with `target_flags`."""
    subprocess.run([VENV_BIN / "iree-compile",
                    REPO / "examples" / "programs" / "simple_mul.mlir",
                    "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu",
                    *target_flags, "-o", out], check=True, timeout=300)
    return out


def install_env() -> dict:
    """The environment of `ireepkg install`: the venv's IREE on PATH, so
    that the packages' IREE requirements are checked (3.13 is also the
    version of the other platforms' wheels)."""
    return {"PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}"}
