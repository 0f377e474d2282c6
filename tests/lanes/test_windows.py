"""The Windows lane: a windows-x86_64 prefix prepared here, run by IREE's
own Windows runtime (the iree-base-runtime win_amd64 wheel) under wine.

The prefix is installed on Linux with --platform windows-x86_64, moved into
wine's C: drive to a path with a space in it, its flagfile is written there
by the Windows ireepkg-runtime.exe, and IREE's iree-run-module.exe runs
simple-mul's program through the example package's DLL (built with
mingw-w64 from the example's C source; the package's embedded-ELF plugin is
not activated on Windows) on local-sync and local-task. A second test runs
the embedded-ELF build of the same plugin on IREE's Windows runtime and
expects the crash of iree-org/iree#12801, so that a fix upstream is
noticed.

Wine: one persistent wineserver in a WINEPREFIX of its own for the lane,
stopped at the end; wine's output always goes to files (its helper
processes keep pipes open); WINEDEBUG=-all; winedbg disabled (with it, a
crashed process's exit status is sometimes 0). IREE's MSVC-built tools need
VCRUNTIME140.dll, which the wheel does not ship: wine's own builtin
vcruntime140 serves."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from lanefix import (EXAMPLES, PRODUCT, RUN_ARGS, compile_program,
                      install_env, iree_tools, run, target_build)

TOOLS = iree_tools("win_amd64")
RUNTIME_EXE = target_build("windows-x86_64") / "bin" / "ireepkg-runtime.exe"
# The example package as the build packs it, with its windows-x86_64 DLL.
ARCHIVE = EXAMPLES / "dist" / "simple-mul-1.2.0.ireepkg"
DLL_IN_PACKAGE = r"packages\simple-mul\1.2.0\runtime\windows-x86_64\simple_mul.dll"
# Where the prefix goes, in wine's C: drive: a space, as Windows paths have.
WINDOWS_PREFIX = r"C:\users\Public\Deployed Prefix"


class Wine:
    """A WINEPREFIX with one persistent wineserver, for the lane."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.prefix = root / "wineprefix"
        self.prefix.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
        self.env.update(WINEPREFIX=str(self.prefix), WINEDEBUG="-all",
                        # No Mono or Gecko installers when the prefix is made;
                        # no winedbg on a crash: with it, a process that
                        # faulted sometimes exits with status 0.
                        WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d")
        self.runs = 0

    def c_drive(self, windows_path: str) -> pathlib.Path:
        """The Linux path of a C:\\ path."""
        assert windows_path.startswith("C:\\")
        return self.prefix / "drive_c" / windows_path[3:].replace("\\", "/")

    def start(self):
        subprocess.run(["wineserver", "-p"], env=self.env, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
        # Makes the prefix (the first run takes several seconds).
        r = self.run(["cmd", "/c", "exit"], timeout=180)
        assert r.returncode == 0, r.stderr

    def stop(self):
        subprocess.run(["wineserver", "-k"], env=self.env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)

    def run(self, args, timeout=120, cwd=None, env=None
            ) -> subprocess.CompletedProcess:
        """Runs a Windows program (in `cwd`, a C:\\ path, with `env` added
        to the environment); its output is read back from files."""
        self.runs += 1
        out = self.root / f"run{self.runs}.out"
        err = self.root / f"run{self.runs}.err"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = subprocess.run(["wine", *map(str, args)],
                                  env={**self.env, **(env or {})},
                                  cwd=self.c_drive(cwd) if cwd else None,
                                  stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                  timeout=timeout)
        return subprocess.CompletedProcess(
            proc.args, proc.returncode,
            out.read_bytes().decode(errors="replace"),
            err.read_bytes().decode(errors="replace"))


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    w = Wine(tmp_path_factory.mktemp("wine"))
    w.start()
    yield w
    w.stop()


@pytest.fixture(scope="module")
def program(wine):
    """simple_mul.mlir for this CPU, in wine's C: drive (an embedded-ELF
    executable: the same .vmfb runs on Linux and Windows)."""
    out = wine.c_drive(r"C:\users\Public\simple_mul.vmfb")
    compile_program(out, "--iree-llvmcpu-target-cpu=host")
    return r"C:\users\Public\simple_mul.vmfb"


@pytest.fixture(scope="module")
def archive():
    return ARCHIVE


def deploy(wine, archive, root, windows_path):
    """A windows-x86_64 prefix installed here and moved into wine's C:
    drive at `windows_path`."""
    prepared = root / "prepared"
    r = run("install", "--platform", "windows-x86_64", "--prefix", prepared,
            archive, env=install_env())
    assert r.code == 0, r.err
    destination = wine.c_drive(windows_path)
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(prepared, destination)
    return windows_path


@pytest.fixture(scope="module")
def deployed(wine, archive, tmp_path_factory):
    return deploy(wine, archive, tmp_path_factory.mktemp("windows-prefix"),
                  WINDOWS_PREFIX)


@pytest.fixture(scope="module")
def written(wine, deployed):
    """The moved prefix's flagfile, written there by ireepkg-runtime.exe:
    (how it ran, the file's Windows path)."""
    r = wine.run([RUNTIME_EXE, "write-flagfile", "--prefix", deployed])
    return r, deployed + r"\state\runtime.flags"


def test_flagfile_written_by_ireepkg_runtime_exe(wine, deployed, written):
    r, flagfile = written
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith(
        f"ireepkg-runtime: note: the prefix {deployed} was moved or copied "
        f"from "), r.stderr
    assert r.stderr.endswith(
        f": wrote {flagfile} for where it is now (1 runtime plugins for "
        "windows-x86_64)\n"), r.stderr
    text = wine.c_drive(flagfile).read_text()
    assert text == (
        f"# IREE runtime flags for the ireepkg prefix {deployed}, target "
        "windows-x86_64\n"
        "# Generated by libireepkg_runtime 0.1.0 in activation order; do not "
        "edit.\n"
        f"# Use: iree-run-module --flagfile={flagfile} ...\n"
        "# Not activated: simple-mul 1.2.0 plugin simple_mul (on windows, "
        "embedded ELF (and FatELF) executable plugins cannot be called: "
        "iree-org/iree#12801)\n"
        f"--executable_plugin={deployed}\\{DLL_IN_PACKAGE}\n")
    # `flags` prints the same lines the file holds.
    r = wine.run([RUNTIME_EXE, "flags", "--prefix", deployed])
    assert r.returncode == 0, r.stderr
    assert r.stdout == text.splitlines(keepends=True)[-1]


@pytest.mark.parametrize("spelling,cwd", [
    ("C:/users/Public/Deployed Prefix", None),
    (r"c:\users\Public\.\x\..\Deployed Prefix\\", None),
    ("Deployed Prefix", r"C:\users\Public"),
    (r"\users\Public\Deployed Prefix", r"C:\users"),
])
def test_windows_spellings_of_the_prefix(wine, written, spelling, cwd):
    """Forward slashes, ".." and "." components, a trailing separator, a
    path relative to the current directory or to its drive's root: all
    name the same prefix, in the normal form with backslashes."""
    expected = wine.run([RUNTIME_EXE, "flags", "--prefix", WINDOWS_PREFIX,
                         "--format", "json"])
    r = wine.run([RUNTIME_EXE, "flags", "--prefix", spelling, "--format",
                  "json"], cwd=cwd)
    assert r.returncode == 0, r.stderr
    want = expected.stdout
    if spelling.startswith("c:"):  # the drive letter is kept as given
        want = want.replace("C:\\\\users", "c:\\\\users")
    assert r.stdout == want


def test_prefix_from_the_environment_and_the_user_default(wine, written):
    r = wine.run([RUNTIME_EXE, "flags"], env={"IREEPKG_PREFIX": WINDOWS_PREFIX})
    assert r.returncode == 0, r.stderr
    assert r.stdout == wine.run([RUNTIME_EXE, "flags", "--prefix",
                                 WINDOWS_PREFIX]).stdout
    # Without a prefix, a project or IREEPKG_PREFIX: %LOCALAPPDATA%\ireepkg.
    r = wine.run([RUNTIME_EXE, "flags"], cwd=r"C:\users\Public",
                 env={"IREEPKG_PREFIX": ""})
    assert r.returncode == 1
    assert re.fullmatch(
        r"ireepkg-runtime: error: no ireepkg prefix at "
        r"'C:\\users\\[^\\]+\\AppData\\Local\\ireepkg' \(chosen by "
        r"LOCALAPPDATA\): 'C:\\users\\[^\\]+\\AppData\\Local\\ireepkg"
        r"\\state' does not exist\n  hint: .*\n", r.stderr), r.stderr


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_iree_runs_the_dll_from_the_moved_prefix(wine, written, program,
                                                 device):
    assert written[0].returncode == 0, written[0].stderr
    r = wine.run([TOOLS / "iree-run-module.exe", f"--flagfile={written[1]}",
                  f"--module={program}", f"--device={device}", *RUN_ARGS])
    assert r.returncode == 0, r.stdout + r.stderr
    assert PRODUCT in r.stdout, r.stdout


def test_embedded_elf_plugin_crashes_windows_runtime(wine, program):
    """iree-org/iree#12801: IREE's Windows runtime calls an embedded-ELF
    plugin's load without the System V thunk. When this test fails because
    the program ran, the upstream bug is fixed: say from which IREE version
    in the platform facts, and let windows-* prefixes activate embedded
    plugins again."""
    plugin = wine.c_drive(r"C:\users\Public\simple_mul.x86_64.so")
    shutil.copy(EXAMPLES / "simple-mul" / "runtime" / "simple_mul.x86_64.so",
                plugin)
    r = wine.run([TOOLS / "iree-run-module.exe",
                  r"--executable_plugin=embedded:C:\users\Public\simple_mul.x86_64.so",
                  f"--module={program}", "--device=local-sync", *RUN_ARGS])
    assert PRODUCT not in r.stdout, (
        "IREE's Windows runtime ran an embedded-ELF plugin: "
        "iree-org/iree#12801 looks fixed in this IREE")
    assert r.returncode != 0
    assert "page fault" in r.stderr, r.stderr[-2000:]


def test_non_ascii_prefix_is_not_found_by_iree(wine, archive, program,
                                               tmp_path):
    """IREE's Windows runtime opens plugins with LoadLibraryA: the UTF-8
    path of a flagfile is read in the ANSI code page, so a prefix at a path
    with letters beyond ASCII is not found (ireepkg-runtime.exe says so).
    When IREE runs it, upstream has changed: update the warning and
    docs/runtime-integration.md."""
    where = deploy(wine, archive, tmp_path, r"C:\users\Public\Préfix ü")
    r = wine.run([RUNTIME_EXE, "write-flagfile", "--prefix", where])
    assert r.returncode == 0, r.stderr
    dll = where + "\\" + DLL_IN_PACKAGE
    assert r.stderr.splitlines()[-1] == (
        f'ireepkg-runtime: warning: runtime plugin "simple_mul_system" is at '
        f"{dll}, a path with letters beyond ASCII: IREE's Windows runtime "
        "opens plugins with LoadLibraryA, which reads a flagfile's UTF-8 path "
        "in the ANSI code page and does not find it; put the prefix at a path "
        "of ASCII letters")
    assert f"--executable_plugin={dll}\n" in wine.c_drive(
        where + r"\state\runtime.flags").read_text(encoding="utf-8")
    r = wine.run([TOOLS / "iree-run-module.exe",
                  f"--flagfile={where}\\state\\runtime.flags",
                  f"--module={program}", "--device=local-sync", *RUN_ARGS])
    assert PRODUCT not in r.stdout, "IREE found a plugin at a non-ASCII path"
    assert r.returncode == 1
    assert "NOT_FOUND; dynamic library not found on any search path" in r.stderr
