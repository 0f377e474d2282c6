//===- ireepkg/pkg/package/signature.h - minisign-compatible signatures ---===//
//
// Ed25519 signing and verification in minisign's formats, so that keys and
// signatures move freely between ireepkg and `minisign`:
//
//   public key  (.pub)      untrusted comment: minisign public key <KEYID>
//                           base64("Ed" || key id[8] || public key[32])
//
//   secret key  (.key)      untrusted comment: <text>
//                           base64("Ed" || kdf || "B2" || salt[32] ||
//                                  opslimit[8 LE] || memlimit[8 LE] ||
//                                  (key id[8] || secret key[64] ||
//                                   checksum[32]) XOR scrypt(password))
//                           kdf is "Sc" (scrypt) or two zero bytes (no
//                           password, nothing XORed); checksum is
//                           BLAKE2b-256("Ed" || key id || secret key).
//
//   signature   (.minisig)  untrusted comment: <text>
//                           base64(alg || key id[8] || signature[64])
//                           trusted comment: <text>
//                           base64(global signature[64])
//                           alg "ED" signs BLAKE2b-512 of the file
//                           (prehashed, minisign's default), "Ed" the file
//                           itself (legacy); the global signature signs
//                           signature[64] || trusted comment text.
//
// A key id is 8 random bytes, shown (as minisign shows it) as the
// upper-case hex of its little-endian 64-bit value, without leading zeros.
//
// Verification checks, in order: the key id, the signature over the file,
// and the global signature over the trusted comment. Every failure is an
// Error naming the file and the check that failed.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_SIGNATURE_H
#define IREEPKG_SIGNATURE_H

#include "ireepkg/base/error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ireepkg::signing {

inline constexpr size_t kKeyIdSize = 8;
inline constexpr size_t kPublicKeySize = 32;
inline constexpr size_t kSecretKeySize = 64; ///< Ed25519 seed + public key
inline constexpr size_t kSignatureSize = 64;
/// Longest comments ireepkg writes. minisign reads lines into 1024- and
/// 8192-byte buffers with their prefixes; these lengths are tested against
/// it.
inline constexpr size_t kMaxUntrustedComment = 1000;
inline constexpr size_t kMaxTrustedComment = 8000;

using KeyId = std::array<uint8_t, kKeyIdSize>;
using SignatureBytes = std::array<uint8_t, kSignatureSize>;

/// "B2D0957CE2F0A4D7": the key id as minisign prints it (upper-case hex of
/// the little-endian value, no leading zeros: "A9B8AB30AD22616").
std::string keyIdHex(const KeyId &id);

//===----------------------------------------------------------------------===//
// Public keys
//===----------------------------------------------------------------------===//

struct PublicKey {
  KeyId keyId{};
  std::array<uint8_t, kPublicKeySize> key{};

  bool operator==(const PublicKey &) const = default;
};

std::string keyIdHex(const PublicKey &key);

/// The key's base64 line ("RW..."), what `minisign -P` takes.
std::string publicKeyBase64(const PublicKey &key);

/// A whole .pub file. An empty comment means "minisign public key <KEYID>".
std::string serializePublicKey(const PublicKey &key,
                               std::string_view comment = {});

/// Parses either the base64 line alone or a whole .pub file. `origin`
/// names the input in errors (a path, or empty).
Expected<PublicKey> parsePublicKey(std::string_view text,
                                   const std::string &origin = {});

/// `keyOrPath` is a public key's base64 text or the path of a .pub file.
Expected<PublicKey> loadPublicKey(const std::string &keyOrPath);

//===----------------------------------------------------------------------===//
// Secret keys
//===----------------------------------------------------------------------===//

/// scrypt (crypto_pwhash_scryptsalsa208sha256) cost of an encrypted key.
struct KdfLimits {
  uint64_t opsLimit = 0;
  uint64_t memLimit = 0;
};

/// What minisign uses for new keys (libsodium's "sensitive" limits: 1 GiB,
/// about two seconds).
inline constexpr KdfLimits kMinisignKdfLimits{33554432, 1073741824};
/// libsodium's "interactive" limits (16 MiB); for tests.
inline constexpr KdfLimits kInteractiveKdfLimits{524288, 16777216};

/// A usable (decrypted) secret key. Its bytes are wiped on destruction.
struct SecretKey {
  KeyId keyId{};
  std::array<uint8_t, kSecretKeySize> key{}; ///< seed[32] || public key[32]

  SecretKey() = default;
  SecretKey(const SecretKey &) = default;
  SecretKey &operator=(const SecretKey &) = default;
  ~SecretKey();

  PublicKey publicKey() const;
};

/// A secret key file as stored: parsed, not yet decrypted.
struct SecretKeyFile {
  std::string origin;  ///< path, for errors
  std::string comment; ///< the untrusted comment
  bool encrypted = false;
  KdfLimits limits;
  std::array<uint8_t, 32> salt{};
  /// key id[8] || secret key[64] || checksum[32], XORed when encrypted.
  std::array<uint8_t, kKeyIdSize + kSecretKeySize + 32> sealed{};

