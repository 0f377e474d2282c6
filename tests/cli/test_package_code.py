"""Package code that ireepkg runs by itself: the load checks of install,
sync and pack (an MLIR plugin loaded in ireepkg-mlir-check, a runtime
plugin's imports asked of it in ireepkg-plugin-probe) and doctor's probe.
Such code runs in a child process that sees none of the caller's
credentials or tokens, and the load checks can be turned off with
--no-load-checks, IREEPKG_LOAD_CHECKS=0 or `load-checks = false`
(docs/reliability.md, "Package code")."""
import json
import pathlib
import shutil
import subprocess

import pytest

from conftest import run

CLANG = shutil.which("clang-22")
MLIR_OPT = shutil.which("mlir-opt-22")

# What a caller may keep in its environment that a package must not see.
SECRETS = {
    "GITHUB_TOKEN": "ghp-secret-token-1",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-key-2",
    "DOCKER_CONFIG": "/secret-docker-config-3",
    "REGISTRY_AUTH_FILE": "/secret-auth-file-4",
    "XDG_RUNTIME_DIR": "/secret-runtime-dir-5",
    "IREEPKG_REGISTRY": "https://user:secret-password-6@127.0.0.1:9/reg",
}

# A constructor that writes the environment it was given to DUMP, and the
# plugin's entry point (an MLIR pass plugin, or an IREE runtime plugin).
DUMP_ENVIRONMENT = r"""
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
extern char **environ;
__attribute__((constructor)) static void dump_environment(void) {
  int fd = open(DUMP, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  for (char **e = environ; *e; ++e) {
    write(fd, *e, strlen(*e));
    write(fd, "\n", 1);
  }
  write(fd, "--\n", 3);
  close(fd);
}
"""
MLIR_ENTRY = r"""
#include <stdint.h>
struct Info { uint32_t api; const char *name, *version; void (*cb)(void); };
static void reg(void) {}
__attribute__((visibility("default"))) struct Info mlirGetPassPluginInfo(void) {
  struct Info i = {1, "envdump", "0.1", reg}; return i;
}
"""

needs_tools = pytest.mark.skipif(not CLANG or not MLIR_OPT,
                                 reason="needs clang-22 and mlir-opt-22")


def mlir_package(root: pathlib.Path, dump: pathlib.Path) -> pathlib.Path:
    d = root / "env-dump"
    (d / "lib").mkdir(parents=True)
    src = root / "envdump.c"
    src.write_text(DUMP_ENVIRONMENT + MLIR_ENTRY)
    subprocess.run([CLANG, "-shared", "-fPIC", f'-DDUMP="{dump}"', src,
                    "-o", d / "lib" / "libenvdump.so"], check=True)
    (d / "ireeplugin.json").write_text(json.dumps({
        "schema_version": 1, "name": "env-dump", "version": "1.0.0",
        "summary": "a pass plugin that writes down its environment",
        "compiler": {"plugins": [
            {"id": "env_dump", "kind": "mlir-pass-plugin",
             "library": {"linux-x86_64": "lib/libenvdump.so"}}]}}, indent=2))
    return d


def loads(dump: pathlib.Path) -> list:
    """The environments the plugin was loaded with since the last call."""
    if not dump.exists():
        return []
    text = dump.read_text()
    dump.unlink()
    return [block.splitlines() for block in text.split("--\n") if block]


def assert_no_secrets(environments):
    for env in environments:
        names = {line.split("=", 1)[0] for line in env}
        assert "PATH" in names, env
        for name, value in SECRETS.items():
            assert name not in names, env
            assert not any(value in line for line in env), env


