"""ireepkg/iree_runtime_adapter.h, compiled against a recording stand-in of
IREE's runtime API: it registers a prefix's plugins in activation order, each
with IREE's loader for its format, its absolute path and its parameters, in a
manager with room for exactly those plugins plus what the application asks
for; and ireepkg's errors become IREE statuses carrying ireepkg's message."""
import json
import shutil
import subprocess

from conftest import BUILD, EXAMPLES, pack, run, simple_mul_build

ADAPTER = BUILD / "tests" / "ireepkg_adapter_test"


def test_registers_plugins_in_activation_order_with_parameters(tmp_path):
    pkg = tmp_path / "pkg"
    shutil.copytree(EXAMPLES / "simple-mul", pkg)
    m = json.loads((pkg / "ireeplugin.json").read_text())
    m["runtime"]["plugins"][1]["parameters"] = {"scale": "3"}
    (pkg / "ireeplugin.json").write_text(json.dumps(m, indent=2))
    prefix = tmp_path / "prefix"
    assert run("install", pack(pkg, tmp_path / "dist"), "--prefix", prefix).code == 0
    p = subprocess.run([ADAPTER, prefix, "2"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    root = f"{prefix}/packages/simple-mul/1.2.0/runtime"
    assert p.stdout.splitlines() == [
        "create_manager capacity=4",
        f"load embedded-elf {root}/simple_mul.{simple_mul_build()}.so params=0",
        f"register {root}/simple_mul.{simple_mul_build()}.so",
        f"load system-library {root}/linux-x86_64/libsimple_mul.so params=1 scale=3",
        f"register {root}/linux-x86_64/libsimple_mul.so",
        "count 2",
    ]


def test_errors_become_iree_statuses(tmp_path):
    p = subprocess.run([ADAPTER, tmp_path / "missing"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert p.stdout.startswith("error 5: ireepkg: ")  # NOT_FOUND
    assert str(tmp_path / "missing") in p.stdout
