"""config.toml: where it is read from, what each key does, the order
flag > environment > user file > system file > default, `ireepkg config
list|get|set|unset`, and errors with file:line:column."""
import json
import os

import pytest

from conftest import run
from regfix import Registry, installed, project


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user with no configuration and no colour or offline variables."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / "xdg"))
    for v in ("IREEPKG_CONFIG_FILE", "IREEPKG_OFFLINE", "IREEPKG_PREFIX",
              "IREEPKG_REGISTRY", "IREEPKG_REGISTRY_KEY", "IREEPKG_PARALLEL_DOWNLOADS",
              "NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "XDG_DATA_HOME"):
        monkeypatch.delenv(v, raising=False)
    return h


def user_file(home):
    return home / "xdg" / "ireepkg" / "config.toml"


def settings(r):
    assert r.code == 0, r
    return {s["key"]: s for s in json.loads(r.out)["settings"]}


def test_defaults(home):
    r = run("config", "list")
    assert r.code == 0, r
    lines = r.out.splitlines()
    assert "registry = (not set)  (default)" in lines
    assert f"prefix = {home}/.local/share/ireepkg  (default)" in lines
    assert "parallel-downloads = 50  (default)" in lines
    assert "color = auto  (default)" in lines
    assert "offline = false  (default)" in lines
    j = json.loads(run("config", "list", "--json").out)
    # The system file first, then the user's.
    assert [f["path"] for f in j["files"]] == ["/etc/ireepkg/config.toml",
                                              str(user_file(home))]


def test_set_writes_the_user_file_and_keeps_the_rest(home):
    f = user_file(home)
    f.parent.mkdir(parents=True)
    f.write_text("# my settings\ncolor = \"never\"   # no colour\n\n[future]\nx = 1\n")
    # An unknown table stops everything: that file is refused.
    r = run("config", "list")
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {f}:4:2: unknown key \"future\"\n"), r.err
    f.write_text("# my settings\ncolor = \"never\"   # no colour\n\noffline = false\n")
    r = run("config", "set", "offline", "true")
    assert r.code == 0, r
    assert r.out == f"offline = true in {f}\n"
    r = run("config", "set", "parallel-downloads", "8")
    assert r.code == 0, r
    assert f.read_text() == ("# my settings\ncolor = \"never\"   "
                             "# no colour\n\noffline = true\nparallel-downloads = 8\n")
    s = settings(run("config", "list", "--json"))
    assert s["offline"] == {"key": "offline", "value": "true", "source": "file",
                            "where": f"{f}:4:11"}
    assert s["parallel-downloads"]["value"] == "8"
    assert s["color"]["value"] == "never" and s["color"]["where"] == f"{f}:2:9"
    assert run("config", "unset", "parallel-downloads").code == 0
    assert "parallel-downloads" not in f.read_text()
    # A file that does not exist yet is created, with its directory.
    other = home / "elsewhere" / "c.toml"
    r = run("config", "set", "registry", "https://plugins.example.org/iree",
            env={"IREEPKG_CONFIG_FILE": str(other)})
    assert r.code == 0, r
    assert other.read_text() == 'registry = "https://plugins.example.org/iree"\n'


def test_set_checks_values(home):
    for key, value, message in [
            ("offline", "yes", '"offline" must be true or false, not "yes"'),
            ("parallel-downloads", "0",
             '"parallel-downloads" must be a whole number from 1 to 256, not "0"'),
            ("color", "blue", '"color" must be "auto", "always" or "never", not "blue"')]:
        r = run("config", "set", key, value)
        assert r.code == 2, r
        assert r.err.startswith(f"ireepkg: error: {message}\n"), r.err
    r = run("config", "set", "ofline", "true")
    assert r.code == 2
    assert "unknown key 'ofline' (did you mean \"offline\"?)" in r.err
    assert not user_file(home).exists()


def test_get(home):
    r = run("config", "get", "registry")
    assert r.code == 1 and r.out == "" and r.err == ""
    assert run("config", "set", "registry", "https://r.example/iree").code == 0
    r = run("config", "get", "registry", "--show-origin")
    assert r.code == 0
    assert r.out == "https://r.example/iree\n"
    assert r.err == f"file {user_file(home)}:1:12\n"
    assert run("config", "get", "colour").code == 2


