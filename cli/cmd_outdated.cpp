//===- cmd_outdated.cpp - `ireepkg outdated` ------------------------------===//
#include "output.h"
#include "registry_args.h"

#include <algorithm>
#include <cstdio>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);

int runOutdated(const Command &, const ParsedArgs &args) {
  auto ctx = projectContext(args);
  if (!ctx)
    return kExitUsage;
  auto &[project, env] = *ctx;
  bool json = args.flag("json");
  CliReporter reporter(json);
  auto entries = workflow::outdated(project, env, reporter);
  reporter.clearProgress();
  if (!entries)
    return printFailure(entries.error(), json);
  bool all = args.flag("all");
  std::vector<workflow::OutdatedEntry> shown;
  for (const auto &e : *entries)
    if (all || e.locked != e.wanted || e.wanted != e.latest)
      shown.push_back(e);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto &e : shown)
      list.push_back({{"name", e.name},
                      {"locked", e.locked.empty() ? nlohmann::json()
                                                  : nlohmann::json(e.locked)},
                      {"wanted", e.wanted},
                      {"latest", e.latest},
                      {"registry", e.registry}});
    std::printf(
        "%s\n",
        nlohmann::json({{"ok", true}, {"packages", list}}).dump(2).c_str());
    return kExitOk;
  }
  if (shown.empty()) {
    std::printf("every package is at the newest version plugins.json "
                "allows, and that is the newest published\n");
    return kExitOk;
  }
  size_t w = 7;
  for (const auto &e : shown)
    w = std::max(w, e.name.size());
  std::printf("%-*s  %-12s  %-12s  %-12s  %s\n", int(w), "package", "locked",
              "wanted", "latest", "registry");
  for (const auto &e : shown)
    std::printf("%-*s  %-12s  %-12s  %-12s  %s\n", int(w), e.name.c_str(),
                e.locked.empty() ? "-" : e.locked.c_str(), e.wanted.c_str(),
                e.latest.c_str(), e.registry.c_str());
  return kExitOk;
}

} // namespace ireepkg::cli
