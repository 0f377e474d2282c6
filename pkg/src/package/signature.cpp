//===- pkg/src/package/signature.cpp - minisign-compatible signatures -----===//
//
// Key, secret-key and signature files in minisign's formats (see
// ireepkg/signature.h), on libsodium: Ed25519 (crypto_sign), BLAKE2b
// (crypto_generichash) for prehashing and key checksums, and scrypt
// (crypto_pwhash_scryptsalsa208sha256) for password-encrypted secret keys.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/base/base64.h"
#include "ireepkg/base/text.h"

#include "ireepkg/base/file_util.h"

#include <sodium.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ireepkg::signing {

namespace {

constexpr char kUntrustedPrefix[] = "untrusted comment: ";
constexpr char kTrustedPrefix[] = "trusted comment: ";
constexpr size_t kUntrustedPrefixLen = sizeof kUntrustedPrefix - 1;
constexpr size_t kTrustedPrefixLen = sizeof kTrustedPrefix - 1;
constexpr size_t kChecksumSize = 32;
constexpr size_t kSaltSize = 32;
constexpr size_t kSealedSize = kKeyIdSize + kSecretKeySize + kChecksumSize;
constexpr size_t kPublicKeyBlobSize = 2 + kKeyIdSize + kPublicKeySize; // 42
constexpr size_t kSignatureBlobSize = 2 + kKeyIdSize + kSignatureSize; // 74
constexpr size_t kSecretKeyBlobSize =
    2 + 2 + 2 + kSaltSize + 8 + 8 + kSealedSize; // 158
constexpr size_t kPrehashSize = 64;
/// Legacy (non-prehashed) signatures sign the whole file, in memory.
constexpr size_t kMaxLegacyFileSize = size_t(1) << 30;
/// Key and signature files are a few hundred bytes; refuse anything huge.
constexpr size_t kMaxKeyFileSize = 64 << 10;
constexpr size_t kMaxSignatureFileSize = 1 << 20;
/// A damaged or hostile secret key must not make scrypt run for hours or
/// allocate without bound: 32 times minisign's cost, 4 GiB.
constexpr uint64_t kMaxOpsLimit = uint64_t(1) << 30;
constexpr uint64_t kMaxMemLimit = uint64_t(4) << 30;

constexpr char kAlgEd[2] = {'E', 'd'};
constexpr char kAlgPrehashed[2] = {'E', 'D'};
constexpr char kKdfScrypt[2] = {'S', 'c'};
constexpr char kKdfNone[2] = {0, 0};
constexpr char kChecksumBlake2b[2] = {'B', '2'};

void initSodium() {
  static const int rc = sodium_init();
  (void)rc; // -1 only when the system has no randomness source at all
}


uint64_t readLe64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

void writeLe64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}

/// The lines of a small text file: '\r' before '\n' dropped, trailing
/// empty lines dropped.
std::vector<std::string_view> fileLines(std::string_view text) {
  std::vector<std::string_view> lines = splitLines(text);
  for (std::string_view &line : lines)
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
  while (!lines.empty() &&
         lines.back().find_first_not_of(" \t") == std::string_view::npos)
    lines.pop_back();
  return lines;
}

/// Spaces and tabs only: line breaks were split on already.
std::string_view trimBlanks(std::string_view s) { return trim(s, " \t"); }

/// Two algorithm bytes for a message: "Ed", or "\x00\x01" for binary.
std::string showAlgorithm(const uint8_t *p) {
  std::string out;
  for (int i = 0; i < 2; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      out += static_cast<char>(p[i]);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
      out += buf;
    }
  }
  return out;
}

/// A comment must be one line that minisign can read back.
Status checkComment(std::string_view comment, size_t maxBytes,
                    const char *what) {
  if (comment.find_first_of("\r\n") != std::string_view::npos)
    return makeError(ErrorCode::Invalid,
                     std::string(what) + " must be a single line", Location{},
                     "remove the line breaks");
  if (comment.size() > maxBytes)
    return makeError(ErrorCode::Invalid,
                     std::string(what) + " is " +
                         std::to_string(comment.size()) + " bytes; at most " +
                         std::to_string(maxBytes) + " fit in a minisign file");
  if (comment.find('\0') != std::string_view::npos)
    return makeError(ErrorCode::Invalid,
                     std::string(what) + " must not contain NUL bytes");
  return ok();
}

