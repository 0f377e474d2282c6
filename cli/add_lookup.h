//===- add_lookup.h - Choosing the version `ireepkg add` writes -*- C++ -*-===//
//
// `ireepkg add <name>` without a constraint writes the caret constraint of
// the newest version the project's registries offer, as cargo and uv do.
// Finding that version is the only part of `add` that reads a registry; it
// lives behind this one function (add_lookup.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_ADD_LOOKUP_H
#define IREEPKG_CLI_ADD_LOOKUP_H

#include "ireepkg/manifest_schema/error.h"
#include "ireepkg/manifest_schema/formats.h"

#include <string>

namespace ireepkg {
class Reporter;
}

namespace ireepkg::cli {

/// The constraint to write for `name` ("^1.2.0": the caret constraint of
/// its newest version that is not yanked), looked up in `registry` (a name
/// from project.registries) or, when that is empty, in the first of the
/// project's registries that has the package. `projectPath` is the
/// plugins.json that `project` was read from (registry URLs that are
/// directories are relative to it).
Expected<std::string> newestVersionConstraint(const ProjectFile &project,
                                              const std::string &projectPath,
                                              const std::string &name,
                                              const std::string &registry,
                                              Reporter &reporter);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_ADD_LOOKUP_H
