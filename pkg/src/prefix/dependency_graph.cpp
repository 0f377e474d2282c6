//===- pkg/src/prefix/dependency_graph.cpp - A prefix's dependency graph --===//
#include "ireepkg/pkg/prefix/dependency_graph.h"

#include <algorithm>
#include <functional>
#include <set>

namespace ireepkg {

Expected<DependencyGraph> buildDependencyGraph(const InstalledState &state,
                                               const std::string &prefix) {
  DependencyGraph g;
  for (const InstalledPackage &p : state.packages)
    g.nodes[p.name].package = &p;
  for (const InstalledPackage &p : state.packages) {
    DependencyGraph::Node &n = g.nodes[p.name];
    std::set<std::string> deps(p.dependencies.begin(), p.dependencies.end());
    for (const std::string &d : deps) {
      auto it = g.nodes.find(d);
      if (it == g.nodes.end())
        return makeError(ErrorCode::Integrity,
                         p.name + " depends on " + d +
                             ", which is not installed",
                         Location{prefix, 0, 0, "", p.name, ""},
                         "run `ireepkg verify` to check the prefix; "
                         "installing " +
                             d + " again repairs it");
      n.dependencies.push_back(d);
      it->second.dependents.push_back(p.name);
    }
    if (p.explicitlyInstalled)
      g.roots.push_back(p.name);
  }
  for (auto &[name, n] : g.nodes)
    std::sort(n.dependents.begin(), n.dependents.end());
  std::sort(g.roots.begin(), g.roots.end());
  return g;
}

std::vector<std::vector<std::string>>
pathsTo(const DependencyGraph &graph, const std::string &name, size_t limit) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> path;
  std::set<std::string> onPath;
  std::function<void(const std::string &)> walk = [&](const std::string &at) {
    if (out.size() >= limit || onPath.count(at))
      return;
    const DependencyGraph::Node *n = graph.find(at);
    if (!n)
      return;
    path.push_back(at);
    onPath.insert(at);
    if (at == name)
      out.push_back(path);
    else
      for (const std::string &d : n->dependencies)
        walk(d);
    onPath.erase(at);
    path.pop_back();
  };
  for (const std::string &r : graph.roots)
    walk(r);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace ireepkg
