//===- ireepkg/registry/publish/mirror.h - Static copies -------*- C++ -*-===//
//
// A static copy of a registry: every file of any registry a client reads,
// verified, written into a directory registry.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_PUBLISH_MIRROR_H
#define IREEPKG_REGISTRY_PUBLISH_MIRROR_H

#include "ireepkg/base/error.h"
#include "ireepkg/registry/client/client.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ireepkg::registry {

struct MirrorResult {
  std::string dir;             ///< absolute
  int64_t snapshotVersion = 0; ///< of the source, now the copy's
  int64_t previousVersion = 0; ///< the copy's before; 0: a new copy
  std::string signedBy;        ///< key id that verified the snapshot
  size_t packages = 0;
  size_t versions = 0;
  size_t archivesCopied = 0; ///< archives the copy did not hold yet
  uint64_t bytesCopied = 0;
};

/// Copies the registry `source` (any URL a client reads, oci:// included)
/// into the directory `dir` as a directory registry: config.json, the
/// signed snapshot and its signature, the index files byte for byte, every
/// archive (yanked ones too) and each archive's signature that verifies
/// with a trusted key. Everything is verified before it is written (with
/// the keys of `source`), and moved into `dir` in the publisher's order.
/// `dir` must be new, empty or an earlier copy, which is then brought up
/// to date (a copy newer than the source is refused: Conflict).
Expected<MirrorResult> mirrorRegistry(const RegistrySpec &source,
                                      const std::string &dir,
                                      const ClientOptions &options,
                                      Reporter &reporter);

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_PUBLISH_MIRROR_H
