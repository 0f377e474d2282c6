"""Regression tests built from the shapes of hostile inputs that once got
through: limits that pack and install must agree on, archives checked by
`manifest check`, a package cache whose blobs were changed behind its back,
downloads that never end, and privileged copies of ireepkg that refuse to
run (and libireepkg_runtime in a privileged program, which trusts nothing
of its caller's environment). (Hostile archives refused by install are
in test_archive_safety.py.)"""
import json
import os
import pathlib

import pytest

from archive_forge import MANIFEST, Member, file, forge
from conftest import ROOT_ONLY, run, wait_stopped


def many_files_package(root: pathlib.Path, count: int) -> pathlib.Path:
    d = root / "many"
    (d / "data").mkdir(parents=True)
    (d / "ireeplugin.json").write_text(json.dumps(
        {"schema_version": 1, "name": "many", "version": "1.0.0",
         "summary": "a package of many empty files"}) + "\n")
    for i in range(count):
        sub = d / "data" / f"{i // 1000:03d}"
        if i % 1000 == 0:
            sub.mkdir()
        (sub / f"f{i:06d}").touch()
    return d


def test_pack_and_install_agree_on_60001_files(tmp_path):
    """pack once made a package of 60,001 empty files that install refused
    (its RECORD was over a 4 MiB limit of install's own); the member limit
    both document is 100,000."""
    d = many_files_package(tmp_path, 60_001)
    r = run("pack", d, "-o", tmp_path / "out", "--json")
    assert r.code == 0, r.err
    archive = json.loads(r.out)["archive"]
    r = run("install", "--prefix", tmp_path / "p", archive)
    assert r.code == 0, r.err
    assert r.out.startswith("installed many 1.0.0\n")
    assert run("verify", "--prefix", tmp_path / "p", "many").code == 0


def test_pack_refuses_what_install_would_refuse(tmp_path):
    d = many_files_package(tmp_path, 100_000)  # + the manifest + RECORD
    r = run("pack", d, "-o", tmp_path / "out")
    assert r.code == 1
    assert ("ireepkg: error: " + str(d) + ": package 'many': cannot pack: it has "
            "100002 members, more than the limit of 100000") in r.err, r.err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_manifest_check_reads_the_manifest_inside_an_archive(tmp_path):
    good = forge(tmp_path / "good.ireepkg", [file("data/a.txt", "a")])
    r = run("manifest", "check", good)
    assert (r.code, r.err) == (0, "checked 1 file: valid\n")
    # Strict, as pack is: an unknown field is an error, with its place.
    bad = forge(tmp_path / "bad.ireepkg", [file("data/a.txt", "a")],
                manifest={**MANIFEST, "bogus": 1})
    r = run("manifest", "check", bad)
    assert r.code == 1
    assert f"{bad}:ireeplugin.json:" in r.err and "bogus" in r.err, r.err
    assert r.err.endswith("checked 1 file: 1 invalid, 1 error(s), 0 warning(s)\n")
    # The archive's own rules come first.
    evil = forge(tmp_path / "evil.ireepkg", [file("data/CON", "x")])
    r = run("manifest", "check", evil, "--json")
    assert r.code == 1
    report = json.loads(r.out)
    [d] = report["files"][0]["diagnostics"]
    assert d["message"].endswith("lists \"data/CON\", a path with the name "
                                 "\"CON\", which Windows reserves for a device")


# --- the package cache does not trust itself -----------------------------------

def test_changed_cache_blob_is_not_linked(tmp_path, example_archives):
    """A cached blob whose bytes changed while its size and mode did not
    was once linked into the next prefix, which then failed `verify`."""
    env = {"IREEPKG_CACHE_DIR": str(tmp_path / "cache")}
    prefix = tmp_path / "p"
    archive = example_archives["simple-mul"]
    assert run("install", "--prefix", prefix, archive, env=env).code == 0
    assert run("remove", "--prefix", prefix, "simple-mul", env=env).code == 0
    blobs = sorted(p for p in (tmp_path / "cache" / "files").rglob("*")
                   if p.is_file() and ".ok-" not in p.name)
    assert blobs
    victim = max(blobs, key=lambda p: p.stat().st_size)
    mode = victim.stat().st_mode
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    os.chmod(victim, 0o644)
    victim.write_bytes(bytes(data))
    os.chmod(victim, mode)
    assert victim.stat().st_size == len(data)
    r = run("install", "--prefix", prefix, archive, env=env)
    assert r.code == 0, r.err
    v = run("verify", "--prefix", prefix, env=env)
    assert v.code == 0 and v.out.rstrip().endswith(": ok"), v
    # The cache holds the right bytes again, for the next install.
    import hashlib
    fixed = victim.read_bytes()
    assert hashlib.sha256(fixed).hexdigest() == victim.name.split(".")[0]
    assert run("remove", "--prefix", prefix, "simple-mul", env=env).code == 0
    r = run("install", "--prefix", prefix, archive, env=env)
    assert r.code == 0, r.err
    assert run("verify", "--prefix", prefix, env=env).code == 0