void checksum(const KeyId &id, const std::array<uint8_t, kSecretKeySize> &sk,
              uint8_t out[kChecksumSize]) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, kChecksumSize);
  crypto_generichash_update(&st, reinterpret_cast<const uint8_t *>(kAlgEd), 2);
  crypto_generichash_update(&st, id.data(), id.size());
  crypto_generichash_update(&st, sk.data(), sk.size());
  crypto_generichash_final(&st, out, kChecksumSize);
  sodium_memzero(&st, sizeof st);
}

/// The scrypt key stream that encrypts a secret key's sealed block.
Status deriveStream(std::string_view password, const uint8_t *salt,
                    KdfLimits limits, uint8_t out[kSealedSize],
                    const std::string &origin) {
  if (limits.opsLimit > kMaxOpsLimit || limits.memLimit > kMaxMemLimit)
    return makeError(
        ErrorCode::Unsupported,
        "secret key asks for scrypt limits beyond what ireepkg accepts "
        "(opslimit " +
            std::to_string(limits.opsLimit) + ", memlimit " +
            std::to_string(limits.memLimit) + ")",
        Location::inFile(origin), "the file is probably corrupted");
  if (crypto_pwhash_scryptsalsa208sha256(
          out, kSealedSize, password.data(), password.size(), salt,
          limits.opsLimit, static_cast<size_t>(limits.memLimit)) != 0)
    return makeError(ErrorCode::Io,
                     "cannot derive the key from the password (scrypt with "
                     "opslimit " +
                         std::to_string(limits.opsLimit) + ", memlimit " +
                         std::to_string(limits.memLimit) +
                         " failed: " + std::strerror(errno) + ")",
                     Location::inFile(origin));
  return ok();
}

using Prehash = std::array<uint8_t, kPrehashSize>;

Prehash blake2b512(std::string_view data) {
  Prehash out;
  crypto_generichash(out.data(), out.size(),
                     reinterpret_cast<const uint8_t *>(data.data()),
                     data.size(), nullptr, 0);
  return out;
}

/// BLAKE2b-512 of a file of any size, streamed.
Expected<Prehash> blake2b512File(const std::string &path) {
  auto opened = fsutil::openForReading(path);
  if (!opened)
    return Unexpected(opened.error());
  int fd = opened->release();
  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, kPrehashSize);
  std::vector<uint8_t> buf(1 << 17);
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return Unexpected(fsutil::ioError("read failed", path, e));
    }
    if (n == 0)
      break;
    crypto_generichash_update(&st, buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  Prehash out;
  crypto_generichash_final(&st, out.data(), out.size());
  return out;
}

Expected<std::string> readLegacyMessage(const std::string &path) {
  auto data = fsutil::readFile(path, kMaxLegacyFileSize);
  if (!data && data.error().code == ErrorCode::Invalid)
    return makeError(ErrorCode::Unsupported,
                     "legacy (non-prehashed) signatures need the whole file "
                     "in memory; files over 1 GiB are refused",
                     Location::inFile(path), "use prehashed signatures (minisign's default)");
  return data;
}

Signature makeSignature(const SecretKey &key, bool prehashed,
                        std::string_view message, const SignOptions &options) {
  Signature sig;
  sig.prehashed = prehashed;
  sig.keyId = key.keyId;
  sig.untrustedComment = options.untrustedComment;
  sig.trustedComment = options.trustedComment;
  crypto_sign_detached(sig.signature.data(), nullptr,
                       reinterpret_cast<const uint8_t *>(message.data()),
                       message.size(), key.key.data());
  std::string global(sig.signature.begin(), sig.signature.end());
  global += sig.trustedComment;
  crypto_sign_detached(sig.globalSignature.data(), nullptr,
                       reinterpret_cast<const uint8_t *>(global.data()),
                       global.size(), key.key.data());
  return sig;
}

Status checkSignOptions(const SignOptions &options) {
  if (Status s = checkComment(options.untrustedComment, kMaxUntrustedComment,
                              "the untrusted comment");
      !s)
    return s;
  return checkComment(options.trustedComment, kMaxTrustedComment,
                      "the trusted comment");
}

