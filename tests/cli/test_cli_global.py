"""The options every command accepts, before or after the command (-q, -v,
--color, -C, --project, --offline, --json), colour on terminals and not in
pipes, and the exit-status rule (0 success, 1 failure, 2 usage error) across
commands, with `outdated --exit-code` and `lock --check --exit-code`."""
import json
import os
import pty
import re
import subprocess

import pytest

from conftest import REPO, data_package, ireepkg_path, pack, run
from regfix import FFT_KIT, WITHOUT_IREE, installed, project

ESC = "\x1b["


REGISTRY = FFT_KIT  # the `reg` fixture's (conftest.py)


def plain_env(**extra):
    """The environment without any colour variable of the caller's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE")}
    env.update(extra)
    return env


def run_env(*args, env, cwd=None):
    proc = subprocess.run([str(ireepkg_path()), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def run_on_terminal(*args, env, cwd=None):
    """Runs ireepkg with stdout and stderr on one pseudo-terminal; returns
    (exit code, everything it wrote)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(ireepkg_path()), *map(str, args)], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=120)
    return code, b"".join(chunks).decode().replace("\r\n", "\n")


# --- global options before or after the command ---------------------------------

def test_global_options_before_and_after_the_command(tmp_path):
    prefix = tmp_path / "p"
    before = run("-q", "list", "--prefix", prefix)
    after = run("list", "--prefix", prefix, "-q")
    assert before.code == after.code == 0, (before, after)
    assert before.out == after.out == f"no packages installed in {prefix}\n"
    j1 = run("--json", "list", "--prefix", prefix)
    j2 = run("list", "--json", "--prefix", prefix)
    assert j1.code == j2.code == 0
    assert j1.out == j2.out
    assert json.loads(j1.out)["packages"] == []
    # --offline and --project may come first too.
    r = run("--offline", "--color", "never", "-v", "list", "--prefix", prefix)
    assert r.code == 0, r


def test_unknown_global_option_and_missing_command():
    r = run("--bogus", "list")
    assert r.code == 2
    assert r.err == ("ireepkg: error: unknown option '--bogus'\n"
                     "  hint: see `ireepkg help` for the options every command "
                     "accepts; a command's own options follow it\n")
    r = run("--jsn", "list")
    assert r.code == 2
    assert "unknown option '--jsn' (did you mean '--json'?)" in r.err
    r = run("-q")
    assert r.code == 2
    assert r.err.startswith("ireepkg: error: a command is missing after the options\n")
    r = run("-C")
    assert r.code == 2
    assert "option '-C' needs a value (DIR)" in r.err


def test_json_and_project_are_refused_where_they_mean_nothing(tmp_path):
    r = run("--json", "new", tmp_path / "x", "--kind", "runtime")
    assert r.code == 2
    assert r.err.startswith("ireepkg: error: 'ireepkg new' has no JSON report\n")
    assert not (tmp_path / "x").exists()
    r = run("list", "--project", tmp_path, "--prefix", tmp_path / "p")
    assert r.code == 2
    assert ("'ireepkg list' does not read a project file, so --project means "
            "nothing to it") in r.err


def test_quiet_and_verbose_contradict(tmp_path):
    r = run("-q", "list", "-v", "--prefix", tmp_path)
    assert r.code == 2
    assert r.err == ("ireepkg: error: --quiet and --verbose contradict each other\n"
                     "  hint: give one of them\n")


def test_color_takes_three_values(tmp_path):
    r = run("--color", "allways", "list", "--prefix", tmp_path)
    assert r.code == 2
    assert ("--color takes auto, always or never, not 'allways' (did you mean "
            "'always'?)") in r.err
    r = run("list", "--color=never", "--prefix", tmp_path)
    assert r.code == 0, r


