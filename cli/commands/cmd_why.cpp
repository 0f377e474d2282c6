//===- cli/commands/cmd_why.cpp - `ireepkg why` ---------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/pkg/prefix/dependency_graph.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/pkg/prefix/prefix.h"

#include <cstdio>

namespace ireepkg::cli {

int runWhy(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  const std::string &name = args.positional.at(0);
  int code = kExitOk;
  auto opened = readPrefixState(args, json, code);
  if (!opened)
    return code;
  const PrefixLocation *prefix = &opened->prefix;
  InstalledState *state = &opened->state;
  auto graph = buildDependencyGraph(*state, prefix->path);
  if (!graph)
    return printFailure(graph.error(), json);
  if (!graph->find(name)) {
    std::vector<std::string> names;
    for (const auto &[n, node] : graph->nodes)
      names.push_back(n);
    return printFailure(makeError(ErrorCode::NotFound,
                                  name + " is not installed in " +
                                      prefix->path + didYouMean(name, names),
                                  {}, "`ireepkg list` shows what is installed")
                            .error(),
                        json);
  }
  std::vector<std::vector<std::string>> paths = pathsTo(*graph, name);
  auto label = [&](const std::string &n) {
    return n + " " + graph->find(n)->package->version.str();
  };
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto &path : paths) {
      nlohmann::json p = nlohmann::json::array();
      for (const std::string &n : path)
        p.push_back(
            {{"name", n}, {"version", graph->find(n)->package->version.str()}});
      out.push_back(p);
    }
    std::printf("%s\n", nlohmann::json(
                            {{"prefix", prefix->path},
                             {"name", name},
                             {"explicit",
                              graph->find(name)->package->explicitlyInstalled},
                             {"paths", out}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  for (const auto &path : paths) {
    std::string line;
    for (const std::string &n : path)
      line += (line.empty() ? "" : " -> ") + label(n);
    if (path.size() == 1)
      line += " (installed explicitly)";
    std::printf("%s\n", line.c_str());
  }
  if (paths.empty())
    std::printf("%s is installed as a dependency, but nothing installed "
                "explicitly needs it any more\n",
                label(name).c_str());
  return kExitOk;
}

const Command &whyCommand() {
  static const Command command{
      .name = "why",
      .synopsis = "<name> [--prefix DIR] [--json]",
      .summary = "show why a package is installed",
      .description =
          "Prints every path from an explicitly installed package to <name>, "
          "one per line (`app 1.0.0 -> lib 2.0.0 -> <name> 1.2.0`). Exit "
          "status 1 if <name> is not installed.",
      .options = {kPrefix, kJson},
      .examples = {"ireepkg why simple-mul"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runWhy,
  };
  return command;
}

} // namespace ireepkg::cli
