//===- ireepkg/compiler_integration/tool_kind.h ---------------------------===//
//
// What kind of tool `exec` runs.
//
// `ireepkg exec` gives each kind of tool the prefix's configuration in the
// form it understands:
//
//  - runtime: IREE's runtime tools (iree-run-module, iree-benchmark-module,
//    ...) read --flagfile=<prefix>/state/runtime.flags;
//  - compiler: IREE's compiler tools (iree-compile, iree-opt) read the LLVM
//    response file @<prefix>/state/compiler.flags;
//  - mlir: MLIR tools built on MlirOptMain (mlir-opt-22, standalone-opt,
//    ...) take --load-pass-plugin=, --load-dialect-plugin= and
//    --pass-pipeline= as arguments;
//  - python: a Python interpreter, or a script Python runs (pytest, a
//    console script: recognised by its #! line when its --help is not one
//    of the above), gets the runtime flags through IREE_PY_RUNTIME_FLAGS
//    and the prefix through IREEPKG_PREFIX (as `ireepkg env` exports them).
//
// The kind comes from the tool's own `--help` (run once in a child process
// with a time limit, and cached by path, size and modification time), not
// from its name: a tool named my-mlir-opt is an MLIR tool, and a wrapper
// script named iree-compile is still IREE's compiler.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_TOOL_KIND_H
#define IREEPKG_TOOL_KIND_H

#include "ireepkg/base/error.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ireepkg {

enum class ToolKind { Runtime, Compiler, Mlir, Python };

std::span<const std::string_view> toolKindNames();
std::string_view toolKindName(ToolKind kind);
std::optional<ToolKind> parseToolKind(std::string_view name);

/// The kind of tool that printed `help` (its --help output, stdout and
/// stderr), if it is one ireepkg knows.
std::optional<ToolKind> toolKindFromHelp(std::string_view help);

/// Python when `firstLine` (a script's first line) is a `#!` line that
/// runs a Python interpreter (python, python3.11, `/usr/bin/env python3`,
/// pypy3): pytest and other console scripts, whose --help is their own.
std::optional<ToolKind> toolKindFromShebang(std::string_view firstLine);

/// Runs `<toolPath> --help` (a path) in a child process, at most
/// `timeoutSeconds`, and recognises the kind from its output. The answer is
/// cached under the package cache directory (tools.json). An Error when the
/// tool cannot be run or is not recognised (the hint names --tool-kind).
Expected<ToolKind> probeToolKind(const std::string &toolPath,
                                 double timeoutSeconds = 20);

} // namespace ireepkg

#endif // IREEPKG_TOOL_KIND_H
