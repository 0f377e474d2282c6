//===- cmd_remove.cpp - `ireepkg remove` ---------------------------------===//
#include "output.h"

#include "ireepkg/pkg/prefix.h"

namespace ireepkg::cli {

void printChangeReport(const InstallReport &report, bool json, bool quiet);
int printFailure(const Error &e, bool json);

int runRemove(const Command &, const ParsedArgs &args) {
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  RemoveOptions options;
  if (!lockOptions(args, options.lock))
    return kExitUsage;
  options.cascade = args.flag("cascade");
  bool json = args.flag("json"), quiet = args.flag("quiet");
  CliReporter reporter(quiet || json);
  auto report = removePackages(prefix->path, args.positional, options, reporter);
  if (!report)
    return printFailure(report.error(), json);
  printChangeReport(*report, json, quiet);
  return kExitOk;
}

} // namespace ireepkg::cli
