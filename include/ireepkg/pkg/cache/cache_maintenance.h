//===- ireepkg/pkg/cache/cache_maintenance.h - Cleaning the package cache -===//
//
// What `ireepkg cache clean` and `ireepkg cache prune` remove. The cache
// (see ireepkg/cache.h) holds:
//
//   files/<aa>/<sha256>[.x]      content blobs, shared with prefixes by
//                                hard link (or reflinked / copied)
//   files/<aa>/<blob>.ok-...     "this blob was hashed" markers
//   archives/<key>.json          archives seen before
//   downloads/<aa>/<sha256>.ireepkg  archives fetched from registries
//   registries/<id>/             registry metadata (snapshot, indexes, http)
//   bundles/<sha256>/            bundles extracted by sync/install
//   inspect/v<N>/                native-library inspection results
//   compilers.json, tools.json   what was found about installed IREE tools
//   locks/, syncs/, digests/     what lock and sync last read (registries.md)
//   `*.part-<pid>-...`, `*.tmp-<pid>` in downloads/<aa>/,
//   registries/<id>/http/ and bundles/: partial downloads and staging
//
// Nothing else is removed: a directory that holds anything else at its top
// level is not taken for a cache (checkCacheLayout), and partials are
// looked for only where they are written.
// Installed prefixes never depend on the cache: their files are hard links,
// reflinks or copies, and stay intact whatever is removed here.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CACHE_MAINTENANCE_H
#define IREEPKG_CACHE_MAINTENANCE_H

#include "ireepkg/base/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ireepkg {

struct CacheRemoval {
  uint64_t files = 0; ///< regular files (and links) removed
  uint64_t bytes = 0; ///< their sizes (a blob still linked elsewhere counts)
  /// Per kind: "blobs", "downloads", "partial", ... -> files, bytes.
  struct Part {
    std::string kind;
    uint64_t files = 0, bytes = 0;
  };
  std::vector<Part> parts;
  /// With names: the downloaded archives removed, "name version".
  std::vector<std::string> archives;
  void add(const std::string &kind, uint64_t n, uint64_t size);
};

/// An Invalid error, naming `root` and what it holds, when `root` holds
/// anything at its top level that is not of the cache's layout (above):
/// `root` is then not an ireepkg cache (a home directory given by
/// mistake), and nothing in it may be removed.
Status checkCacheLayout(const std::string &root);

/// Files and bytes under `root` (0, 0 if it does not exist).
Expected<CacheRemoval> cacheUsage(const std::string &root);

/// Removes everything under `root` (the directory itself stays), once
/// checkCacheLayout passes; likewise the two below.
Expected<CacheRemoval> cleanCache(const std::string &root);

/// Removes the downloaded archives (downloads/) of the named packages; each
/// archive's name is read from its manifest. An archive that cannot be read
/// is removed too only when it is a partial download.
Expected<CacheRemoval>
cleanCachedPackages(const std::string &root,
                    const std::vector<std::string> &names);

/// Removes every partial download or staging entry in `dir` and in the
/// directories in it (downloads/ and downloads/<aa>/) whose process is gone
/// (`*.part-<pid>-*`, `*.tmp-<pid>`; `*.part-<random>` without a process id
/// once it is an hour old). Live ones stay.
Expected<CacheRemoval> removeAbandonedPartials(const std::string &dir);

/// Removes what nothing uses:
///  - every abandoned partial (see removeAbandonedPartials);
///  - every blob in files/ that no prefix hard-links (link count 1), with
///    its markers; and markers whose blob is gone or changed. A blob placed
///    by reflink or copy also has link count 1 and is removed: prefixes own
///    their copies, so the cost is only that the next install of that
///    package extracts its archive again;
///  - every archives/ entry, once any blob is removed: an entry promises
///    that its archive's blobs are here (its name is a hash of the archive
///    file's identity, so the file cannot be found from it).
/// Downloaded archives (downloads/), registry metadata and bundles are kept
/// (a lockfile can need them offline; `cache clean` removes them).
Expected<CacheRemoval> pruneCache(const std::string &root);

} // namespace ireepkg

#endif
