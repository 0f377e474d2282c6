//===- cmd_sync.cpp - `ireepkg sync` --------------------------------------===//
#include "interrupt.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/prefix/install.h"
#include "output.h"
#include "prefix_args.h"
#include "project_change.h"
#include "registry_args.h"

#include <cstdio>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);
int printInterrupted(const Error &e, const std::string &prefix, bool json);
void printChangeReport(const InstallReport &report, bool json, bool quiet);
/// "option values and hook choices updated …" when they were (cmd_install).
void printSettingsChanged(const InstallReport &report);

int runSync(const Command &, const ParsedArgs &args) {
  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
  auto &[project, env] = *ctx;
  if (args.flag("locked") && args.flag("frozen")) {
    printError("--locked and --frozen cannot be used together",
               "--locked checks the lock against plugins.json; --frozen "
               "uses it without checking");
    return kExitUsage;
  }
  workflow::SyncRequest request;
  request.locked = args.flag("locked");
  request.frozen = args.flag("frozen");
  request.dryRun = args.flag("dry-run");
  auto prefix = projectPrefix(args, project);
  if (!prefix)
    return setupFailure();
  request.prefix = *prefix;
  if (auto p = args.value("platform")) {
    request.platform = Platform::parse(*p);
    if (!request.platform) {
      printError("'" + *p + "' is not a platform" +
                     didYouMean(*p, platformNames()),
                 "platforms are <os>-<arch>, e.g. linux-x86_64");
      return kExitUsage;
    }
  }
  if (auto level = args.value("cpu-level")) {
    auto checked = cpuLevelOption(
        request.platform ? request.platform->str() : "host", *level);
    if (!checked)
      return kExitUsage;
    request.cpuLevel = *checked;
  }
  if (!lockOptions(args, request.lock))
    return kExitUsage;
  bool json = args.flag("json"), quiet = args.flag("quiet");
  CliReporter reporter(quiet || json);
  catchInterrupts();
  auto result = workflow::syncProject(project, request, env, reporter);
  reporter.clearProgress();
  if (!result && (result.error().code == ErrorCode::Interrupted ||
                  interruptRequested()))
    return printInterrupted(result.error(), request.prefix, json);
  if (!result)
    return printFailure(result.error(), json);
  // Ctrl-C that came too late to stop anything.
  auto done = [] {
    if (!interruptRequested())
      return int(kExitOk);
    std::fprintf(stderr, "ireepkg: interrupted, after the change was made\n");
    return int(kExitInterrupted);
  };
  if (json) {
    nlohmann::json j = {{"ok", true},
                        {"prefix", result->install.prefix},
                        {"changes", installChangesJson(result->install)},
                        {"unchanged", result->install.unchanged},
                        {"reordered", result->install.reordered},
                        {"options_changed", result->install.settingsChanged},
                        {"relocked", result->relocked.has_value()}};
    if (result->relocked)
      j["lock_changes"] = lockChangesToJson(result->relocked->changes);
    if (request.dryRun)
      j["dry_run"] = true;
    std::printf("%s\n", j.dump(2).c_str());
    return done();
  }
  if (quiet)
    return done();
  if (request.dryRun) {
    if (result->relocked && result->relocked->written) {
      std::printf("plugins.json changed: would update %s\n",
                  project.lockPath.c_str());
      printLockChanges(result->relocked->changes);
    }
    printSyncPlan(result->install);
    printDryRunEnd(false);
    return done();
  }
  if (result->relocked && result->relocked->written) {
    std::printf("plugins.json changed: updated %s\n", project.lockPath.c_str());
    printLockChanges(result->relocked->changes);
  }
  if (result->install.changes.empty() && !result->install.reordered) {
    std::printf("%s is up to date with the lock (%zu package%s)\n",
                result->install.prefix.c_str(),
                result->install.unchanged.size(),
                result->install.unchanged.size() == 1 ? "" : "s");
    printSettingsChanged(result->install);
  } else
    printChangeReport(result->install, false, false);
  reporter.printSummary(result->install);
  return done();
}

} // namespace ireepkg::cli