/// The checks shared by verifyBuffer and verifyFile; `message` is what the
/// signature signs (the prehash, or the data itself).
Expected<Verified> verifyMessage(const PublicKey &key, std::string_view message,
                                 const Signature &sig,
                                 const std::string &dataName,
                                 const std::string &signatureName) {
  initSodium();
  if (sig.keyId != key.keyId)
    return makeError(ErrorCode::Integrity,
                     "signature was made with key " + keyIdHex(sig.keyId) +
                         ", not " + keyIdHex(key.keyId),
                     Location::inFile(signatureName),
                     "verify with the public key whose id is " +
                         keyIdHex(sig.keyId) +
                         ", or ask the signer which key they used");
  bool fileOk = crypto_sign_verify_detached(
                    sig.signature.data(),
                    reinterpret_cast<const uint8_t *>(message.data()),
                    message.size(), key.key.data()) == 0;
  std::string global(sig.signature.begin(), sig.signature.end());
  global += sig.trustedComment;
  bool commentOk = crypto_sign_verify_detached(
                       sig.globalSignature.data(),
                       reinterpret_cast<const uint8_t *>(global.data()),
                       global.size(), key.key.data()) == 0;
  if (!fileOk && !commentOk)
    return makeError(ErrorCode::Integrity,
                     "signature is corrupted: it verifies against neither "
                     "the file nor its trusted comment",
                     Location::inFile(signatureName),
                     "the signature line was altered, or it was not made "
                     "with this key");
  if (!fileOk)
    return makeError(ErrorCode::Integrity, "signature does not match the file",
                     Location::inFile(dataName),
                     "the file changed after it was signed, or the signature "
                     "belongs to another file");
  if (!commentOk)
    return makeError(ErrorCode::Integrity, "trusted comment was altered",
                     Location::inFile(signatureName),
                     "the trusted comment (or the signature under it) was "
                     "edited after signing");
  Verified v;
  v.keyId = sig.keyId;
  v.prehashed = sig.prehashed;
  v.trustedComment = sig.trustedComment;
  return v;
}

Status checkPrehashedRequirement(const Signature &sig,
                                 const VerifyOptions &options,
                                 const std::string &signatureName) {
  if (options.requirePrehashed && !sig.prehashed)
    return makeError(ErrorCode::Integrity,
                     "signature is in the legacy (non-prehashed) format, and "
                     "only prehashed signatures are accepted",
                     Location::inFile(signatureName),
                     "sign again without minisign's -l option");
  return ok();
}

/// Creates `path` from `tmp` without replacing an existing file.
Status installNoReplace(const std::string &tmp, const std::string &path) {
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(),
                  RENAME_NOREPLACE) == 0)
    return ok();
  int e = errno;
  if (e == EINVAL || e == ENOSYS) { // file system without RENAME_NOREPLACE
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return ok();
    }
    e = errno;
  }
  ::unlink(tmp.c_str());
  if (e == EEXIST)
    return makeError(ErrorCode::Conflict, "already exists", Location::inFile(path),
                     "remove it, choose another name, or overwrite it with "
                     "--force");
  return Unexpected(fsutil::ioError("cannot create", path, e));
}

std::string tempPathFor(const std::string &path) {
  std::filesystem::path p(path);
  return (p.parent_path() /
          ("." + p.filename().string() + ".tmp." + std::to_string(::getpid())))
      .string();
}

} // namespace

//===----------------------------------------------------------------------===//
// Key ids and public keys
//===----------------------------------------------------------------------===//

std::string keyIdHex(const KeyId &id) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llX",
                static_cast<unsigned long long>(readLe64(id.data())));
  return buf;
}

std::string keyIdHex(const PublicKey &key) { return keyIdHex(key.keyId); }

std::string publicKeyBase64(const PublicKey &key) {
  uint8_t blob[kPublicKeyBlobSize];
  std::memcpy(blob, kAlgEd, 2);
  std::memcpy(blob + 2, key.keyId.data(), kKeyIdSize);
  std::memcpy(blob + 2 + kKeyIdSize, key.key.data(), kPublicKeySize);
  return base64Encode(blob, sizeof blob);
}

std::string serializePublicKey(const PublicKey &key, std::string_view comment) {
  std::string out = kUntrustedPrefix;
  if (comment.empty())
    out += "minisign public key " + keyIdHex(key);
  else
    out += comment;
  out += '\n';
  out += publicKeyBase64(key);
  out += '\n';
  return out;
}

