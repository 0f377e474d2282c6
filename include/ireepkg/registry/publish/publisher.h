//===- ireepkg/registry/publish/publisher.h - Publishing -------*- C++ -*-===//
//
// The publisher writes a registry's layout (ireepkg/registry/client/client.h
// describes it) into a directory: initRegistry, publishArchives,
// yankVersion, resignRegistry. Every file is written atomically, under a
// lock, and the snapshot is re-signed after each change.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_PUBLISH_PUBLISHER_H
#define IREEPKG_REGISTRY_PUBLISH_PUBLISHER_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/semver.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {
class Reporter;
}

namespace ireepkg::registry {

struct SigningOptions {
  /// A minisign secret key file. Required to publish into a registry whose
  /// config.json lists keys; its public half must be one of them.
  std::string secretKeyPath;
  std::optional<std::string> password; ///< for an encrypted key
  /// The new snapshot's `expires`: this many days after `now`.
  int expiresDays = 30;
  int64_t now = 0; ///< seconds since the epoch; 0: the current time
  /// Told of what the network asks the user to wait for (a Retry-After) in
  /// a registry kept in an OCI registry; nullptr: nobody is told.
  Reporter *reporter = nullptr;
};

struct InitOptions {
  std::string name; ///< default: the directory's name
  SigningOptions signing;
  std::vector<std::string> mirrors;
  std::string description;
};

/// Creates the layout in `dir` (which must be empty or absent): config.json
/// with the key's public half, an empty signed snapshot (version 1),
/// index/ and archives/.
Status initRegistry(const std::string &dir, const InitOptions &options);

struct PublishResult {
  std::string name;
  Version version;
  std::string archivePath; ///< inside the registry
  std::string sha256;
  uint64_t size = 0;
  int64_t snapshotVersion = 0;
  bool alreadyPublished = false; ///< the same bytes were there already
  /// What reading the archive's manifest found but accepted (fields this
  /// version does not know).
  std::vector<Diagnostic> warnings;
};

/// Adds `archive` (checked as `install` would: manifest, RECORD, safety
/// rules) and its signature, rewrites index/<name>.json, and bumps and
/// re-signs snapshot.json. Publishing a name and version that is there with
/// different bytes is refused (Conflict); with the same bytes it changes
/// nothing.
Expected<PublishResult> publishArchive(const std::string &registryDir,
                                       const std::string &archive,
                                       const SigningOptions &options);

/// Publishes several archives in one transaction: every archive is checked
/// first, as publishArchive checks one (and the same name and version given
/// twice must be the same bytes); if any is refused, nothing is written and
/// the error names each refused archive and why. Then the archives, the
/// index files they change and one new snapshot (version + 1, signed once)
/// are written, in the order of publisher.cpp. One result per archive, in
/// order; a version already published (or given earlier) with the same
/// bytes is alreadyPublished. No new snapshot when nothing is new.
/// publishArchive is this with one archive.
Expected<std::vector<PublishResult>>
publishArchives(const std::string &registryDir,
                const std::vector<std::string> &archives,
                const SigningOptions &options);

/// Marks (or with `yanked` false, unmarks) one version as yanked, and
/// re-signs the snapshot. Returns the new snapshot version.
Expected<int64_t> yankVersion(const std::string &registryDir,
                              const std::string &name, const Version &version,
                              bool yanked, const SigningOptions &options);

/// Re-signs the current state with a new version and `expires` (for a
/// snapshot about to expire, or after adding a new key to config.json),
/// after checking that every index file still has the snapshot's hash.
/// Returns the new snapshot version.
Expected<int64_t> resignRegistry(const std::string &registryDir,
                                 const SigningOptions &options);

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_PUBLISH_PUBLISHER_H
