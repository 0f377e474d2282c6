//===- cmd_lock.cpp - `ireepkg lock` and `ireepkg update` -----------------===//
#include "output.h"
#include "registry_args.h"

#include "ireepkg/manifest_schema/json_document.h"

#include <cstdio>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);
void printChangeReport(const InstallReport &report, bool json, bool quiet);

namespace {

nlohmann::json lockReportJson(const workflow::LockResult &r,
                              const workflow::Project &project) {
  return {{"lockfile", project.lockPath},
          {"written", r.written},
          {"iree_version", r.ireeVersion ? nlohmann::json(r.ireeVersion->str())
                                         : nlohmann::json()},
          {"packages", r.lock.packages.size()},
          {"changes", lockChangesToJson(r.changes)}};
}

void printLockReport(const workflow::LockResult &r,
                     const workflow::Project &project) {
  printLockChanges(r.changes);
  if (r.written)
    std::printf("wrote %s (%zu package%s)\n", project.lockPath.c_str(),
                r.lock.packages.size(), r.lock.packages.size() == 1 ? "" : "s");
  else
    std::printf("%s is up to date (%zu package%s)\n", project.lockPath.c_str(),
                r.lock.packages.size(), r.lock.packages.size() == 1 ? "" : "s");
}

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

} // namespace

int runLock(const Command &, const ParsedArgs &args) {
  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
  auto &[project, env] = *ctx;
  bool json = args.flag("json"), quiet = args.flag("quiet");
  workflow::LockRequest request;
  request.upgradeAll = args.flag("upgrade");
  for (const std::string &n : args.all("upgrade-package"))
    request.upgrade.insert(n);
  request.check = args.flag("check");
  if (args.flag("exit-code") && !request.check) {
    printError("--exit-code goes with --check",
               "`ireepkg lock --check --exit-code` exits 1 when the lockfile "
               "would change");
    return kExitUsage;
  }
  CliReporter reporter(quiet || json);
  auto result = workflow::lockProject(project, request, env, reporter);
  reporter.clearProgress();
  if (!result)
    return printFailure(result.error(), json);
  if (json) {
    nlohmann::json j = lockReportJson(*result, project);
    j["ok"] = true;
    std::printf("%s\n", j.dump(2).c_str());
  } else if (!quiet) {
    printLockReport(*result, project);
  }
  return kExitOk;
}

int runUpdate(const Command &, const ParsedArgs &args) {
  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
  auto &[project, env] = *ctx;
  bool json = args.flag("json"), quiet = args.flag("quiet");
  workflow::LockRequest request;
  if (args.positional.empty())
    request.upgradeAll = true;
  for (const std::string &n : args.positional) {
    bool known = false;
    for (const ProjectPlugin &p : project.parsed.plugins)
      known |= p.name == n;
    if (!known && !inLock(project, n)) {
      printError("\"" + n + "\" is neither in plugins.json nor in the lock",
                 "see `ireepkg outdated`");
      return kExitUsage;
    }
    request.upgrade.insert(n);
  }
  CliReporter reporter(quiet || json);
  auto locked = workflow::lockProject(project, request, env, reporter);
  if (!locked) {
    reporter.clearProgress();
    return printFailure(locked.error(), json);
  }
  if (!json && !quiet)
    printLockReport(*locked, project);
  // Then make the project's prefix match the new lock.
  auto prefix = projectPrefix(args, project);
  if (!prefix)
    return setupFailure();
  workflow::SyncRequest sync;
  sync.prefix = *prefix;
  sync.frozen = true;
  sync.noIreeReported = !locked->ireeVersion;
  if (!lockOptions(args, sync.lock))
    return kExitUsage;
  auto synced = workflow::syncProject(project, sync, env, reporter);
  reporter.clearProgress();
  if (!synced)
    return printFailure(synced.error(), json);
  if (json) {
    nlohmann::json j = lockReportJson(*locked, project);
    j["ok"] = true;
    nlohmann::json changes = nlohmann::json::array();
    for (const auto &c : synced->install.changes)
      changes.push_back(
          {{"name", c.name},
           {"from", c.from.empty() ? nlohmann::json() : nlohmann::json(c.from)},
           {"to", c.to.empty() ? nlohmann::json() : nlohmann::json(c.to)}});
    j["prefix"] = synced->install.prefix;
    j["installed"] = changes;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    printChangeReport(synced->install, false, quiet);
  }
  return kExitOk;
}

} // namespace ireepkg::cli