Expected<PublicKey> parsePublicKey(std::string_view text,
                                   const std::string &origin) {
  const std::string hint =
      "a minisign public key is a line of 56 base64 characters starting "
      "with \"RW\", or a .pub file holding one under an untrusted comment";
  std::vector<std::string_view> lines = fileLines(text);
  if (lines.empty())
    return makeError(ErrorCode::Parse, "malformed public key: it is empty",
                     Location::inFile(origin), hint);
  uint32_t keyLine = 1;
  if (lines.size() >= 2) {
    if (!startsWith(lines[0], kUntrustedPrefix))
      return makeError(ErrorCode::Parse,
                       "malformed public key: line 1 must start with "
                       "\"untrusted comment: \"",
                       Location::inFile(origin, 1), hint);
    if (lines.size() > 2)
      return makeError(ErrorCode::Parse,
                       "malformed public key: unexpected text after line 2",
                       Location::inFile(origin, 3), hint);
    keyLine = 2;
  }
  std::string_view b64 = trimBlanks(lines[keyLine - 1]);
  Location where = Location::inFile(origin, lines.size() >= 2 ? keyLine : 0);
  auto blob = base64Decode(b64);
  if (!blob)
    return makeError(ErrorCode::Parse, "malformed public key: not valid base64",
                     where, hint);
  if (blob->size() != kPublicKeyBlobSize)
    return makeError(ErrorCode::Parse,
                     "malformed public key: it decodes to " +
                         std::to_string(blob->size()) + " bytes, expected " +
                         std::to_string(kPublicKeyBlobSize),
                     where, hint);
  if (std::memcmp(blob->data(), kAlgEd, 2) != 0)
    return makeError(ErrorCode::Unsupported,
                     "malformed public key: unknown signature algorithm \"" +
                         showAlgorithm(blob->data()) + "\" (expected \"Ed\")",
                     where, hint);
  PublicKey key;
  std::memcpy(key.keyId.data(), blob->data() + 2, kKeyIdSize);
  std::memcpy(key.key.data(), blob->data() + 2 + kKeyIdSize, kPublicKeySize);
  return key;
}

Expected<PublicKey> loadPublicKey(const std::string &keyOrPath) {
  // The base64 text itself? ('/' is a base64 character, so try it first.)
  if (keyOrPath.find('\n') == std::string::npos) {
    auto blob = base64Decode(trimBlanks(keyOrPath));
    if (blob && blob->size() == kPublicKeyBlobSize)
      return parsePublicKey(keyOrPath);
  }
  struct stat st;
  if (::stat(keyOrPath.c_str(), &st) != 0) {
    int e = errno;
    bool looksLikeBase64 = keyOrPath.size() >= 40 &&
                           keyOrPath.find_first_not_of(
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                               "qrstuvwxyz0123456789+/=") == std::string::npos;
    if (looksLikeBase64)
      return parsePublicKey(keyOrPath);
    if (e == ENOENT)
      return makeError(ErrorCode::NotFound, "no such public key file",
                       Location::inFile(keyOrPath),
                       "give the public key as its base64 text (\"RW...\") "
                       "or as a minisign .pub file");
    return Unexpected(fsutil::ioError("cannot open", keyOrPath, e));
  }
  auto text = fsutil::readFile(keyOrPath, kMaxKeyFileSize);
  if (!text)
    return Unexpected(text.error());
  return parsePublicKey(*text, keyOrPath);
}

//===----------------------------------------------------------------------===//
// Secret keys
//===----------------------------------------------------------------------===//

SecretKey::~SecretKey() { sodium_memzero(key.data(), key.size()); }

PublicKey SecretKey::publicKey() const {
  PublicKey pk;
  pk.keyId = keyId;
  std::memcpy(pk.key.data(), key.data() + 32, kPublicKeySize);
  return pk;
}

SecretKeyFile::~SecretKeyFile() {
  sodium_memzero(sealed.data(), sealed.size());
}