def test_network_limits_from_the_environment_are_checked(tmp_path):
    r = run("install", "foo", "--registry", tmp_path, "--prefix", tmp_path / "p",
            env={"IREEPKG_LOW_SPEED_TIME": "soon"})
    assert r.code == 2
    assert r.err == ('ireepkg: error: IREEPKG_LOW_SPEED_TIME="soon" is not a number '
                     'of seconds\n  hint: set it to a number such as 30, or unset it\n')


# --- privileged copies refuse to run ---------------------------------------------

EVIL_MODULE = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void pwn(void) {
  const char *m = getenv("EVIL_MARKER");
  int fd = open(m ? m : "/tmp/ireepkg-evil-marker", O_WRONLY | O_CREAT, 0666);
  if (fd >= 0) close(fd);
}
"""

UNPRIVILEGED = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def setuid_copy(tmp_path):
    """A set-user-ID root copy of ireepkg, and a hostile HTTP module."""
    import shutil
    import subprocess
    if os.geteuid() != 0:
        pytest.skip(f"{ROOT_ONLY} making a set-user-ID root copy; the root run "
                    "of this file does it")
    import tempfile
    # pytest's own temporary directories are root's alone (0700).
    d = pathlib.Path(tempfile.mkdtemp(prefix="ireepkg-setuid-"))
    (d / "bin").mkdir(parents=True)
    os.chmod(d, 0o777)
    binary = d / "bin" / "ireepkg"
    shutil.copy2(os.environ.get("IREEPKG_BIN", "build/bin/ireepkg"), binary)
    os.chmod(binary, 0o4755)
    src = d / "evil.c"
    src.write_text(EVIL_MODULE)
    subprocess.run(["clang-22", "-shared", "-fPIC", "-o", d / "evil.so", src],
                   check=True)
    os.chmod(d / "evil.so", 0o755)
    yield d
    shutil.rmtree(d)


def run_as_nobody(binary, *args, env, cwd):
    import subprocess
    full = {"PATH": os.environ["PATH"], **env}

    return subprocess.run([*UNPRIVILEGED, str(binary), *map(str, args)], env=full,
                          cwd=cwd, capture_output=True, text=True, timeout=60)


REFUSAL = ("error: refusing to run with privileges the caller does not have: "
           "the real {kind} id is 65534 but the effective one is 0 (a set-{kind}-ID "
           "program); ireepkg installs, loads and runs package code and writes "
           "files, and does so only with the rights of the user who runs it\n"
           "  hint: run it as yourself; remove the set-user-ID and set-group-ID "
           "bits and file capabilities from the program (chmod u-s,g-s; setcap -r), "
           "or use sudo to act as root\n")

# What a set-user-ID root copy once did for any caller: run a tool as root
# (exec), load a package's plugin as root (install, doctor), write root's
# files anywhere (config set --system, install --prefix, key generate, pack,
# registry init), sign with a key only root may read, quote root-only files
# in its errors (manifest check).
PRIVILEGED_COMMANDS = {
    "exec": ["exec", "--tool-kind", "python", "--", "python3", "-c",
             "open('{d}/exec-wrote', 'w')"],
    "install": ["install", "--prefix", "{d}/p", "{d}/secret.ireepkg"],
    "doctor": ["doctor", "--prefix", "{d}/p"],
    "config-set-system": ["config", "set", "--system", "offline", "true"],
    "key-generate": ["key", "generate", "-o", "{d}/key"],
    "pack": ["pack", "{d}", "-o", "{d}/out"],
    "registry-init": ["registry", "init", "{d}/reg"],
    "sign": ["sign", "--key", "{d}/secret.key", "{d}/evil.c"],
    "manifest-check": ["manifest", "check", "{d}/secret.json"],
    "lock": ["lock"],
    "list": ["list"],
    "version": ["--version"],
    "help": ["--help"],
}


@pytest.mark.parametrize("name", sorted(PRIVILEGED_COMMANDS))
def test_setuid_copy_refuses_to_run(setuid_copy, name):
    """A set-user-ID root copy run by an ordinary user does nothing at all
    but say why; an ordinary copy runs the same command."""
    d = setuid_copy
    marker = d / "loaded"
    (d / "secret.json").write_text('{"plugins": [{"name": "TOP-SECRET-VALUE-42"}]}\n')
    os.chmod(d / "secret.json", 0o600)
    (d / "plugins.json").write_text(json.dumps(
        {"schema_version": 1, "registries": [], "plugins": []}) + "\n")
    hostile = {"IREEPKG_HTTP_MODULE": str(d / "evil.so"),
               "EVIL_MARKER": str(marker),
               "IREEPKG_PREFIX": str(d / "chosen-by-caller"),
               "HOME": str(d)}
    args = [a.format(d=d) for a in PRIVILEGED_COMMANDS[name]]
    system_config = pathlib.Path("/etc/ireepkg/config.toml")
    config_before = system_config.read_bytes() if system_config.exists() else None
    from conftest import snapshot
    before = snapshot(d)
    r = run_as_nobody(d / "bin" / "ireepkg", *args, env=hostile, cwd=d)
    assert (r.returncode, r.stdout, r.stderr) == (
        1, "", "ireepkg: " + REFUSAL.format(kind="user")), r
    assert snapshot(d) == before
    assert (system_config.read_bytes() if system_config.exists()
            else None) == config_before
    assert "TOP-SECRET" not in r.stdout + r.stderr


def test_setgid_copy_refuses_to_run(setuid_copy):
    d = setuid_copy
    binary = d / "bin" / "ireepkg"
    os.chown(binary, 0, 0)
    os.chmod(binary, 0o2755)
    r = run_as_nobody(binary, "list", env={"HOME": str(d)}, cwd=d)
    # A set-group-ID process is not dumpable, so a sanitizer build's leak
    # checker cannot inspect it at exit and says so ("==<pid>==..." lines,
    # after ireepkg's own); leaks are checked in every other run.
    err = "".join(line for line in r.stderr.splitlines(True)
                  if not line.startswith("=="))
    assert (r.returncode, r.stdout, err) == (
        1, "", "ireepkg: " + REFUSAL.format(kind="group")), r
    # The control: the same copy without the bit runs.
    os.chmod(binary, 0o755)
    r = run_as_nobody(binary, "--version", env={"HOME": str(d)}, cwd=d)
    assert r.returncode == 0 and r.stdout.startswith("ireepkg "), r


@pytest.mark.parametrize("tool", ["ireepkg-inspect", "ireepkg-plugin-probe",
                                  "ireepkg-embed-compile", "ireepkg-mlir-check"])
def test_setuid_helper_programs_refuse_to_run(setuid_copy, tool):
    import shutil
    from conftest import BUILD
    d = setuid_copy
    copy = d / "bin" / tool
    shutil.copy2(BUILD / "bin" / tool, copy)
    os.chmod(copy, 0o755)
    r = run_as_nobody(copy, "--help", env={"HOME": str(d)}, cwd=d)
    assert r.returncode == 0, r  # the control
    os.chmod(copy, 0o4755)
    r = run_as_nobody(copy, "--help", env={"HOME": str(d)}, cwd=d)
    assert (r.returncode, r.stdout, r.stderr) == (
        1, "", f"{tool}: " + REFUSAL.format(kind="user")), r


LOCATE_PROGRAM = r"""
#include <ireepkg/runtime.h>
#include <stdio.h>
int main(void) {
  ireepkg_runtime_prefix_location_t *loc = NULL;
  ireepkg_runtime_error_t *err = NULL;
  if (ireepkg_runtime_locate_prefix(NULL, NULL, &loc, &err) != IREEPKG_RUNTIME_OK) {
    printf("error: %s\n", ireepkg_runtime_error_message(err));
    ireepkg_runtime_free_error(err);
    return 1;
  }
  printf("%s %s\n", loc->source_name, loc->path);
  ireepkg_runtime_free_prefix_location(loc);
  return 0;
}
"""


def test_setuid_program_using_the_runtime_library(setuid_copy):
    """libireepkg_runtime in a privileged program: neither IREEPKG_PREFIX
    nor a plugins.json in the directory it was started from chooses the
    prefix."""
    import subprocess
    from conftest import BUILD, REPO
    d = setuid_copy
    src = d / "locate.c"
    src.write_text(LOCATE_PROGRAM)
    exe = d / "bin" / "locate"
    # A sanitizer build's library needs the sanitizer runtime linked in.
    cache = (BUILD / "CMakeCache.txt").read_text()
    sanitize = [l.split("=", 1)[1] for l in cache.splitlines()
                if l.startswith("IREEPKG_SANITIZE:")]
    flags = [f"-fsanitize={sanitize[0]}"] if sanitize and sanitize[0] else []
    subprocess.run(["clang-22", *flags, "-o", exe, src, "-I",
                    REPO / "runtime_integration" / "include",
                    BUILD / "lib" / "libireepkg_runtime.a"], check=True)
    (d / "plugins.json").write_text("{}\n")
    hostile = {"IREEPKG_PREFIX": str(d / "chosen-by-caller"), "HOME": str(d)}
    os.chmod(exe, 0o755)
    r = run_as_nobody(exe, env=hostile, cwd=d)
    assert r.stdout == f"IREEPKG_PREFIX {d}/chosen-by-caller\n"  # the control
    hostile.pop("IREEPKG_PREFIX")
    r = run_as_nobody(exe, env=hostile, cwd=d)
    assert r.stdout == f"project {d}/.iree-plugins\n"  # the control
    os.chmod(exe, 0o4755)
    hostile["IREEPKG_PREFIX"] = str(d / "chosen-by-caller")
    r = run_as_nobody(exe, env=hostile, cwd=d)
    assert "chosen-by-caller" not in r.stdout and ".iree-plugins" not in r.stdout, r


# --- install reads what it checked -----------------------------------------------

def install_with_swap(tmp_path, swap):
    """Starts `install` of a.ireepkg, stops it once the heads are read,
    calls swap(path), lets it go on; returns (result, prefix)."""
    import signal
    import subprocess
    from conftest import ireepkg_path
    from archive_forge import file as member
    a = forge(tmp_path / "a.ireepkg", [member("data/who.txt", "a")],
              manifest={**MANIFEST, "name": "alpha"})
    b = forge(tmp_path / "b.ireepkg", [member("data/who.txt", "b")],
              manifest={**MANIFEST, "name": "bravo"})
    prefix = tmp_path / "p"
    env = dict(os.environ, IREEPKG_FAULT="heads-read:stop",
               IREEPKG_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([str(ireepkg_path()), "install", "--prefix", prefix, a],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_stopped(proc.pid)
        swap(a, b)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err, prefix


def installed_names(prefix):
    r = run("list", "--json", "--prefix", prefix)
    return [p["name"] for p in json.loads(r.out)["packages"]] if r.code == 0 else None


def test_archive_renamed_over_during_install(tmp_path):
    """Another archive renamed over the path between the check and the
    extraction once gave a prefix whose installed.json named one package
    and whose files were the other's (and install exited 0)."""
    code, out, err, prefix = install_with_swap(tmp_path, lambda a, b: os.replace(b, a))
    assert code == 0, err
    assert installed_names(prefix) == ["alpha"]
    assert (prefix / "packages/alpha/1.0.0/data/who.txt").read_text() == "a"
    assert run("verify", "--prefix", prefix).code == 0