def test_precedence_flag_env_file_default(home):
    assert run("config", "set", "offline", "true").code == 0
    assert settings(run("config", "list", "--json"))["offline"]["source"] == "file"
    s = settings(run("config", "list", "--json", env={"IREEPKG_OFFLINE": "0"}))
    assert s["offline"] == {"key": "offline", "value": "false", "source": "env",
                            "where": "IREEPKG_OFFLINE"}
    s = settings(run("--offline", "config", "list", "--json", env={"IREEPKG_OFFLINE": "0"}))
    assert s["offline"]["source"] == "flag" and s["offline"]["value"] == "true"
    assert run("config", "set", "color", "always").code == 0
    s = settings(run("config", "list", "--json", env={"NO_COLOR": "1"}))
    assert s["color"] == {"key": "color", "value": "never", "source": "env",
                          "where": "NO_COLOR"}
    s = settings(run("--color", "auto", "config", "list", "--json", env={"NO_COLOR": "1"}))
    assert s["color"]["source"] == "flag" and s["color"]["value"] == "auto"


def test_color_from_the_file(home, tmp_path):
    assert run("config", "set", "color", "always").code == 0
    r = run("list", "--prefix", "")  # a usage error, printed in colour
    assert r.code == 2
    assert r.err.startswith("ireepkg: \x1b[1;31merror:\x1b[0m"), r.err
    r = run("list", "--prefix", "", env={"NO_COLOR": "1"})
    assert r.err.startswith("ireepkg: error:"), r.err


def test_prefix_and_cache_dir_from_the_file(home, tmp_path, monkeypatch):
    monkeypatch.delenv("IREEPKG_CACHE_DIR", raising=False)
    f = user_file(home)
    f.parent.mkdir(parents=True)
    f.write_text('prefix = "../../plugins"\ncache-dir = "/nonexistent-dir/cache"\n')
    r = run("list", "-v", cwd=tmp_path)
    assert r.code == 0, r
    assert r.out == f"no packages installed in {home}/plugins\n"
    assert f"ireepkg: prefix: {home}/plugins (from {f}:1:10)" in r.err.splitlines()
    r = run("cache", "dir")
    assert r.out == "/nonexistent-dir/cache\n"
    # The environment wins over the file, --prefix over both.
    r = run("cache", "dir", env={"IREEPKG_CACHE_DIR": str(tmp_path / "c")})
    assert r.out == f"{tmp_path / 'c'}\n"
    r = run("list", env={"IREEPKG_PREFIX": str(tmp_path / "e")}, cwd=tmp_path)
    assert r.out == f"no packages installed in {tmp_path / 'e'}\n"
    r = run("list", "--prefix", tmp_path / "f", env={"IREEPKG_PREFIX": str(tmp_path / "e")})
    assert r.out == f"no packages installed in {tmp_path / 'f'}\n"


def test_registry_and_offline_from_the_file(home, tmp_path, monkeypatch):
    monkeypatch.setenv("IREEPKG_CACHE_DIR", str(tmp_path / "cache"))
    reg = Registry(tmp_path / "r")
    reg.publish("base-kernels", "1.0.0")
    f = user_file(home)
    f.parent.mkdir(parents=True)
    f.write_text(f'registry = "{reg.dir}"\nregistry-key = "{reg.pub}"\n')
    prefix = tmp_path / "p"
    # The registry and its key are the file's.
    r = run("install", "base-kernels", "--prefix", prefix)
    assert r.code == 0, r
    assert installed(prefix)["base-kernels"]["version"] == "1.0.0"
    r = run("search", "base", "--json")
    assert r.code == 0, r
    assert [p["name"] for p in json.loads(r.out)["packages"]] == ["base-kernels"]
    # offline = true: a sync that needs a download is refused ...
    d = project(tmp_path, reg, [{"name": "base-kernels"}])
    assert run("lock", cwd=d, env={"IREEPKG_CACHE_DIR": str(tmp_path / "c2")}).code == 0
    assert run("config", "set", "offline", "true").code == 0
    r = run("sync", cwd=d, env={"IREEPKG_CACHE_DIR": str(tmp_path / "c2")})
    assert r.code == 1, r
    assert "--offline" in r.err and "base-kernels 1.0.0" in r.err
    # ... unless IREEPKG_OFFLINE=0 says otherwise.
    r = run("sync", cwd=d, env={"IREEPKG_CACHE_DIR": str(tmp_path / "c2"),
                                "IREEPKG_OFFLINE": "0"})
    assert r.code == 0, r
    # A project's registries win over the file's.
    d = project(tmp_path, reg, [{"name": "base-kernels"}])
    p = json.loads((d / "plugins.json").read_text())
    p["registries"][0]["url"] = "missing-registry"
    (d / "plugins.json").write_text(json.dumps(p))
    r = run("search", "base", cwd=d)
    assert r.code == 1
    assert "missing-registry" in r.err


