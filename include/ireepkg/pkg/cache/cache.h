//===- ireepkg/pkg/cache/cache.h - The package cache ------------*- C++ -*-===//
//
// A content-addressed cache of installed files, so that installing a
// version again (after a remove, or into another prefix) links files into
// place instead of decompressing the archive:
//
//   <cache>/files/<aa>/<sha256>[.x]   one read-only blob per content (.x:
//                                     executable), shared by hard links
//   <cache>/archives/<key>.json       an archive file seen before: its
//                                     identity, SHA-256 and RECORD hash
//
// <cache> is $IREEPKG_CACHE_DIR, else $XDG_CACHE_HOME/ireepkg, else
// ~/.cache/ireepkg. An archive is recognised by its file identity (device,
// inode, size, modification and change times): the same unchanged file that
// was verified when it was first installed. Any other file is verified in
// full. Blobs are placed by reflink where the file system can, else by hard
// link, else by copy. Nothing in the cache is used (nor added to it) that
// another user owns or may write, or that is in a directory another user
// owns or may write (fsutil::trustedCacheFile); such a package is
// extracted from its archive, and the CLI warns once, naming the directory.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CACHE_H
#define IREEPKG_CACHE_H

#include "ireepkg/base/error.h"
#include "ireepkg/pkg/package/package.h"

#include <optional>
#include <string>

namespace ireepkg {

class PackageCache {
public:
  /// The cache at the default location (see above); nullopt if no location
  /// can be determined.
  static std::optional<PackageCache> openDefault();
  explicit PackageCache(std::string root) : root_(std::move(root)) {}

  const std::string &root() const { return root_; }

  struct Hit {
    std::string archiveSha256;
  };
  /// If `archivePath` is a file seen before whose RECORD is `recordSha256`
  /// and every blob is present, returns what is known about it.
  std::optional<Hit> lookup(const std::string &archivePath,
                            const std::string &recordSha256) const;

  /// Places every file of `record` under `destDir` (which must not exist)
  /// from the cache, and writes RECORD.json. On failure `destDir` is
  /// removed.
  Status materialize(const Record &record, const std::string &destDir) const;

  /// Adds the files of a freshly extracted and verified package directory,
  /// and remembers the archive. Failures are not fatal to an install: the
  /// caller reports them as warnings.
  Status store(const std::string &archivePath, const std::string &archiveSha256,
               const std::string &recordSha256, const Record &record,
               const std::string &extractedDir) const;

  /// How a blob was placed last (for benchmarks and tests): "reflink",
  /// "hardlink" or "copy".
  static const char *lastPlacement();

private:
  std::string blobPath(const RecordEntry &e) const;
  std::string identityKey(const std::string &archivePath) const;
  std::string root_;
};

} // namespace ireepkg

#endif