Expected<SecretKeyFile> parseSecretKeyFile(std::string_view text,
                                           const std::string &origin) {
  const std::string hint = "a minisign secret key file has an untrusted "
                           "comment line and a line of base64";
  std::vector<std::string_view> lines = fileLines(text);
  if (lines.size() < 2)
    return makeError(ErrorCode::Parse,
                     "malformed secret key: expected 2 lines, found " +
                         std::to_string(lines.size()),
                     Location::inFile(origin), hint);
  if (lines.size() > 2)
    return makeError(ErrorCode::Parse,
                     "malformed secret key: unexpected text after line 2",
                     Location::inFile(origin, 3), hint);
  if (!startsWith(lines[0], kUntrustedPrefix))
    return makeError(ErrorCode::Parse,
                     "malformed secret key: line 1 must start with "
                     "\"untrusted comment: \"",
                     Location::inFile(origin, 1), hint);
  auto blob = base64Decode(trimBlanks(lines[1]));
  if (!blob)
    return makeError(ErrorCode::Parse, "malformed secret key: not valid base64",
                     Location::inFile(origin, 2), hint);
  struct Wipe {
    std::vector<uint8_t> &v;
    ~Wipe() { sodium_memzero(v.data(), v.size()); }
  } wipe{*blob};
  if (blob->size() != kSecretKeyBlobSize)
    return makeError(ErrorCode::Parse,
                     "malformed secret key: it decodes to " +
                         std::to_string(blob->size()) + " bytes, expected " +
                         std::to_string(kSecretKeyBlobSize),
                     Location::inFile(origin, 2), hint);
  const uint8_t *p = blob->data();
  if (std::memcmp(p, kAlgEd, 2) != 0)
    return makeError(ErrorCode::Unsupported,
                     "secret key has unknown signature algorithm \"" +
                         showAlgorithm(p) + "\" (expected \"Ed\")",
                     Location::inFile(origin, 2));
  bool encrypted = std::memcmp(p + 2, kKdfScrypt, 2) == 0;
  if (!encrypted && std::memcmp(p + 2, kKdfNone, 2) != 0)
    return makeError(ErrorCode::Unsupported,
                     "secret key has unknown key derivation algorithm \"" +
                         showAlgorithm(p + 2) + "\" (expected \"Sc\" or none)",
                     Location::inFile(origin, 2));
  if (std::memcmp(p + 4, kChecksumBlake2b, 2) != 0)
    return makeError(ErrorCode::Unsupported,
                     "secret key has unknown checksum algorithm \"" +
                         showAlgorithm(p + 4) + "\" (expected \"B2\")",
                     Location::inFile(origin, 2));
  SecretKeyFile file;
  file.origin = origin;
  file.comment = std::string(lines[0].substr(kUntrustedPrefixLen));
  file.encrypted = encrypted;
  std::memcpy(file.salt.data(), p + 6, kSaltSize);
  file.limits.opsLimit = readLe64(p + 6 + kSaltSize);
  file.limits.memLimit = readLe64(p + 6 + kSaltSize + 8);
  std::memcpy(file.sealed.data(), p + 6 + kSaltSize + 16, kSealedSize);
  return file;
}

Expected<SecretKeyFile> readSecretKeyFile(const std::string &path) {
  auto text = fsutil::readFile(path, kMaxKeyFileSize);
  if (!text)
    return Unexpected(text.error());
  auto file = parseSecretKeyFile(*text, path);
  sodium_memzero(text->data(), text->size());
  return file;
}

Expected<SecretKey> unlockSecretKey(const SecretKeyFile &file,
                                    std::optional<std::string_view> password) {
  initSodium();
  std::array<uint8_t, kSealedSize> block = file.sealed;
  struct Wipe {
    uint8_t *p;
    size_t n;
    ~Wipe() { sodium_memzero(p, n); }
  } wipeBlock{block.data(), block.size()};
  if (file.encrypted) {
    if (!password)
      return makeError(ErrorCode::Invalid,
                       "the secret key is encrypted; its password is needed",
                       Location::inFile(file.origin));
    std::array<uint8_t, kSealedSize> stream;
    Wipe wipeStream{stream.data(), stream.size()};
    if (Status s = deriveStream(*password, file.salt.data(), file.limits,
                                stream.data(), file.origin);
        !s)
      return Unexpected(s.error());
    for (size_t i = 0; i < kSealedSize; ++i)
      block[i] ^= stream[i];
  }
  SecretKey key;
  std::memcpy(key.keyId.data(), block.data(), kKeyIdSize);
  std::memcpy(key.key.data(), block.data() + kKeyIdSize, kSecretKeySize);
  const uint8_t *stored = block.data() + kKeyIdSize + kSecretKeySize;
  uint8_t expected[kChecksumSize];
  checksum(key.keyId, key.key, expected);
  // minisign 0.11 writes an all-zero checksum into unencrypted keys.
  static const uint8_t zeros[kChecksumSize] = {};
  bool unchecked =
      !file.encrypted && std::memcmp(stored, zeros, kChecksumSize) == 0;
  if (!unchecked && sodium_memcmp(stored, expected, kChecksumSize) != 0)
    return makeError(ErrorCode::Integrity,
                     file.encrypted ? "wrong password or corrupted secret key "
                                      "(checksum mismatch)"
                                    : "corrupted secret key (checksum "
                                      "mismatch)",
                     Location::inFile(file.origin));
  uint8_t pk[crypto_sign_PUBLICKEYBYTES];
  uint8_t sk[crypto_sign_SECRETKEYBYTES];
  crypto_sign_seed_keypair(pk, sk, key.key.data());
  sodium_memzero(sk, sizeof sk);
  if (std::memcmp(pk, key.key.data() + 32, kPublicKeySize) != 0)
    return makeError(ErrorCode::Integrity,
                     "corrupted secret key (its public half does not belong "
                     "to its seed)",
                     Location::inFile(file.origin));
  return key;
}

