#!/usr/bin/env python3
"""Fails when a module reaches above its layer or into another's privates.

The layers (docs/architecture.md):

    base  <-  manifest_schema  <-  pkg  <-  registry  <-  workflow
                                    ^
                                    +--  compiler_integration, runtime_integration
    cli (on top: the only module that sees every other)

A module's code is everything under its directory plus its public headers
under include/ireepkg/<module>/. Each may include:
  - public headers (include/ireepkg/<module>/...) of itself and of the
    modules below it;
  - its own private headers, by a plain name ("sources.h"), found beside the
    including file or in the module's own directories;
  - include/ireepkg/iree_executable_plugin.h (the plugin ABI, no module).
and its CMake file may not put another module's directory on an include
path. A module divided by concern (FOLDERS) keeps its sources in
<module>/src/<folder>/ and its public headers in
include/ireepkg/<module>/<folder>/, the same folders on both sides (cli,
which has no src/, in cli/<folder>/, with only TOP_FILES beside them); a file
outside them, or in a folder not listed, is reported. Tests, benchmarks, fuzz targets and examples may include any public
header, but no private one.

It also fails on a source file of more than MAX_LINES lines whose opening
comment does not say why it is one file ("Why one file of this size: ...").

Usage: check_layers.py SOURCE_DIR       (exit 0: clean; 1: violations)
       check_layers.py --self-test      (the checker finds planted ones)
"""

import os
import re
import sys
import tempfile

ALLOWED = {
    "base": {"base"},
    "manifest_schema": {"base", "manifest_schema"},
    "pkg": {"base", "manifest_schema", "pkg"},
    "registry": {"base", "manifest_schema", "pkg", "registry"},
    "workflow": {"base", "manifest_schema", "pkg", "registry", "workflow"},
    "compiler_integration": {"base", "manifest_schema", "pkg",
                             "compiler_integration"},
    "runtime_integration": {"base", "manifest_schema", "pkg",
                            "runtime_integration"},
    "cli": {"base", "manifest_schema", "pkg", "registry", "workflow",
            "compiler_integration", "runtime_integration", "cli"},
}
MODULES = list(ALLOWED)
# The folders by concern of a module's src/ and of its public headers
# (docs/architecture.md says what each holds).
FOLDERS = {
    "pkg": {"package", "prefix", "cache", "project", "resolve", "checks",
            "iree"},
    "registry": {"client", "transport", "publish", "site"},
    "cli": {"commands", "output", "args", "host"},
}
# A module with no src/ keeps its folders at its top (cli/CMakeLists.txt says
# what each holds), and beside them only these files.
TOP_FILES = {"cli": {"main.cpp"}}
# Code that is not a module: may use public headers only.
OUTSIDE = ["tests", "bench", "fuzz", "examples", "templates", "python"]
# Public headers with no module: the plugin ABI, and the runtime library's
# installed headers (runtime_integration/include/ireepkg/).
NEUTRAL = {"iree_executable_plugin.h"}
RUNTIME_PUBLIC = {"runtime.h", "iree_runtime_adapter.h"}

MAX_LINES = 1050
REASON = "Why one file of this size"

INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)
SOURCE = re.compile(r"\.(c|cc|cpp|h|hpp)$")


def module_of(rel):
    parts = rel.split("/")
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "ireepkg":
        return parts[2] if parts[2] in ALLOWED else None
    if parts[0] in ALLOWED:
        return parts[0]
    return None


