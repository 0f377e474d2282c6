//===- hash.cpp - SHA-256 through OpenSSL --------------------------------===//
#include "ireepkg/pkg/hash.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace ireepkg {

namespace {

/// SHA-256, looked up once: with EVP_sha256(), OpenSSL 3 fetches the
/// implementation from its provider again at every EVP_DigestInit_ex,
/// which costs more than hashing a small file. Kept for the life of the
/// process.
const EVP_MD *sha256Md() {
  static const EVP_MD *md = [] {
    const EVP_MD *m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return m ? m : EVP_sha256();
  }();
  return md;
}

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
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  Impl() { EVP_DigestInit_ex(ctx, sha256Md(), nullptr); }
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256 &&) noexcept = default;
Sha256 &Sha256::operator=(Sha256 &&) noexcept = default;

void Sha256::update(const void *data, size_t size) {
  EVP_DigestUpdate(impl_->ctx, data, size);
}

std::string Sha256::hexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, digest, &len);
  EVP_DigestInit_ex(impl_->ctx, sha256Md(), nullptr);
  return toHex(digest, len);
}

std::string Sha256::hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, sha256Md(), nullptr);
  return toHex(digest, len);
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
