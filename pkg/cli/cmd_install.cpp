//===- cmd_install.cpp - `ireepkg install` -------------------------------===//
#include "output.h"

#include "ireepkg/prefix.h"

#include <cstdio>

namespace ireepkg::cli {

/// Prints an install/remove report (shared with cmd_remove.cpp).
void printChangeReport(const InstallReport &report, bool json, bool quiet) {
  if (json) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto &c : report.changes)
      changes.push_back({{"name", c.name},
                         {"from", c.from.empty() ? nlohmann::json() : nlohmann::json(c.from)},
                         {"to", c.to.empty() ? nlohmann::json() : nlohmann::json(c.to)}});
    nlohmann::json out = {{"ok", true},
                          {"prefix", report.prefix},
                          {"changes", changes},
                          {"reordered", report.reordered},
                          {"unchanged", report.unchanged}};
    if (!report.pipelineCheck.pipelines.empty())
      out["pipeline_check"] = toJson(report.pipelineCheck);
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  if (quiet)
    return;
  for (const auto &c : report.changes) {
    if (c.from.empty())
      std::printf("installed %s %s\n", c.name.c_str(), c.to.c_str());
    else if (c.to.empty())
      std::printf("removed %s %s\n", c.name.c_str(), c.from.c_str());
    else if (c.from == c.to)
      std::printf("reinstalled %s %s\n", c.name.c_str(), c.to.c_str());
    else
      std::printf("changed %s %s -> %s\n", c.name.c_str(), c.from.c_str(),
                  c.to.c_str());
  }
  for (const std::string &u : report.unchanged)
    std::printf("%s is already installed\n", u.c_str());
  if (report.reordered)
    std::printf("activation order updated from plugins.json\n");
  if (report.changes.empty() && report.unchanged.empty())
    std::printf("nothing to do\n");
  else if (!report.changes.empty())
    std::printf("prefix: %s\n", report.prefix.c_str());
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

int runInstall(const Command &, const ParsedArgs &args) {
  auto prefix = choosePrefix(args);
  if (!prefix)
    return kExitUsage;
  InstallOptions options;
  if (!lockOptions(args, options.lock))
    return kExitUsage;
  if (auto p = args.value("platform")) {
    options.platform = Platform::parse(*p);
    if (!options.platform) {
      printError("'" + *p + "' is not a platform" + didYouMean(*p, platformNames()),
                 "platforms are <os>-<arch>, e.g. linux-x86_64");
      return kExitUsage;
    }
  }
  options.useCache = !args.flag("no-cache");
  // In a project, plugins.json's order is the activation order.
  if (!prefix->projectFile.empty()) {
    auto doc = JsonDocument::load(prefix->projectFile);
    if (!doc) {
      printError(doc.error());
      return kExitFailure;
    }
    DiagnosticList diags;
    ProjectFile project = parseProjectFile(*doc, ParseOptions{}, diags);
    if (diags.hasErrors()) {
      printError(makeError(ErrorCode::Invalid, diags).error());
      return kExitFailure;
    }
    ProjectSettings settings;
    for (const ProjectPlugin &p : project.plugins) {
      options.preferredOrder.push_back(p.name);
      if (!p.options.empty())
        settings.values[p.name] = p.options;
    }
    settings.choose = project.choose;
    options.project = settings;
  }
  bool json = args.flag("json"), quiet = args.flag("quiet");
  CliReporter reporter(quiet || json);
  auto report = installArchives(prefix->path, args.positional, options, reporter);
  reporter.clearProgress();
  if (!report)
    return printFailure(report.error(), json);
  printChangeReport(*report, json, quiet);
  return kExitOk;
}

} // namespace ireepkg::cli