def folder_problem(mod, rel):
    """The file of a module divided by concern that is in no folder of it."""
    parts = rel.split("/")
    if parts[0] == "include":
        folder = parts[3] if len(parts) > 4 else None
    elif len(parts) > 1 and parts[1] == "src":
        folder = parts[2] if len(parts) > 3 else None
    elif mod in TOP_FILES:
        if len(parts) == 2 and parts[1] in TOP_FILES[mod]:
            return None
        folder = parts[1] if len(parts) > 2 else None
    else:
        return None  # Not a library source (pkg/inspect).
    if folder in FOLDERS[mod]:
        return None
    where = "in no folder" if folder is None else f"in {folder}/"
    folders = ", ".join(sorted(FOLDERS[mod]))
    if mod in TOP_FILES:
        return (f"{rel}:1: {where}: {mod}'s sources are in the folders of "
                f"their concerns ({folders}; beside them only "
                f"{', '.join(sorted(TOP_FILES[mod]))}): move it into the "
                f"folder it belongs to ({mod}/CMakeLists.txt says what each "
                "holds)")
    return (f"{rel}:1: {where}: {mod}'s sources and public headers are in the "
            f"folders of their concerns ({folders}):"
            " move it into the folder it belongs to, the same on both sides")


def check_file(root, rel, problems):
    mod = module_of(rel)
    outside = rel.split("/")[0] in OUTSIDE
    if mod is None and not outside:
        return
    if mod in FOLDERS:
        problem = folder_problem(mod, rel)
        if problem:
            problems.append(problem)
    with open(os.path.join(root, rel), encoding="utf-8",
              errors="replace") as f:
        text = f.read()
    lines = text.count("\n")
    if lines > MAX_LINES and REASON not in "\n".join(text.split("\n")[:60]):
        problems.append(f"{rel}:1: {lines} lines, and its opening comment "
                        f"does not say why it is one file (\"{REASON}: "
                        "...\"): split it, or give the reason")
    for m in INCLUDE.finditer(text):
        inc = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        where = f"{rel}:{line}"
        if inc.startswith("ireepkg/"):
            parts = inc.split("/")
            if len(parts) == 2:
                if parts[1] in NEUTRAL:
                    continue
                if parts[1] in RUNTIME_PUBLIC:
                    target = "runtime_integration"
                else:
                    problems.append(f"{where}: includes {inc}, a header that "
                                    "belongs to no module (move it under "
                                    "include/ireepkg/<module>/)")
                    continue
            else:
                target = parts[1]
            if target not in ALLOWED:
                problems.append(f"{where}: includes {inc}, which names no "
                                "module")
            elif mod is not None and target not in ALLOWED[mod]:
                problems.append(f"{where}: {mod} includes {inc}, from "
                                f"{target}, which is above it or beside it "
                                f"(allowed: {', '.join(sorted(ALLOWED[mod]))})")
            continue
        if "/" in inc and not inc.startswith("ireepkg/"):
            # A system or third-party header (<sys/stat.h>, nlohmann/...),
            # or a path into another directory of the tree.
            first = inc.lstrip("./").split("/")[0]
            resolved = os.path.normpath(os.path.join(os.path.dirname(rel),
                                                     inc)).replace(os.sep, "/")
            same = (inc.startswith("..") and mod is not None and
                    module_of(resolved) == mod)
            if not same and (inc.startswith("..") or first in MODULES):
                problems.append(f"{where}: includes {inc} by a path into "
                                "another directory: use a public header "
                                "(include/ireepkg/<module>/)")
            continue
        # A plain name: a private header of the file's own module, beside
        # it or in the module's directories; or a system header.
        if mod is None and outside:
            here = os.path.join(root, os.path.dirname(rel), inc)
            if not os.path.exists(here):
                for other in MODULES:
                    for dirpath, _, names in os.walk(os.path.join(root, other)):
                        if inc in names:
                            problems.append(
                                f"{where}: includes {inc}, a private header "
                                f"of {other}")
                            break
                    else:
                        continue
                    break


def check_cmake(root, problems):
    for mod in MODULES:
        path = os.path.join(root, mod, "CMakeLists.txt")
        if not os.path.exists(path):
            continue
        text = open(path, encoding="utf-8").read()
        for m in re.finditer(r"target_include_directories\(([^)]*)\)", text):
            for other in MODULES:
                if other != mod and re.search(
                        r"(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/" + other +
                        r"\b", m.group(1)):
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{mod}/CMakeLists.txt:{line}: puts "
                                    f"{other}'s directory on an include path")


