//===- cli/commands/cmd_remove.cpp - `ireepkg remove` ---------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/project/project_file.h"

namespace ireepkg::cli {

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

const Command &removeCommand() {
  static const Command command{
      .name = "remove",
      .synopsis = "<name>... [--cascade] [--prefix DIR] [--dry-run]",
      .summary = "remove installed packages, in one transaction",
      .description =
          "Removes the named packages from the prefix. A package that another "
          "installed package depends on is not removed (the error names the "
          "dependent) unless --cascade, which also removes the dependents.\n\n"
          "`remove` changes a prefix and leaves plugins.json alone; in a "
          "project, `ireepkg rm` removes a plugin from plugins.json instead "
          "(and then locks and syncs, which removes it from the project's "
          "prefix). Removing from a project's prefix a package plugins.json "
          "asks for warns that the next `sync` installs it again. "
          "`ireepkg uninstall` is another name for `remove`. --dry-run "
          "prints what would be removed and changes nothing.",
      .options = {{"cascade", 0, "",
                   "also remove the packages that depend on them"},
                  kPrefix,
                  kLockTimeout,
                  kDryRun,
                  kQuiet,
                  kJson},
      .examples = {"ireepkg remove simple-mul",
                   "ireepkg remove --cascade simple-mul",
                   "ireepkg remove --dry-run --cascade simple-mul"},
      .minPositional = 1,
      .run = runRemove,
  };
  return command;
}

} // namespace ireepkg::cli
