//===- hash.cpp - SHA-256 through OpenSSL --------------------------------===//
#include "ireepkg/pkg/hash.h"

// The SHA256_* functions are deprecated in OpenSSL 3 in favour of EVP, but
// EVP must fetch the implementation from a provider first, which costs
// about 1 ms per process (0.6 ms without reading openssl.cnf): a tenth of a
// no-op `ireepkg lock`. SHA256_* call the same code (SHA extensions
// included) without that step.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

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
  SHA256_CTX ctx;
  Impl() { SHA256_Init(&ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256 &&) noexcept = default;
Sha256 &Sha256::operator=(Sha256 &&) noexcept = default;

void Sha256::update(const void *data, size_t size) {
  SHA256_Update(&impl_->ctx, data, size);
}

std::string Sha256::hexDigest() {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_Final(digest, &impl_->ctx);
  SHA256_Init(&impl_->ctx);
  return toHex(digest, SHA256_DIGEST_LENGTH);
}

std::string Sha256::hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(digest, &ctx);
  return toHex(digest, SHA256_DIGEST_LENGTH);
}

Expected<std::string> sha256File(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return makeError(ErrorCode::Io,
                     std::string("cannot open: ") + std::strerror(errno),
                     Location::inFile(path));
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
