//===- cli/commands/cmd_sync.cpp - `ireepkg sync` -------------------------===//
#include "host/interrupt.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "commands/options.h"
#include "output/output.h"
#include "args/prefix_args.h"
#include "commands/project_change.h"
#include "args/registry_args.h"
#include "output/report.h"
#include "ireepkg/pkg/prefix/install.h"

#include <cstdio>

namespace ireepkg::cli {

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

const Command &syncCommand() {
  static const Command command{
      .name = "sync",
      .synopsis =
          "[--locked | --frozen] [--offline] [--bundle FILE] [--dry-run]",
      .summary = "make the project's prefix exactly the lockfile",
      .description =
          "Installs, upgrades and removes packages so that the project's "
          "prefix (<project>/.iree-plugins, or --prefix) holds exactly the "
          "packages of plugins.lock.json, in the lock's activation order, in "
          "one transaction. When plugins.json changed since the lock was "
          "written, the lock is brought up to date first.\n\n"
          "--locked fails instead when the lock is out of date (for CI); "
          "--frozen uses the lock as it is without checking it. --offline "
          "opens no connection and says which packages are missing from the "
          "download cache. --bundle installs from an offline bundle, "
          "verified exactly as from the registry.\n\n"
          "Every package's \"requires.iree\" is checked against the IREE in "
          "use (see `ireepkg help install`), whatever IREE the lock was "
          "resolved for; a package that excludes it is refused unless "
          "--ignore-iree-version.\n\n"
          "On a terminal, progress is shown while it runs (a line per "
          "download, one for all of them with speed and time left, one for "
          "the package being installed); at the end, and when piped only "
          "then, a summary (`Installed 2 packages in 12ms`). Ctrl-C stops it "
          "before anything is changed: it says so and exits with status "
          "130.\n\n"
          "--dry-run prints what would change (the lock, when plugins.json "
          "changed since it was written, and each package to install, change "
          "or remove) and changes nothing.",
      .options =
          {{"locked", 0, "", "fail if plugins.lock.json is out of date"},
           {"frozen", 0, "", "install the lockfile as it is, unchecked"},
           {"bundle", 0, "FILE", "take the packages from this offline bundle"},
           kOptOffline,
           kOptIreeVersion,
           kOptIgnoreIreeVersion,
           {"platform", 0, "OS-ARCH",
            "sync a prefix for this platform (default: the prefix's, else "
            "the host's)"},
           {"cpu-level", 0, "LEVEL",
            "write state/runtime.flags with the builds for this CPU level, "
            "as `install --cpu-level` does; kept by later commands, "
            "\"host\" clears it"},
           kOptProject,
           kPrefix,
           kLockTimeout,
           kDryRun,
           kQuiet,
           kJson},
      .examples = {"ireepkg sync", "ireepkg sync --locked",
                   "ireepkg sync --dry-run", "ireepkg sync --offline",
                   "ireepkg sync --bundle vendor.ireebundle"},
      .maxPositional = 0,
      .run = runSync,
  };
  return command;
}

} // namespace ireepkg::cli
