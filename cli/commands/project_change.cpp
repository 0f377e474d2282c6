//===- cli/commands/project_change.cpp - add/rm: edit, lock, sync ---------===//
#include "commands/project_change.h"

#include "args/global_options.h"
#include "host/interrupt.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/prefix/install.h"

#include <cstdio>

namespace ireepkg::cli {

std::optional<FollowUp> followUpFrom(const ParsedArgs &args) {
  if (args.flag("no-sync") && args.flag("frozen")) {
    printError("--no-sync and --frozen cannot be used together",
               "--no-sync updates the lock and leaves the prefix; --frozen "
               "leaves both");
    return std::nullopt;
  }
  if (args.flag("frozen"))
    return FollowUp::Frozen;
  if (args.flag("no-sync"))
    return FollowUp::NoSync;
  return FollowUp::Sync;
}

std::optional<workflow::Project> projectWithText(const workflow::Project &p,
                                                 const std::string &text,
                                                 bool json) {
  auto doc = JsonDocument::parse(text, p.file);
  if (!doc) {
    printFailure(doc.error(), json);
    return std::nullopt;
  }
  DiagnosticList diags;
  ParseOptions po;
  po.strict = true;
  workflow::Project edited = p;
  edited.parsed = parseProjectFile(*doc, po, diags);
  if (diags.hasErrors()) {
    printFailure(makeError(ErrorCode::Invalid, diags).error(), json);
    return std::nullopt;
  }
  return edited;
}

nlohmann::json installChangesJson(const InstallReport &report) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto &c : report.changes)
    changes.push_back(
        {{"name", c.name},
         {"from", c.from.empty() ? nlohmann::json() : nlohmann::json(c.from)},
         {"to", c.to.empty() ? nlohmann::json() : nlohmann::json(c.to)}});
  return changes;
}

void printChangeLines(const InstallReport &report, bool planned) {
  auto verb = [&](Style style, const char *done, const char *plan) {
    return paint(style, planned ? plan : done);
  };
  for (const auto &c : report.changes) {
    if (c.from.empty())
      std::printf("%s %s %s\n",
                  verb(Style::Added, "installed", "would install").c_str(),
                  c.name.c_str(), c.to.c_str());
    else if (c.to.empty())
      std::printf("%s %s %s\n",
                  verb(Style::Removed, "removed", "would remove").c_str(),
                  c.name.c_str(), c.from.c_str());
    else if (c.from == c.to)
      std::printf(
          "%s %s %s\n",
          verb(Style::Changed, "reinstalled", "would reinstall").c_str(),
          c.name.c_str(), c.to.c_str());
    else
      std::printf("%s %s %s -> %s\n",
                  verb(Style::Changed, "changed", "would change").c_str(),
                  c.name.c_str(), c.from.c_str(), c.to.c_str());
  }
}

void printSyncPlan(const InstallReport &plan) {
  printChangeLines(plan, true);
  if (plan.changes.empty())
    std::printf("%s would not change (%zu package%s installed)\n",
                plan.prefix.c_str(), plan.unchanged.size(),
                plan.unchanged.size() == 1 ? "" : "s");
  else
    std::printf("prefix: %s\n", plan.prefix.c_str());
}

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
                     const workflow::Project &project, bool dryRun) {
  printLockChanges(r.changes);
  size_t n = r.lock.packages.size();
  if (r.written)
    std::printf("%s %s (%zu package%s)\n", dryRun ? "would write" : "wrote",
                project.lockPath.c_str(), n, n == 1 ? "" : "s");
  else
    std::printf("%s is up to date (%zu package%s)\n", project.lockPath.c_str(),
                n, n == 1 ? "" : "s");
}

void printDryRunEnd(bool json) {
  if (!json)
    std::printf("dry run: nothing was changed\n");
}

