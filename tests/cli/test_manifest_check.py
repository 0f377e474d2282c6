"""`ireepkg manifest check` on every fixture under tests/data/<kind>/:

- every good_*.json is valid (exit 0, no diagnostics at all);
- every bad_*.json is rejected (exit 1) with exactly the diagnostics in its
  bad_*.expected file (regenerate with tests/cli/update_expected.py after a
  deliberate message change, and review the diff);
- the --json report says the same thing as the text;
- the examples and whole directories are accepted.
"""
import json
import pathlib

import pytest

from conftest import DATA, REPO, run

KINDS = ["manifest", "project", "lock", "registry-config", "snapshot", "index"]


def fixtures(prefix):
    out = []
    for kind in KINDS:
        for f in sorted((DATA / kind).glob(prefix + "*.json")):
            out.append(pytest.param(kind, f, id=f"{kind}/{f.name}"))
    return out


def test_fixture_counts():
    bad = [f for k in KINDS for f in (DATA / k).glob("bad_*.json")]
    good = [f for k in KINDS for f in (DATA / k).glob("good_*.json")]
    assert len(bad) >= 40
    assert all(list((DATA / k).glob("good_*.json")) for k in KINDS)
    assert len(good) >= 12


@pytest.mark.parametrize("kind,path", fixtures("good_"))
def test_good_fixture_is_valid(kind, path):
    r = run("manifest", "check", "--kind", kind, path.name, cwd=path.parent)
    assert r.code == 0, r.err
    assert r.err == "checked 1 file: valid\n"


@pytest.mark.parametrize("kind,path", fixtures("bad_"))
def test_bad_fixture_reports_its_diagnostic(kind, path):
    expected = path.with_suffix(".expected")
    assert expected.exists(), f"{expected} is missing: run tests/cli/update_expected.py"
    r = run("manifest", "check", "--kind", kind, path.name, cwd=path.parent)
    assert r.code == 1, r.err
    assert r.err == expected.read_text()


@pytest.mark.parametrize("kind,path", fixtures("bad_"))
def test_bad_fixture_json_report(kind, path):
    r = run("manifest", "check", "--kind", kind, "--json", path.name, cwd=path.parent)
    assert r.code == 1
    report = json.loads(r.out)
    assert report["valid"] is False and report["errors"] >= 1
    [file] = report["files"]
    assert file["kind"] == kind and file["valid"] is False
    text = path.with_suffix(".expected").read_text()
    for d in file["diagnostics"]:
        assert d["severity"] in ("error", "warning")
        assert d["file"] == path.name
        assert d["message"] in text
        if "pointer" in d:
            assert d["pointer"].startswith("/")
            assert d["line"] >= 1 and d["column"] >= 1
            assert f"{path.name}:{d['line']}:{d['column']}: {d['pointer']}: " in text


def test_issue_example_diagnostic():
    """The arch typo reads exactly as promised: file:line:col: pointer: text."""
    path = DATA / "manifest" / "bad_arch_typo.json"
    lines = path.read_text().splitlines()
    [lineno] = [i + 1 for i, l in enumerate(lines) if '"x86-64"' in l]
    col = lines[lineno - 1].index('"x86-64"') + 1
    r = run("manifest", "check", "--kind", "manifest", path.name, cwd=path.parent)
    assert r.err.splitlines()[0] == (
        f'bad_arch_typo.json:{lineno}:{col}: /runtime/plugins/0/library: '
        '"x86-64" is not an architecture (did you mean "x86_64"?)')


def test_kind_detected_by_name(tmp_path):
    src = DATA / "manifest" / "bad_missing_name.json"
    (tmp_path / "ireepkg").mkdir()
    dst = tmp_path / "ireeplugin.json"
    dst.write_text(src.read_text())
    r = run("manifest", "check", dst)
    assert r.code == 1
    assert f'{dst}:1:1: /: missing required field "name"' in r.err


def test_unknown_file_name_needs_kind(tmp_path):
    f = tmp_path / "whatever.json"
    f.write_text("{}")
    r = run("manifest", "check", f)
    assert r.code == 2
    assert f"cannot tell what kind of file '{f}' is" in r.err


def test_unknown_kind():
    r = run("manifest", "check", "--kind", "manifests", "x.json")
    assert r.code == 2
    assert "unknown kind 'manifests' (did you mean \"manifest\"?)" in r.err


def test_examples_are_valid():
    dirs = sorted(p.parent for p in (REPO / "examples").glob("*/ireeplugin.json"))
    dirs += [REPO / "examples" / "project"]
    r = run("manifest", "check", *dirs)
    assert r.code == 0, r.err
    assert r.err == f"checked {len(dirs)} files: valid\n"


def test_directory_with_nothing_to_check(tmp_path):
    r = run("manifest", "check", tmp_path)
    assert r.code == 2
    assert f"no ireepkg files in directory '{tmp_path}'" in r.err


def test_reports_every_problem_not_only_the_first(tmp_path):
    f = tmp_path / "ireeplugin.json"
    f.write_text(json.dumps({
        "schema_version": 1, "name": "Bad Name", "version": "1.0",
        "runtime": {"plugins": [{"name": "p", "format": "embedded-elf",
                                 "library": {"x86-64": "a.so", "arm64": "/abs.so"}}]},
    }, indent=2))
    r = run("manifest", "check", "--json", f)
    diags = json.loads(r.out)["files"][0]["diagnostics"]
    msgs = [d["message"] for d in diags]
    assert msgs == [
        '"Bad Name" is not a valid package name',
        '"1.0" is not a valid version: expected MAJOR.MINOR.PATCH',
        '"x86-64" is not an architecture (did you mean "x86_64"?)',
        '"arm64" is not an architecture (did you mean "aarch64"?)',
    ]
    # In source order: line numbers never go down.
    lines = [d["line"] for d in diags]
    assert lines == sorted(lines)


def test_unknown_fields_are_warnings_when_lenient(tmp_path):
    f = tmp_path / "ireeplugin.json"
    f.write_text(json.dumps({"schema_version": 1, "name": "a", "version": "1.0.0",
                             "futurefield": {"x": 1}}, indent=2))
    strict = run("manifest", "check", f)
    assert strict.code == 1
    assert '/futurefield: unknown field "futurefield"' in strict.err
    lenient = run("manifest", "check", "--lenient", f)
    assert lenient.code == 0
    assert '/futurefield: warning: unknown field "futurefield"' in lenient.err
    assert "valid, 1 warning(s)" in lenient.err
