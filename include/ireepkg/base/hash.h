//===- ireepkg/base/hash.h - SHA-256 ---------------------*- C++ -*-===//
//
// Streaming SHA-256 (Nettle's, which uses the CPU's SHA instructions where
// present). Every archive, file and index hash in ireepkg goes through here.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_HASH_H
#define IREEPKG_BASE_HASH_H

#include "ireepkg/base/error.h"

#include <memory>
#include <string>
#include <string_view>

namespace ireepkg {

class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(Sha256 &&) noexcept;
  Sha256 &operator=(Sha256 &&) noexcept;

  void update(const void *data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  /// Lowercase hex digest; the object is reset afterwards.
  std::string hexDigest();

  static std::string hex(std::string_view data);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Hashes a whole file.
Expected<std::string> sha256File(const std::string &path);

} // namespace ireepkg

#endif // IREEPKG_BASE_HASH_H
