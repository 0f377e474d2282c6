//===- cmd_rm.cpp - `ireepkg rm` ------------------------------------------===//
//
// Removes plugins from the nearest plugins.json. Nothing is uninstalled
// here: the prefix follows the project at the next `sync`.
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "ireepkg/pkg/project_file.h"
#include "ireepkg/manifest_schema/names.h"

#include "ireepkg/pkg/project.h"

#include <algorithm>
#include <cstdio>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);

int runRm(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
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
  if (Status s = writeProjectFile(file->path, text); !s)
    return printFailure(s.error(), json);
  if (json) {
    std::printf("%s\n",
                nlohmann::json(
                    {{"ok", true}, {"project", file->path}, {"removed", names}})
                    .dump(2)
                    .c_str());
    return kExitOk;
  }
  for (const std::string &name : names)
    std::printf("removed %s\n", name.c_str());
  std::printf("wrote %s\n", file->path.c_str());
  return kExitOk;
}

} // namespace ireepkg::cli
