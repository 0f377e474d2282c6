//===- cli/commands/cmd_tree.cpp - `ireepkg tree` -------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/pkg/prefix/dependency_graph.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/pkg/prefix/prefix.h"

#include <cstdio>
#include <cstdlib>
#include <set>

namespace ireepkg::cli {

namespace {

/// What a package contributes, as `list` shows it.
std::vector<std::string> contributions(const Manifest &m) {
  std::vector<std::string> out;
  for (const RuntimePlugin &rp : m.runtimePlugins)
    out.push_back(rp.name + " (" + std::string(runtimeFormatName(rp.format)) +
                  ")");
  for (const CompilerPlugin &cp : m.compilerPlugins)
    out.push_back(cp.id + " (" + std::string(compilerPluginKindName(cp.kind)) +
                  ")");
  for (const Hook &h : m.hooks)
    out.push_back("hook " + std::string(hookPointName(h.point)));
  return out;
}

struct TreePrinter {
  const DependencyGraph &graph;
  const std::map<std::string, std::vector<std::string>> &provides;
  bool invert;
  long maxDepth; ///< -1: unlimited
  std::set<std::string> seen;
  std::string text;

  const std::vector<std::string> &children(const DependencyGraph::Node &n) {
    return invert ? n.dependents : n.dependencies;
  }

  std::string label(const std::string &name) {
    const DependencyGraph::Node *n = graph.find(name);
    std::string s = name + " " + n->package->version.str();
    const auto &p = provides.at(name);
    for (size_t i = 0; i < p.size(); ++i)
      s += (i == 0 ? ": " : ", ") + p[i];
    return s;
  }

  void line(const std::string &name, const std::string &prefix,
            const std::string &connector, long depth,
            const std::string &childPrefix) {
    const DependencyGraph::Node *n = graph.find(name);
    bool repeat = seen.count(name) && !children(*n).empty();
    text += prefix + connector + label(name) + (repeat ? " (*)" : "") + "\n";
    if (repeat)
      return;
    seen.insert(name);
    if (maxDepth >= 0 && depth >= maxDepth)
      return;
    const auto &kids = children(*n);
    for (size_t i = 0; i < kids.size(); ++i) {
      bool last = i + 1 == kids.size();
      line(kids[i], childPrefix, last ? "└── " : "├── ", depth + 1,
           childPrefix + (last ? "    " : "│   "));
    }
  }

  nlohmann::json json(const std::string &name, long depth) {
    const DependencyGraph::Node *n = graph.find(name);
    nlohmann::json j = {{"name", name},
                        {"version", n->package->version.str()},
                        {"explicit", n->package->explicitlyInstalled},
                        {"provides", provides.at(name)}};
    const char *key = invert ? "dependents" : "dependencies";
    if (seen.count(name) && !children(*n).empty()) {
      j["repeated"] = true;
      return j;
    }
    seen.insert(name);
    nlohmann::json kids = nlohmann::json::array();
    if (maxDepth < 0 || depth < maxDepth)
      for (const std::string &k : children(*n))
        kids.push_back(json(k, depth + 1));
    j[key] = kids;
    return j;
  }
};

} // namespace

int runTree(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  long depth = -1;
  if (auto d = args.value("depth")) {
    char *end = nullptr;
    depth = std::strtol(d->c_str(), &end, 10);
    if (d->empty() || *end != '\0' || depth < 0) {
      printError("--depth: expected a number of levels (0 or more), got \"" +
                 *d + "\"");
      return kExitUsage;
    }
  }
  int code = kExitOk;
  auto opened = readPrefixState(args, json, code);
  if (!opened)
    return code;
  const PrefixLocation *prefix = &opened->prefix;
  InstalledState *state = &opened->state;
  CliReporter reporter(json);
  auto graph = buildDependencyGraph(*state, prefix->path);
  if (!graph)
    return printFailure(graph.error(), json);
  std::map<std::string, std::vector<std::string>> provides;
  for (const InstalledPackage &p : state->packages) {
    auto m = readInstalledManifest(prefix->path, p, reporter);
    if (!m)
      return printFailure(m.error(), json);
    provides[p.name] = contributions(*m);
  }

  std::optional<std::string> invert = args.value("invert");
  std::vector<std::string> roots;
  if (invert) {
    if (!graph->find(*invert)) {
      std::vector<std::string> names;
      for (const auto &[name, n] : graph->nodes)
        names.push_back(name);
      printError(*invert + " is not installed in " + prefix->path +
                     didYouMean(*invert, names),
                 "`ireepkg list` shows what is installed");
      return kExitFailure;
    }
    roots.push_back(*invert);
  } else {
    roots = graph->roots;
    // A dependency whose dependents are all gone is a root of its own.
    for (const auto &[name, n] : graph->nodes)
      if (!n.package->explicitlyInstalled && n.dependents.empty())
        roots.push_back(name);
  }

  TreePrinter printer{*graph, provides, invert.has_value(), depth, {}, {}};
  if (json) {
    nlohmann::json trees = nlohmann::json::array();
    for (const std::string &r : roots)
      trees.push_back(printer.json(r, 0));
    nlohmann::json out = {{"prefix", prefix->path},
                          {"platform", state->platform},
                          {"inverted", invert.has_value()},
                          {"roots", trees}};
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  if (state->packages.empty()) {
    std::printf("no packages installed in %s\n", prefix->path.c_str());
    return kExitOk;
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    if (i != 0)
      printer.text += "\n";
    printer.line(roots[i], "", "", 0, "");
  }
  std::fputs(printer.text.c_str(), stdout);
  return kExitOk;
}

const Command &treeCommand() {
  static const Command command{
      .name = "tree",
      .synopsis = "[--depth N] [--invert NAME] [--prefix DIR] [--json]",
      .summary = "show the installed packages as a dependency tree",
      .description =
          "Prints each explicitly installed package with the packages it "
          "depends on below it, each with its version and what it "
          "contributes (runtime plugins with their format, compiler plugins "
          "with their kind, hooks). A package shown before is marked (*) and "
          "not expanded again. A dependency that nothing installed "
          "explicitly needs any more is shown as a root of its own.\n\n"
          "--invert NAME turns the tree over: NAME at the top, and below it "
          "the packages that depend on it, up to those installed "
          "explicitly.",
      .options = {{"depth", 0, "N",
                   "show N levels below each root (0: roots only)"},
                  {"invert", 'i', "NAME",
                   "show what depends on NAME instead of what NAME depends on"},
                  kPrefix,
                  kJson},
      .examples = {"ireepkg tree", "ireepkg tree --depth 1",
                   "ireepkg tree -i simple-mul"},
      .maxPositional = 0,
      .run = runTree,
  };
  return command;
}

} // namespace ireepkg::cli
