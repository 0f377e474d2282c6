//===- ireepkg/compiler_integration/compiler_index.h ----------------------===//
//
// The stored compiler inputs.
//
// <prefix>/state/compiler.json: for each active package, in activation
// order, the compiler plugins and hooks of its manifest, with the project's
// settings. Written by every transaction from manifests that were already
// checked (pipeline syntax included), and read by `flags compiler`, `exec`
// and the embedding API instead of every installed manifest.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_COMPILER_INDEX_H
#define IREEPKG_COMPILER_INDEX_H

#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/pkg/prefix/prefix.h"

#include <deque>

namespace ireepkg {

std::string encodeCompilerIndex(const std::vector<ActivatedPackage> &packages,
                                const std::string &platform,
                                const ProjectSettings &project);

/// What compiler.json holds: manifests with only their compiler parts.
struct CompilerIndex {
  std::string platform;
  ProjectSettings project;
  std::deque<Manifest> manifests; ///< stable addresses
  std::vector<ActivatedPackage> packages;
};

Expected<CompilerIndex> decodeCompilerIndex(std::string_view text,
                                            const std::string &path);

} // namespace ireepkg

#endif
