//===- cli/host/python_env.h - What Python is given -------------*- C++ -*-===//
//
// The environment variables that make a prefix's plugins active in Python's
// iree.runtime and iree.compiler (docs/python.md):
//
//  - IREEPKG_PREFIX: the prefix (the `ireepkg` Python package's Prefix()
//    and every ireepkg command then use it);
//  - IREE_PY_RUNTIME_FLAGS: the runtime flags, which iree.runtime parses
//    when it is imported;
//  - IREE_TOOL_PATH: the directory of ireepkg's iree-compile wrapper
//    (libexec/ireepkg/iree-tools, beside ireepkg's bin/), which
//    iree.compiler searches before its own iree-compile: the wrapper runs
//    `ireepkg exec -- iree-compile`, so compile_file and compile_str get the
//    prefix's compiler plugins, options and hooks. IREEPKG_IREE_TOOL_PATH
//    keeps the previous IREE_TOOL_PATH (the wrapper restores it) and
//    IREEPKG_EXECUTABLE names this ireepkg (which the wrapper and the Python
//    package run).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_PYTHON_ENV_H
#define IREEPKG_CLI_PYTHON_ENV_H

#include <string>
#include <utility>
#include <vector>

namespace ireepkg::cli {

/// The variables, in the order `env` prints them. `ireeCompile`, when not
/// empty, is the iree-compile the wrapper runs (IREEPKG_IREE_COMPILE; else
/// the one on PATH).
std::vector<std::pair<std::string, std::string>>
pythonEnvironment(const std::string &prefix, const std::string &ireeCompile);

/// The directory of the iree-compile wrapper, or "" when it is not
/// installed beside this ireepkg.
std::string ireeToolWrapperDir();

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_PYTHON_ENV_H