def test_directory_changes_first(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run("-C", d, "lock", cwd=elsewhere)
    assert r.code == 0, r
    assert (d / "plugins.lock.json").exists()
    # Relative, and one -C after another.
    r = run("-C", "..", "-C", "proj", "lock", "--check", cwd=elsewhere)
    assert r.code == 0, r
    assert r.out == f"{d}/plugins.lock.json is up to date (2 packages)\n"
    # After the command too.
    r = run("lock", "--check", "-C", d, cwd=elsewhere)
    assert r.code == 0, r
    r = run("-C", tmp_path / "nowhere", "lock")
    assert r.code == 1
    assert r.err == (f"ireepkg: error: cannot change to directory '{tmp_path / 'nowhere'}' "
                     "(-C): No such file or directory\n"
                     "  hint: give an existing directory\n")


def test_project_takes_a_file_or_its_directory(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run("--project", d, "lock", cwd=elsewhere)
    assert r.code == 0, r
    assert (d / "plugins.lock.json").exists()
    r = run("lock", "--check", "--project", d / "plugins.json", cwd=elsewhere)
    assert r.code == 0, r
    # A directory without plugins.json: said as it is, not "file too large".
    r = run("lock", "--project", elsewhere, cwd=elsewhere)
    assert r.code == 1
    assert r.err == (f"ireepkg: error: --project {elsewhere}: the directory holds no "
                     "plugins.json\n"
                     "  hint: give the project file itself, or run `ireepkg init` in "
                     "that directory to start a project\n")
    r = run("outdated", "--project", elsewhere / "nope.json", cwd=elsewhere)
    assert r.code == 1
    assert f"--project {elsewhere / 'nope.json'}: no such file" in r.err
    r = run("lock", "--project", "", cwd=elsewhere)
    assert r.code == 2
    assert "--project is empty" in r.err
    # add and rm edit the project --project names.
    r = run("add", "base-kernels", "--project", d, cwd=elsewhere)
    assert r.code == 0, r
    names = [p["name"] for p in json.loads((d / "plugins.json").read_text())["plugins"]]
    assert names == ["fft-kit", "base-kernels"]
    r = run("--project", d, "rm", "base-kernels", cwd=elsewhere)
    assert r.code == 0, r
    names = [p["name"] for p in json.loads((d / "plugins.json").read_text())["plugins"]]
    assert names == ["fft-kit"]


def test_offline_before_the_command(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    assert run("lock", cwd=d).code == 0
    r = run("--offline", "sync", cwd=d)
    assert r.code == 1, r
    assert "--offline" in r.err and "fft-kit 1.0.0" in r.err
    assert not (d / ".iree-plugins" / "packages").exists()


def test_flags_json_is_format_json(tmp_path):
    prefix = tmp_path / "p"
    archive = pack(data_package(tmp_path / "src", "solo", "1.0.0"), tmp_path / "dist")
    assert run("install", archive, "--prefix", prefix).code == 0
    a = run("flags", "runtime", "--json", "--prefix", prefix)
    b = run("flags", "runtime", "--format", "json", "--prefix", prefix)
    c = run("--json", "flags", "runtime", "--prefix", prefix)
    assert a.code == b.code == c.code == 0, (a, b, c)
    assert a.out == b.out == c.out
    json.loads(a.out)
    r = run("flags", "runtime", "--json", "--format", "args", "--prefix", prefix)
    assert r.code == 2
    assert "--json and --format args contradict each other" in r.err


def test_quiet_silences_warnings(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    r = run("lock", cwd=d, env=WITHOUT_IREE)
    assert r.code == 0, r
    assert "ireepkg: warning: no IREE found" in r.err
    r = run("-q", "lock", "--upgrade", cwd=d, env=WITHOUT_IREE)
    assert r.code == 0, r
    assert r.err == "" and r.out == ""


def test_verbose_says_where_things_come_from(tmp_path, reg, cache):
    r = run("-v", "install", "fft-kit", "--registry", reg.dir, "--registry-key", reg.pub,
            "--prefix", tmp_path / "p1")
    assert r.code == 0, r
    lines = r.err.splitlines()
    assert f"ireepkg: prefix: {tmp_path / 'p1'} (from --prefix)" in lines
    snap = [l for l in lines if l.startswith(f"ireepkg: snapshot.json of {reg.dir}: ")]
    # Key ids are hexadecimal without leading zeros, as minisign writes them.
    assert snap and re.fullmatch(
        rf"ireepkg: snapshot.json of {re.escape(str(reg.dir))}: version \d+, signed by "
        rf"key [0-9A-F]{{1,16}} from {re.escape(str(reg.dir))}/snapshot.json", snap[0]), snap
    fetching = sorted(l for l in lines if ": fetching " in l)
    assert len(fetching) == 2, lines
    assert fetching[0].startswith(
        f"ireepkg: base-kernels 1.1.0: fetching {reg.dir}/archives/base-kernels/"
        "base-kernels-1.1.0.ireepkg (")
    assert any(re.fullmatch(r"ireepkg: fetched 2 archives \(\d+ bytes\) in \d+\.\d\d s", l)
               for l in lines), lines
    assert re.fullmatch(r"ireepkg: 'install' finished in \d+\.\d\d s with exit status 0",
                        lines[-1]), lines
    # Index files only with -vv.
    assert not any("index/" in l for l in lines)
    # A second prefix: the archives come from the download cache.
    r = run("-vv", "install", "fft-kit", "--registry", reg.dir, "--registry-key", reg.pub,
            "--prefix", tmp_path / "p2")
    assert r.code == 0, r
    lines = r.err.splitlines()
    assert any(re.fullmatch(r"ireepkg: fft-kit 1.0.0: in the download cache \(.*\)", l)
               for l in lines), lines
    assert not any(": fetching " in l for l in lines)
    # The index file was parsed in the first run: its parsed form is used.
    assert f"ireepkg: index/fft-kit.json of {reg.dir}: parsed copy in the cache" in lines
    # Without -v: none of it.
    r = run("install", "fft-kit", "--registry", reg.dir, "--registry-key", reg.pub,
            "--prefix", tmp_path / "p3")
    assert r.code == 0, r
    assert "snapshot.json" not in r.err and "finished in" not in r.err


def test_verbose_names_the_project_file_and_prefix(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    r = run("sync", "-v", cwd=d)
    assert r.code == 0, r
    lines = r.err.splitlines()
    assert f"ireepkg: project file: {d}/plugins.json" in lines
    assert f"ireepkg: prefix: {d}/.iree-plugins (the project's)" in lines
    r = run("-v", "rm", "fft-kit", cwd=d)
    assert r.code == 0, r
    assert f"ireepkg: project file: {d}/plugins.json" in r.err.splitlines()


# --- colour -----------------------------------------------------------------------

def test_errors_are_coloured_on_a_terminal_only(tmp_path):
    code, text = run_on_terminal("frobnicate", env=plain_env(TERM="xterm"))
    assert code == 2
    assert text.startswith(f"ireepkg: {ESC}1;31merror:{ESC}0m unknown command 'frobnicate'\n")
    assert f"  {ESC}36mhint:{ESC}0m see `ireepkg help`" in text
    # Piped: no escape sequences.
    code, out, err = run_env("frobnicate", env=plain_env(TERM="xterm"))
    assert code == 2 and ESC not in err
    assert err.startswith("ireepkg: error: unknown command")


@pytest.mark.parametrize("env,flag,coloured", [
    ({"NO_COLOR": "1"}, [], False),
    ({"NO_COLOR": ""}, [], True),             # empty: as if unset
    ({"TERM": "dumb"}, [], False),
    ({"NO_COLOR": "1"}, ["--color", "always"], True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, ["--color", "never"], False),
])
def test_colour_on_a_terminal_follows_the_rules(env, flag, coloured):
    code, text = run_on_terminal(*flag, "frobnicate", env=plain_env(**{"TERM": "xterm", **env}))
    assert code == 2
    assert (ESC in text) == coloured, text


@pytest.mark.parametrize("env,flag,coloured", [
    ({}, [], False),
    ({}, ["--color", "always"], True),
    ({"FORCE_COLOR": "1"}, [], True),
    ({"FORCE_COLOR": "0"}, [], False),
    ({"CLICOLOR_FORCE": "1"}, [], True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, [], True),  # forcing wins
    ({"FORCE_COLOR": "1"}, ["--color=never"], False),
    ({"FORCE_COLOR": "1"}, ["--color=auto"], False),     # --color wins
])
def test_colour_in_a_pipe_follows_the_rules(env, flag, coloured):
    code, out, err = run_env(*flag, "frobnicate", env=plain_env(**env))
    assert code == 2
    assert (ESC in err) == coloured, err


def test_lock_changes_and_outdated_are_coloured(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit", "version": "^1.0"},
                                {"name": "base-kernels", "version": "~1.0"}])
    r = run("lock", "--color", "always", cwd=d)
    assert r.code == 0, r
    assert run("sync", cwd=d).code == 0
    assert f"  {ESC}32m+ base-kernels 1.0.0{ESC}0m\n" in r.out
    assert f"  {ESC}32m+ fft-kit 1.0.0{ESC}0m\n" in r.out
    r = run("lock", cwd=d)
    assert ESC not in r.out
    reg.publish("base-kernels", "1.0.1")
    r = run("outdated", "--color", "always", cwd=d)
    assert r.code == 0, r
    assert (f"base-kernels  1.0.0         {ESC}33m1.0.1       {ESC}0m  "
            f"{ESC}31m1.1.0       {ESC}0m  test\n") in r.out
    r = run("outdated", cwd=d)
    assert ESC not in r.out
    assert "base-kernels  1.0.0         1.0.1         1.1.0         test\n" in r.out
    r = run("update", "--color=always", cwd=d)
    assert r.code == 0, r
    assert f"  {ESC}33m~ base-kernels 1.0.0 -> 1.0.1{ESC}0m\n" in r.out
    assert f"{ESC}33mchanged{ESC}0m base-kernels 1.0.0 -> 1.0.1\n" in r.out


# --- exit status --------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["lock"], ["lock", "--check"], ["sync"], ["update"], ["outdated"],
    ["bundle", "create", "-o", "x.ireebundle"], ["add", "fft-kit"], ["rm", "fft-kit"],
])
def test_a_missing_project_file_is_a_failure_everywhere(tmp_path, args):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run(*args, cwd=empty)
    assert r.code == 1, r
    assert "no plugins.json" in r.err
    assert "ireepkg init" in r.err


def test_usage_errors_are_2(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    for args in (["lock", "--iree-version", "three"], ["lock", "--bogus"],
                 ["outdated", "extra"], ["sync", "--color", "red"],
                 ["lock", "--exit-code"], ["list", "--prefix", ""]):
        r = run(*args, cwd=d)
        assert r.code == 2, (args, r)


def test_outdated_exit_code(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit", "version": "^1.0"}])
    assert run("lock", cwd=d).code == 0
    r = run("outdated", "--exit-code", cwd=d)
    assert r.code == 0, r
    assert r.out.startswith("every package is at the newest version")
    reg.publish("fft-kit", "1.1.0", {"base-kernels": "^1.0"})
    r = run("outdated", cwd=d)
    assert r.code == 0, r
    r = run("outdated", "--exit-code", cwd=d)
    assert r.code == 1, r
    assert "fft-kit" in r.out and r.err == ""
    r = run("outdated", "--exit-code", "--json", cwd=d)
    assert r.code == 1, r
    assert json.loads(r.out)["packages"][0]["wanted"] == "1.1.0"


def test_lock_check_exit_code(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    for args in (["--check"], ["--check", "--exit-code"]):
        r = run("lock", *args, cwd=d)
        assert r.code == 1, r
        assert "there is no plugins.lock.json" in r.err
    assert run("lock", cwd=d).code == 0
    for args in (["--check"], ["--check", "--exit-code"]):
        r = run("lock", *args, cwd=d)
        assert r.code == 0, r
    r = run("lock", "--exit-code", cwd=d)
    assert r.code == 2
    assert "--exit-code goes with --check" in r.err


def test_the_exit_status_rule_is_documented():
    text = (REPO / "docs" / "cli.md").read_text()
    assert "## Exit status\n\nEvery command exits with 0 on success, 1 on failure and 2" in text
    assert "## Global options\n" in text
    assert "| `-C, --directory DIR` |" in text


# --- hints and aliases -----------------------------------------------------------------

def test_missing_key_hint_fits_every_command(tmp_path, reg, cache):
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    p = json.loads((d / "plugins.json").read_text())
    del p["registries"][0]["public_key"]
    (d / "plugins.json").write_text(json.dumps(p, indent=2) + "\n")
    r = run("lock", cwd=d)
    assert r.code == 1, r
    hint = r.err[r.err.index("hint:"):]
    assert f"with \"public_key\": \"{reg.pub}\" in the registry's entry in plugins.json" in hint
    # --registry-key is offered only by the commands that take it; lock does
    # not.
    assert "--registry-key" not in hint
    assert "named by its URL on the command line" not in hint
    r = run("search", "fft", "--registry", reg.dir)
    assert r.code == 1, r
    assert ("or, where the registry is named by its URL on the command line "
            "(install, search, registry verify), with `--registry-key "
            f"{reg.pub}`") in r.err
    for name in ("install", "search", "registry verify"):
        assert "--registry-key" in run(*name.split(), "--help").out, name
    for name in ("lock", "add", "sync", "outdated"):
        assert "--registry-key" not in run(name, "--help").out, name


def test_uninstall_is_remove(tmp_path):
    src = data_package(tmp_path / "src", "solo", "1.0.0")
    archive = pack(src, tmp_path / "dist")
    prefix = tmp_path / "p"
    assert run("install", archive, "--prefix", prefix).code == 0
    assert run("uninstall", "--help").out == run("remove", "--help").out
    assert run("help", "uninstall").out == run("remove", "--help").out
    r = run("uninstall", "solo", "--prefix", prefix)
    assert r.code == 0, r
    assert installed(prefix) == {}


def test_rm_and_remove_explain_each_other():
    rm = run("rm", "--help").out
    remove = run("remove", "--help").out
    assert "`ireepkg remove` (or `uninstall`)" in rm
    assert "`ireepkg rm` removes a plugin from plugins.json" in remove
