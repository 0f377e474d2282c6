//===- cli/commands/project_change.h - What add and rm share ----*- C++ -*-===//
//
// `ireepkg add` and `ireepkg rm` change plugins.json and then, as `uv add`
// does, lock and sync: by default the lockfile and the project's prefix
// follow the edit; --no-sync stops after the lock, --frozen after
// plugins.json. The new lock is computed before anything is written, so an
// edit that cannot be locked leaves every file as it was.
//
// Also what the commands with --dry-run share: printing a planned change
// of a prefix (workflow::SyncRequest::dryRun) and of a lockfile.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_PROJECT_CHANGE_H
#define IREEPKG_CLI_PROJECT_CHANGE_H

#include "commands/command.h"
#include "ireepkg/workflow/workflow.h"
#include "ireepkg/pkg/prefix/install.h"

#include <optional>
#include <string>
#include <vector>

namespace ireepkg::cli {

/// How far `add` and `rm` carry a change of plugins.json.
enum class FollowUp {
  Sync,   ///< edit plugins.json, lock, sync the prefix (the default)
  NoSync, ///< --no-sync: edit plugins.json and lock
  Frozen, ///< --frozen: edit plugins.json only
};

/// --no-sync / --frozen; prints a usage error and returns nullopt when both
/// are given.
std::optional<FollowUp> followUpFrom(const ParsedArgs &args);

/// An edit of plugins.json made in memory by `add` or `rm`.
struct ProjectEdit {
  workflow::Project project; ///< as it is on disk
  std::string path;          ///< the file to write (a symlink's target)
  std::string before;        ///< plugins.json's bytes now
  std::string after;         ///< plugins.json's bytes after the edit
  /// One per plugin: "added x: version ^1.2.0" ("would add ..." in a dry
  /// run).
  std::vector<std::string> lines;
  nlohmann::json report; ///< the command's own fields of --json
};

/// `project` with plugins.json's bytes replaced by `text`, parsed as
/// loadProject parses it; prints the error and returns nullopt when the
/// text is not a valid project file.
std::optional<workflow::Project>
projectWithText(const workflow::Project &p, const std::string &text, bool json);

/// Carries out `edit` as far as `followUp` says (with --dry-run: says what
/// would change and changes nothing). Returns the exit status.
int applyProjectEdit(const ParsedArgs &args, const ProjectEdit &edit,
                     FollowUp followUp, const workflow::Environment &env);

/// The changes of a prefix as JSON objects {name, from, to}.
nlohmann::json installChangesJson(const InstallReport &report);

/// One line per changed package: "installed fft-kit 1.0.0", "removed ...",
/// "changed x 1.0.0 -> 1.1.0", "reinstalled ..."; with `planned`, "would
/// install ..." and so on.
void printChangeLines(const InstallReport &report, bool planned);

/// A planned change of a prefix, one line per package ("would install
/// fft-kit 1.0.0", "would remove ..."), or that nothing would change.
void printSyncPlan(const InstallReport &plan);

/// The report of a lock (`lock`, `update`, `add`, `rm`): its changes, then
/// "wrote <lockfile> (N packages)", or "would write" with `dryRun`, or that
/// it is up to date.
void printLockReport(const workflow::LockResult &r,
                     const workflow::Project &project, bool dryRun = false);
nlohmann::json lockReportJson(const workflow::LockResult &r,
                              const workflow::Project &project);

/// The last line of every dry run (none with --json, whose report has
/// "dry_run": true).
void printDryRunEnd(bool json);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_PROJECT_CHANGE_H
