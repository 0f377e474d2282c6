"""Shared fixtures for ireepkg's CLI tests: where the binary and the test data
are, and a helper that runs the CLI and returns (exit code, stdout, stderr)."""
import functools
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"


# Tests never touch the user's cache.
if "IREEPKG_CACHE_DIR" not in os.environ:
    import tempfile
    os.environ["IREEPKG_CACHE_DIR"] = tempfile.mkdtemp(prefix="ireepkg-test-cache-")


def ireepkg_path() -> pathlib.Path:
    return pathlib.Path(os.environ.get("IREEPKG_BIN", REPO / "build" / "bin" / "ireepkg"))


class Result:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self):
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


def run(*args, cwd=None, env=None, input=None, timeout=120) -> Result:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [str(ireepkg_path()), *map(str, args)],
        cwd=cwd, env=full_env, input=input, capture_output=True, text=True,
        timeout=timeout)
    return Result(proc)


@pytest.fixture
def ireepkg():
    return run


BUILD = pathlib.Path(os.environ.get("IREEPKG_BUILD_DIR", REPO / "build"))
EXAMPLES = BUILD / "examples"


@functools.cache
def simple_mul_build() -> str:
    """The key of simple-mul's embedded-ELF build this machine's CPU gets:
    x86_64_v3 where the CPU has what that build needs (as IREE's
    iree-cpuinfo reports it, read by cpufix.py's helpers), the
    plain x86_64 build elsewhere."""
    from cpufix import cpuinfo, expected_key
    return "x86_64" if expected_key(cpuinfo([])) == "x86_64" else "x86_64_v3"


def snapshot(root: pathlib.Path) -> dict:
    """Every path under `root` with its type, mode and content: two equal
    snapshots mean the tree is byte-for-byte the same."""
    out = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        st = p.lstat()
        mode = st.st_mode & 0o7777
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir", mode)
        else:
            out[rel] = ("file", mode, p.read_bytes())
    return out