def test_archive_rewritten_in_place_during_install(tmp_path):
    def rewrite(a, b):
        data = b.read_bytes()
        with open(a, "r+b") as f:
            f.write(data)
            f.truncate()
    code, out, err, prefix = install_with_swap(tmp_path, rewrite)
    assert code == 1
    assert "the archive changed while it was being installed" in err, err
    assert installed_names(prefix) in (None, [])


# --- offline bundles ----------------------------------------------------------

class Zeros:
    """A file object of `n` zero bytes, made as it is read."""
    def __init__(self, n):
        self.left = n

    def read(self, size=-1):
        size = self.left if size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def test_bundle_bomb_is_refused_and_leaves_nothing(tmp_path):
    """A 300 MiB file compressed to a few KB: the bundle once wrote all of it
    into cache/bundles/<id>/ before any check, and left it there."""
    import io
    import subprocess
    import tarfile
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        ti = tarfile.TarInfo("bundle.json")
        body = b'{"registries": []}\n'
        ti.size = len(body)
        tar.addfile(ti, io.BytesIO(body))
        ti = tarfile.TarInfo("big.bin")
        ti.size = 300 << 20
        tar.addfile(ti, Zeros(ti.size))
    bomb = tmp_path / "bomb.ireebundle"
    bomb.write_bytes(subprocess.run(["zstd", "-19", "-c"], input=raw.getvalue(),
                                    capture_output=True, check=True).stdout)
    assert bomb.stat().st_size < 64 << 10
    cache = tmp_path / "cache"
    r = run("install", "--bundle", bomb, "--offline", "--registry-key",
            "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3",
            "foo", "--prefix", tmp_path / "p", env={"IREEPKG_CACHE_DIR": str(cache)})
    assert r.code == 1
    assert "not a valid bundle: the archive unpacks to more than" in r.err, r.err
    assert "past the size or compression-ratio limit" in r.err
    left = [p for p in (cache / "bundles").rglob("*")] if (cache / "bundles").exists() else []
    assert left == []
