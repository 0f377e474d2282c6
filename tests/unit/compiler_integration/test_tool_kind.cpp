//===- test_tool_kind.cpp - Which kind of tool `exec` runs ---------------===//
#include "ireepkg/compiler_integration/tool_kind.h"

#include <doctest/doctest.h>

using namespace ireepkg;

TEST_CASE("the kind of a tool comes from its --help") {
  // iree-compile, iree-opt (which also has MLIR's plugin flags).
  CHECK(toolKindFromHelp("OVERVIEW: IREE compilation driver\n"
                         "  --iree-hal-target-device=<string> - ...\n") ==
        ToolKind::Compiler);
  CHECK(toolKindFromHelp("OVERVIEW: IREE modular optimizer driver\n"
                         "  --load-pass-plugin=<string>\n"
                         "  --pass-pipeline\n  --iree-codegen-foo\n") ==
        ToolKind::Compiler);
  // Any MlirOptMain tool, whatever its overview says.
  CHECK(toolKindFromHelp("OVERVIEW: Standalone optimizer driver\n"
                         "  --load-pass-plugin=<string> - Load passes\n"
                         "  Compiler passes to run\n    --pass-pipeline\n") ==
        ToolKind::Mlir);
  CHECK(toolKindFromHelp("# IREE: iree-run-module\n"
                         "--executable_plugin=[]\n") == ToolKind::Runtime);
  CHECK(toolKindFromHelp("# IREE: iree-benchmark-module\n"
                         "# pass it back in using --flagfile=.\n") ==
        ToolKind::Runtime);
  CHECK(toolKindFromHelp("usage: /usr/bin/python3 [option] ... [-c cmd | -m "
                         "mod | file | -] [arg] ...\n") == ToolKind::Python);
  CHECK_FALSE(toolKindFromHelp("usage: cat [OPTION]... [FILE]...\n"));
  CHECK_FALSE(toolKindFromHelp(""));
}

TEST_CASE("tool kinds by name") {
  for (std::string_view name : toolKindNames())
    CHECK(toolKindName(*parseToolKind(name)) == name);
  CHECK(parseToolKind("mlir") == ToolKind::Mlir);
  CHECK_FALSE(parseToolKind("mlir-opt"));
}

TEST_CASE("scripts that Python runs are Python by their #! line") {
  CHECK(toolKindFromShebang("#!/work/.venv/bin/python") == ToolKind::Python);
  CHECK(toolKindFromShebang("#!/usr/bin/python3.11 -I") == ToolKind::Python);
  CHECK(toolKindFromShebang("#!/usr/bin/env python3") == ToolKind::Python);
  CHECK(toolKindFromShebang("#! /usr/bin/env -S PYTHONPATH=x pypy3 -u") ==
        ToolKind::Python);
  CHECK_FALSE(toolKindFromShebang("#!/bin/sh"));
  CHECK_FALSE(toolKindFromShebang("#!/usr/bin/env bash"));
  CHECK_FALSE(toolKindFromShebang("\177ELF"));
  CHECK_FALSE(toolKindFromShebang(""));
}
