//===- cli/commands/cmd_lock.cpp - `ireepkg lock` and `ireepkg update` ----===//
#include "commands/options.h"
#include "output/output.h"
#include "commands/project_change.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/prefix/install.h"

#include <cstdio>
#include <functional>

namespace ireepkg::cli {

namespace {

/// Whether the current lock has a package `name` (update may name a
/// dependency).
bool inLock(const workflow::Project &project, const std::string &name) {
  auto doc = JsonDocument::load(project.lockPath);
  if (!doc)
    return false;
  DiagnosticList diags;
  Lockfile lock = parseLockfile(*doc, ParseOptions{}, diags);
  for (const LockedPackage &p : lock.packages)
    if (p.name == name)
      return true;
  return false;
}

/// What `lock` and `update` share: the project, the environment, the flags
/// and the lock itself. `request` is filled by each command from its own
/// arguments; nullopt when something failed and was printed (`status`).
struct Locked {
  ProjectContext ctx;
  bool json, quiet;
  workflow::LockResult result;
};

std::optional<Locked>
lockFrom(const ParsedArgs &args, int &status,
         const std::function<std::optional<workflow::LockRequest>(
             const workflow::Project &)> &request) {
  auto ctx = projectContext(args);
  if (!ctx) {
    status = setupFailure();
    return std::nullopt;
  }
  bool json = args.flag("json"), quiet = args.flag("quiet");
  auto req = request(ctx->project);
  if (!req) {
    status = kExitUsage;
    return std::nullopt;
  }
  CliReporter reporter(quiet || json);
  auto result = workflow::lockProject(ctx->project, *req, ctx->env, reporter);
  reporter.clearProgress();
  if (!result) {
    status = printFailure(result.error(), json);
    return std::nullopt;
  }
  return Locked{std::move(*ctx), json, quiet, std::move(*result)};
}

} // namespace

int runLock(const Command &, const ParsedArgs &args) {
  int status = kExitOk;
  auto locked = lockFrom(args, status, [&](const workflow::Project &) {
    std::optional<workflow::LockRequest> request(std::in_place);
    request->upgradeAll = args.flag("upgrade");
    for (const std::string &n : args.all("upgrade-package"))
      request->upgrade.insert(n);
    request->check = args.flag("check");
    if (args.flag("exit-code") && !request->check) {
      printError("--exit-code goes with --check",
                 "`ireepkg lock --check --exit-code` exits 1 when the "
                 "lockfile would change");
      request.reset();
    }
    return request;
  });
  if (!locked)
    return status;
  if (locked->json) {
    nlohmann::json j = lockReportJson(locked->result, locked->ctx.project);
    j["ok"] = true;
    std::printf("%s\n", j.dump(2).c_str());
  } else if (!locked->quiet) {
    printLockReport(locked->result, locked->ctx.project);
  }
  return kExitOk;
}

int runUpdate(const Command &, const ParsedArgs &args) {
  bool dryRun = args.flag("dry-run");
  int status = kExitOk;
  auto locked = lockFrom(args, status, [&](const workflow::Project &project) {
    std::optional<workflow::LockRequest> request(std::in_place);
    request->dryRun = true; // written below, with the prefix
    request->upgradeAll = args.positional.empty();
    for (const std::string &n : args.positional) {
      bool known = false;
      for (const ProjectPlugin &p : project.parsed.plugins)
        known |= p.name == n;
      if (!known && !inLock(project, n)) {
        printError("\"" + n + "\" is neither in plugins.json nor in the lock",
                   "see `ireepkg outdated`");
        return std::optional<workflow::LockRequest>();
      }
      request->upgrade.insert(n);
    }
    return request;
  });
  if (!locked)
    return status;
  auto &[project, env] = locked->ctx;
  bool json = locked->json, quiet = locked->quiet;
  if (!dryRun && locked->result.written)
    if (Status s =
            fsutil::writeFileAtomic(project.lockPath, locked->result.text);
        !s)
      return printFailure(s.error(), json);
  if (!json && !quiet)
    printLockReport(locked->result, project, dryRun);
  // Then make the project's prefix match the new lock.
  auto prefix = projectPrefix(args, project);
  if (!prefix)
    return setupFailure();
  workflow::SyncRequest sync;
  sync.prefix = *prefix;
  sync.frozen = true;
  sync.dryRun = dryRun;
  sync.plannedLock = locked->result.lock;
  sync.noIreeReported = !locked->result.ireeVersion;
  if (!lockOptions(args, sync.lock))
    return kExitUsage;
  CliReporter reporter(quiet || json);
  auto synced = workflow::syncProject(project, sync, env, reporter);
  reporter.clearProgress();
  if (!synced)
    return printFailure(synced.error(), json);
  if (json) {
    nlohmann::json j = lockReportJson(locked->result, project);
    j["ok"] = true;
    j["prefix"] = synced->install.prefix;
    j["installed"] = installChangesJson(synced->install);
    if (dryRun)
      j["dry_run"] = true;
    std::printf("%s\n", j.dump(2).c_str());
  } else if (dryRun) {
    if (!quiet) {
      printSyncPlan(synced->install);
      printDryRunEnd(false);
    }
  } else {
    printChangeReport(synced->install, false, quiet);
  }
  return kExitOk;
}

const Command &lockCommand() {
  static const Command command{
      .name = "lock",
      .synopsis =
          "[--upgrade] [--upgrade-package NAME]... [--check [--exit-code]]",
      .summary = "resolve plugins.json into plugins.lock.json",
      .description =
          "Resolves the project's plugins and their dependencies for every "
          "platform plugins.json lists (a lock for linux-aarch64 can be made "
          "on any machine) and the IREE in use (see `ireepkg help install`; "
          "or --iree-version), keeping the locked version of every package "
          "that still fits; the lockfile records that IREE version. Option "
          "values in plugins.json are checked against each plugin's option "
          "schema. The lockfile is written only when "
          "its bytes change; it is deterministic (sorted, no timestamps).\n\n"
          "When no solution exists, the error explains why, as a chain of "
          "reasons.",
      .options =
          {{"upgrade", 0, "", "ignore every locked version"},
           {"upgrade-package", 0, "NAME", "ignore the locked version of NAME",
            true},
           {"check", 0, "",
            "write nothing; exit with status 1 if the lockfile is missing or "
            "would change, 0 if it is up to date"},
           {"exit-code", 0, "",
            "with --check: the same (--check always exits 1 when there is "
            "something to lock, as `git diff --exit-code`); accepted for "
            "symmetry with `outdated --exit-code`"},
           kOptIreeVersion,
           kOptOffline,
           kOptProject,
           kQuiet,
           kJson},
      .examples = {"ireepkg lock", "ireepkg lock --upgrade-package simple-mul",
                   "ireepkg lock --check"},
      .maxPositional = 0,
      .run = runLock,
  };
  return command;
}

const Command &updateCommand() {
  static const Command command{
      .name = "update",
      .synopsis = "[<name>...] [--dry-run]",
      .summary =
          "move locked packages to the newest versions allowed, and sync",
      .description =
          "Re-resolves the project ignoring the locked versions of the "
          "named packages (of every package when none is named), writes "
          "plugins.lock.json, and syncs the project's prefix to it. "
          "--dry-run prints what would change and changes nothing.",
      .options = {kOptIreeVersion, kOptOffline, kOptProject, kPrefix,
                  kLockTimeout, kDryRun, kQuiet, kJson},
      .examples = {"ireepkg update", "ireepkg update simple-mul",
                   "ireepkg update --dry-run"},
      .run = runUpdate,
  };
  return command;
}

} // namespace ireepkg::cli
