//===- ireepkg/registry/client/registry_cache.h - The cache --*- C++ -*-===//
//
// The cache a registry client keeps: its root, the verified downloads,
// each registry's directory, the file locks that serialize writers of a
// registry or of its trust state, and copying a registry's metadata files
// into a directory. The workflow module (lock, sync, bundles) keeps its
// downloads in the same cache.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_CLIENT_REGISTRY_CACHE_H
#define IREEPKG_REGISTRY_CLIENT_REGISTRY_CACHE_H

#include "ireepkg/base/error.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/registry/client/client.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ireepkg::registry::cache {

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

/// Fetches each metadata file (a path relative to the registry root) through
/// `transport` and writes it, atomically, to the same path under `dir`.
Status copyMetadataFiles(Transport &transport,
                         const std::vector<std::string> &relPaths,
                         const std::string &dir);

} // namespace ireepkg::registry::cache

#endif // IREEPKG_REGISTRY_CLIENT_REGISTRY_CACHE_H
