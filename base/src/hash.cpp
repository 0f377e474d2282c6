//===- base/src/hash.cpp - SHA-256 through Nettle ------------------===//
//
// Nettle's SHA-256 (the library GnuTLS is built on), linked statically. It
// uses the CPU's SHA instructions where present (Nettle's "fat" build picks
// the implementation once, at start-up), as fast as OpenSSL's, but needs no
// initialisation: OpenSSL 3 reads its configuration file and loads its
// default provider on first use, which with loading libcrypto itself cost
// about 2 ms of every command (a no-op `ireepkg lock` takes under 10 ms).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/hash.h"
#include "ireepkg/base/file_util.h"

#include <nettle/sha2.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace ireepkg {

namespace {

std::string toHex(const unsigned char *digest, unsigned len) {
  static const char hexChars[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned i = 0; i < len; ++i) {
    out[2 * i] = hexChars[digest[i] >> 4];
    out[2 * i + 1] = hexChars[digest[i] & 15];
  }
  return out;
}

} // namespace

struct Sha256::Impl {
  sha256_ctx ctx;
  Impl() { sha256_init(&ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256 &&) noexcept = default;
Sha256 &Sha256::operator=(Sha256 &&) noexcept = default;

void Sha256::update(const void *data, size_t size) {
  sha256_update(&impl_->ctx, size, static_cast<const uint8_t *>(data));
}

std::string Sha256::hexDigest() {
  unsigned char digest[SHA256_DIGEST_SIZE];
  sha256_digest(&impl_->ctx, SHA256_DIGEST_SIZE, digest); // and resets
  return toHex(digest, SHA256_DIGEST_SIZE);
}

std::string Sha256::hex(std::string_view data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(),
                reinterpret_cast<const uint8_t *>(data.data()));
  unsigned char digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
  return toHex(digest, SHA256_DIGEST_SIZE);
}
Expected<std::string> sha256File(const std::string &path) {
  auto opened = fsutil::openForReading(path);
  if (!opened)
    return Unexpected(opened.error());
  int fd = opened->release();
  Sha256 h;
  static thread_local char buf[1 << 17];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int e = errno;
      ::close(fd);
      return makeError(ErrorCode::Io,
                       std::string("read failed: ") + std::strerror(e),
                       Location::inFile(path));
    }
    if (n == 0)
      break;
    h.update(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return h.hexDigest();
}

} // namespace ireepkg
