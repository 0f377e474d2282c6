//===- add_lookup.cpp - Choosing the version `ireepkg add` writes --------===//
//
// Asks the project's registries (verified as for lock: signed snapshot,
// index hash) for the newest version that is not yanked.
//
//===----------------------------------------------------------------------===//
#include "add_lookup.h"
#include "ireepkg/manifest_schema/environment.h"

#include "registry_args.h"

#include "ireepkg/registry/workflow.h"

#include <cstdlib>
#include <filesystem>

namespace ireepkg::cli {

Expected<std::string> newestVersionConstraint(const ProjectFile &project,
                                              const std::string &projectPath,
                                              const std::string &name,
                                              const std::string &registry,
                                              Reporter &reporter) {
  workflow::Project p;
  p.file = std::filesystem::absolute(projectPath).lexically_normal().string();
  p.dir = std::filesystem::path(p.file).parent_path().string();
  p.parsed = project;
  workflow::Environment env;
  const char *off = environmentOverride("IREEPKG_OFFLINE");
  env.client.offline = off && *off && std::string(off) != "0";
  env.client.fetch.offline = env.client.offline;
  env.ignoreIree = true;
  auto v = workflow::newestVersion(p, name, registry, env, reporter);
  if (!v)
    return Unexpected(v.error());
  return "^" + v->str();
}

} // namespace ireepkg::cli
