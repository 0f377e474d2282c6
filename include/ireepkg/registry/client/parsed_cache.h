//===- ireepkg/registry/client/parsed_cache.h -----------------------------===//
//
// Parsed registry metadata, cached.
//-*-===//
//
// The registry client keeps what it parsed of a verified index file or
// snapshot in a binary file beside its verified copy
// (<cache>/registries/<id>/index/<sha256>.bin, .../snapshot.bin), so that a
// warm run reads no JSON at all, the way uv keeps archived metadata and
// cargo its index cache.
//
// A cached form is only ever a faster way to read a file the client has
// verified; it is keyed by the SHA-256 of that file's exact bytes (for an
// index file, the hash the signed snapshot pins; for the snapshot, the hash
// of the snapshot whose signature was just checked). A file is used only
// when its magic, format version, kind and key match and its payload has
// the checksum its header records (so that corruption or a truncated write
// is caught, never trusted); anything else decodes to nullopt and the
// caller parses the original again. The checksum is XXH3-128, not a
// cryptographic hash: the files are trusted because they are the current
// user's own (the callers read them with fsutil::readOwnCacheFile).
//
// File layout (all integers little-endian):
//
//   "IREEPKGP"  u32 format version  u32 kind (1 index, 2 snapshot, 3 lock,
//                                             4 verified snapshot)
//   64 hex digits: SHA-256 of the original file (the key)
//   u64 payload size  32 hex digits: XXH3-128 of the payload
//   payload: the parsed fields (parsed_cache.cpp)
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PARSED_CACHE_H
#define IREEPKG_PARSED_CACHE_H

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/resolve/resolver.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg::registry {

/// Raised whenever the payload's layout changes: files of other versions
/// are ignored (and replaced when written again).
inline constexpr uint32_t kParsedCacheFormat = 2;

/// `sourceSha256`: 64 lowercase hex digits, the hash of the file parsed.
std::string encodeParsedIndex(const RegistryIndex &index,
                              std::string_view sourceSha256);
std::optional<RegistryIndex> decodeParsedIndex(std::string_view file,
                                               std::string_view sourceSha256);

/// What the resolver needs of a parsed index, read without building the
/// rest (summaries, archive names and hashes): `lock` reads every version of
/// each package it reaches but the archive of only the one it chooses.
struct ParsedCandidates {
  /// In the order of the index.
  std::vector<CandidateVersion> versions;
  /// Where each version's entry starts in the file, and the constraints
  /// entries refer to, for decodeParsedIndexEntry.
  std::vector<uint32_t> offsets;
  std::vector<std::shared_ptr<const Constraint>> constraints;
};
/// nullopt unless `file` is a valid parsed index of `sourceSha256` for
/// package `name`. Every entry is read through, so that
/// decodeParsedIndexEntry of any returned offset succeeds on the same bytes.
std::optional<ParsedCandidates>
decodeParsedCandidates(std::string_view file, std::string_view sourceSha256,
                       std::string_view name);
/// One entry of a file decodeParsedCandidates accepted, in full.
std::optional<IndexEntry> decodeParsedIndexEntry(
    std::string_view file, uint32_t offset,
    const std::vector<std::shared_ptr<const Constraint>> &constraints);

std::string encodeParsedSnapshot(const RegistrySnapshot &snapshot,
                                 std::string_view sourceSha256);
/// `withIndex` false: the index map is checked but left empty (a caller
/// that may never need it decodes it later from the same bytes).
std::optional<RegistrySnapshot>
decodeParsedSnapshot(std::string_view file, std::string_view sourceSha256,
                     bool withIndex = true);

/// The packages of a parsed snapshot that decodeParsedSnapshot accepted,
/// as (name, "sha256:<hex>") views into `file`, in name order: lookups
/// without building the map of every package. The payload's hash is not
/// checked again. Empty when the payload is not laid out as expected.
std::vector<std::pair<std::string_view, std::string_view>>
parsedSnapshotPackages(std::string_view file);

/// A pack of parsed index files: encodeParsedIndex's files one after the
/// other. The registry client keeps one per registry (index.pack), so that
/// a cold run creates one file rather than one for each index file it
/// parsed. splitParsedIndexPack returns each frame of this format version
/// and its key, in order, for decodeParsedIndex (which checks the payload's
/// hash); a stretch that is not a whole frame (a torn append, corruption)
/// is skipped up to the next one.
struct PackedIndex {
  std::string_view key;  ///< the SHA-256 of the index file parsed
  std::string_view file; ///< the frame, as decodeParsedIndex takes it
};
std::vector<PackedIndex> splitParsedIndexPack(std::string_view pack);

/// A lockfile as parsed, for a no-op `ireepkg lock` (lock.cpp): keyed by
/// the hash of everything that lock read (lockStampKey), which includes the
/// lockfile's bytes.
std::string encodeParsedLock(const Lockfile &lock, std::string_view key);
std::optional<Lockfile> decodeParsedLock(std::string_view file,
                                         std::string_view key);

/// What checking a snapshot's signature and parsing it established, kept
/// in <cache>/registries/<id>/snapshot.verified and keyed by the SHA-256 of
/// the snapshot's exact bytes (client.cpp says when it is trusted). The
/// ireepkg version that made it is recorded too, and a record made by
/// another version is ignored: a newer parser may judge the same bytes
/// otherwise.
struct VerifiedSnapshot {
  std::string signatureSha256; ///< of snapshot.json.minisig's exact bytes
  std::string publicKey;       ///< the trusted key that verified them
                               ///< (signing::publicKeyBase64, with its id)
  int schemaVersion = 0;       ///< the snapshot's fields, as parsed
  int64_t version = 0;
  std::string expires;
  int64_t expiresUnix = 0;
  /// For a registry in a local directory, the stamps (fsutil::FileStamp)
  /// of snapshot.json and its signature as they were read, when both were
  /// settled; empty otherwise. While both files keep them, the client takes
  /// the record's hashes without reading the files (client.cpp).
  std::string snapshotStamp;
  std::string signatureStamp;
};
std::string encodeVerifiedSnapshot(const VerifiedSnapshot &verified,
                                   std::string_view snapshotSha256);
std::optional<VerifiedSnapshot>
decodeVerifiedSnapshot(std::string_view file, std::string_view snapshotSha256);
/// The key a cache file of this format says it is keyed by (not checked:
/// decoding with it checks the rest); empty when it has no such header.
std::string_view parsedCacheKey(std::string_view file);

} // namespace ireepkg::registry

#endif // IREEPKG_PARSED_CACHE_H
