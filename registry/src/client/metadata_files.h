//===- registry/src/client/metadata_files.h -------------------------------===//
//
// The registry's metadata files.
//
// What the publisher and the client agree on about the registry's own files
// (private to registry/): their size caps, canonical JSON and RFC 3339 times.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_METADATA_FILES_H
#define IREEPKG_REGISTRY_METADATA_FILES_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ireepkg::registry::detail {

/// Size caps on the metadata a client reads (larger is an Integrity error:
/// a registry serving endless data).
inline constexpr uint64_t kMaxConfigBytes = 1u << 20;     // 1 MiB
inline constexpr uint64_t kMaxSnapshotBytes = 32u << 20;  // 32 MiB
inline constexpr uint64_t kMaxSignatureBytes = 64u << 10; // 64 KiB
inline constexpr uint64_t kMaxIndexBytes = 16u << 20;     // 16 MiB

/// The new snapshot and its signature as a publish to a directory
/// registry stages them before it renames them over snapshot.json and
/// snapshot.json.minisig (publisher.cpp). The client reads them when the
/// files in place do not agree, as a publish killed between its renames
/// leaves them (client.cpp, fetchSnapshot).
inline constexpr const char *kStagedSnapshot = ".snapshot.json.new";
inline constexpr const char *kStagedSignature = ".snapshot.json.minisig.new";
/// A new index file, staged at the registry's top as
/// `.index-<name>.json.new` before it is renamed over index/<name>.json. A
/// publish of several packages killed between two of those renames leaves
/// the rest staged: the client reads one there when it has the hash the
/// staged snapshot pins (client_index.cpp).
inline constexpr const char *kStagedIndexPrefix = ".index-";
inline std::string stagedIndexName(const std::string &name) {
  return kStagedIndexPrefix + name + ".json.new";
}

/// Sorted keys, two-space indent, final newline.
std::string canonicalJson(const nlohmann::json &value);

/// "2026-11-22T09:23:35Z"
std::string formatRfc3339(int64_t unixTime);

/// `now` when it is set, else the current time.
int64_t currentTime(int64_t now);

} // namespace ireepkg::registry::detail

#endif // IREEPKG_REGISTRY_METADATA_FILES_H