  SecretKeyFile() = default;
  SecretKeyFile(const SecretKeyFile &) = default;
  SecretKeyFile &operator=(const SecretKeyFile &) = default;
  ~SecretKeyFile();
};

Expected<SecretKeyFile> parseSecretKeyFile(std::string_view text,
                                           const std::string &origin = {});
Expected<SecretKeyFile> readSecretKeyFile(const std::string &path);

/// Decrypts (when encrypted; `password` is then required) and checks the
/// key: its checksum and that its public half belongs to its seed. A wrong
/// password is an Integrity error "wrong password or corrupted secret key
/// (checksum mismatch)".
Expected<SecretKey> unlockSecretKey(const SecretKeyFile &file,
                                    std::optional<std::string_view> password);

/// A password kept in a file: its first line, without the line break.
/// An empty first line is an error.
Expected<std::string> readPasswordFile(const std::string &path);

/// readSecretKeyFile + unlockSecretKey.
Expected<SecretKey> loadSecretKey(const std::string &path,
                                  std::optional<std::string_view> password);

/// A whole .key file, encrypted with `password` (fresh salt) or unencrypted
/// when there is none. An empty comment means minisign's default.
Expected<std::string> serializeSecretKey(
    const SecretKey &key, std::optional<std::string_view> password,
    KdfLimits limits = kMinisignKdfLimits, std::string_view comment = {});

//===----------------------------------------------------------------------===//
// Key pairs
//===----------------------------------------------------------------------===//

struct KeyPair {
  PublicKey publicKey;
  SecretKey secretKey;
};

/// A fresh Ed25519 key pair with a random key id.
KeyPair generateKeyPair();

struct WriteKeyPairOptions {
  std::optional<std::string> password; ///< none: an unencrypted secret key
  KdfLimits limits = kMinisignKdfLimits;
  std::string comment; ///< untrusted comment of both files; empty: defaults
  bool force = false;  ///< replace existing files
};

struct KeyPairPaths {
  std::string publicKey; ///< <base>.pub
  std::string secretKey; ///< <base>.key
};

/// Writes <base>.pub (mode 0644) and <base>.key (mode 0600), each
/// atomically. Without `force`, fails with ErrorCode::Conflict, writing
/// nothing, if either exists.
Expected<KeyPairPaths> writeKeyPair(const KeyPair &pair,
                                    const std::string &base,
                                    const WriteKeyPairOptions &options);

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

struct Signature {
  bool prehashed = true; ///< "ED" (BLAKE2b-512 of the data) or "Ed"
  KeyId keyId{};
  SignatureBytes signature{};
  std::string untrustedComment;
  std::string trustedComment;
  SignatureBytes globalSignature{}; ///< over signature || trustedComment
};

/// Parses a .minisig file; errors are "malformed signature file: ..." with
/// the line.
Expected<Signature> parseSignature(std::string_view text,
                                   const std::string &origin = {});
std::string serializeSignature(const Signature &signature);

struct SignOptions {
  std::string trustedComment;
  std::string untrustedComment = "signature from ireepkg secret key";
  bool prehash = true; ///< false: minisign's legacy format (`-l`)
};

/// "timestamp:<unixTime>\tfile:<basename of path>\thashed", minisign's
/// default trusted comment (without "\thashed" for a legacy signature).
std::string defaultTrustedComment(const std::string &path, int64_t unixTime,
                                  bool prehashed = true);

Expected<Signature> signBuffer(const SecretKey &key, std::string_view data,
                               const SignOptions &options);
/// Streams the file through BLAKE2b-512 (prehashed); the legacy format
/// needs the whole file in memory and refuses files over 1 GiB.
Expected<Signature> signFile(const SecretKey &key, const std::string &path,
                             const SignOptions &options);

/// Writes a .minisig file atomically.
Status writeSignatureFile(const Signature &signature, const std::string &path);

/// Reads and parses a .minisig file.
Expected<Signature> readSignatureFile(const std::string &path);

struct VerifyOptions {
  bool requirePrehashed = false; ///< refuse legacy signatures (minisign -H)
};

struct Verified {
  KeyId keyId{};
  bool prehashed = true;
  std::string trustedComment;
};

/// Checks `signature` over `data`. `dataName` and `signatureName` name the
/// two in errors (Location::file).
Expected<Verified> verifyBuffer(const PublicKey &key, std::string_view data,
                                const Signature &signature,
                                const std::string &dataName = {},
                                const std::string &signatureName = {},
                                const VerifyOptions &options = {});

/// Checks the file at `path` against its signature file (default:
/// <path>.minisig).
Expected<Verified> verifyFile(const PublicKey &key, const std::string &path,
                              const std::string &signaturePath = {},
                              const VerifyOptions &options = {});

} // namespace ireepkg::signing

#endif // IREEPKG_SIGNATURE_H
