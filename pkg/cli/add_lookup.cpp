//===- add_lookup.cpp - Choosing the version `ireepkg add` writes --------===//
//
// This build has no registry client to ask for the newest version, so a
// constraint must be given on the command line.
//
//===----------------------------------------------------------------------===//
#include "add_lookup.h"

namespace ireepkg::cli {

Expected<std::string> newestVersionConstraint(const ProjectFile &,
                                              const std::string &projectPath,
                                              const std::string &name,
                                              const std::string &, Reporter &) {
  return makeError(
      ErrorCode::Unsupported,
      "ireepkg add needs a version constraint here (" + name + "@^1.2)",
      Location{projectPath, 0, 0, "", "", ""},
      "give the versions to accept, e.g. `ireepkg add " + name + "@^1.2`");
}

} // namespace ireepkg::cli
