"""What the CPU of a runner has, as IREE's iree-cpuinfo (of the runtime
wheel in .venv) reports it, and the x86-64 level of simple-mul's builds it
gets: for tests/e2e/test_cpu_level.py and conftest.simple_mul_build."""
import pathlib
import subprocess
import sys

VENV_BIN = pathlib.Path(sys.executable).parent
RUNTIME_LIBS = next((VENV_BIN.parent / "lib").glob("python3*/site-packages/iree/_runtime_libs"))
V4 = ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
V3 = ("avx", "avx2", "fma", "f16c")
V2 = ("sse3", "ssse3", "sse4.1", "sse4.2")


def cpuinfo(runner):
    """The features iree-cpuinfo reports on the CPU `runner` gives."""
    out = subprocess.run([*runner, RUNTIME_LIBS / "iree-cpuinfo"], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    have = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == "1":
            have.add(parts[0])
    return have


def expected_key(have):
    if all(f in have for f in V4):
        return "x86_64_v4"
    if all(f in have for f in V3):
        return "x86_64_v3"
    return "x86_64"
