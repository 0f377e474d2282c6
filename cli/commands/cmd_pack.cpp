//===- cli/commands/cmd_pack.cpp - `ireepkg pack` -------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "commands/shared.h"

#include "ireepkg/pkg/checks/package_test.h"

#include "ireepkg/pkg/package/package.h"

#include <cstdio>
#include <filesystem>

namespace ireepkg::cli {

/// Runs the package's own tests on its directory (the package's runtime and
/// MLIR plugins for this host; the package and its installed dependencies
/// activated for iree-compile), or, with --no-test, reports each as
/// skipped; nullopt when it has none.
static std::optional<std::vector<PackageTestResult>>
packTests(const ParsedArgs &args, const std::string &dir,
          const Manifest &manifest, bool skip) {
  if (manifest.tests.empty())
    return std::nullopt;
  if (!skip) {
    std::string prefix = dependencyPrefix(args, manifest);
    return runPackageTests(directoryTestTarget(dir, manifest, prefix),
                           packageTestTools(prefix));
  }
  std::vector<PackageTestResult> results;
  for (const PackageTest &test : manifest.tests) {
    PackageTestResult r;
    r.package = manifest.name;
    r.version = manifest.version.str();
    r.test = test.name;
    r.tool = std::string(packageTestToolName(test.tool));
    r.outcome = PackageTestResult::Outcome::Skipped;
    r.reason = "not run (--no-test); the archive records that its tests "
               "were skipped";
    results.push_back(std::move(r));
  }
  return results;
}

int runPack(const Command &, const ParsedArgs &args) {
  PackOptions options;
  options.outputDir = args.value("output").value_or(".");
  options.fatelf = args.flag("fatelf");
  options.testsSkipped = args.flag("no-test");
  auto result = packDirectory(args.positional[0], options);
  if (!result) {
    if (args.flag("json"))
      std::printf("%s\n",
                  nlohmann::json({{"ok", false},
                                  {"error", errorToJson(result.error())}})
                      .dump(2)
                      .c_str());
    printError(result.error());
    return kExitFailure;
  }
  for (const Diagnostic &d : result->warnings)
    CliReporter().warning(d);
  std::optional<std::vector<PackageTestResult>> tests = packTests(
      args, args.positional[0], result->manifest, args.flag("no-test"));
  size_t testsFailed = 0;
  nlohmann::json testsJson = nlohmann::json::array();
  if (tests)
    for (const PackageTestResult &r : *tests) {
      testsFailed += r.outcome == PackageTestResult::Outcome::Failed;
      testsJson.push_back(packageTestResultToJson(r));
    }
  if (testsFailed) {
    // A package whose tests fail is not published: the archive goes.
    std::error_code ec;
    std::filesystem::remove(result->archivePath, ec);
    if (args.flag("json")) {
      std::printf("%s\n", nlohmann::json({{"ok", false}, {"tests", testsJson}})
                              .dump(2)
                              .c_str());
    } else {
      printPackageTestResults(*tests);
    }
    std::fflush(stdout);
    printError(Error(ErrorCode::Invalid,
                     std::to_string(testsFailed) + " of the package's tests " +
                         (testsFailed == 1 ? "fails" : "fail") +
                         "; no archive was written",
                     {}, "fix the package, or pack with --no-test to skip "
                         "its tests"));
    return kExitFailure;
  }
  if (args.flag("json")) {
    nlohmann::json files = nlohmann::json::array();
    for (const RecordEntry &e : result->record.files)
      files.push_back({{"path", e.path}, {"sha256", e.sha256}, {"size", e.size}});
    std::printf("%s\n", nlohmann::json(
                            {{"ok", true},
                             {"archive", result->archivePath},
                             {"name", result->manifest.name},
                             {"version", result->manifest.version.str()},
                             {"sha256", result->sha256},
                             {"size", result->size},
                             {"files", files},
                             {"pipeline_check", toJson(result->pipelineCheck)},
                             {"tests", testsJson},
                             {"tests_skipped", result->record.testsSkipped}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  if (tests && !globalOptions().quiet)
    printPackageTestResults(*tests);
  printSummary("packed %s %s -> %s (%s, %zu files, sha256 %s)\n",
               result->manifest.name.c_str(),
               result->manifest.version.str().c_str(),
               result->archivePath.c_str(), formatBytes(result->size).c_str(),
               result->record.files.size(), result->sha256.c_str());
  return kExitOk;
}

const Command &packCommand() {
  static const Command command{
      .name = "pack",
      .synopsis = "<dir> [-o DIR] [--fatelf] [--json]",
      .summary = "check a package directory and write its .ireepkg archive",
      .description =
          "Validates <dir>/ireeplugin.json, checks that every file it names "
          "exists, and inspects every native library: the file is an ELF, "
          "Mach-O or COFF of the declared architecture and OS; an "
          "embedded-elf runtime plugin is freestanding (no DT_NEEDED, no "
          "interpreter) and exports iree_hal_executable_plugin_query, as "
          "does a system-library one; a compiler plugin library exports its "
          "entry point. Hook pass pipelines are checked with MLIR's own "
          "parser (ireepkg-mlir-check) wherever MLIR knows the passes, with "
          "the package's own MLIR pass plugin loaded: unknown options, bad "
          "option values and wrong nesting are errors; passes MLIR does not "
          "know (IREE's) are left to the syntax check. --json reports what "
          "was checked (\"pipeline_check\").\n\n"
          "Then writes <name>-<version>.ireepkg: a zstd-compressed tar whose "
          "first member is ireeplugin.json, with .ireepkg/RECORD.json "
          "listing every other file's SHA-256 and size. The archive is "
          "reproducible: the same inputs give the same bytes.\n\n"
          "--fatelf also joins an embedded-elf plugin's per-architecture "
          "files into one FatELF .sos inside the package (library key "
          "\"fat\").\n\n"
          "When the manifest has \"tests\", they run last, on the package "
          "directory (its own runtime plugins, or its MLIR plugins, for this "
          "host), with the IREE and MLIR tools found as `ireepkg test` finds "
          "them; a test whose tool is missing fails. If a test fails, its "
          "output is shown and no archive is left. --no-test skips them, "
          "says so, and records it in the archive's RECORD.json "
          "(\"tests_skipped\": true).",
      .options =
          {{"output", 'o', "DIR", "where to write the archive (default: .)"},
           {"fatelf", 0, "",
            "join each embedded-elf plugin's per-architecture files into a "
            "FatELF .sos in the package"},
           {"no-test", 0, "",
            "do not run the package's tests (the archive records it)"},
           kJson},
      .examples = {"ireepkg pack examples/simple-mul -o dist/"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runPack,
  };
  return command;
}

} // namespace ireepkg::cli
