"""`ireepkg init`, `add` and `rm`: the project file they write, byte for byte,
their errors and exit codes, and that with --frozen they touch nothing but
plugins.json. (What `add` and `rm` do by default, lock and sync, and the
checks of `add` against a registry: test_project_add_sync.py.)"""
import json
import os
import platform
import stat

import pytest

from conftest import run, snapshot

KEY = "RWRUBFAUiucqcHvoSzfAniLY42lbPDq5BRpExfL6yr3Ff8BO7+qVarZe"

EXPANDED = """{
  "schema_version": 1,
  "registries": [
    {
      "name": "main",
      "url": "../registry"
    }
  ],
  "platforms": ["linux-x86_64"],
  "plugins": [
    {
      "name": "simple-mul",
      "version": "^1.2",
      "options": {
        "iree-simple-mul-tile": 16
      }
    },
    {
      "name": "mul-pipeline",
      "version": "^0.3"
    }
  ]
}
"""


def project(tmp_path, text=EXPANDED):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "plugins.json").write_bytes(text.encode())
    return d


def host_platform():
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64",
            "arm64": "aarch64"}[platform.machine().lower()]
    return f"linux-{arch}"


# --- init -------------------------------------------------------------------

def test_init_writes_a_starter_file(tmp_path):
    r = run("init", cwd=tmp_path)
    assert r.code == 0, r.err
    text = (tmp_path / "plugins.json").read_text()
    assert text == ('{\n  "schema_version": 1,\n  "registries": [],\n'
                    f'  "platforms": ["{host_platform()}"],\n  "plugins": []\n}}\n')
    assert r.out == f"wrote {tmp_path / 'plugins.json'}:\n{text}"
    assert r.err == ""
    check = run("manifest", "check", tmp_path / "plugins.json")
    assert check.code == 0, check.out + check.err


def test_init_with_registry_key_and_platforms(tmp_path):
    pub = tmp_path / "registry.pub"
    pub.write_text(f"untrusted comment: minisign public key\n{KEY}\n")
    r = run("init", "--registry", "default=https://plugins.example.org/iree?x=1",
            "--registry-key", pub, "--platform", "linux-x86_64",
            "--platform", "linux-aarch64", "--platform", "linux-x86_64", "--json",
            cwd=tmp_path)
    assert r.code == 0, r.err
    expected = f"""{{
  "schema_version": 1,
  "registries": [
    {{
      "name": "default",
      "url": "https://plugins.example.org/iree?x=1",
      "public_key": "{KEY}"
    }}
  ],
  "platforms": ["linux-x86_64", "linux-aarch64"],
  "plugins": []
}}
"""
    assert (tmp_path / "plugins.json").read_text() == expected
    report = json.loads(r.out)
    assert report == {"ok": True, "project": str(tmp_path / "plugins.json"),
                      "replaced": False, "content": expected}


def test_init_refuses_to_overwrite_without_force(tmp_path):
    (tmp_path / "plugins.json").write_text("mine\n")
    r = run("init", cwd=tmp_path)
    assert r.code == 1
    assert f"{tmp_path / 'plugins.json'}: plugins.json already exists" in r.err
    assert "--force" in r.err
    assert (tmp_path / "plugins.json").read_text() == "mine\n"
    r = run("init", "--force", "--registry", "r=../r", cwd=tmp_path)
    assert r.code == 0, r.err
    assert '"url": "../r"' in (tmp_path / "plugins.json").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["plugins.json"]


def test_init_usage_errors(tmp_path):
    cases = [
        (["--platform", "linux-x86"], "'linux-x86' is not a platform (did you mean"),
        (["--registry", "https://example.org"], "--registry takes NAME=URL"),
        (["--registry", "Main=https://example.org"], "not a valid registry name"),
        (["--registry-key", KEY], "--registry-key needs --registry"),
        (["--registry", "r=https://example.org", "--registry-key", "RWnotakey"],
         "ireepkg: error: --registry-key RWnotakey: "),
    ]
    for args, message in cases:
        r = run("init", *args, cwd=tmp_path)
        assert r.code == 2, (args, r)
        assert message in r.err, (args, r.err)
    assert list(tmp_path.iterdir()) == []


# --- add --------------------------------------------------------------------