def wait_stopped(pid, timeout=30):
    """Waits until process `pid` is stopped (IREEPKG_FAULT=<point>:stop)."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.01)
    raise AssertionError("ireepkg did not stop at the fault point")


def kill_at_fault_point(args, point, stops=1):
    """Runs ireepkg with IREEPKG_FAULT=<point>:stop, lets it pass the point
    `stops` - 1 times, then kills it there with SIGKILL; returns its pid."""
    import signal
    proc = subprocess.Popen(
        [str(ireepkg_path()), *map(str, args)],
        env=dict(os.environ, IREEPKG_FAULT=f"{point}:stop"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for n in range(stops):
            if n:
                os.kill(proc.pid, signal.SIGCONT)
            wait_stopped(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    return proc.pid


def compile_simple_mul(out_dir: pathlib.Path) -> pathlib.Path:
    """examples/programs/simple_mul.mlir compiled for this host by the
    venv's iree-compile: a program whose dispatch calls simple-mul's
    plugin."""
    import sys
    out = out_dir / "simple_mul.vmfb"
    subprocess.run([pathlib.Path(sys.executable).parent / "iree-compile",
                    REPO / "examples" / "programs" / "simple_mul.mlir",
                    "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=host", "-o", out],
                   check=True, timeout=300)
    return out


def read_only(prefix: pathlib.Path, *args):
    """Runs ireepkg on `prefix` made read-only: a read-only bind mount for
    root (who may write anything else), the write bits taken away for an
    ordinary user."""
    cmd = [str(ireepkg_path()), *map(str, args)]
    if os.geteuid() == 0:
        script = ('mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" '
                  '&& exec "$@"')
        cmd = ["unshare", "-m", "sh", "-c", script, str(prefix), *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    modes = {p: p.stat().st_mode for p in [prefix, *prefix.rglob("*")]}
    for p in modes:
        p.chmod(modes[p] & ~0o222)
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def make_writable(root: pathlib.Path):
    """Installed packages are read-only; make a tree removable."""
    for dirpath, dirnames, _ in os.walk(root):
        os.chmod(dirpath, 0o755)


def copy_package(src: pathlib.Path, dst: pathlib.Path, **manifest_changes) -> pathlib.Path:
    """Copies a package directory, changing top-level manifest fields."""
    import json
    import shutil
    shutil.copytree(src, dst)
    m = json.loads((dst / "ireeplugin.json").read_text())
    for k, v in manifest_changes.items():
        if v is None:
            m.pop(k, None)
        else:
            m[k] = v
    (dst / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return dst


def data_package(root: pathlib.Path, name: str, version: str = "1.0.0",
                 dependencies: dict | None = None, files: dict | None = None) -> pathlib.Path:
    """A package with no native code: a manifest and some data files."""
    import json
    d = root / f"{name}-{version}"
    d.mkdir(parents=True)
    m = {"schema_version": 1, "name": name, "version": version,
         "summary": f"test package {name}"}
    if dependencies:
        m["dependencies"] = dependencies
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    for rel, content in (files or {"data/readme.txt": f"{name} {version}\n"}).items():
        f = d / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(content if isinstance(content, bytes) else content.encode())
    return d


def pack(pkg_dir, out_dir, *extra) -> pathlib.Path:
    r = run("pack", pkg_dir, "-o", out_dir, "--json", *extra)
    assert r.code == 0, r.err
    import json
    return pathlib.Path(json.loads(r.out)["archive"])


@pytest.fixture(scope="session")
def example_archives(tmp_path_factory):
    """The example packages, packed once per session."""
    out = tmp_path_factory.mktemp("dist")
    return {
        "simple-mul": pack(EXAMPLES / "simple-mul", out),
        "mul-pipeline": pack(EXAMPLES / "mul-pipeline", out),
    }


@pytest.fixture
def cache(request, tmp_path, monkeypatch):
    """A download cache of the test's own, so offline tests are honest. In a
    module whose NO_PREFIX_FROM_ENVIRONMENT is true, IREEPKG_PREFIX is unset
    as well (a project's commands use the project's prefix)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(d))
    if getattr(request.module, "NO_PREFIX_FROM_ENVIRONMENT", False):
        monkeypatch.delenv("IREEPKG_PREFIX", raising=False)
    return d


@pytest.fixture
def reg(request, tmp_path):
    """A signed directory registry (regfix.Registry) in tmp_path with what
    the test module's REGISTRY lists, published in that order: (name,
    version), (name, version, dependencies) or (name, version, dependencies,
    files), where a file given as a number of bytes gets that many random
    bytes; then the versions its YANKED lists ("name@version") are yanked."""
    from regfix import Registry
    r = Registry(tmp_path)
    for name, version, *rest in request.module.REGISTRY:
        dependencies = rest[0] if rest else None
        files = None
        if len(rest) > 1:
            files = {path: os.urandom(content) if isinstance(content, int) else content
                     for path, content in rest[1].items()}
        r.publish(name, version, dependencies, files=files)
    for spec in getattr(request.module, "YANKED", ()):
        r.yank(spec)
    return r


# --- no silent skips in CI -----------------------------------------------------
#
# CI has every peer the tests use (the README's set-up installs them), so a
# test that skips there hides a regression: with CI set (CI=true, as the CI
# runner sets it), a skip is a failure. The one kind of skip that stays is a
# test that needs root, in the run of the suite as an ordinary user (the
# root run of the same file does it); its reason starts with ROOT_ONLY.
ROOT_ONLY = "needs root:"


def _ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (_ci() and report.skipped):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if reason.startswith("Skipped: "):
        reason = reason[len("Skipped: "):]
    if reason.startswith(ROOT_ONLY) and os.geteuid() != 0:
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped in CI, where every peer is installed: {reason}\n"
                       "(install what the test needs in scripts/setup.sh)")
