//===- ireepkg/pkg/prefix/dependency_graph.h - The dependency graph -------===//
//
// The graph of an installed prefix (installed.json): each package's
// dependencies and dependents, the roots (explicitly installed packages),
// and every path from a root to a package. `ireepkg tree` and `ireepkg why`
// print it.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_DEPENDENCY_GRAPH_H
#define IREEPKG_DEPENDENCY_GRAPH_H

#include "ireepkg/pkg/prefix/prefix.h"

#include <map>
#include <string>
#include <vector>

namespace ireepkg {

struct DependencyGraph {
  struct Node {
    const InstalledPackage *package = nullptr;
    std::vector<std::string> dependencies; ///< sorted, installed names only
    std::vector<std::string> dependents;   ///< sorted
  };
  std::map<std::string, Node> nodes;
  std::vector<std::string> roots; ///< explicitly installed, sorted

  const Node *find(const std::string &name) const {
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : &it->second;
  }
};

/// The graph of `state` (which must outlive it). A dependency naming a
/// package that is not installed is an Integrity error (the prefix is
/// inconsistent: `ireepkg verify` says more).
Expected<DependencyGraph> buildDependencyGraph(const InstalledState &state,
                                               const std::string &prefix);

/// Every path from a root to `name` (each ends at `name`; a root that is
/// `name` itself is a path of one), without cycles, sorted. At most
/// `limit` paths are returned.
std::vector<std::vector<std::string>> pathsTo(const DependencyGraph &graph,
                                              const std::string &name,
                                              size_t limit = 10000);

} // namespace ireepkg

#endif
