#!/usr/bin/env python3
"""Checks that the JSON Schemas in manifest_schema/ agree with the fixtures.

Usage: test_schema_agreement.py [REPO_ROOT]

- Every schema must itself be a valid draft 2020-12 schema, with the expected
  $id, a title and a description on every declared property.
- tests/data/<kind>/good_*.json must be valid against the kind's schema.
- tests/data/<kind>/bad_*.json must be invalid, except those listed in
  tests/data/semantic_only.txt: those are broken in a way only the C++
  validator can see, so the schema must accept them (which proves the listing
  is honest).
- examples/**/ireeplugin.json and examples/**/plugins.json must be valid.
- tests/data/lock/good_*.json must be in the exact form ireepkg writes
  lockfiles (sorted keys, two-space indentation, a final newline). The unit
  tests check that serializeLockfile reproduces each of them byte for byte,
  so together the two prove that what ireepkg writes satisfies the schema.

Prints one line per failure and ends with "N passed, M failed". Exit status is
0 only when nothing failed. Also collectable by pytest.
"""

import json
import os
import sys

from jsonschema import Draft202012Validator

SCHEMA_BASE_URI = "https://ireepkg.dev/schemas/"

# Fixture directory under tests/data -> schema file under manifest_schema.
KINDS = {
    "manifest": "ireeplugin.schema.json",
    "project": "plugins.schema.json",
    "lock": "plugins.lock.schema.json",
    "registry-config": "registry-config.schema.json",
    "snapshot": "registry-snapshot.schema.json",
    "index": "registry-index.schema.json",
}

# File names under examples/ that are checked, and their kind.
EXAMPLE_FILES = {
    "ireeplugin.json": "manifest",
    "plugins.json": "project",
}

# Keywords whose subschemas only constrain (they do not declare the fields of
# an object), so the description/additionalProperties lint skips them.
CONSTRAINT_KEYWORDS = ("if", "then", "else", "not", "contains", "propertyNames")


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self):
        self.passed += 1

    def fail(self, message):
        self.failed += 1
        print("FAIL " + message)

    def check(self, condition, message):
        if condition:
            self.ok()
        else:
            self.fail(message)
        return condition


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def describe_error(error):
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


