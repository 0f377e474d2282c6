"""`ireepkg registry add|remove|list` edit a project's registries in
plugins.json, keeping every other byte (the plugins too, which `init
--force` would drop); `ireepkg add --path DIR` adds a local package."""
import json
import os

from conftest import data_package, run
from regfix import installed, project


# The `reg` fixture's (conftest.py).
REGISTRY = [
    ("base-kernels", "1.0.0"),
    ("fft-kit", "1.0.0", {"base-kernels": "^1.0"}),
]


PROJECT = """{
    "schema_version": 1,
    "registries": [
        { "name": "main", "url": "https://plugins.example.org/iree" }
    ],
    "plugins": [
        { "name": "simple-mul", "version": "^1.2" }
    ]
}
"""


def test_registry_add_keeps_the_rest_of_the_file(tmp_path, reg):
    d = tmp_path / "p"
    d.mkdir()
    (d / "plugins.json").write_text(PROJECT)
    r = run("registry", "add", "local", os.path.relpath(reg.dir, d), "--registry-key",
            reg.pub_file, cwd=d)
    assert r.code == 0, r
    assert r.out == (f"added registry local ({os.path.relpath(reg.dir, d)})\n"
                     f"wrote {d}/plugins.json\n")
    assert (d / "plugins.json").read_text() == PROJECT.replace(
        '{ "name": "main", "url": "https://plugins.example.org/iree" }\n',
        '{ "name": "main", "url": "https://plugins.example.org/iree" },\n'
        f'        {{ "name": "local", "url": "{os.path.relpath(reg.dir, d)}", '
        f'"public_key": "{reg.pub}" }}\n')
    r = run("registry", "list", cwd=d)
    assert r.code == 0, r
    assert r.out == ("main https://plugins.example.org/iree (no public key)\n"
                     f"local {os.path.relpath(reg.dir, d)}\n")
    j = json.loads(run("registry", "list", "--json", cwd=d).out)
    assert [x["name"] for x in j["registries"]] == ["main", "local"]
    assert j["registries"][1]["public_key"] == reg.pub
    # The same name again is refused, and nothing changes.
    before = (d / "plugins.json").read_text()
    r = run("registry", "add", "main", "https://other.example/iree", cwd=d)
    assert r.code == 1
    assert 'registry "main" is defined already (https://plugins.example.org/iree)' in r.err
    assert (d / "plugins.json").read_text() == before
    # The new registry works: add takes its newest version (--frozen: the
    # project's other registry is a placeholder that cannot be locked from).
    r = run("add", "fft-kit", "--registry", "local", "--frozen", cwd=d)
    assert r.code == 0, r
    assert r.out.startswith("added fft-kit: version ^1.0.0, registry local\n")


def test_registry_add_into_a_file_without_registries(tmp_path, reg):
    d = tmp_path / "p"
    d.mkdir()
    (d / "plugins.json").write_text('{"schema_version": 1, "plugins": [{"name": "x"}]}\n')
    r = run("registry", "add", "r", "https://r.example/iree", "--mirror",
            "https://mirror.example/iree", cwd=d)
    assert r.code == 0, r
    assert "ireepkg: warning: registry r has no public key" in r.err
    p = json.loads((d / "plugins.json").read_text())
    assert p["registries"] == [{"name": "r", "url": "https://r.example/iree",
                                "mirrors": ["https://mirror.example/iree"]}]
    assert p["plugins"] == [{"name": "x"}]
    assert run("manifest", "check", d / "plugins.json").code == 0


def test_registry_remove(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    text = PROJECT.replace(
        '{ "name": "main", "url": "https://plugins.example.org/iree" }\n',
        '{ "name": "main", "url": "https://plugins.example.org/iree" },\n'
        '        { "name": "staging", "url": "https://staging.example.org/iree" }\n')
    (d / "plugins.json").write_text(text)
    r = run("registry", "remove", "staging", cwd=d)
    assert r.code == 0, r
    assert r.out == f"removed registry staging\nwrote {d}/plugins.json\n"
    assert (d / "plugins.json").read_text() == PROJECT
    r = run("registry", "remove", "stagin", cwd=d)
    assert r.code == 1
    assert 'registry "stagin" is not defined' in r.err
    # A registry a plugin takes its packages from stays.
    p = json.loads(PROJECT)
    p["plugins"][0]["registry"] = "main"
    (d / "plugins.json").write_text(json.dumps(p, indent=2))
    before = (d / "plugins.json").read_text()
    r = run("registry", "remove", "main", cwd=d)
    assert r.code == 1
    assert 'plugin "simple-mul" takes its packages from registry "main"' in r.err
    assert "ireepkg rm simple-mul" in r.err
    assert (d / "plugins.json").read_text() == before


def test_registry_commands_need_a_project(tmp_path):
    for args in (["registry", "list"], ["registry", "remove", "x"],
                 ["registry", "add", "x", "https://x.example"]):
        r = run(*args, cwd=tmp_path)
        assert r.code == 1, (args, r)
        assert "no plugins.json" in r.err


def test_add_path_writes_a_local_package(tmp_path, reg, cache):
    local = data_package(tmp_path / "local", "local-experiment", "0.1.0",
                         {"base-kernels": "^1.0"})
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    r = run("add", "--path", local, cwd=d)
    assert r.code == 0, r
    rel = os.path.relpath(local, d)
    assert r.out.startswith(f"added local-experiment: path {rel}\n"
                            f"wrote {d}/plugins.json\n")
    assert "  + local-experiment 0.1.0\n" in r.out
    p = json.loads((d / "plugins.json").read_text())
    assert p["plugins"][-1] == {"name": "local-experiment", "path": rel}
    # add locked and synced: the prefix has it, and sync has nothing to do.
    assert set(installed(d / ".iree-plugins")) == {"fft-kit", "base-kernels",
                                                    "local-experiment"}
    r = run("sync", cwd=d)
    assert r.code == 0, r
    assert "is up to date with the lock" in r.out
    # A directory inside the project is written as ./dir.
    inner = data_package(d / "plugins", "inner", "1.0.0")
    r = run("add", "--path", "plugins/inner-1.0.0", cwd=d)
    assert r.code == 0, r
    assert json.loads((d / "plugins.json").read_text())["plugins"][-1] == {
        "name": "inner", "path": "./plugins/inner-1.0.0"}
    assert inner.exists()


def test_add_path_refusals(tmp_path, reg):
    local = data_package(tmp_path / "local", "local-experiment", "0.1.0")
    d = project(tmp_path, reg, [{"name": "fft-kit"}])
    before = (d / "plugins.json").read_text()
    r = run("add", "other-name", "--path", local, cwd=d)
    assert r.code == 2
    assert f'the package in {local} is "local-experiment", not "other-name"' in r.err
    r = run("add", "--path", local, "--registry", "test", cwd=d)
    assert r.code == 2
    r = run("add", "--path", tmp_path, cwd=d)
    assert r.code == 1
    assert "ireeplugin.json" in r.err
    r = run("add", "--path", local / "..", cwd=d)
    assert r.code == 1
    r = run("add", cwd=d)
    assert r.code == 2
    assert "'add' needs <name>[@<constraint>]... or --path DIR" in r.err
    assert (d / "plugins.json").read_text() == before
    # A plugin listed from a registry is not silently turned into a path.
    local2 = data_package(tmp_path / "local2", "fft-kit", "9.0.0")
    r = run("add", "--path", local2, cwd=d)
    assert r.code == 1
    assert 'plugin "fft-kit" is listed already, from a registry' in r.err
    assert (d / "plugins.json").read_text() == before
