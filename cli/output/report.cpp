//===- cli/output/report.cpp - How commands end ---------------------------===//
#include "output/report.h"

#include "host/interrupt.h"
#include "output/output.h"
#include "commands/project_change.h"

#include <cstdio>

namespace ireepkg::cli {

void printSettingsChanged(const InstallReport &report) {
  if (report.settingsChanged)
    std::printf("option values and hook choices updated from plugins.json\n");
}

void printChangeReport(const InstallReport &report, bool json, bool quiet) {
  if (json) {
    nlohmann::json out = {{"ok", true},
                          {"prefix", report.prefix},
                          {"changes", installChangesJson(report)},
                          {"reordered", report.reordered},
                          {"options_changed", report.settingsChanged},
                          {"unchanged", report.unchanged}};
    if (!report.pipelineCheck.pipelines.empty() ||
        !report.pipelineCheck.plugins.empty())
      out["pipeline_check"] = toJson(report.pipelineCheck);
    if (!report.shadowedImports.empty())
      out["shadowed_imports"] = shadowedImportsToJson(report.shadowedImports);
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  if (quiet)
    return;
  printChangeLines(report, false);
  for (const std::string &u : report.unchanged)
    std::printf("%s is already installed\n", u.c_str());
  if (report.reordered)
    std::printf("activation order updated from plugins.json\n");
  printSettingsChanged(report);
  if (report.changes.empty() && report.unchanged.empty())
    std::printf("nothing to do\n");
  else if (!report.changes.empty())
    std::printf("prefix: %s\n", report.prefix.c_str());
  std::fputs(shadowedImportsText(report.shadowedImports).c_str(), stdout);
}

int printDryRun(const InstallReport &plan, bool json, bool quiet) {
  if (json) {
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"dry_run", true},
                                        {"prefix", plan.prefix},
                                        {"changes", installChangesJson(plan)},
                                        {"unchanged", plan.unchanged}})
                            .dump(2)
                            .c_str());
  } else if (!quiet) {
    printSyncPlan(plan);
    printDryRunEnd(false);
  }
  return kExitOk;
}

int printInterrupted(const Error &e, const std::string &prefix, bool json) {
  if (json)
    std::printf("%s\n",
                nlohmann::json({{"ok", false}, {"error", errorToJson(e)}})
                    .dump(2)
                    .c_str());
  return reportInterrupted(prefix);
}

int printFailure(const Error &e, bool json) {
  if (json)
    std::printf("%s\n",
                nlohmann::json({{"ok", false}, {"error", errorToJson(e)}})
                    .dump(2)
                    .c_str());
  printError(e);
  return kExitFailure;
}

} // namespace ireepkg::cli
