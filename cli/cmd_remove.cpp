//===- cmd_remove.cpp - `ireepkg remove` ---------------------------------===//
#include "output.h"

#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/project/project_file.h"

namespace ireepkg::cli {

void printChangeReport(const InstallReport &report, bool json, bool quiet);
int printFailure(const Error &e, bool json);
int printDryRun(const InstallReport &plan, bool json, bool quiet);

int runRemove(const Command &, const ParsedArgs &args) {
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  RemoveOptions options;
  if (!lockOptions(args, options.lock))
    return kExitUsage;
  options.cascade = args.flag("cascade");
  options.dryRun = args.flag("dry-run");
  bool json = args.flag("json"), quiet = args.flag("quiet");
  CliReporter reporter(quiet || json);
  // The project's own prefix: what plugins.json asks for comes back with the
  // next `sync`; say so (rm is what changes the project).
  if (prefix->reason == "project" && !prefix->projectFile.empty())
    if (auto project = loadProject(prefix->projectFile))
      for (const std::string &name : args.positional)
        for (const ProjectPlugin &p : project->parsed.plugins)
          if (p.name == name)
            reporter.warning(
                Diagnostic{Severity::Warning, Location::inFile(project->file),
                           "\"" + name +
                               "\" is in plugins.json: the next `ireepkg sync` "
                               "installs it again",
                           "to take it out of the project, run `ireepkg rm " +
                               name + "` (which locks and syncs)"});
  auto report =
      removePackages(prefix->path, args.positional, options, reporter);
  if (!report)
    return printFailure(report.error(), json);
  if (options.dryRun)
    return printDryRun(*report, json, quiet);
  printChangeReport(*report, json, quiet);
  return kExitOk;
}

} // namespace ireepkg::cli