Expected<std::string> readPasswordFile(const std::string &path) {
  auto text = fsutil::readFile(path, kMaxKeyFileSize);
  if (!text)
    return Unexpected(text.error());
  std::string password = text->substr(0, text->find('\n'));
  sodium_memzero(text->data(), text->size());
  if (!password.empty() && password.back() == '\r')
    password.pop_back();
  if (password.empty())
    return makeError(ErrorCode::Invalid, "the password file is empty", Location::inFile(path),
                     "put the password on the file's first line");
  return password;
}

Expected<SecretKey> loadSecretKey(const std::string &path,
                                  std::optional<std::string_view> password) {
  auto file = readSecretKeyFile(path);
  if (!file)
    return Unexpected(file.error());
  return unlockSecretKey(*file, password);
}

Expected<std::string>
serializeSecretKey(const SecretKey &key,
                   std::optional<std::string_view> password, KdfLimits limits,
                   std::string_view comment) {
  initSodium();
  if (Status s = checkComment(comment, kMaxUntrustedComment,
                              "the secret key's comment");
      !s)
    return Unexpected(s.error());
  if (password && password->empty())
    return makeError(ErrorCode::Invalid, "the password is empty");
  std::array<uint8_t, kSecretKeyBlobSize> blob{};
  struct Wipe {
    uint8_t *p;
    size_t n;
    ~Wipe() { sodium_memzero(p, n); }
  } wipeBlob{blob.data(), blob.size()};
  uint8_t *p = blob.data();
  std::memcpy(p, kAlgEd, 2);
  std::memcpy(p + 2, password ? kKdfScrypt : kKdfNone, 2);
  std::memcpy(p + 4, kChecksumBlake2b, 2);
  uint8_t *salt = p + 6;
  uint8_t *sealed = p + 6 + kSaltSize + 16;
  std::memcpy(sealed, key.keyId.data(), kKeyIdSize);
  std::memcpy(sealed + kKeyIdSize, key.key.data(), kSecretKeySize);
  checksum(key.keyId, key.key, sealed + kKeyIdSize + kSecretKeySize);
  if (password) {
    randombytes_buf(salt, kSaltSize);
    writeLe64(p + 6 + kSaltSize, limits.opsLimit);
    writeLe64(p + 6 + kSaltSize + 8, limits.memLimit);
    std::array<uint8_t, kSealedSize> stream;
    Wipe wipeStream{stream.data(), stream.size()};
    if (Status s = deriveStream(*password, salt, limits, stream.data(), {}); !s)
      return Unexpected(s.error());
    for (size_t i = 0; i < kSealedSize; ++i)
      sealed[i] ^= stream[i];
  }
  std::string out = kUntrustedPrefix;
  if (!comment.empty())
    out += comment;
  else
    out += password ? "minisign encrypted secret key"
                    : "minisign unencrypted secret key";
  out += '\n';
  out += base64Encode(blob.data(), blob.size());
  out += '\n';
  return out;
}

//===----------------------------------------------------------------------===//
// Key pairs
//===----------------------------------------------------------------------===//

KeyPair generateKeyPair() {
  initSodium();
  KeyPair pair;
  uint8_t pk[crypto_sign_PUBLICKEYBYTES];
  crypto_sign_keypair(pk, pair.secretKey.key.data());
  randombytes_buf(pair.secretKey.keyId.data(), kKeyIdSize);
  pair.publicKey = pair.secretKey.publicKey();
  return pair;
}