def test_add_appends_in_the_files_style_from_a_subdirectory(tmp_path):
    d = project(tmp_path)
    sub = d / "src" / "deep"
    sub.mkdir(parents=True)
    r = run("add", "fft-kit@>=3.0.0, <4.0.0", "--option", "iree-fft-size=1024",
            "--option", "iree-fft-mode=fast", "--option", "iree-fft-shapes=[4, 8]",
            "--option", 'iree-fft-label="16"', "--option", "iree-fft-on=true",
            "--frozen", cwd=sub)
    assert r.code == 0, r.err
    assert (d / "plugins.json").read_text() == EXPANDED.replace("""      "version": "^0.3"
    }
""", """      "version": "^0.3"
    },
    {
      "name": "fft-kit",
      "version": ">=3.0.0, <4.0.0",
      "options": {
        "iree-fft-label": "16",
        "iree-fft-mode": "fast",
        "iree-fft-on": true,
        "iree-fft-shapes": [4, 8],
        "iree-fft-size": 1024
      }
    }
""")
    assert r.out == ('added fft-kit: version >=3.0.0, <4.0.0, option iree-fft-label="16", '
                     'option iree-fft-mode="fast", option iree-fft-on=true, '
                     'option iree-fft-shapes=[4,8], option iree-fft-size=1024\n'
                     f"wrote {d / 'plugins.json'}\n")


def test_add_updates_a_listed_plugin_in_place(tmp_path):
    d = project(tmp_path)
    r = run("add", "simple-mul@^1.3", "--option", "iree-simple-mul-tile=32",
            "--option", "iree-simple-mul-mode=precise", "--json", "--frozen",
            cwd=d)
    assert r.code == 0, r.err
    assert (d / "plugins.json").read_text() == EXPANDED.replace(
        '"version": "^1.2"', '"version": "^1.3"').replace(
        '"iree-simple-mul-tile": 16', '"iree-simple-mul-tile": 32,\n'
        '        "iree-simple-mul-mode": "precise"')
    assert json.loads(r.out) == {
        "ok": True, "project": str(d / "plugins.json"), "changed": True,
        "plugins": [{"name": "simple-mul", "action": "updated", "version": "^1.3",
                     "options": {"iree-simple-mul-mode": "precise",
                                 "iree-simple-mul-tile": 32}}]}
    # Saying the same again writes nothing.
    before = os.stat(d / "plugins.json").st_mtime_ns
    r = run("add", "simple-mul@^1.3", "--frozen", cwd=d)
    assert r.code == 0, r.err
    assert r.out == f"unchanged simple-mul: version ^1.3\n{d / 'plugins.json'} already says this; nothing to change\n"
    assert os.stat(d / "plugins.json").st_mtime_ns == before


def test_add_several_with_a_registry_keeps_crlf_and_mode(tmp_path):
    d = project(tmp_path, EXPANDED.replace("\n", "\r\n"))
    os.chmod(d / "plugins.json", 0o600)
    r = run("add", "a@1.0.0", "b@~2.1", "--registry", "main", "--frozen",
            cwd=d)
    assert r.code == 0, r.err
    text = (d / "plugins.json").read_bytes().decode()
    assert text == EXPANDED.replace("""      "version": "^0.3"
    }
""", """      "version": "^0.3"
    },
    {
      "name": "a",
      "version": "1.0.0",
      "registry": "main"
    },
    {
      "name": "b",
      "version": "~2.1",
      "registry": "main"
    }
""").replace("\n", "\r\n")
    assert stat.S_IMODE(os.stat(d / "plugins.json").st_mode) == 0o600
    assert r.out.splitlines()[:2] == ["added a: version 1.0.0, registry main",
                                      "added b: version ~2.1, registry main"]


def test_add_without_a_constraint_needs_a_reachable_registry(tmp_path):
    d = project(tmp_path)
    r = run("add", "simple-mul", cwd=d)
    assert r.code == 1
    assert r.err.startswith(f"ireepkg: error: {tmp_path / 'registry'}: ")
    assert "no such directory" in r.err
    assert (d / "plugins.json").read_text() == EXPANDED


def test_add_errors(tmp_path):
    d = project(tmp_path)
    usage = [
        (["x@"], "has an empty version constraint"),
        (["x@^^1"], "'x@^^1': "),
        (["Bad"], "\"Bad\" is not a valid package name"),
        (["a@1", "a@2"], "a is named more than once"),
        (["a@1", "b@1", "--option", "k=1"], "--option applies to one plugin"),
        (["a@1", "--option", "k"], "--option takes FLAG=VALUE"),
        (["a@1", "--option", "--k=1"], "without its leading dashes: k"),
        (["a@1", "--option", "K=1"], "is not an option flag name"),
    ]
    for args, message in usage:
        r = run("add", *args, cwd=d)
        assert r.code == 2, (args, r)
        assert message in r.err, (args, r.err)
    r = run("add", "a@1", "--registry", "mian", "--json", cwd=d)
    assert r.code == 1
    err = json.loads(r.out)["error"]
    assert err["code"] == "not-found"
    assert err["message"] == 'registry "mian" is not defined (did you mean "main"?)'
    assert err["hint"] == "its registries: main"
    assert err["diagnostics"][0]["pointer"] == "/registries"
    assert (d / "plugins.json").read_text() == EXPANDED


