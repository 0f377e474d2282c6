//===- cli/commands/cmd_test.cpp - `ireepkg test` -------------------------===//
//
// Runs the smoke tests that installed packages ship (the manifest's
// "tests") against the IREE and MLIR tools in use, with the package and its
// installed dependencies activated; see ireepkg/pkg/checks/package_test.h.
//
//===----------------------------------------------------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"
#include "commands/shared.h"

#include "ireepkg/pkg/checks/package_test.h"

#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/tuning_specs.h"

#include "ireepkg/manifest_schema/json_document.h"

#include <filesystem>

#include <cstdio>

namespace ireepkg::cli {

/// Prints the results and a summary line; returns how many failed.
size_t printPackageTestResults(const std::vector<PackageTestResult> &results) {
  size_t passed = 0, failed = 0, skipped = 0;
  std::string text;
  for (const PackageTestResult &r : results) {
    text += formatPackageTestResult(r);
    switch (r.outcome) {
    case PackageTestResult::Outcome::Passed:
      ++passed;
      break;
    case PackageTestResult::Outcome::Failed:
      ++failed;
      break;
    case PackageTestResult::Outcome::Skipped:
      ++skipped;
      break;
    }
  }
  text += std::to_string(results.size()) +
          (results.size() == 1 ? " test: " : " tests: ") +
          std::to_string(passed) + " passed, " + std::to_string(failed) +
          " failed, " + std::to_string(skipped) + " skipped\n";
  std::fputs(text.c_str(), stdout);
  return failed;
}

/// The tools of package tests, and the compiler flags of the package under
/// test and its dependencies installed in `prefix` ("": none installed):
/// compiler_integration's configuration, the one `exec` gives a user.
PackageTestTools packageTestTools(const std::string &prefix) {
  PackageTestTools tools = findPackageTestTools();
  std::string compiler = tools.ireeCompile;
  tools.activatedCompilerFlags =
      [prefix, compiler](const PackageTestTarget &target,
                         const std::vector<std::string> &compileArgs)
      -> Expected<std::vector<std::string>> {
    CompilerConfigRequest request;
    request.tool = CompilerTool::IreeCompile;
    request.targets = compileTargetsOf(compileArgs);
    CliReporter quiet(true);
    auto config = buildPackageCompilerConfig(prefix, target.root,
                                             *target.manifest, request, quiet,
                                             [compiler] { return compiler; });
    if (!config)
      return std::unexpected(config.error());
    std::vector<std::string> flags;
    for (const CompilerFlag &f : config->flags)
      flags.push_back(f.text());
    return flags;
  };
  return tools;
}

/// The prefix whose installed packages a package directory's dependencies
/// are taken from: the one the command would use, read only when the
/// package has dependencies ("" when it has none or no prefix is found).
std::string dependencyPrefix(const ParsedArgs &args, const Manifest &manifest) {
  if (manifest.dependencies.empty())
    return "";
  auto prefix = choosePrefix(args);
  return prefix ? prefix->path : "";
}

/// The tests of a package directory, with its own plugins.
static Expected<std::vector<PackageTestResult>>
testDirectory(const std::string &dir, const ParsedArgs &args) {
  std::string path = dir + "/ireeplugin.json";
  auto doc = JsonDocument::load(path);
  if (!doc)
    return std::unexpected(doc.error());
  DiagnosticList diags;
  Manifest manifest = parseManifest(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  std::string prefix = dependencyPrefix(args, manifest);
  return runPackageTests(directoryTestTarget(dir, manifest, prefix),
                         packageTestTools(prefix));
}

int runTest(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  CliReporter reporter(json);
  std::vector<std::string> names, dirs;
  for (const std::string &a : args.positional)
    (a.find('/') != std::string::npos ? dirs : names).push_back(a);
  std::vector<PackageTestResult> all;
  std::string prefixPath;
  for (const std::string &dir : dirs) {
    auto more = testDirectory(dir, args);
    if (!more)
      return printFailure(more.error(), json);
    all.insert(all.end(), more->begin(), more->end());
  }
  if (!names.empty() || dirs.empty()) {
    auto prefix = choosePrefix(args);
    if (!prefix)
      return setupFailure();
    prefixPath = prefix->path;
    auto more = runInstalledPackageTests(
        prefix->path, names, packageTestTools(prefix->path), reporter);
    if (!more)
      return printFailure(more.error(), json);
    all.insert(all.end(), more->begin(), more->end());
  }
  auto results = &all;
  size_t failed = 0;
  for (const PackageTestResult &r : *results)
    failed += r.outcome == PackageTestResult::Outcome::Failed;
  if (json) {
    nlohmann::json tests = nlohmann::json::array();
    for (const PackageTestResult &r : *results)
      tests.push_back(packageTestResultToJson(r));
    std::printf("%s\n",
                nlohmann::json({{"prefix", prefixPath.empty()
                                               ? nlohmann::json(nullptr)
                                               : nlohmann::json(prefixPath)},
                                {"tests", tests},
                                {"ok", failed == 0}})
                    .dump(2)
                    .c_str());
  } else {
    printPackageTestResults(*results);
  }
  return failed == 0 ? kExitOk : kExitFailure;
}

const Command &testCommand() {
  static const Command command{
      .name = "test",
      .synopsis = "[<package>|<dir>...] [--prefix DIR] [--json]",
      .summary = "run the tests packages ship",
      .description =
          "Runs the smoke tests of the installed packages (all, or those "
          "named), as their manifests' \"tests\" describe them, against the "
          "IREE and MLIR tools in use: iree-compile and iree-run-module found "
          "on PATH, then in the active virtual environment, and mlir-opt, "
          "then mlir-opt-22, on PATH. An iree-run-module test compiles its "
          "program for the local CPU with the package and its installed "
          "dependencies activated (their compiler flags, as `exec` gives "
          "them, before the test's compile_flags) and runs the function with "
          "the inputs through the prefix's runtime plugins "
          "(state/runtime.flags); an mlir-opt test runs the pipeline on its "
          "program with the package's MLIR plugins loaded, and a test may run "
          "another MLIR tool its plugins name (\"tools\"). Each tool runs in a "
          "child process with the "
          "test's time limit (timeout_seconds, default 120). A test passes "
          "when its tools succeed and the expected lines appear, in order, "
          "in what the tool prints; a failure shows the command, the "
          "expected lines and the tool's output. A test whose tool is not "
          "found fails. Exit status 1 if any test fails.\n\n"
          "An argument with a '/' (./my-package, build/package) is a package "
          "directory instead: its tests run with its own runtime plugins for "
          "this host, as `pack` runs them, and its dependencies from the "
          "prefix.",
      .options = {kPrefix, kJson},
      .examples = {"ireepkg test", "ireepkg test my-plugin --json",
                   "ireepkg test ./build/package"},
      .run = runTest,
  };
  return command;
}

} // namespace ireepkg::cli