Expected<KeyPairPaths> writeKeyPair(const KeyPair &pair,
                                    const std::string &base,
                                    const WriteKeyPairOptions &options) {
  KeyPairPaths paths{base + ".pub", base + ".key"};
  if (Status s = checkComment(options.comment, kMaxUntrustedComment,
                              "the key comment");
      !s)
    return Unexpected(s.error());
  if (!options.force) {
    for (const std::string &path : {paths.secretKey, paths.publicKey}) {
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0)
        return makeError(ErrorCode::Conflict, "already exists", Location::inFile(path),
                         "remove it, choose another name, or overwrite it "
                         "with --force");
    }
  }
  std::optional<std::string_view> password;
  if (options.password)
    password = *options.password;
  auto secretText = serializeSecretKey(pair.secretKey, password, options.limits,
                                       options.comment);
  if (!secretText)
    return Unexpected(secretText.error());
  std::string publicText = serializePublicKey(pair.publicKey, options.comment);

  // The secret key first: a public key without its secret is useless, but
  // harmless.
  const std::string secretTmp = tempPathFor(paths.secretKey);
  ::unlink(secretTmp.c_str());
  Status s = fsutil::writeNewFile(secretTmp, *secretText, 0600);
  sodium_memzero(secretText->data(), secretText->size());
  if (!s)
    return Unexpected(s.error());
  if (::chmod(secretTmp.c_str(), 0600) != 0) {
    int e = errno;
    ::unlink(secretTmp.c_str());
    return Unexpected(fsutil::ioError("cannot set mode", secretTmp, e));
  }
  if (options.force) {
    if (::rename(secretTmp.c_str(), paths.secretKey.c_str()) != 0) {
      int e = errno;
      ::unlink(secretTmp.c_str());
      return Unexpected(fsutil::ioError("cannot replace", paths.secretKey, e));
    }
  } else if (Status r = installNoReplace(secretTmp, paths.secretKey); !r) {
    return Unexpected(r.error());
  }

  if (options.force) {
    if (Status w = fsutil::writeFileAtomic(paths.publicKey, publicText, 0644);
        !w)
      return Unexpected(w.error());
  } else {
    const std::string publicTmp = tempPathFor(paths.publicKey);
    ::unlink(publicTmp.c_str());
    Status w = fsutil::writeNewFile(publicTmp, publicText, 0644);
    if (w)
      w = installNoReplace(publicTmp, paths.publicKey);
    else
      ::unlink(publicTmp.c_str());
    if (!w) {
      ::unlink(paths.secretKey.c_str()); // ours: created above
      return Unexpected(w.error());
    }
  }
  std::filesystem::path dir = std::filesystem::path(base).parent_path();
  if (Status d = fsutil::fsyncPath(dir.empty() ? "." : dir.string()); !d)
    return Unexpected(d.error());
  return paths;
}

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

Expected<Signature> parseSignature(std::string_view text,
                                   const std::string &origin) {
  const std::string hint =
      "a .minisig file has 4 lines: an untrusted comment, the signature "
      "(base64), a trusted comment and the global signature (base64)";
  auto malformed = [&](const std::string &what, uint32_t line = 0) {
    return makeError(ErrorCode::Parse, "malformed signature file: " + what,
                     Location::inFile(origin, line), hint);
  };
  std::vector<std::string_view> lines = fileLines(text);
  if (lines.empty())
    return malformed("it is empty");
  if (lines.size() < 4)
    return malformed("truncated: expected 4 lines, found " +
                     std::to_string(lines.size()));
  if (lines.size() > 4)
    return malformed("unexpected text after line 4", 5);
  if (!startsWith(lines[0], kUntrustedPrefix))
    return malformed("line 1 must start with \"untrusted comment: \"", 1);
  if (!startsWith(lines[2], kTrustedPrefix))
    return malformed("line 3 must start with \"trusted comment: \"", 3);

  auto blob = base64Decode(trimBlanks(lines[1]));
  if (!blob)
    return malformed("line 2 (the signature) is not valid base64", 2);
  if (blob->size() != kSignatureBlobSize)
    return malformed("line 2 (the signature) decodes to " +
                         std::to_string(blob->size()) + " bytes, expected " +
                         std::to_string(kSignatureBlobSize),
                     2);
  Signature sig;
  if (std::memcmp(blob->data(), kAlgPrehashed, 2) == 0)
    sig.prehashed = true;
  else if (std::memcmp(blob->data(), kAlgEd, 2) == 0)
    sig.prehashed = false;
  else
    return malformed("line 2: unknown signature algorithm \"" +
                         showAlgorithm(blob->data()) +
                         "\" (expected \"ED\" or \"Ed\")",
                     2);
  std::memcpy(sig.keyId.data(), blob->data() + 2, kKeyIdSize);
  std::memcpy(sig.signature.data(), blob->data() + 2 + kKeyIdSize,
              kSignatureSize);

  auto global = base64Decode(trimBlanks(lines[3]));
  if (!global)
    return malformed("line 4 (the global signature) is not valid base64", 4);
  if (global->size() != kSignatureSize)
    return malformed("line 4 (the global signature) decodes to " +
                         std::to_string(global->size()) + " bytes, expected " +
                         std::to_string(kSignatureSize),
                     4);
  std::memcpy(sig.globalSignature.data(), global->data(), kSignatureSize);
  sig.untrustedComment = std::string(lines[0].substr(kUntrustedPrefixLen));
  sig.trustedComment = std::string(lines[2].substr(kTrustedPrefixLen));
  return sig;
}

