//===- ireepkg/pkg/checks/package_test.h - A package's smoke tests --------===//
//
// A package's manifest may ship smoke tests ("tests", formats.md §1). This
// runs them against the IREE and MLIR tools in use, each tool in a child
// process with the test's time limit:
//
//  - iree-run-module tests: the program is compiled with iree-compile for
//    the local CPU (llvm-cpu, host CPU, constant evaluation off since
//    iree-compile cannot load runtime plugins) with the package and its
//    installed dependencies activated (their compiler flags, as `ireepkg
//    exec` gives them: hooks, options, plugins), then the test's own
//    compile_flags; a pass pipeline error that iree-compile reports while
//    exiting with 0 fails the test (iree_pipeline_check.h). It then runs
//    with
//    iree-run-module --device=local-sync, the runtime plugins given either
//    by a prefix's state/runtime.flags (installed packages) or by the
//    runtime plugins for the host of the package's installed dependencies,
//    then its own (a package directory, as `pack` tests it);
//  - mlir-opt tests: mlir-opt runs --pass-pipeline= on the program with the
//    MLIR pass and dialect plugins for the host of the package's installed
//    dependencies (a package directory) and its own loaded; a test
//    whose tool is another MLIR tool that the plugins name in their "tools"
//    (found on PATH) runs that tool the same way, with the plugins that
//    name it.
//
// A test passes when every tool exits with 0 and every expected line
// appears, in order, among the lines the last tool printed on stdout.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_PACKAGE_TEST_H
#define IREEPKG_PKG_PACKAGE_TEST_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {

struct PackageTestTarget;

/// The iree-compile flags of `target` activated with its installed
/// dependencies, given the test's other iree-compile arguments (their
/// target flags choose tuning specs); an error fails the test.
using ActivatedCompilerFlags = std::function<Expected<std::vector<std::string>>(
    const PackageTestTarget &target,
    const std::vector<std::string> &compileArgs)>;

/// The tools package tests use; "" when not found.
struct PackageTestTools {
  std::string ireeCompile;
  std::string ireeRunModule;
  std::string mlirOpt;
  /// Injected by the caller (the CLI): the flags come from
  /// compiler_integration's configuration builder, the one `flags compiler`
  /// and `exec` use, and that layer sits above pkg. Unset: none (only the
  /// test's compile_flags).
  ActivatedCompilerFlags activatedCompilerFlags;
};

/// iree-compile and iree-run-module as the IREE in use finds them (PATH,
/// then $VIRTUAL_ENV/bin, iree_version.h), and mlir-opt, then mlir-opt-22,
/// on PATH.
PackageTestTools findPackageTestTools();

/// What to test: one package (installed, or a package directory).
struct PackageTestTarget {
  std::string package; ///< name, for reports
  std::string version;
  std::string root; ///< the package's directory
  const Manifest *manifest = nullptr;
  Platform platform; ///< where the plugins run: the host
  /// A runtime flagfile (a prefix's state/runtime.flags) that names the
  /// runtime plugins; nullopt: the package's own plugins for `platform`.
  std::optional<std::string> runtimeFlagfile;
  /// A package directory's dependencies (and theirs) as a prefix installed
  /// them, in activation order: their runtime plugins and MLIR plugins are
  /// active in its tests before its own, as they are for a user.
  struct Dependency {
    std::string name;
    std::string root;
    Manifest manifest;
  };
  std::vector<Dependency> dependencies;
  /// Why the dependencies could not be taken (one not installed, a prefix
  /// that cannot be read): every test fails with it.
  std::optional<Error> dependencyError;
};

struct InstalledState;

/// The names of `manifest`'s dependencies and theirs, as installed in
/// `state`, in the prefix's activation order. ErrorCode::NotFound (at
/// `dir`/ireeplugin.json) for the first one not installed.
Expected<std::vector<std::string>>
installedDependencyClosure(const InstalledState &state,
                           const Manifest &manifest, const std::string &dir,
                           const std::string &prefix);

/// A package directory (not installed) as a target: its own plugins for
/// this host and, when it has dependencies, theirs as `dependencyPrefix`
/// installed them. `manifest` must outlive the target.
PackageTestTarget directoryTestTarget(const std::string &dir,
                                      const Manifest &manifest,
                                      const std::string &dependencyPrefix = {});

struct PackageTestResult {
  std::string package, version, test, tool;
  enum class Outcome { Passed, Failed, Skipped } outcome = Outcome::Passed;
  /// Why it failed or was skipped, one line.
  std::string reason;
  /// The command that failed, shell-quoted, and what it printed
  /// (stdout then stderr).
  std::string command, output;
  std::vector<std::string> expected; ///< the expected lines, on a mismatch
  /// What to do, when the failure is not the package's (a missing tool).
  std::string hint;
  double seconds = 0;
};

/// Runs the package's tests (only those named in `only`, when not empty).
/// Never fails as a whole: each problem is that test's failure, a missing
/// tool too (a test that cannot run is not a passed one).
std::vector<PackageTestResult>
runPackageTests(const PackageTestTarget &target, const PackageTestTools &tools,
                const std::vector<std::string> &only = {});

class Reporter;

/// Runs the tests of the packages installed in `prefix` (those named in
/// `packages`, or all), with the prefix's runtime plugins
/// (state/runtime.flags). Errors: the prefix's state or a manifest cannot
/// be read, or a named package is not installed (ErrorCode::NotFound).
/// A prefix for another platform than the host has its tests skipped.
Expected<std::vector<PackageTestResult>>
runInstalledPackageTests(const std::string &prefix,
                         const std::vector<std::string> &packages,
                         const PackageTestTools &tools, Reporter &reporter);

/// {"package", "version", "test", "tool", "outcome": "passed" | "failed" |
/// "skipped", "reason", "command", "output", "expected", "hint", "seconds"}
nlohmann::json packageTestResultToJson(const PackageTestResult &result);

/// A readable report of one result: "ok    <package> <version> <test>"
/// (or FAIL/skip) and, on failure, the command, what was expected and the
/// tool's output.
std::string formatPackageTestResult(const PackageTestResult &result);

} // namespace ireepkg

#endif // IREEPKG_PKG_PACKAGE_TEST_H