def test_parallel_downloads_from_the_environment_is_checked(home, tmp_path):
    r = run("install", "x", "--registry", tmp_path, "--prefix", tmp_path / "p",
            env={"IREEPKG_PARALLEL_DOWNLOADS": "many"})
    assert r.code == 2
    assert r.err == ('ireepkg: error: IREEPKG_PARALLEL_DOWNLOADS="many" is not a number '
                     'from 1 to 256\n  hint: set it to a number such as 8, or unset it\n')


def test_bad_toml_is_reported_with_line_and_column(home, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('color = "never"\noffline = tru\n')
    r = run("list", "--prefix", tmp_path, env={"IREEPKG_CONFIG_FILE": str(bad)})
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {bad}:2:14: not a valid TOML file: "), r.err
    assert "  hint: fix the file, or see `ireepkg config list` for the keys\n" in r.err
    bad.write_text('\n  offline = "yes"\n')
    r = run("config", "list", env={"IREEPKG_CONFIG_FILE": str(bad)})
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {bad}:2:13: \"offline\" must be true or "
                            "false\n"), r.err
    # help and version still work, and `set` refuses to edit a broken file.
    assert run("help", env={"IREEPKG_CONFIG_FILE": str(bad)}).code == 0
    assert run("version", env={"IREEPKG_CONFIG_FILE": str(bad)}).code == 0
    r = run("config", "set", "color", "never", env={"IREEPKG_CONFIG_FILE": str(bad)})
    assert r.code == 1
    assert bad.read_text() == '\n  offline = "yes"\n'


def test_set_refuses_values_that_would_write_more(home):
    """A value is one line of its key's type: a newline would write another
    key, and no value holds any other control character."""
    f = user_file(home)
    for key, value in [("offline", 'true\ncache-dir = "/"'),
                       ("parallel-downloads", '8\nprefix = "/"'),
                       ("registry", 'https://r.example/iree\nx = 1'),
                       ("color", "never\t"),
                       ("offline", "true\r")]:
        r = run("config", "set", key, value)
        assert r.code == 2, r
        assert r.err.startswith(
            f'ireepkg: error: "{key}" may not hold control characters '
            "(newlines, tabs, ...)\n"), r.err
    assert not f.exists()
    # true, false and numbers are written as they are read.
    assert run("config", "set", "offline", "true # yes").code == 0
    assert run("config", "set", "parallel-downloads", "0x10").code == 0
    assert f.read_text() == "offline = true\nparallel-downloads = 16\n"


def test_set_leaves_a_file_it_cannot_edit_as_it_was(home):
    """A line edit that would change more than the key (here a multi-line
    string holding a line "offline = ...") is refused before anything is
    written; an edit keeps the file's permissions, and no temporary file
    is left."""
    f = user_file(home)
    f.parent.mkdir(parents=True)
    text = 'registry = """\nhttps://r.example/iree\noffline = false\n"""\n'
    f.write_text(text)
    f.chmod(0o600)
    for args in (["set", "offline", "true"], ["unset", "offline"]):
        r = run("config", *args)
        assert r.code == 1, r
        assert r.err == (
            f'ireepkg: error: {f}: cannot change "offline" here without '
            "changing more of the file (a value over several lines?); the "
            "file was left as it was\n"
            "  hint: edit the file by hand, or keep each value on one line\n")
        assert f.read_text() == text
    f.write_text('# mine\ncolor = "never"\n')
    assert run("config", "set", "offline", "true").code == 0
    assert f.read_text() == '# mine\ncolor = "never"\noffline = true\n'
    assert f.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in f.parent.iterdir()] == ["config.toml"]


def test_a_fifo_is_not_waited_on(home, tmp_path):
    """A named pipe as config.toml, or given to `install` as the archive,
    is refused at once instead of blocking the command."""
    config = user_file(home)
    config.parent.mkdir(parents=True)
    os.mkfifo(config)
    for args in (["config", "list"], ["list", "--prefix", tmp_path / "p"]):
        r = run(*args, timeout=20)
        assert r.code == 1, r
        assert r.err == (
            f"ireepkg: error: {config}: not read: not a regular file but a "
            "named pipe (FIFO)\n  hint: give the path of a regular file\n")
    config.unlink()
    archive = tmp_path / "a.ireepkg"
    os.mkfifo(archive)
    r = run("install", archive, "--prefix", tmp_path / "prefix", timeout=20)
    assert r.code == 1, r
    assert r.err == (
        f"ireepkg: error: {archive}: not read: not a regular file but a "
        "named pipe (FIFO)\n  hint: give the path of a regular file\n")
