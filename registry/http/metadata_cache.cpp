//===- registry/http/metadata_cache.cpp - Metadata bodies and their ETags -===//
#include "metadata_cache.h"

#include "ireepkg/base/fault_point.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/partial_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ireepkg::net {

namespace {

constexpr const char *kCacheMagic = "ireepkg-metadata-cache 1";

std::optional<std::string> readWholeFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

} // namespace

std::string MetadataCache::pathFor(const std::string &url) const {
  return dir_ + "/" + Sha256::hex(url);
}

std::optional<CacheEntry>
MetadataCache::load(const std::string &url) const {
  if (!enabled())
    return std::nullopt;
  std::optional<std::string> text = readWholeFile(pathFor(url));
  if (!text)
    return std::nullopt;
  size_t pos = 0;
  auto nextLine = [&](std::string &line) {
    size_t nl = text->find('\n', pos);
    if (nl == std::string::npos)
      return false;
    line = text->substr(pos, nl - pos);
    pos = nl + 1;
    return true;
  };
  std::string line;
  if (!nextLine(line) || line != kCacheMagic)
    return std::nullopt;
  CacheEntry entry;
  bool sameUrl = false;
  while (true) {
    if (!nextLine(line))
      return std::nullopt;
    if (line.empty())
      break;
    if (line.starts_with("url: "))
      sameUrl = line.substr(5) == url;
    else if (line.starts_with("etag: "))
      entry.etag = line.substr(6);
  }
  if (!sameUrl)
    return std::nullopt;
  entry.body = text->substr(pos);
  return entry;
}

Status MetadataCache::store(const std::string &url, const std::string &label,
                            const std::string &etag,
                            const std::string &body) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::string path = pathFor(url);
  // Named and watched as downloads are: removed if a signal ends the
  // process while it is written, and by pid if a SIGKILL leaves it.
  std::string temp =
      path + ".part-" + std::to_string(::getpid()) + "-" + randomHex(8);
  PartialFileGuard guard(temp);
  auto fail = [&](const std::string &what, int e) -> Status {
    ::unlink(temp.c_str());
    return makeError(ErrorCode::Io,
                     "cannot write the metadata cache: " + what + ": " +
                         std::strerror(e),
                     Location::inFile(path),
                     "check that the cache directory " + dir_ +
                         " is writable (IREEPKG_CACHE_DIR moves it)");
  };
  if (ec)
    return fail("cannot create " + dir_, ec.value());
  int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail("cannot create " + temp, errno);
  auto oneLine = [](std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s;
  };
  std::string header = std::string(kCacheMagic) + "\nurl: " + oneLine(url) +
                       "\nlabel: " + oneLine(label) +
                       "\netag: " + oneLine(etag) + "\n\n";
  bool written = writeAll(fd, header.data(), header.size()) &&
                 writeAll(fd, body.data(), body.size());
  int e = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    e = errno;
  }
  if (!written)
    return fail("cannot write " + temp, e);
  faultPoint("metadata-cache-written");
  if (::rename(temp.c_str(), path.c_str()) != 0)
    return fail("cannot rename " + temp, errno);
  return ok();
}

} // namespace ireepkg::net
