//===- cmd_rm.cpp - `ireepkg rm` ------------------------------------------===//
//
// Removes plugins from the nearest plugins.json; then locks and syncs as
// project_change.h says (the prefix loses what nothing else needs).
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "project_change.h"
#include "registry_args.h"
#include "report.h"
#include "ireepkg/pkg/project/project_file.h"
#include "ireepkg/manifest_schema/names.h"

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

} // namespace ireepkg::cli
