//===- registry_util.h - Shared helpers of the registry layer --*- C++ -*-===//
//
// What the publisher, the transports and the client share (private to
// registry/): deterministic JSON, RFC 3339 times, the registry lock, the
// cache locations, URL normalization and the size caps on metadata files.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_UTIL_H
#define IREEPKG_REGISTRY_UTIL_H

#include "ireepkg/pkg/file_util.h"
#include "ireepkg/manifest_schema/error.h"
#include "ireepkg/registry/registry.h"

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

/// Sorted keys, two-space indent, final newline.
std::string canonicalJson(const nlohmann::json &value);

/// "2026-11-22T09:23:35Z"
std::string formatRfc3339(int64_t unixTime);

/// `now` when it is set, else the current time.
int64_t currentTime(int64_t now);

/// An exclusive fcntl lock on a file, released (and the file closed) on
/// destruction. Waits for another holder.
class FileLock {
public:
  FileLock() = default;
  static Expected<FileLock> acquire(const std::string &path);

private:
  fsutil::UniqueFd fd_; ///< closing it releases the lock
};

/// The cache root a client uses: options.cacheRoot, else the package
/// cache's.
Expected<std::string> cacheRootFor(const ClientOptions &options);

/// Where the download cache keeps a verified archive of this SHA-256:
/// <root>/downloads/<first two hex digits>/<sha256>.ireepkg.
std::string downloadCachePath(const std::string &cacheRoot,
                              const std::string &sha256);

/// True if `path` is a regular file of exactly `size` bytes whose SHA-256
/// is `sha256` (a cached archive is used only while this holds).
bool fileHasContent(const std::string &path, uint64_t size,
                    const std::string &sha256);

/// The registry's own directory in the cache: <root>/registries/<id>.
std::string registryCacheDir(const std::string &cacheRoot,
                             const std::string &url);

/// A directory path for a plain path or a file:// URL (percent-decoded).
std::string directoryOf(const std::string &url);

/// True for file:// URLs and plain paths.
bool isDirectoryUrl(const std::string &url);

/// `base` + "/" + `rel` with exactly one slash between.
std::string joinUrl(const std::string &base, const std::string &rel);

} // namespace ireepkg::registry::detail

#endif // IREEPKG_REGISTRY_UTIL_H
