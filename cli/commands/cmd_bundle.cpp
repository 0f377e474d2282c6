//===- cli/commands/cmd_bundle.cpp - `ireepkg bundle create` --------------===//
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/suggest.h"

#include <cstdio>

namespace ireepkg::cli {

int runBundleCreate(const Command &, const ParsedArgs &args) {
  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
  auto &[project, env] = *ctx;
  env.bundle.clear();
  std::string lockPath = args.value("lock").value_or(project.lockPath);
  auto doc = JsonDocument::load(lockPath);
  if (!doc) {
    Error e = doc.error();
    if (e.code == ErrorCode::NotFound || e.code == ErrorCode::Io)
      e.hint = "run `ireepkg lock` first";
    printError(e);
    return kExitFailure;
  }
  DiagnosticList diags;
  ParseOptions po;
  po.strict = false;
  Lockfile lock = parseLockfile(*doc, po, diags);
  if (diags.hasErrors()) {
    printError(makeError(ErrorCode::Invalid, diags).error());
    return kExitFailure;
  }
  workflow::BundleRequest request;
  if (!args.value("output")) {
    printError("bundle create needs -o FILE", "for example: ireepkg bundle "
                                              "create -o vendor.ireebundle");
    return kExitUsage;
  }
  request.output = *args.value("output");
  for (const std::string &p : args.all("platform")) {
    auto parsed = Platform::parse(p);
    if (!parsed) {
      printError("'" + p + "' is not a platform" +
                     didYouMean(p, platformNames()),
                 "platforms are <os>-<arch>, e.g. linux-x86_64");
      return kExitUsage;
    }
    request.platforms.push_back(*parsed);
  }
  bool json = args.flag("json"), quiet = args.flag("quiet");
  CliReporter reporter(quiet || json);
  auto result = workflow::createBundle(project, lock, request, env, reporter);
  reporter.clearProgress();
  if (!result)
    return printFailure(result.error(), json);
  if (json)
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"bundle", result->path},
                                        {"packages", result->packages},
                                        {"size", result->size},
                                        {"sha256", result->sha256}})
                            .dump(2)
                            .c_str());
  else if (!quiet)
    std::printf("wrote %s: %zu package%s, %s, sha256 %s\n",
                result->path.c_str(), result->packages,
                result->packages == 1 ? "" : "s",
                formatBytes(result->size).c_str(), result->sha256.c_str());
  return kExitOk;
}

const Command &bundleCreateCommand() {
  static const Command command{
      .name = "bundle create",
      .synopsis = "-o <file>.ireebundle [--lock FILE] [--platform OS-ARCH]...",
      .summary = "write the locked packages into one offline bundle file",
      .description =
          "Writes one file holding, for each registry of the lockfile, its "
          "signed snapshot, the index files and archives (with their "
          "signatures) of exactly the locked packages. `ireepkg sync "
          "--bundle` and `ireepkg install --bundle` install from it on a "
          "machine with no network, verified exactly as from the registry "
          "(signature, index hashes, archive hashes); only the snapshot's "
          "expiry and the rollback check are not applied to a bundle. The "
          "bundle is checked that way before it is written.",
      .options = {{"output", 'o', "FILE", "the bundle to write"},
                  {"lock", 0, "FILE", "the lockfile (default: the project's)"},
                  {"platform", 0, "OS-ARCH",
                   "check that the lock covers this platform", true},
                  kOptProject,
                  kQuiet,
                  kJson},
      .examples = {"ireepkg bundle create -o vendor.ireebundle"},
      .maxPositional = 0,
      .run = runBundleCreate,
  };
  return command;
}

} // namespace ireepkg::cli
