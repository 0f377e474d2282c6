//===- cli/commands/cmd_list.cpp - `ireepkg list` -------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/shadowing.h"

#include <cstdio>

namespace ireepkg::cli {

int runList(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  int code = kExitOk;
  auto opened = readPrefixState(args, json, code);
  if (!opened)
    return code;
  const PrefixLocation *prefix = &opened->prefix;
  InstalledState *state = &opened->state;
  CliReporter reporter(json);
  if (args.flag("names")) {
    if (json) {
      printError("--names and --json contradict each other",
                 "give one of them");
      return kExitUsage;
    }
    for (const InstalledPackage &p : state->packages)
      std::printf("%s\n", p.name.c_str());
    return kExitOk;
  }
  nlohmann::json packages = nlohmann::json::array();
  std::string text;
  size_t width = 4;
  for (const InstalledPackage &p : state->packages)
    width = std::max(width, p.name.size());
  for (const InstalledPackage &p : state->packages) {
    auto m = readInstalledManifest(prefix->path, p, reporter);
    if (!m)
      return printFailure(m.error(), json);
    std::string dir = packageDir(prefix->path, p.name, p.version);
    if (json) {
      nlohmann::json j = manifestToJson(*m);
      j["reason"] = p.explicitlyInstalled ? "explicit" : "dependency";
      j["installed_size"] = p.installedSize;
      j["path"] = dir;
      packages.push_back(j);
      continue;
    }
    std::string provides;
    for (const RuntimePlugin &rp : m->runtimePlugins)
      provides += (provides.empty() ? "" : ", ") + rp.name + " (" +
                  std::string(runtimeFormatName(rp.format)) + ")";
    for (const CompilerPlugin &cp : m->compilerPlugins)
      provides += (provides.empty() ? "" : ", ") + cp.id + " (" +
                  std::string(compilerPluginKindName(cp.kind)) + ")";
    for (const Hook &h : m->hooks)
      provides += (provides.empty() ? "" : ", ") + std::string("hook ") +
                  std::string(hookPointName(h.point));
    char line[512];
    std::snprintf(line, sizeof line, "%-*s  %-10s  %-10s  %s\n",
                  static_cast<int>(width), p.name.c_str(),
                  p.version.str().c_str(),
                  p.explicitlyInstalled ? "explicit" : "dependency",
                  provides.c_str());
    text += line;
  }
  std::vector<ShadowedImport> shadowed = shadowedImports(prefix->path);
  if (json) {
    nlohmann::json out = {{"prefix", prefix->path},
                          {"platform", state->platform},
                          {"packages", packages}};
    if (!shadowed.empty())
      out["shadowed_imports"] = shadowedImportsToJson(shadowed);
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  if (state->packages.empty()) {
    std::printf("no packages installed in %s\n", prefix->path.c_str());
    return kExitOk;
  }
  std::printf("prefix %s (%s), in activation order:\n%s", prefix->path.c_str(),
              state->platform.c_str(), text.c_str());
  std::fputs(shadowedImportsText(shadowed).c_str(), stdout);
  return kExitOk;
}

const Command &listCommand() {
  static const Command command{
      .name = "list",
      .synopsis = "[--prefix DIR] [--json]",
      .summary = "list the installed packages in activation order",
      .description =
          "Lists every installed package with its version, whether it was "
          "installed explicitly or as a dependency, and what it provides. "
          "--names prints only the names, one a line (shell completion uses "
          "it).",
      .options = {kPrefix,
                  {"names", 0, "", "print only the package names, one a line"},
                  kJson},
      .examples = {"ireepkg list", "ireepkg list --json"},
      .maxPositional = 0,
      .run = runList,
  };
  return command;
}

} // namespace ireepkg::cli