def test_add_and_rm_refuse_a_broken_project_file(tmp_path):
    broken = '{\n  "schema_version": 1,\n  "plugins": [\n    {"name": "a"},\n  ]\n}\n'
    d = project(tmp_path, broken)
    for args in (["add", "b@1"], ["rm", "a"]):
        r = run(*args, cwd=d)
        assert r.code == 1, r
        assert f"{d / 'plugins.json'}:5:3: invalid JSON" in r.err, r.err
        assert (d / "plugins.json").read_text() == broken
    invalid = '{\n  "schema_version": 1,\n  "plugins": [\n    {"name": "a", "versoin": "1"}\n  ]\n}\n'
    (d / "plugins.json").write_text(invalid)
    r = run("add", "b@1", cwd=d)
    assert r.code == 1
    assert f"{d / 'plugins.json'}:4:19: /plugins/0/versoin: unknown field" in r.err, r.err
    assert (d / "plugins.json").read_text() == invalid


def test_no_project_file(tmp_path):
    if any((p / "plugins.json").exists() for p in tmp_path.parents):
        pytest.skip("a plugins.json above the temporary directory")
    for args in (["add", "a@1"], ["rm", "a"]):
        r = run(*args, cwd=tmp_path)
        assert r.code == 1, r
        assert r.err == (f"ireepkg: error: no plugins.json in {tmp_path} or any directory "
                         "above it\n  hint: run `ireepkg init` to start a project here\n")
    assert list(tmp_path.iterdir()) == []


# --- rm ---------------------------------------------------------------------

def test_rm_removes_entries_with_their_options(tmp_path):
    d = project(tmp_path)
    r = run("rm", "simple-mul", "--frozen", cwd=d)
    assert r.code == 0, r.err
    assert r.out == f"removed simple-mul\nwrote {d / 'plugins.json'}\n"
    assert (d / "plugins.json").read_text() == """{
  "schema_version": 1,
  "registries": [
    {
      "name": "main",
      "url": "../registry"
    }
  ],
  "platforms": ["linux-x86_64"],
  "plugins": [
    {
      "name": "mul-pipeline",
      "version": "^0.3"
    }
  ]
}
"""
    r = run("rm", "mul-pipeline", "--json", "--frozen", cwd=d)
    assert r.code == 0, r.err
    assert json.loads(r.out) == {"ok": True, "project": str(d / "plugins.json"),
                                 "changed": True, "removed": ["mul-pipeline"]}
    assert '"plugins": []\n' in (d / "plugins.json").read_text()


def test_rm_is_all_or_nothing(tmp_path):
    d = project(tmp_path)
    r = run("rm", "simple-mul", "mul-pipline", cwd=d)
    assert r.code == 1
    assert (f'ireepkg: error: {d / "plugins.json"}: /plugins: plugin "mul-pipline" '
            'is not listed (did you mean "mul-pipeline"?)\n'
            '  hint: it lists: simple-mul, mul-pipeline\n') == r.err
    assert (d / "plugins.json").read_text() == EXPANDED
    r = run("rm", "x", "--json", cwd=d)
    assert r.code == 1
    assert json.loads(r.out)["ok"] is False
    r = run("rm", "Bad", cwd=d)
    assert r.code == 2


def test_frozen_add_and_rm_touch_only_plugins_json(tmp_path):
    d = project(tmp_path)
    (d / "plugins.lock.json").write_text('{"stale": true}\n')
    (d / ".iree-plugins" / "state").mkdir(parents=True)
    (d / ".iree-plugins" / "state" / "installed.json").write_text("{}\n")
    before = snapshot(d)
    assert run("add", "a@^1", "--frozen", cwd=d,
               env={"IREEPKG_PREFIX": str(tmp_path / "p")}).code == 0
    assert run("rm", "a", "--frozen", cwd=d).code == 0
    assert snapshot(d) == before
    assert not (tmp_path / "p").exists()


def test_a_symlinked_project_file_stays_a_symlink(tmp_path):
    d = project(tmp_path)
    shared = tmp_path / "shared.json"
    (d / "plugins.json").rename(shared)
    (d / "plugins.json").symlink_to(shared)
    r = run("rm", "mul-pipeline", "--frozen", cwd=d)
    assert r.code == 0, r.err
    assert (d / "plugins.json").is_symlink()
    assert "mul-pipeline" not in shared.read_text()
    assert r.out.endswith(f"wrote {shared}\n")


def test_help():
    for cmd in ("init", "add", "rm"):
        r = run(cmd, "--help")
        assert r.code == 0
        assert f"ireepkg {cmd}" in r.out