@needs_tools
def test_load_checks_run_package_code_without_the_callers_secrets(tmp_path):
    dump = tmp_path / "environments.txt"
    pkg = mlir_package(tmp_path, dump)
    r = run("pack", pkg, "-o", tmp_path / "dist", "--json", env=SECRETS)
    assert r.code == 0, r.err
    archive = json.loads(r.out)["archive"]
    packed = loads(dump)
    assert packed, "pack did not load the plugin"
    assert_no_secrets(packed)
    r = run("install", "--prefix", tmp_path / "p", archive, env=SECRETS)
    assert r.code == 0, r.err
    installed = loads(dump)
    assert installed, "install did not load the plugin"
    assert_no_secrets(installed)


@needs_tools
def test_load_checks_can_be_turned_off(tmp_path):
    dump = tmp_path / "environments.txt"
    pkg = mlir_package(tmp_path, dump)
    config = tmp_path / "config.toml"
    config.write_text("load-checks = false\n")
    ways = {
        "flag": (["--no-load-checks"], {}),
        "environment": ([], {"IREEPKG_LOAD_CHECKS": "0"}),
        "config": ([], {"IREEPKG_CONFIG_FILE": str(config)}),
    }
    for way, (flags, env) in ways.items():
        r = run(*flags, "pack", pkg, "-o", tmp_path / way, "--json", env=env)
        assert r.code == 0, (way, r.err)
        archive = json.loads(r.out)["archive"]
        r = run(*flags, "install", "--prefix", tmp_path / f"p-{way}", archive,
                env=env)
        assert r.code == 0, (way, r.err)
        assert loads(dump) == [], f"{way}: the plugin was loaded"
    # Without them, the same commands load it.
    r = run("install", "--prefix", tmp_path / "p-on", archive)
    assert r.code == 0, r.err
    assert loads(dump), "install did not load the plugin"


def test_load_checks_setting_and_where_it_comes_from(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("load-checks = false\n")

    def shown(*flags, env):
        r = run(*flags, "config", "list", "--json", env=env)
        assert r.code == 0, r.err
        s = {s["key"]: s for s in json.loads(r.out)["settings"]}["load-checks"]
        return s["value"], s["source"]

    empty = tmp_path / "empty.toml"
    empty.write_text("")
    assert shown(env={"IREEPKG_CONFIG_FILE": str(empty)}) == ("true", "default")
    assert shown(env={"IREEPKG_CONFIG_FILE": str(config)}) == ("false", "file")
    assert shown(env={"IREEPKG_CONFIG_FILE": str(empty),
                      "IREEPKG_LOAD_CHECKS": "off"}) == ("false", "env")
    assert shown("--no-load-checks",
                 env={"IREEPKG_CONFIG_FILE": str(empty)}) == ("false", "flag")
    r = run("install", "--prefix", tmp_path / "p", tmp_path / "none.ireepkg",
            env={"IREEPKG_LOAD_CHECKS": "maybe"})
    assert (r.code, r.err) == (2, 'ireepkg: error: IREEPKG_LOAD_CHECKS="maybe" is '
                               'not on or off\n  hint: set it to 0 (load no '
                               'package code to check it) or 1, or unset it\n')


@pytest.mark.skipif(not CLANG, reason="needs clang-22")
def test_doctor_probes_runtime_plugins_without_the_callers_secrets(tmp_path):
    from test_doctor import FIXTURE_C, fixture_package, forge_package
    dump = tmp_path / "environments.txt"
    src = tmp_path / "src"
    src.mkdir()
    # doctor's fixture plugin, with the constructor that writes down its
    # environment.
    (src / "fixture.c").write_text(FIXTURE_C + DUMP_ENVIRONMENT)
    pkg = fixture_package(src, "probe-env", {
        "good": ([f'DUMP="{dump}"'], ["fx_good"], ["fx_good"])})
    prefix = tmp_path / "prefix"
    r = run("install", "--prefix", prefix, forge_package(pkg, tmp_path / "dist"),
            env={"IREEPKG_LOAD_CHECKS": "0"})
    assert r.code == 0, r.err
    assert loads(dump) == []
    r = run("doctor", "--prefix", prefix, env=SECRETS)
    probed = loads(dump)
    assert probed, (r.out, r.err)
    assert_no_secrets(probed)
