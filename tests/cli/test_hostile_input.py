"""Hostile and broken input: each gets a clear error with its position, no
crash, and bounded memory (the child's peak RSS is measured with wait4)."""
import json
import os
import subprocess

import pytest

from conftest import ireepkg_path

LIMIT_KB = 160 * 1024  # peak RSS allowed for checking any of these files


def check(path, kind="manifest"):
    """Runs `manifest check` and returns (exit code, stderr, peak RSS in KiB)."""
    proc = subprocess.Popen([str(ireepkg_path()), "manifest", "check", "--kind", kind, str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read both pipes fully before reaping, then take the child's own rusage.
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}"
    return proc.returncode, err.decode("utf-8"), usage.ru_maxrss


@pytest.mark.parametrize("text,message", [
    ('{"schema_version": 1, "name": "a", "vers',
     "1:41: invalid JSON: syntax error while parsing object key - invalid string: missing closing quote; expected string literal\n"),
    ('', "1:1: invalid JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal\n"),
    ('{"schema_version": 1,}', "1:22: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal\n"),
    ('{"a": 1} trailing', "1:12: invalid JSON: syntax error while parsing value - invalid literal; expected end of input\n"),
    ("{'name': 'x'}", "1:2: invalid JSON: syntax error while parsing object key - invalid literal; expected string literal\n"),
    ('{"a": NaN}', "1:7: invalid JSON: syntax error while parsing value - invalid literal\n"),
])
def test_truncated_or_malformed_json(tmp_path, text, message):
    f = tmp_path / "ireeplugin.json"
    f.write_text(text)
    code, err, _ = check(f)
    assert code == 1
    assert err.startswith(f"{f}:{message}")
    assert "hint: fix the JSON syntax at this position" in err


@pytest.mark.parametrize("doc,message", [
    ([], "/: must be an object, not an array"),
    ("just a string", "/: must be an object, not a string"),
    (None, "/: must be an object, not null"),
    ({"schema_version": 1, "name": 42, "version": "1.0.0"}, "/name: must be a string, not an integer"),
    ({"schema_version": 1, "name": "a", "version": [1, 0, 0]}, "/version: must be a string, not an array"),
    ({"schema_version": 1.5, "name": "a", "version": "1.0.0"}, "/schema_version: must be an integer, not a number"),
    ({"schema_version": 1, "name": "a", "version": "1.0.0", "runtime": []}, "/runtime: must be an object, not an array"),
    ({"schema_version": 1, "name": "a", "version": "1.0.0", "compiler": {"plugins": [7]}}, "/compiler/plugins/0: must be an object, not an integer"),
])
def test_wrong_types(tmp_path, doc, message):
    f = tmp_path / "ireeplugin.json"
    f.write_text(json.dumps(doc))
    code, err, _ = check(f)
    assert code == 1
    assert message in err


def test_ten_megabyte_string(tmp_path):
    f = tmp_path / "ireeplugin.json"
    f.write_text(json.dumps({"schema_version": 1, "name": "x" * 10_000_000, "version": "1.0.0"}))
    code, err, rss = check(f)
    assert code == 1
    first = err.splitlines()[0]
    assert first == (f'{f}:1:31: /name: "' + "x" * 40 + '...(10000000 bytes)...' + "x" * 16 +
                     '" is not a valid package name')
    assert len(err) < 1000
    assert rss < LIMIT_KB


def test_ten_megabyte_description_is_fine(tmp_path):
    f = tmp_path / "ireeplugin.json"
    f.write_text(json.dumps({"schema_version": 1, "name": "a", "version": "1.0.0",
                             "description": "d" * 10_000_000}))
    code, err, rss = check(f)
    assert code == 0, err
    assert rss < LIMIT_KB


@pytest.mark.parametrize("opener,closer", [("[", "]"), ('{"a":', "}")])
def test_deep_nesting(tmp_path, opener, closer):
    f = tmp_path / "ireeplugin.json"
    f.write_text(opener * 10_000 + "1" + closer * 10_000)
    code, err, rss = check(f)
    assert code == 1
    col = 257 * len(opener) - len(opener) + 1
    assert err.splitlines()[0] == f"{f}:1:{col}: JSON nesting is deeper than 256 levels"
    assert rss < LIMIT_KB


@pytest.mark.parametrize("raw,col", [
    (b'{"name": "\xff"}', 11),                 # invalid byte
    (b'{"name": "\xc3"}', 12),                 # truncated sequence
    (b'{"name": "\xc0\xaf"}', 11),             # overlong encoding of '/'
    (b'{"name": "\xed\xa0\x80"}', 12),         # UTF-16 surrogate
])
def test_invalid_utf8(tmp_path, raw, col):
    f = tmp_path / "ireeplugin.json"
    f.write_bytes(raw)
    code, err, _ = check(f)
    assert code == 1
    assert err.startswith(f"{f}:1:{col}: invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 byte\n")
    err.encode("utf-8")  # the message itself is valid UTF-8


def test_control_character_in_string(tmp_path):
    f = tmp_path / "ireeplugin.json"
    f.write_bytes(b'{"name": "a\x01b"}')
    code, err, _ = check(f)
    assert code == 1
    assert err.startswith(f"{f}:1:12: invalid JSON: syntax error while parsing value - invalid string: control character U+0001 (SOH) must be escaped to \\u0001\n")


def test_duplicate_keys_are_reported(tmp_path):
    f = tmp_path / "ireeplugin.json"
    f.write_text('{\n  "schema_version": 1,\n  "name": "a",\n  "version": "1.0.0",\n  "name": "b"\n}\n')
    code, err, _ = check(f)
    assert code == 1
    assert err.startswith(f'{f}:5:3: /name: duplicate key "name" (first defined at line 3:3)')


def test_file_too_large(tmp_path):
    f = tmp_path / "ireeplugin.json"
    with open(f, "wb") as out:
        out.truncate(65 * 1024 * 1024)  # sparse: no disk used
    code, err, rss = check(f)
    assert code == 1
    assert "larger than the limit of 67108864 bytes" in err
    assert rss < LIMIT_KB


def test_missing_file(tmp_path):
    code, err, _ = check(tmp_path / "nope" / "ireeplugin.json")
    assert code == 1
    assert "cannot open: No such file or directory" in err


def test_directory_given_as_file(tmp_path):
    code, err, _ = check(tmp_path)
    assert code == 1
    assert str(tmp_path) in err
