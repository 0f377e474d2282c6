//===- registry/http/metadata_cache.h - Metadata bodies and their ETags ---===//
//
// Inside the HTTP module: the metadata files it fetched, kept by URL with
// their ETags, so that the next fetch can ask "changed since?" (a 304 then
// costs no body). Each entry is <cache>/<sha256 of the URL>: a small header
// (URL, label, ETag), a blank line, then the body, written to a temporary
// file and renamed.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_HTTP_METADATA_CACHE_H
#define IREEPKG_REGISTRY_HTTP_METADATA_CACHE_H

#include "ireepkg/base/error.h"

#include <cstddef>
#include <optional>
#include <string>

namespace ireepkg::net {

/// `chars` random hexadecimal digits (temporary file names).
std::string randomHex(size_t chars);
/// Writes all of `data`, retrying on EINTR; false on an error (errno says).
bool writeAll(int fd, const char *data, size_t size);

struct CacheEntry {
  std::string etag;
  std::string body;
};

class MetadataCache {
public:
  explicit MetadataCache(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }
  const std::string &dir() const { return dir_; }

  std::string pathFor(const std::string &url) const;

  /// The entry for `url`; nothing when absent or unreadable (an entry of
  /// another URL under the same name, or a damaged one, counts as absent).
  std::optional<CacheEntry> load(const std::string &url) const;

  Status store(const std::string &url, const std::string &label,
               const std::string &etag, const std::string &body) const;

private:
  std::string dir_;
};

} // namespace ireepkg::net

#endif // IREEPKG_REGISTRY_HTTP_METADATA_CACHE_H