std::string serializeSignature(const Signature &sig) {
  uint8_t blob[kSignatureBlobSize];
  std::memcpy(blob, sig.prehashed ? kAlgPrehashed : kAlgEd, 2);
  std::memcpy(blob + 2, sig.keyId.data(), kKeyIdSize);
  std::memcpy(blob + 2 + kKeyIdSize, sig.signature.data(), kSignatureSize);
  std::string out = kUntrustedPrefix + sig.untrustedComment + "\n";
  out += base64Encode(blob, sizeof blob) + "\n";
  out += kTrustedPrefix + sig.trustedComment + "\n";
  out += base64Encode(sig.globalSignature.data(), kSignatureSize) + "\n";
  return out;
}

std::string defaultTrustedComment(const std::string &path, int64_t unixTime,
                                  bool prehashed) {
  return "timestamp:" + std::to_string(unixTime) +
         "\tfile:" + std::filesystem::path(path).filename().string() +
         (prehashed ? "\thashed" : "");
}

Expected<Signature> signBuffer(const SecretKey &key, std::string_view data,
                               const SignOptions &options) {
  initSodium();
  if (Status s = checkSignOptions(options); !s)
    return Unexpected(s.error());
  if (!options.prehash)
    return makeSignature(key, false, data, options);
  Prehash h = blake2b512(data);
  return makeSignature(
      key, true,
      std::string_view(reinterpret_cast<const char *>(h.data()), h.size()),
      options);
}

Expected<Signature> signFile(const SecretKey &key, const std::string &path,
                             const SignOptions &options) {
  initSodium();
  if (Status s = checkSignOptions(options); !s)
    return Unexpected(s.error());
  if (!options.prehash) {
    auto data = readLegacyMessage(path);
    if (!data)
      return Unexpected(data.error());
    return makeSignature(key, false, *data, options);
  }
  auto h = blake2b512File(path);
  if (!h)
    return Unexpected(h.error());
  return makeSignature(
      key, true,
      std::string_view(reinterpret_cast<const char *>(h->data()), h->size()),
      options);
}

Status writeSignatureFile(const Signature &signature, const std::string &path) {
  return fsutil::writeFileAtomic(path, serializeSignature(signature), 0644);
}

Expected<Signature> readSignatureFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    return makeError(ErrorCode::NotFound, "signature file not found", Location::inFile(path),
                     "a file's minisign signature is expected beside it, as "
                     "<file>.minisig");
  auto text = fsutil::readFile(path, kMaxSignatureFileSize);
  if (!text) {
    if (text.error().code == ErrorCode::Invalid)
      return makeError(ErrorCode::Parse,
                       "malformed signature file: larger than " +
                           std::to_string(kMaxSignatureFileSize) + " bytes",
                       Location::inFile(path));
    return Unexpected(text.error());
  }
  return parseSignature(*text, path);
}

Expected<Verified> verifyBuffer(const PublicKey &key, std::string_view data,
                                const Signature &signature,
                                const std::string &dataName,
                                const std::string &signatureName,
                                const VerifyOptions &options) {
  if (Status s = checkPrehashedRequirement(signature, options, signatureName);
      !s)
    return Unexpected(s.error());
  if (!signature.prehashed)
    return verifyMessage(key, data, signature, dataName, signatureName);
  initSodium();
  Prehash h = blake2b512(data);
  return verifyMessage(
      key, std::string_view(reinterpret_cast<const char *>(h.data()), h.size()),
      signature, dataName, signatureName);
}

Expected<Verified> verifyFile(const PublicKey &key, const std::string &path,
                              const std::string &signaturePath,
                              const VerifyOptions &options) {
  initSodium();
  const std::string sigPath =
      signaturePath.empty() ? path + ".minisig" : signaturePath;
  auto sig = readSignatureFile(sigPath);
  if (!sig)
    return Unexpected(sig.error());
  if (Status s = checkPrehashedRequirement(*sig, options, sigPath); !s)
    return Unexpected(s.error());
  if (!sig->prehashed) {
    auto data = readLegacyMessage(path);
    if (!data)
      return Unexpected(data.error());
    return verifyMessage(key, *data, *sig, path, sigPath);
  }
  auto h = blake2b512File(path);
  if (!h)
    return Unexpected(h.error());
  return verifyMessage(
      key,
      std::string_view(reinterpret_cast<const char *>(h->data()), h->size()),
      *sig, path, sigPath);
}

} // namespace ireepkg::signing
