//===- cli/commands/cmd_search.cpp - `ireepkg search` ---------------------===//
#include "ireepkg/base/environment.h"
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/pkg/project/project_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace ireepkg::cli {

int runSearch(const Command &, const ParsedArgs &args) {
  auto env = environmentFrom(args);
  if (!env)
    return setupFailure();
  std::optional<workflow::Project> project;
  if (!args.value("registry") && !environmentOverride("IREEPKG_REGISTRY")) {
    std::string file;
    if (auto given = args.value("project")) {
      auto resolved = projectFileArgument(*given);
      if (!resolved) {
        printError(resolved.error());
        return resolved.error().code == ErrorCode::Usage ? kExitUsage
                                                         : kExitFailure;
      }
      file = *resolved;
    } else {
      file = findProjectFile(std::filesystem::current_path().string());
    }
    if (!file.empty()) {
      auto p = workflow::loadProject(file);
      if (!p) {
        printError(p.error());
        return kExitFailure;
      }
      project = std::move(*p);
    }
  }
  auto registries = registriesFrom(args, project ? &*project : nullptr);
  bool json = args.flag("json");
  CliReporter reporter(json);
  auto hits = workflow::search(registries, args.positional[0], *env, reporter);
  reporter.clearProgress();
  if (!hits)
    return printFailure(hits.error(), json);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto &h : *hits)
      list.push_back({{"name", h.name},
                      {"latest", h.latest},
                      {"summary", h.summary},
                      {"registry", h.registry},
                      {"yanked", h.yanked}});
    std::printf(
        "%s\n",
        nlohmann::json({{"ok", true}, {"packages", list}}).dump(2).c_str());
    return kExitOk;
  }
  if (hits->empty()) {
    std::printf("no package matches \"%s\"\n", args.positional[0].c_str());
    return kExitFailure;
  }
  size_t w = 0, v = 0;
  for (const auto &h : *hits) {
    w = std::max(w, h.name.size());
    v = std::max(v, h.latest.size());
  }
  for (const auto &h : *hits)
    std::printf("%-*s  %-*s  %s%s\n", int(w), h.name.c_str(), int(v),
                h.latest.c_str(), h.yanked ? "(yanked) " : "",
                h.summary.c_str());
  return kExitOk;
}

const Command &searchCommand() {
  static const Command command{
      .name = "search",
      .synopsis = "<text> [--registry URL] [--json]",
      .summary = "find packages by name in registries",
      .description =
          "Lists the packages whose name contains <text> (ignoring case), "
          "exact and prefix matches first, with the newest version and its "
          "summary. Searches --registry (else $IREEPKG_REGISTRY, else the "
          "project's registries); snapshots are verified as for install.",
      .options = {kOptRegistry, kOptRegistryKey, kOptOffline, kOptProject,
                  kJson},
      .examples = {"ireepkg search mul", "ireepkg search fft --json"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runSearch,
  };
  return command;
}

} // namespace ireepkg::cli