def lint_schema(node, where, problems):
    """Every declared property has a description; every object that declares
    properties says what to do with the others."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            if "additionalProperties" not in node:
                problems.append(f"{where}: declares properties but no additionalProperties")
            for name, sub in props.items():
                if isinstance(sub, dict) and "description" not in sub:
                    problems.append(f"{where}/properties/{name}: no description")
        for key, value in node.items():
            if key in CONSTRAINT_KEYWORDS:
                continue
            if key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                # Branches that only add constraints (no "properties" with
                # declarations of their own) are skipped by the rules above
                # because they hold no "type": "object" declaration.
                for i, branch in enumerate(value):
                    if isinstance(branch, dict) and branch.get("type") == "object":
                        lint_schema(branch, f"{where}/{key}/{i}", problems)
                continue
            lint_schema(value, f"{where}/{key}", problems)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            lint_schema(value, f"{where}/{i}", problems)


def load_validators(root, results):
    validators = {}
    schema_dir = os.path.join(root, "manifest_schema")
    for kind, filename in KINDS.items():
        path = os.path.join(schema_dir, filename)
        label = f"manifest_schema/{filename}"
        try:
            schema = load_json(path)
        except (OSError, ValueError) as e:
            results.fail(f"{label}: cannot load: {e}")
            continue
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as e:  # SchemaError, with a long message
            results.fail(f"{label}: not a valid draft 2020-12 schema: "
                         f"{getattr(e, 'message', e)}")
            continue
        results.ok()
        results.check(schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema",
                      f"{label}: $schema is not draft 2020-12")
        results.check(schema.get("$id") == SCHEMA_BASE_URI + filename,
                      f"{label}: $id should be {SCHEMA_BASE_URI + filename}")
        results.check(bool(schema.get("title")) and bool(schema.get("description")),
                      f"{label}: needs a title and a description")
        problems = []
        lint_schema(schema, "#", problems)
        for p in problems:
            results.fail(f"{label}: {p}")
        if not problems:
            results.ok()
        validators[kind] = Draft202012Validator(
            schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return validators


def read_semantic_only(data_dir, results):
    path = os.path.join(data_dir, "semantic_only.txt")
    listed = set()
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        results.fail(f"tests/data/semantic_only.txt: cannot read: {e}")
        return listed
    for n, line in enumerate(lines, 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        where = f"tests/data/semantic_only.txt:{n}"
        kind, _, name = entry.partition("/")
        if not (results.check(kind in KINDS and name.startswith("bad_") and "/" not in name,
                              f"{where}: '{entry}' is not <kind>/bad_*.json")
                and results.check(os.path.isfile(os.path.join(data_dir, entry)),
                                  f"{where}: '{entry}' does not exist")
                and results.check(entry not in listed, f"{where}: '{entry}' listed twice")):
            continue
        listed.add(entry)
    return listed


def check_fixtures(data_dir, validators, semantic_only, results):
    for entry in sorted(os.listdir(data_dir)):
        if os.path.isdir(os.path.join(data_dir, entry)) and entry not in KINDS:
            results.fail(f"tests/data/{entry}: unknown fixture kind "
                         f"(expected one of {', '.join(KINDS)})")
    for kind in KINDS:
        kind_dir = os.path.join(data_dir, kind)
        if not results.check(os.path.isdir(kind_dir), f"tests/data/{kind}: missing"):
            continue
        validator = validators.get(kind)
        for name in sorted(os.listdir(kind_dir)):
            rel = f"{kind}/{name}"
            label = f"tests/data/{rel}"
            if name.startswith("bad_") and name.endswith(".expected"):
                # The C++ validator's exact diagnostics (tests/cli).
                results.check(os.path.exists(os.path.join(kind_dir, name[:-9] + ".json")),
                              f"{label}: no fixture for this .expected file")
                continue
            if not name.endswith(".json") or not name.startswith(("good_", "bad_")):
                results.fail(f"{label}: fixture names must be good_*.json or bad_*.json")
                continue
            if validator is None:
                results.fail(f"{label}: no usable schema for kind '{kind}'")
                continue
            try:
                doc = load_json(os.path.join(kind_dir, name))
            except ValueError as e:
                results.fail(f"{label}: not JSON: {e}")
                continue
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
            if name.startswith("good_"):
                results.check(not errors, f"{label}: expected valid, but "
                                          f"{describe_error(errors[0]) if errors else ''}")
            elif rel in semantic_only:
                results.check(not errors,
                              f"{label}: listed in semantic_only.txt but the schema rejects it "
                              f"{describe_error(errors[0]) if errors else ''}")
            else:
                results.check(bool(errors), f"{label}: expected the schema to reject it, "
                                            f"but it is valid (add it to semantic_only.txt "
                                            f"if only the C++ validator can see the problem)")


def canonical_lock_text(doc):
    """The bytes ireepkg writes for a lockfile holding `doc`."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check_lock_fixtures_canonical(data_dir, results):
    lock_dir = os.path.join(data_dir, "lock")
    if not os.path.isdir(lock_dir):
        return
    for name in sorted(os.listdir(lock_dir)):
        if not (name.startswith("good_") and name.endswith(".json")):
            continue
        label = f"tests/data/lock/{name}"
        try:
            with open(os.path.join(lock_dir, name), encoding="utf-8") as f:
                text = f.read()
            doc = json.loads(text)
        except (OSError, ValueError) as e:
            results.fail(f"{label}: cannot load: {e}")
            continue
        results.check(text == canonical_lock_text(doc),
                      f"{label}: not in the form ireepkg writes lockfiles "
                      f"(sorted keys, two-space indentation, final newline)")


def check_examples(root, validators, results):
    examples_dir = os.path.join(root, "examples")
    if not os.path.isdir(examples_dir):
        return
    for dirpath, dirnames, filenames in os.walk(examples_dir):
        # Skip hidden directories (installed prefixes such as .iree-plugins).
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            kind = EXAMPLE_FILES.get(name)
            if kind is None:
                continue
            path = os.path.join(dirpath, name)
            label = os.path.relpath(path, root)
            validator = validators.get(kind)
            if validator is None:
                results.fail(f"{label}: no usable schema for kind '{kind}'")
                continue
            try:
                doc = load_json(path)
            except ValueError as e:
                results.fail(f"{label}: not JSON: {e}")
                continue
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
            results.check(not errors, f"{label}: expected valid, but "
                                      f"{describe_error(errors[0]) if errors else ''}")


def main(argv):
    default_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = os.path.abspath(argv[1]) if len(argv) > 1 else default_root
    results = Results()
    validators = load_validators(root, results)
    data_dir = os.path.join(root, "tests", "data")
    semantic_only = read_semantic_only(data_dir, results)
    check_fixtures(data_dir, validators, semantic_only, results)
    check_lock_fixtures_canonical(data_dir, results)
    check_examples(root, validators, results)
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 else 1


def test_schema_agreement():
    """pytest entry point."""
    assert main([__file__]) == 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