int applyProjectEdit(const ParsedArgs &args, const ProjectEdit &edit,
                     FollowUp followUp, const workflow::Environment &env) {
  bool json = args.flag("json"), quiet = globalOptions().quiet;
  bool dryRun = args.flag("dry-run");
  const workflow::Project &before = edit.project;
  bool changed = edit.after != edit.before;
  nlohmann::json report = edit.report;
  report["ok"] = true;
  report["project"] = edit.path;
  report["changed"] = changed;
  if (dryRun)
    report["dry_run"] = true;
  auto printEdit = [&] {
    if (json || quiet)
      return;
    for (const std::string &l : edit.lines)
      std::printf("%s\n", l.c_str());
    if (changed)
      std::printf("%s %s\n", dryRun ? "would write" : "wrote",
                  edit.path.c_str());
    else
      std::printf("%s already says this; nothing to change\n",
                  edit.path.c_str());
  };
  auto finish = [&] {
    if (json)
      std::printf("%s\n", report.dump(2).c_str());
    if (dryRun && !quiet)
      printDryRunEnd(json);
    return int(kExitOk);
  };

  if (followUp == FollowUp::Frozen) {
    if (changed && !dryRun)
      if (Status s = writeProjectFile(edit.path, edit.after); !s)
        return printFailure(s.error(), json);
    printEdit();
    return finish();
  }

  // The lock of the edited project, before anything is written: an edit
  // that cannot be locked changes nothing.
  auto project = projectWithText(before, edit.after, json);
  if (!project)
    return kExitFailure;
  CliReporter reporter(quiet || json);
  catchInterrupts();
  workflow::LockRequest lockRequest;
  lockRequest.dryRun = true;
  auto locked = workflow::lockProject(*project, lockRequest, env, reporter);
  reporter.clearProgress();
  if (!locked &&
      (locked.error().code == ErrorCode::Interrupted || interruptRequested()))
    return printInterrupted(locked.error(), project->dir, json);
  if (!locked)
    return printFailure(locked.error(), json);

  std::optional<std::string> prefix;
  std::optional<Expected<workflow::SyncResult>> synced;
  if (followUp == FollowUp::Sync) {
    prefix = projectPrefix(args, *project);
    if (!prefix)
      return setupFailure();
  }
  if (!dryRun) {
    if (changed)
      if (Status s = writeProjectFile(edit.path, edit.after); !s)
        return printFailure(s.error(), json);
    if (locked->written)
      if (Status s = fsutil::writeFileAtomic(project->lockPath, locked->text);
          !s)
        return printFailure(s.error(), json);
  }
  printEdit();
  report["lock"] = lockReportJson(*locked, *project);
  if (!json && !quiet)
    printLockReport(*locked, *project, dryRun);

  if (followUp == FollowUp::Sync) {
    workflow::SyncRequest sync;
    sync.prefix = *prefix;
    sync.dryRun = dryRun;
    sync.plannedLock = locked->lock;
    sync.noIreeReported = !locked->ireeVersion;
    if (!lockOptions(args, sync.lock))
      return kExitUsage;
    auto result = workflow::syncProject(*project, sync, env, reporter);
    reporter.clearProgress();
    if (!result &&
        (result.error().code == ErrorCode::Interrupted || interruptRequested()))
      return printInterrupted(result.error(), sync.prefix, json);
    if (!result) {
      Error e = result.error();
      if (!dryRun)
        e.hint += std::string(e.hint.empty() ? "" : "; ") +
                  "plugins.json and the lock are updated, the prefix is as "
                  "it was: `ireepkg sync` tries again";
      return printFailure(e, json);
    }
    report["sync"] = {{"prefix", result->install.prefix},
                      {"changes", installChangesJson(result->install)},
                      {"unchanged", result->install.unchanged},
                      {"options_changed", result->install.settingsChanged}};
    if (!json && !quiet) {
      if (dryRun)
        printSyncPlan(result->install);
      else if (result->install.changes.empty() && !result->install.reordered) {
        std::printf("%s is up to date with the lock\n",
                    result->install.prefix.c_str());
        printSettingsChanged(result->install);
      } else
        printChangeReport(result->install, false, false);
    }
    if (!dryRun)
      reporter.printSummary(result->install);
  }
  return finish();
}

} // namespace ireepkg::cli
