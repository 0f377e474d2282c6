//===- ireepkg/base/base64.h - Base64 (RFC 4648) ----------------*- C++ -*-===//
//
// One encoder and decoder for the two places that read base64: minisign
// keys and signatures (pkg/src/package/signature.cpp), which must be
// exactly what minisign writes, and the "auth" of a docker or podman
// credential file (registry/src/transport/oci_auth.cpp), which other tools write
// loosely.
//
// Written here rather than taken from libsodium (which signature.cpp uses
// for Ed25519): base is the bottom layer, and the programs and modules that
// link it (the libcurl module ireepkg_http links ireepkg_pkg and so base;
// the helper programs may link base alone) should not need libsodium for a
// few lines of table lookup.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_BASE64_H
#define IREEPKG_BASE_BASE64_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

/// `size` bytes at `data` as padded standard base64 ("+/" alphabet, "="
/// padding to a multiple of four characters).
std::string base64Encode(const uint8_t *data, size_t size);

/// How strictly base64Decode reads its text.
enum class Base64Syntax {
  /// Canonical padded standard base64, as base64Encode writes it and as
  /// libsodium's sodium_base642bin (variant ORIGINAL) accepts it: the
  /// "+/" alphabet only, no white space, the length a non-zero multiple of
  /// four, "=" only as the padding the length needs, and the unused bits
  /// of the last character zero.
  Canonical,
  /// What docker and podman credential files hold: either alphabet ("+/"
  /// or "-_"), padding optional, and "=", carriage returns and line feeds
  /// ignored wherever they are; bits left over at the end are dropped.
  Lenient,
};

/// The bytes `text` encodes, or nullopt when it is not base64 of the given
/// syntax. The result is sized once, so a secret decoded into it (a
/// minisign secret key) leaves no copy in freed memory.
std::optional<std::vector<uint8_t>>
base64Decode(std::string_view text,
             Base64Syntax syntax = Base64Syntax::Canonical);

} // namespace ireepkg

#endif // IREEPKG_BASE_BASE64_H
