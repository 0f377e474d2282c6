//===- cli/commands/shared.h - What commands lend others --------*- C++ -*-===//
//
// Functions defined in one cmd_<name>.cpp that other commands use too; each
// says where it lives.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_SHARED_H
#define IREEPKG_CLI_SHARED_H

#include "commands/command.h"

#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/checks/package_test.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg::cli {

// cmd_env.cpp

/// POSIX-shell quoting: as is when safe, else '...' with ' as '"'"'. Also
/// what iree.runtime's split of IREE_PY_RUNTIME_FLAGS undoes (`exec`).
std::string shellQuote(const std::string &s);

// cmd_flags.cpp

/// The compiler configuration of a prefix (`flags`, `exec`): the library's,
/// with the compiler found on PATH when one must be probed.
Expected<CompilerConfig> prefixCompilerConfig(const PrefixLocation &prefix,
                                              CompilerConfigRequest request,
                                              Reporter &reporter);

// cmd_test.cpp (`test`, `pack`, `doctor`)

/// Prints the results and a summary line; returns how many failed.
size_t printPackageTestResults(const std::vector<PackageTestResult> &results);

/// The tools of package tests, and the compiler flags of the package under
/// test and its dependencies installed in `prefix` ("": none installed).
PackageTestTools packageTestTools(const std::string &prefix);

/// The prefix whose installed packages a package directory's dependencies
/// are taken from ("" when it has none or no prefix is found).
std::string dependencyPrefix(const ParsedArgs &args, const Manifest &manifest);

// cmd_registry_site.cpp

/// After publish, yank or resign with --site DIR: writes the site again.
/// Returns false (after printing the error) when that failed.
bool updateSiteAfterWrite(const ParsedArgs &args, const std::string &dir,
                          bool json);

// cmd_signature.cpp

/// The password from --password-file, if given; false after printing an
/// error (`sign` and the registry commands that sign).
bool passwordOption(const ParsedArgs &args, std::optional<std::string> &out);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_SHARED_H
