//===- cli/commands/cmd_outdated.cpp - `ireepkg outdated` -----------------===//
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"

#include <algorithm>
#include <cstdio>

namespace ireepkg::cli {

int runOutdated(const Command &, const ParsedArgs &args) {
  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
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
  // --exit-code: 1 when something is out of date (as `git diff
  // --exit-code`), whatever --all shows.
  bool behind = std::any_of(entries->begin(), entries->end(), [](const auto &e) {
    return e.locked != e.wanted || e.wanted != e.latest;
  });
  const int done = args.flag("exit-code") && behind ? kExitFailure : kExitOk;
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
    return done;
  }
  if (shown.empty()) {
    std::printf("every package is at the newest version plugins.json "
                "allows, and that is the newest published\n");
    return done;
  }
  size_t w = 7;
  for (const auto &e : shown)
    w = std::max(w, e.name.size());
  std::printf("%-*s  %-12s  %-12s  %-12s  %s\n", int(w), "package", "locked",
              "wanted", "latest", "registry");
  // Padded first, then coloured: escape sequences take no columns. The
  // wanted version is yellow when `update` would move to it; the latest is
  // red when plugins.json does not allow it.
  auto pad = [](std::string text, size_t width) {
    if (text.size() < width)
      text.resize(width, ' ');
    return text;
  };
  for (const auto &e : shown) {
    std::string locked = pad(e.locked.empty() ? "-" : e.locked, 12);
    std::string wanted = pad(e.wanted, 12), latest = pad(e.latest, 12);
    if (e.locked != e.wanted)
      wanted = paint(Style::Changed, wanted);
    if (e.wanted != e.latest)
      latest = paint(Style::Removed, latest);
    std::printf("%s  %s  %s  %s  %s\n", pad(e.name, w).c_str(), locked.c_str(),
                wanted.c_str(), latest.c_str(), e.registry.c_str());
  }
  return done;
}

const Command &outdatedCommand() {
  static const Command command{
      .name = "outdated",
      .synopsis = "[--all] [--exit-code] [--json]",
      .summary = "list locked packages with newer versions",
      .description =
          "For each package of the project: the locked version, the newest "
          "version plugins.json allows (what `ireepkg update` would choose) "
          "and the newest published version. Lists only packages where "
          "these differ, unless --all.",
      .options =
          {{"all", 0, "", "list every package"},
           {"exit-code", 0, "",
            "exit with status 1 when a package is out of date (0 when none "
            "is), as `git diff --exit-code`"},
           kOptIreeVersion,
           kOptOffline,
           kOptProject,
           kJson},
      .examples = {"ireepkg outdated", "ireepkg outdated --json",
                   "ireepkg outdated --exit-code || echo 'updates available'"},
      .maxPositional = 0,
      .run = runOutdated,
  };
  return command;
}

} // namespace ireepkg::cli
