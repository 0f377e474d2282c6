//===- cmd_lock.cpp - `ireepkg lock` and `ireepkg update` -----------------===//
#include "output.h"
#include "project_change.h"
#include "registry_args.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/prefix/install.h"

#include <cstdio>
#include <functional>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);
void printChangeReport(const InstallReport &report, bool json, bool quiet);

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

} // namespace ireepkg::cli
