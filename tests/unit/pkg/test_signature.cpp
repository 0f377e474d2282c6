//===- test_signature.cpp - Tests for minisign-compatible signatures ------===//
//
// Unit tests for ireepkg/signature.h: public key, secret key and signature
// files (parsing, serialization, round trips), key generation and writing,
// signing and verification of buffers and files, and every error path with
// its message. The vectors were made by minisign 0.11 (`minisign -G -W`,
// `minisign -S`, `minisign -S -l`); Ed25519 is deterministic, so signing the
// same bytes with the same key and comments must reproduce them exactly.
// Interoperability with the real minisign tool is in
// tests/cli/test_signatures.py.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/package/signature.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace ireepkg;
using namespace ireepkg::signing;

namespace {

// minisign -G -W: an unencrypted key pair (minisign 0.11 leaves the
// checksum of an unencrypted key all zero).
const std::string kPubLine =
    "RWTXpPDifJXQsgcqVkyLZxN67axL/GX4tWbkkTAsgYPHs3KiCTbCINB6";
const std::string kPubFile =
    "untrusted comment: minisign public key B2D0957CE2F0A4D7\n" + kPubLine +
    "\n";
const std::string kKeyId = "B2D0957CE2F0A4D7";
const std::string kSecFile =
    "untrusted comment: minisign encrypted secret key\n"
    "RWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "16Tw4nyV0LKpEsKUOYCBj04TRbt/HhsZAmQjvQxRs85vGfsRV/kgYwcqVkyLZxN67axL/"
    "GX4tWbkkTAsgYPHs3KiCTbCINB6AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "=\n";
const std::string kMessage = "hello\n";
// minisign -S -s sec -m v.txt -t "vector prehashed"
const std::string kSigPrehashed =
    "untrusted comment: signature from minisign secret key\n"
    "RUTXpPDifJXQssncak0uGmH21dANMaQpGMegBXjBeU2jdflUK/cY8+QG9myA6zdOn7B7hhpr"
    "mLJ149rq7BrvfSJwPoWmmxrBGw0=\n"
    "trusted comment: vector prehashed\n"
    "upZ6Gk9UlTKPoYCVfIu95aRVdFq8EJP3eDmP1MF5kGQvqLW/iZd471fbo46XzUPePsMYy48t"
    "H98cn9oBhTwFBg==\n";
// minisign -S -l -s sec -m v.txt -t "vector legacy"
const std::string kSigLegacy =
    "untrusted comment: signature from minisign secret key\n"
    "RWTXpPDifJXQsmUlQl0XOmPh1TxfihlkYFGL+zju+8i1ezqZYbLt/4uM30YzjJ4Xc4VCWwjm"
    "ZOOyLz1sD+Fuf0Nkn5C3e2gxrgU=\n"
    "trusted comment: vector legacy\n"
    "lqPwvxVOGCy7tfKxcpFCOS+bXCw/W0Z0qA6+40Gj2qLnF9bUDJ/NARuekq6jjiV9sD0BxeMr"
    "Iq4HB8BYtiCyAg==\n";

template <typename T> T must(Expected<T> e) {
  INFO((e ? std::string() : e.error().format()));
  REQUIRE(e.has_value());
  return std::move(*e);
}

void mustOk(const Status &s) {
  INFO((s ? std::string() : s.error().format()));
  REQUIRE(s.has_value());
}

template <typename T> Error failure(Expected<T> e) {
  REQUIRE_FALSE(e.has_value());
  return e.error();
}

PublicKey vectorPublicKey() { return must(parsePublicKey(kPubFile)); }
SecretKey vectorSecretKey() {
  return must(unlockSecretKey(must(parseSecretKeyFile(kSecFile)), {}));
}

/// Replaces line `n` (1-based) of a file's text.
std::string withLine(const std::string &text, size_t n,
                     const std::string &line) {
  std::istringstream in(text);
  std::string out, l;
  for (size_t i = 1; std::getline(in, l); ++i)
    out += (i == n ? line : l) + "\n";
  return out;
}

std::string lineOf(const std::string &text, size_t n) {
  std::istringstream in(text);
  std::string l;
  for (size_t i = 1; std::getline(in, l); ++i)
    if (i == n)
      return l;
  return {};
}

/// Flips one base64 character of a line to another valid one.
std::string flipChar(std::string line, size_t at) {
  line[at] = line[at] == 'A' ? 'B' : 'A';
  return line;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("ireepkg-test-signature-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string &name) const {
    return (path / name).string();
  }
};

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t modeOf(const std::string &path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public keys
//===----------------------------------------------------------------------===//

TEST_CASE("public key: minisign's file and base64 line") {
  PublicKey fromFile = must(parsePublicKey(kPubFile, "a.pub"));
  PublicKey fromLine = must(parsePublicKey(kPubLine));
  CHECK(fromFile == fromLine);
  CHECK(keyIdHex(fromFile) == kKeyId);
  CHECK(keyIdHex(fromFile.keyId) == kKeyId);
  CHECK(publicKeyBase64(fromFile) == kPubLine);
  CHECK(serializePublicKey(fromFile) == kPubFile);
  CHECK(serializePublicKey(fromFile, "my key") ==
        "untrusted comment: my key\n" + kPubLine + "\n");
  // Windows line ends, surrounding blanks and trailing empty lines.
  CHECK(must(parsePublicKey("untrusted comment: x\r\n" + kPubLine +
                            "  \r\n\r\n")) == fromFile);
  CHECK(must(parsePublicKey("  " + kPubLine + "\n")) == fromFile);
}

TEST_CASE("public key: key id is little-endian hex") {
  KeyId id = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xab};
  CHECK(keyIdHex(id) == "AB07060504030201");
  // No leading zeros, like minisign's "%" PRIX64.
  CHECK(keyIdHex(KeyId{0x16, 0x26, 0xd2, 0x0a, 0xb3, 0x8a, 0x9b, 0x0a}) ==
        "A9B8AB30AD22616");
  CHECK(keyIdHex(KeyId{}) == "0");
}

TEST_CASE("public key: round trip of a generated key") {
  KeyPair pair = generateKeyPair();
  CHECK(pair.publicKey == pair.secretKey.publicKey());
  CHECK(must(parsePublicKey(serializePublicKey(pair.publicKey))) ==
        pair.publicKey);
  CHECK(must(parsePublicKey(publicKeyBase64(pair.publicKey))) ==
        pair.publicKey);
  CHECK(publicKeyBase64(pair.publicKey).size() == 56);
  CHECK(publicKeyBase64(pair.publicKey).rfind("RW", 0) == 0);
  KeyPair other = generateKeyPair();
  CHECK(other.publicKey.keyId != pair.publicKey.keyId);
  CHECK(other.publicKey.key != pair.publicKey.key);
}

TEST_CASE("public key: errors") {
  auto err = [](const std::string &text) {
    return failure(parsePublicKey(text, "k.pub"));
  };
  Error e = err("");
  CHECK(e.code == ErrorCode::Parse);
  CHECK(e.message == "malformed public key: it is empty");
  CHECK(e.where.file == "k.pub");
  CHECK_FALSE(e.hint.empty());

  e = err("RWTX!!!notbase64");
  CHECK(e.code == ErrorCode::Parse);
  CHECK(e.message == "malformed public key: not valid base64");

  e = err("RWTXpPDifJXQsgcq"); // 12 bytes
  CHECK(e.message ==
        "malformed public key: it decodes to 12 bytes, expected 42");

  // "Ed" -> "Ec": RWTX -> RWPX changes byte 1.
  std::string badAlg = kPubLine;
  badAlg[1] = 'W' - 1;
  e = err(badAlg);
  CHECK(e.code == ErrorCode::Unsupported);
  CHECK(e.message.rfind("malformed public key: unknown signature algorithm",
                        0) == 0);

  e = err("comment: x\n" + kPubLine + "\n");
  CHECK(e.message == "malformed public key: line 1 must start with "
                     "\"untrusted comment: \"");
  CHECK(e.where.line == 1);

  e = err(kPubFile + "extra\n");
  CHECK(e.message == "malformed public key: unexpected text after line 2");
  CHECK(e.where.line == 3);

  e = err("untrusted comment: x\nnot base64!\n");
  CHECK(e.message == "malformed public key: not valid base64");
  CHECK(e.where.line == 2);
}

TEST_CASE("public key: loading from text or a file") {
  TempDir dir;
  CHECK(must(loadPublicKey(kPubLine)) == vectorPublicKey());
  writeFile(dir / "a.pub", kPubFile);
  CHECK(must(loadPublicKey(dir / "a.pub")) == vectorPublicKey());

  Error e = failure(loadPublicKey(dir / "missing.pub"));
  CHECK(e.code == ErrorCode::NotFound);
  CHECK(e.message == "no such public key file");
  CHECK(e.where.file == dir / "missing.pub");

  // Looks like base64 but is not a key: say what is wrong with it.
  e = failure(loadPublicKey(kPubLine.substr(0, 44)));
  CHECK(e.code == ErrorCode::Parse);
  CHECK(e.message.rfind("malformed public key:", 0) == 0);

  writeFile(dir / "bad.pub", "untrusted comment: x\nAAAA\n");
  e = failure(loadPublicKey(dir / "bad.pub"));
  CHECK(e.message ==
        "malformed public key: it decodes to 3 bytes, expected 42");
  CHECK(e.where.file == dir / "bad.pub");
  CHECK(e.where.line == 2);
}

//===----------------------------------------------------------------------===//
// Secret keys
//===----------------------------------------------------------------------===//

TEST_CASE("secret key: minisign's unencrypted key (zero checksum)") {
  SecretKeyFile file = must(parseSecretKeyFile(kSecFile, "a.key"));
  CHECK_FALSE(file.encrypted);
  CHECK(file.comment == "minisign encrypted secret key");
  CHECK(file.limits.opsLimit == 0);
  CHECK(file.limits.memLimit == 0);
  SecretKey key = must(unlockSecretKey(file, {}));
  CHECK(keyIdHex(key.keyId) == kKeyId);
  CHECK(key.publicKey() == vectorPublicKey());
  // A password is ignored for an unencrypted key.
  CHECK(must(unlockSecretKey(file, "anything")).publicKey() ==
        vectorPublicKey());
}

TEST_CASE("secret key: unencrypted round trip writes the checksum") {
  KeyPair pair = generateKeyPair();
  std::string text = must(serializeSecretKey(pair.secretKey, std::nullopt));
  CHECK(text.rfind("untrusted comment: minisign unencrypted secret key\n", 0) ==
        0);
  SecretKeyFile file = must(parseSecretKeyFile(text));
  CHECK_FALSE(file.encrypted);
  SecretKey back = must(unlockSecretKey(file, {}));
  CHECK(back.keyId == pair.secretKey.keyId);
  CHECK(back.key == pair.secretKey.key);

  std::string commented = must(serializeSecretKey(
      pair.secretKey, std::nullopt, kMinisignKdfLimits, "release key"));
  CHECK(must(parseSecretKeyFile(commented)).comment == "release key");
}

TEST_CASE("secret key: encrypted round trip, wrong and missing password") {
  KeyPair pair = generateKeyPair();
  std::string text = must(serializeSecretKey(pair.secretKey, "correct horse",
                                             kInteractiveKdfLimits));
  CHECK(text.rfind("untrusted comment: minisign encrypted secret key\n", 0) ==
        0);
  SecretKeyFile file = must(parseSecretKeyFile(text, "enc.key"));
  CHECK(file.encrypted);
  CHECK(file.limits.opsLimit == kInteractiveKdfLimits.opsLimit);
  CHECK(file.limits.memLimit == kInteractiveKdfLimits.memLimit);
  // The key id is encrypted too.
  CHECK_FALSE(std::equal(pair.secretKey.keyId.begin(),
                         pair.secretKey.keyId.end(), file.sealed.begin()));

  SecretKey back = must(unlockSecretKey(file, "correct horse"));
  CHECK(back.key == pair.secretKey.key);
  CHECK(back.keyId == pair.secretKey.keyId);

  Error e = failure(unlockSecretKey(file, "wrong horse"));
  CHECK(e.code == ErrorCode::Integrity);
  CHECK(e.message ==
        "wrong password or corrupted secret key (checksum mismatch)");
  CHECK(e.where.file == "enc.key");

  e = failure(unlockSecretKey(file, std::nullopt));
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(e.message == "the secret key is encrypted; its password is needed");

  // Two encryptions of one key differ (fresh salt).
  std::string again = must(serializeSecretKey(pair.secretKey, "correct horse",
                                              kInteractiveKdfLimits));
  CHECK(again != text);
}

TEST_CASE("secret key: serialization errors") {
  KeyPair pair = generateKeyPair();
  Error e = failure(serializeSecretKey(pair.secretKey, ""));
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(e.message == "the password is empty");
  e = failure(serializeSecretKey(pair.secretKey, std::nullopt,
                                 kMinisignKdfLimits, "two\nlines"));
  CHECK(e.message == "the secret key's comment must be a single line");
  e = failure(serializeSecretKey(pair.secretKey, "pw",
                                 KdfLimits{uint64_t(1) << 40, 16 << 20}));
  CHECK(e.code == ErrorCode::Unsupported);
}

TEST_CASE("secret key: parse errors") {
  auto err = [](const std::string &text) {
    return failure(parseSecretKeyFile(text, "s.key"));
  };
  const std::string line2 = lineOf(kSecFile, 2);
  Error e = err("untrusted comment: x\n");
  CHECK(e.code == ErrorCode::Parse);
  CHECK(e.message == "malformed secret key: expected 2 lines, found 1");
  e = err(kSecFile + "more\n");
  CHECK(e.message == "malformed secret key: unexpected text after line 2");
  e = err("comment\n" + line2 + "\n");
  CHECK(e.message == "malformed secret key: line 1 must start with "
                     "\"untrusted comment: \"");
  e = err("untrusted comment: x\n%%%%\n");
  CHECK(e.message == "malformed secret key: not valid base64");
  e = err("untrusted comment: x\n" + kPubLine + "\n");
  CHECK(e.message ==
        "malformed secret key: it decodes to 42 bytes, expected 158");
  CHECK(e.where.line == 2);

  // Byte 0-1 "Ed", 2-3 KDF, 4-5 checksum: base64 "RWQAAEIy" covers them.
  e = err("untrusted comment: x\nRWM" + line2.substr(3) + "\n");
  CHECK(e.code == ErrorCode::Unsupported);
  CHECK(e.message.rfind("secret key has unknown signature algorithm", 0) == 0);
  e = err("untrusted comment: x\nRWQBAEIy" + line2.substr(8) + "\n");
  CHECK(e.code == ErrorCode::Unsupported);
  CHECK(e.message == "secret key has unknown key derivation algorithm "
                     "\"\\x01\\x00\" (expected \"Sc\" or none)");
  e = err("untrusted comment: x\nRWQAAEIz" + line2.substr(8) + "\n");
  CHECK(e.code == ErrorCode::Unsupported);
  CHECK(e.message ==
        "secret key has unknown checksum algorithm \"B3\" (expected \"B2\")");
}

TEST_CASE("secret key: corruption is detected") {
  KeyPair pair = generateKeyPair();
  SecretKeyFile file = must(parseSecretKeyFile(
      must(serializeSecretKey(pair.secretKey, std::nullopt)), "c.key"));
  // A flipped bit in the secret key: the checksum no longer matches.
  SecretKeyFile flipped = file;
  flipped.sealed[kKeyIdSize + 3] ^= 1;
  Error e = failure(unlockSecretKey(flipped, {}));
  CHECK(e.code == ErrorCode::Integrity);
  CHECK(e.message == "corrupted secret key (checksum mismatch)");
  CHECK(e.where.file == "c.key");

  // minisign-style zero checksum: the seed/public-key check still catches
  // a damaged key.
  SecretKeyFile vector = must(parseSecretKeyFile(kSecFile, "v.key"));
  vector.sealed[kKeyIdSize + 40] ^= 1; // in the public half
  e = failure(unlockSecretKey(vector, {}));
  CHECK(e.code == ErrorCode::Integrity);
  CHECK(e.message == "corrupted secret key (its public half does not belong "
                     "to its seed)");

  // Absurd scrypt limits are refused before any work.
  KeyPair other = generateKeyPair();
  SecretKeyFile enc = must(parseSecretKeyFile(
      must(serializeSecretKey(other.secretKey, "pw", kInteractiveKdfLimits))));
  enc.limits.memLimit = uint64_t(1) << 40;
  e = failure(unlockSecretKey(enc, "pw"));
  CHECK(e.code == ErrorCode::Unsupported);
  CHECK(e.message.find("scrypt limits") != std::string::npos);
}

TEST_CASE("secret key: password files") {
  TempDir dir;
  writeFile(dir / "pw", "s3cret\nignored second line\n");
  CHECK(must(readPasswordFile(dir / "pw")) == "s3cret");
  writeFile(dir / "pw", "s3cret\r\n");
  CHECK(must(readPasswordFile(dir / "pw")) == "s3cret");
  writeFile(dir / "pw", "no newline");
  CHECK(must(readPasswordFile(dir / "pw")) == "no newline");
  writeFile(dir / "pw", "\nsecond\n");
  Error e = failure(readPasswordFile(dir / "pw"));
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(e.message == "the password file is empty");
  e = failure(readPasswordFile(dir / "absent"));
  CHECK(e.code == ErrorCode::Io);
}

//===----------------------------------------------------------------------===//
// Key pairs on disk
//===----------------------------------------------------------------------===//

TEST_CASE("key pair: written with modes, never over existing files") {
  TempDir dir;
  const std::string base = dir / "signing";
  KeyPair pair = generateKeyPair();
  KeyPairPaths paths = must(writeKeyPair(pair, base, {}));
  CHECK(paths.publicKey == base + ".pub");
  CHECK(paths.secretKey == base + ".key");
  CHECK(modeOf(paths.secretKey) == 0600);
  CHECK((modeOf(paths.publicKey) & 0200) == 0200);
  CHECK(must(loadPublicKey(paths.publicKey)) == pair.publicKey);
  CHECK(must(loadSecretKey(paths.secretKey, std::nullopt)).key ==
        pair.secretKey.key);

  const std::string pubBefore = readFile(paths.publicKey);
  const std::string secBefore = readFile(paths.secretKey);
  KeyPair second = generateKeyPair();
  Error e = failure(writeKeyPair(second, base, {}));
  CHECK(e.code == ErrorCode::Conflict);
  CHECK(e.message == "already exists");
  CHECK(e.where.file == base + ".key");
  CHECK(readFile(paths.publicKey) == pubBefore);
  CHECK(readFile(paths.secretKey) == secBefore);

  // Only the .pub exists: still refused, and no .key is left behind.
  std::filesystem::remove(paths.secretKey);
  e = failure(writeKeyPair(second, base, {}));
  CHECK(e.where.file == base + ".pub");
  CHECK_FALSE(std::filesystem::exists(paths.secretKey));

  WriteKeyPairOptions force;
  force.force = true;
  force.password = "pw";
  force.limits = kInteractiveKdfLimits;
  force.comment = "rotated";
  must(writeKeyPair(second, base, force));
  CHECK(must(loadPublicKey(paths.publicKey)) == second.publicKey);
  CHECK(modeOf(paths.secretKey) == 0600);
  CHECK(lineOf(readFile(paths.publicKey), 1) == "untrusted comment: rotated");
  SecretKeyFile file = must(readSecretKeyFile(paths.secretKey));
  CHECK(file.encrypted);
  CHECK(file.comment == "rotated");
  CHECK(must(unlockSecretKey(file, "pw")).key == second.secretKey.key);

  // Nothing else (no temporary files) in the directory.
  size_t entries = 0;
  for (auto &entry : std::filesystem::directory_iterator(dir.path)) {
    (void)entry;
    ++entries;
  }
  CHECK(entries == 2);

  WriteKeyPairOptions badComment;
  badComment.comment = "a\nb";
  e = failure(writeKeyPair(second, dir / "other", badComment));
  CHECK(e.message == "the key comment must be a single line");
  CHECK_FALSE(std::filesystem::exists(dir / "other.key"));

  e = failure(writeKeyPair(second, dir / "no/such/dir/k", {}));
  CHECK(e.code == ErrorCode::Io);
}

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

TEST_CASE("signature: minisign's signatures verify") {
  PublicKey key = vectorPublicKey();
  Signature sig = must(parseSignature(kSigPrehashed, "v.txt.minisig"));
  CHECK(sig.prehashed);
  CHECK(keyIdHex(sig.keyId) == kKeyId);
  CHECK(sig.untrustedComment == "signature from minisign secret key");
  CHECK(sig.trustedComment == "vector prehashed");
  Verified v = must(verifyBuffer(key, kMessage, sig));
  CHECK(v.prehashed);
  CHECK(v.trustedComment == "vector prehashed");
  CHECK(keyIdHex(v.keyId) == kKeyId);
  CHECK(serializeSignature(sig) == kSigPrehashed);

  Signature legacy = must(parseSignature(kSigLegacy));
  CHECK_FALSE(legacy.prehashed);
  v = must(verifyBuffer(key, kMessage, legacy));
  CHECK_FALSE(v.prehashed);
  CHECK(v.trustedComment == "vector legacy");
  CHECK(serializeSignature(legacy) == kSigLegacy);

  VerifyOptions strict;
  strict.requirePrehashed = true;
  Error e =
      failure(verifyBuffer(key, kMessage, legacy, "v.txt", "v.sig", strict));
  CHECK(e.code == ErrorCode::Integrity);
  CHECK(e.message == "signature is in the legacy (non-prehashed) format, and "
                     "only prehashed signatures are accepted");
  CHECK(must(verifyBuffer(key, kMessage, sig, "", "", strict)).prehashed);
}

TEST_CASE("signature: signing reproduces minisign's output byte for byte") {
  SecretKey key = vectorSecretKey();
  SignOptions options;
  options.untrustedComment = "signature from minisign secret key";
  options.trustedComment = "vector prehashed";
  CHECK(serializeSignature(must(signBuffer(key, kMessage, options))) ==
        kSigPrehashed);
  options.trustedComment = "vector legacy";
  options.prehash = false;
  CHECK(serializeSignature(must(signBuffer(key, kMessage, options))) ==
        kSigLegacy);
}

TEST_CASE("signature: sign and verify round trips") {
  KeyPair pair = generateKeyPair();
  for (bool prehash : {true, false}) {
    CAPTURE(prehash);
    SignOptions options;
    options.prehash = prehash;
    options.trustedComment = "timestamp:1\tfile:x\twith tab";
    Signature sig = must(signBuffer(pair.secretKey, "payload", options));
    CHECK(sig.prehashed == prehash);
    CHECK(sig.untrustedComment == "signature from ireepkg secret key");
    Signature parsed = must(parseSignature(serializeSignature(sig)));
    Verified v = must(verifyBuffer(pair.publicKey, "payload", parsed));
    CHECK(v.trustedComment == "timestamp:1\tfile:x\twith tab");
    CHECK(v.prehashed == prehash);
    // Empty data and an empty trusted comment are fine.
    SignOptions empty;
    empty.prehash = prehash;
    Signature e = must(signBuffer(pair.secretKey, "", empty));
    CHECK(must(verifyBuffer(pair.publicKey, "", e)).trustedComment.empty());
  }
}

TEST_CASE("signature: each failed check has its own message") {
  PublicKey key = vectorPublicKey();
  const Signature good = must(parseSignature(kSigPrehashed));
  auto err = [&](const PublicKey &k, const std::string &data,
                 const Signature &sig) {
    return failure(verifyBuffer(k, data, sig, "v.txt", "v.txt.minisig"));
  };

  Error e = err(key, "hello!\n", good);
  CHECK(e.code == ErrorCode::Integrity);
  CHECK(e.message == "signature does not match the file");
  CHECK(e.where.file == "v.txt");

  Signature comment = good;
  comment.trustedComment = "vector prehashed (edited)";
  e = err(key, kMessage, comment);
  CHECK(e.message == "trusted comment was altered");
  CHECK(e.where.file == "v.txt.minisig");

  Signature global = good;
  global.globalSignature[10] ^= 1;
  CHECK(err(key, kMessage, global).message == "trusted comment was altered");

  Signature bytes = good;
  bytes.signature[5] ^= 1;
  e = err(key, kMessage, bytes);
  CHECK(e.message == "signature is corrupted: it verifies against neither "
                     "the file nor its trusted comment");
  CHECK(e.where.file == "v.txt.minisig");

  KeyPair other = generateKeyPair();
  e = err(other.publicKey, kMessage, good);
  CHECK(e.message == "signature was made with key " + kKeyId + ", not " +
                         keyIdHex(other.publicKey));
  CHECK(e.where.file == "v.txt.minisig");

  // Same key id, another key: nothing verifies.
  PublicKey impostor = other.publicKey;
  impostor.keyId = key.keyId;
  CHECK(err(impostor, kMessage, good)
            .message.rfind("signature is corrupted", 0) == 0);

  // Prehashed flag flipped: the signature no longer covers the data.
  Signature flag = good;
  flag.prehashed = false;
  CHECK(err(key, kMessage, flag).message ==
        "signature does not match the file");
}

TEST_CASE("signature: parse errors name the line") {
  auto err = [](const std::string &text) {
    return failure(parseSignature(text, "f.minisig"));
  };
  const std::string sig = kSigPrehashed;
  Error e = err("");
  CHECK(e.code == ErrorCode::Parse);
  CHECK(e.message == "malformed signature file: it is empty");
  CHECK(e.where.file == "f.minisig");
  CHECK_FALSE(e.hint.empty());

  e = err(lineOf(sig, 1) + "\n" + lineOf(sig, 2) + "\n");
  CHECK(e.message ==
        "malformed signature file: truncated: expected 4 lines, found 2");

  e = err(sig + "extra\n");
  CHECK(e.message == "malformed signature file: unexpected text after line 4");
  CHECK(e.where.line == 5);

  e = err(withLine(sig, 1, "comment: x"));
  CHECK(e.message == "malformed signature file: line 1 must start with "
                     "\"untrusted comment: \"");
  CHECK(e.where.line == 1);

  e = err(withLine(sig, 3, "trusted: x"));
  CHECK(e.message == "malformed signature file: line 3 must start with "
                     "\"trusted comment: \"");
  CHECK(e.where.line == 3);

  e = err(withLine(sig, 2, "!!garbage!!"));
  CHECK(e.message ==
        "malformed signature file: line 2 (the signature) is not valid base64");
  CHECK(e.where.line == 2);

  e = err(withLine(sig, 2, kPubLine));
  CHECK(e.message == "malformed signature file: line 2 (the signature) "
                     "decodes to 42 bytes, expected 74");

  e = err(withLine(sig, 2, "RVV" + lineOf(sig, 2).substr(3))); // "EU"
  CHECK(e.message == "malformed signature file: line 2: unknown signature "
                     "algorithm \"EU\" (expected \"ED\" or \"Ed\")");

  e = err(withLine(sig, 4, "@@@@"));
  CHECK(e.message == "malformed signature file: line 4 (the global "
                     "signature) is not valid base64");
  CHECK(e.where.line == 4);

  std::string line4 = lineOf(sig, 4);
  e = err(withLine(sig, 4, line4.substr(0, 44)));
  CHECK(e.message == "malformed signature file: line 4 (the global "
                     "signature) decodes to 33 bytes, expected 64");

  // Windows line ends are accepted.
  std::string crlf;
  for (char c : sig)
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  CHECK(must(verifyBuffer(vectorPublicKey(), kMessage,
                          must(parseSignature(crlf))))
            .trustedComment == "vector prehashed");
  // A flipped base64 character in the signature line still parses.
  CHECK(must(parseSignature(withLine(sig, 2, flipChar(lineOf(sig, 2), 50))))
            .signature != must(parseSignature(sig)).signature);
}

TEST_CASE("signature: option checks") {
  SecretKey key = vectorSecretKey();
  SignOptions options;
  options.trustedComment = "two\nlines";
  Error e = failure(signBuffer(key, "x", options));
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(e.message == "the trusted comment must be a single line");
  options.trustedComment = std::string(kMaxTrustedComment + 1, 'x');
  e = failure(signBuffer(key, "x", options));
  CHECK(e.message == "the trusted comment is 8001 bytes; at most 8000 fit in "
                     "a minisign file");
  options.trustedComment = std::string(kMaxTrustedComment, 'x');
  CHECK(must(signBuffer(key, "x", options)).trustedComment.size() == 8000);
  options.trustedComment = "ok";
  options.untrustedComment = "a\rb";
  e = failure(signBuffer(key, "x", options));
  CHECK(e.message == "the untrusted comment must be a single line");

  CHECK(defaultTrustedComment("dir/sub/file.tar.zst", 1700000000) ==
        "timestamp:1700000000\tfile:file.tar.zst\thashed");
  CHECK(defaultTrustedComment("file", 5, false) == "timestamp:5\tfile:file");
}

TEST_CASE("signature: files, streamed") {
  TempDir dir;
  KeyPair pair = generateKeyPair();
  // Several read chunks' worth, not a multiple of the chunk size.
  std::string big;
  big.reserve(3'000'001);
  for (size_t i = 0; i < 3'000'001; ++i)
    big += static_cast<char>((i * 131) ^ (i >> 9));
  const std::string path = dir / "big.bin";
  writeFile(path, big);

  SignOptions options;
  options.trustedComment = defaultTrustedComment(path, 42);
  Signature sig = must(signFile(pair.secretKey, path, options));
  // The streamed prehash equals the in-memory one.
  CHECK(sig.signature ==
        must(signBuffer(pair.secretKey, big, options)).signature);
  mustOk(writeSignatureFile(sig, path + ".minisig"));
  CHECK(readFile(path + ".minisig") == serializeSignature(sig));

  Verified v = must(verifyFile(pair.publicKey, path));
  CHECK(v.trustedComment == "timestamp:42\tfile:big.bin\thashed");
  CHECK(must(verifyBuffer(pair.publicKey, big,
                          must(readSignatureFile(path + ".minisig"))))
            .prehashed);

  // Legacy signature of a file, and --signature elsewhere.
  options.prehash = false;
  Signature legacy = must(signFile(pair.secretKey, path, options));
  mustOk(writeSignatureFile(legacy, dir / "legacy.sig"));
  CHECK_FALSE(
      must(verifyFile(pair.publicKey, path, dir / "legacy.sig")).prehashed);

  // The file changes after signing.
  writeFile(path, big + "x");
  Error e = failure(verifyFile(pair.publicKey, path));
  CHECK(e.code == ErrorCode::Integrity);
  CHECK(e.message == "signature does not match the file");
  CHECK(e.where.file == path);
  e = failure(verifyFile(pair.publicKey, path, dir / "legacy.sig"));
  CHECK(e.message == "signature does not match the file");

  // Missing signature, missing file, garbage signature file.
  e = failure(verifyFile(pair.publicKey, dir / "nothing"));
  CHECK(e.code == ErrorCode::NotFound);
  CHECK(e.message == "signature file not found");
  CHECK(e.where.file == dir / "nothing.minisig");
  e = failure(verifyFile(pair.publicKey, dir / "nothing", dir / "legacy.sig"));
  CHECK(e.code == ErrorCode::Io);
  CHECK(e.where.file == dir / "nothing");
  e = failure(signFile(pair.secretKey, dir / "nothing", {}));
  CHECK(e.code == ErrorCode::Io);
  writeFile(dir / "garbage.sig", "\x01\x02 binary garbage");
  e = failure(verifyFile(pair.publicKey, path, dir / "garbage.sig"));
  CHECK(e.message ==
        "malformed signature file: truncated: expected 4 lines, found 1");
  CHECK(e.where.file == dir / "garbage.sig");
  writeFile(dir / "huge.sig", std::string((1 << 20) + 1, 'A'));
  e = failure(verifyFile(pair.publicKey, path, dir / "huge.sig"));
  CHECK(e.message == "malformed signature file: larger than 1048576 bytes");
  e = failure(writeSignatureFile(sig, dir / "no/dir/x.minisig"));
  CHECK(e.code == ErrorCode::Io);
}
