//===- cli/commands/cmd_rm.cpp - `ireepkg rm` -----------------------------===//
//
// Removes plugins from the nearest plugins.json; then locks and syncs as
// project_change.h says (the prefix loses what nothing else needs).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/pkg/project/project_file.h"
#include "commands/options.h"
#include "output/output.h"
#include "commands/project_change.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/pkg/project/project.h"

#include <algorithm>
#include <cstdio>

namespace ireepkg::cli {

int runRm(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto followUp = followUpFrom(args);
  if (!followUp)
    return kExitUsage;
  std::vector<std::string> names;
  for (const std::string &n : args.positional) {
    if (!isValidPackageName(n)) {
      printError("\"" + n + "\" is not a valid package name", kPackageNameRule);
      return kExitUsage;
    }
    if (std::find(names.begin(), names.end(), n) == names.end())
      names.push_back(n);
  }

  auto file = readNearestProject(args.value("project"));
  if (!file)
    return printFailure(file.error(), json);
  verboseLine(1, "project file: " + file->path);
  // Every name must be there; otherwise nothing is written.
  std::string text = file->text;
  for (const std::string &name : names) {
    auto edited = project::removePlugin(text, name, file->path);
    if (!edited) {
      // Say it about the file as it is, not as the earlier names left it.
      auto asIs = project::removePlugin(file->text, name, file->path);
      return printFailure(asIs ? edited.error() : asIs.error(), json);
    }
    text = std::move(*edited);
  }
  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
  auto &[project, env] = *ctx;
  std::vector<std::string> lines;
  for (const std::string &name : names)
    lines.push_back(args.flag("dry-run")
                        ? "would remove " + name + " from plugins.json"
                        : "removed " + name);
  ProjectEdit edit{std::move(project), file->path,          file->text, text,
                   std::move(lines),    {{"removed", names}}};
  return applyProjectEdit(args, edit, *followUp, env);
}

const Command &rmCommand() {
  static const Command command{
      .name = "rm",
      .synopsis = "<name>... [--no-sync | --frozen] [--dry-run] [--json]",
      .summary =
          "remove plugins from the project (plugins.json), lock and sync",
      .description =
          "Removes each named plugin, with its options, from the plugins.json "
          "of the current directory or the nearest one above it. Every other "
          "byte of the file stays as it was. If a name is not listed, "
          "nothing changes. Then, as `uv remove` does, the project is "
          "locked and its prefix synced: what no other plugin needs is "
          "uninstalled. --no-sync stops after the lock and leaves the "
          "prefix; --frozen only edits plugins.json. --dry-run prints what "
          "would change and changes nothing.\n\n"
          "`ireepkg remove` (or `uninstall`) is the other way: it removes "
          "installed packages from a prefix directly and leaves plugins.json "
          "alone.",
      .options = {kNoSync, kFrozenEdit, kDryRun, kOptIreeVersion,
                  kOptIgnoreIreeVersion, kOptOffline, kOptProject, kPrefix,
                  kLockTimeout, kJson},
      .examples = {"ireepkg rm simple-mul", "ireepkg rm simple-mul --no-sync"},
      .minPositional = 1,
      .run = runRm,
  };
  return command;
}

} // namespace ireepkg::cli
