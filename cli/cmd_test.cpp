//===- cmd_test.cpp - `ireepkg test` -------------------------------------===//
//
// Runs the smoke tests that installed packages ship (the manifest's
// "tests") against the IREE and MLIR tools in use; see
// pkg/src/package_test.h.
//
//===----------------------------------------------------------------------===//
#include "output.h"

#include "ireepkg/pkg/package_test.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/prefix.h"

#include <filesystem>

#include <cstdio>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);

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

/// The tests of a package directory, with its own plugins.
static Expected<std::vector<PackageTestResult>>
testDirectory(const std::string &dir, const PackageTestTools &tools) {
  std::string path = dir + "/ireeplugin.json";
  auto doc = JsonDocument::load(path);
  if (!doc)
    return std::unexpected(doc.error());
  DiagnosticList diags;
  Manifest manifest = parseManifest(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return runPackageTests(directoryTestTarget(dir, manifest), tools);
}

int runTest(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  CliReporter reporter(json);
  PackageTestTools tools = findPackageTestTools();
  std::vector<std::string> names, dirs;
  for (const std::string &a : args.positional)
    (a.find('/') != std::string::npos ? dirs : names).push_back(a);
  std::vector<PackageTestResult> all;
  std::string prefixPath;
  for (const std::string &dir : dirs) {
    auto more = testDirectory(dir, tools);
    if (!more)
      return printFailure(more.error(), json);
    all.insert(all.end(), more->begin(), more->end());
  }
  if (!names.empty() || dirs.empty()) {
    auto prefix = choosePrefix(args);
    if (!prefix)
      return setupFailure();
    prefixPath = prefix->path;
    auto more = runInstalledPackageTests(prefix->path, names, tools, reporter);
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

} // namespace ireepkg::cli
