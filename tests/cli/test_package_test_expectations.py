"""Partial-line expectations in package tests: besides whole lines,
`expected_output` takes {"contains": text} (FileCheck's `CHECK: text`) and
{"matches": regex} (ECMAScript, searched in each line), in order; a failure
says which expectation no line met and shows what was expected and what
came."""
import json
import shutil

import pytest

from conftest import data_package, run

MLIR_OPT = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
PROGRAM = ("func.func @double(%a: i32) -> i32 {\n"
           "  %0 = arith.addi %a, %a : i32\n"
           "  return %0 : i32\n}\n")

pytestmark = pytest.mark.skipif(not MLIR_OPT, reason="needs mlir-opt-22 (Debian mlir-22-tools)")


def package_with(root, expected):
    d = data_package(root, "exp", files={"tests/double.mlir": PROGRAM})
    m = json.loads((d / "ireeplugin.json").read_text())
    m["tests"] = [{"name": "partial", "tool": "mlir-opt", "program": "tests/double.mlir",
                   "pipeline": "builtin.module(canonicalize)", "expected_output": expected}]
    (d / "ireeplugin.json").write_text(json.dumps(m, indent=2) + "\n")
    return d


def test_contains_and_matches_pass(tmp_path):
    d = package_with(tmp_path, [{"contains": "@double("},
                          {"matches": "arith\\.addi %arg0, %arg0 : i(8|16|32)$"},
                          "return %0 : i32"])
    r = run("pack", d, "-o", tmp_path / "dist")
    assert r.code == 0, r.out + r.err
    assert r.out.startswith("ok    exp 1.0.0 partial (mlir-opt)\n")


def test_a_missing_partial_line_fails_with_what_was_expected(tmp_path):
    d = package_with(tmp_path, [{"contains": "@double("}, {"matches": "arith\\.muli"}])
    r = run("pack", d, "-o", tmp_path / "dist")
    assert r.code == 1
    assert r.out.startswith("FAIL  exp 1.0.0 partial: mlir-opt did not print a line that "
                            "matches /arith\\.muli/ (after the 1 expected lines before it)\n")
    assert "  expected output:\n    contains \"@double(\"\n    matches /arith\\.muli/\n" in r.out
    assert "  actual output:\n" in r.out and "arith.addi %arg0, %arg0 : i32" in r.out


def test_contains_is_in_order_and_not_a_regex(tmp_path):
    d = package_with(tmp_path, [{"contains": "return"}, {"contains": "@double("}])
    r = run("pack", d, "-o", tmp_path / "dist")
    assert r.code == 1
    assert "did not print a line that contains \"@double(\" (after the 1 expected" in r.out
    d = package_with(tmp_path / "b", [{"contains": "arith.addi %arg0, %arg0 : i(32)"}])
    r = run("pack", d, "-o", tmp_path / "dist")
    assert r.code == 1, r.out


def test_bad_expectations_are_refused_by_the_manifest_check(tmp_path):
    d = package_with(tmp_path, [{"matches": "(unclosed"}, {"contains": "a", "matches": "b"},
                          {"contains": ""}, 7])
    r = run("manifest", "check", d / "ireeplugin.json")
    assert r.code == 1
    out = r.out + r.err
    assert "/tests/0/expected_output/0/matches: \"(unclosed\" is not a valid regular expression" in out
    assert ("/tests/0/expected_output/1: must have exactly one of \"contains\" and \"matches\""
            in out)
    assert "/tests/0/expected_output/2/contains: must not be empty" in out
    assert "/tests/0/expected_output/3: must be a string or an object" in out