def check(root):
    problems = []
    for top in MODULES + OUTSIDE + ["include"]:
        base = os.path.join(root, top)
        for dirpath, dirnames, names in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for n in sorted(names):
                if SOURCE.search(n):
                    rel = os.path.relpath(os.path.join(dirpath, n), root)
                    check_file(root, rel.replace(os.sep, "/"), problems)
    check_cmake(root, problems)
    return problems


def self_test():
    """Plants one violation of each kind in a scratch tree."""
    cases = {
        "pkg/src/prefix/a.cpp": '#include "ireepkg/registry/client/client.h"\n',
        "registry/src/client/b.cpp":
            '#include "../../../pkg/src/prefix/private.h"\n',
        "pkg/src/prefix/private.h": "\n",
        "tests/unit/c.cpp": '#include "private.h"\n',
        "manifest_schema/src/d.cpp": '#include "ireepkg/pkg/prefix/prefix.h"\n',
        "compiler_integration/src/e.cpp":
            '#include "ireepkg/runtime_integration/runtime_state.h"\n',
        "include/ireepkg/pkg/prefix/f.h": '#include "ireepkg/cli/command.h"\n',
        "cli/commands/g.cpp": '#include "ireepkg/loose.h"\n',
        "cli/loose.cpp": "\n",
        "cli/misc/h.h": "\n",
        "registry/CMakeLists.txt":
            "target_include_directories(r PRIVATE "
            "${PROJECT_SOURCE_DIR}/pkg/src)\n",
        "pkg/src/resolve/long.cpp": "int x;\n" * (MAX_LINES + 1),
        "pkg/src/loose.cpp": "\n",
        "include/ireepkg/pkg/misc/g.h": "\n",
        # Allowed, so not reported:
        "pkg/src/resolve/long_ok.cpp": "// " + REASON + ": a test.\n" +
                               "int x;\n" * (MAX_LINES + 1),
        "registry/http/ok.cpp": '#include "../src/private_http.h"\n',
        "pkg/inspect/ok.cpp": '#include "ireepkg/pkg/package/fatelf.h"\n',
        "pkg/src/checks/ok.cpp": '#include "prefix/transaction.h"\n',
        "cli/output/ok.cpp": '#include "ireepkg/registry/client/client.h"\n'
                             '#include "output/output.h"\n'
                             '#include <sys/stat.h>\n',
        "cli/main.cpp": '#include "commands/command.h"\n',
        "runtime_integration/src/ok.c":
            '#include "ireepkg/runtime.h"\n'
            '#include "ireepkg/manifest_schema/runtime_index_format.h"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in cases.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)),
                        exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = check(root)
    expect = ["pkg/src/prefix/a.cpp:1:", "registry/src/client/b.cpp:1:",
              "tests/unit/c.cpp:1:", "manifest_schema/src/d.cpp:1:",
              "compiler_integration/src/e.cpp:1:",
              "include/ireepkg/pkg/prefix/f.h:1:", "cli/commands/g.cpp:1:",
              "cli/loose.cpp:1:", "cli/misc/h.h:1:",
              "registry/CMakeLists.txt:1:", "pkg/src/resolve/long.cpp:1:",
              "pkg/src/loose.cpp:1:", "include/ireepkg/pkg/misc/g.h:1:"]
    missing = [e for e in expect if not any(p.startswith(e) for p in found)]
    extra = [p for p in found if not any(p.startswith(e) for e in expect)]
    for p in found:
        print(p)
    if missing or extra or len(found) != len(expect):
        print(f"self-test failed: missing {missing}, unexpected {extra}")
        return 1
    print(f"self-test: all {len(expect)} planted violations found")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layer violation(s); see docs/architecture.md")
        return 1
    print("layers: every include points down or sideways within a module")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
