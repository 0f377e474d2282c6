//===- registry_util.cpp - Shared helpers of the registry layer -----------===//
#include "registry_util.h"

#include "ireepkg/pkg/file_util.h"
#include "ireepkg/pkg/cache.h"
#include "ireepkg/pkg/hash.h"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg::registry {

namespace detail {

std::string canonicalJson(const nlohmann::json &value) {
  // nlohmann::json keeps object members in a std::map: sorted keys.
  return value.dump(2) + "\n";
}

std::string formatRfc3339(int64_t unixTime) {
  std::time_t t = static_cast<std::time_t>(unixTime);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int64_t currentTime(int64_t now) {
  return now != 0 ? now : static_cast<int64_t>(std::time(nullptr));
}

Expected<FileLock> FileLock::acquire(const std::string &path) {
  FileLock lock;
  lock.fd_ = fsutil::UniqueFd(
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.fd_.get() < 0)
    return Unexpected(
        fsutil::ioError("cannot open the lock file", path, errno));
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  while (::fcntl(lock.fd_.get(), F_SETLKW, &fl) != 0) {
    if (errno == EINTR)
      continue;
    return Unexpected(fsutil::ioError("cannot lock", path, errno));
  }
  return lock;
}

Expected<std::string> cacheRootFor(const ClientOptions &options) {
  if (!options.cacheRoot.empty())
    return fsutil::absolutePath(options.cacheRoot);
  auto cache = PackageCache::openDefault();
  if (!cache)
    return makeError(ErrorCode::NotFound,
                     "no cache directory: neither IREEPKG_CACHE_DIR, "
                     "XDG_CACHE_HOME nor HOME is set",
                     {}, "set IREEPKG_CACHE_DIR to a writable directory");
  return cache->root();
}

std::string downloadCachePath(const std::string &cacheRoot,
                              const std::string &sha256) {
  return cacheRoot + "/downloads/" + sha256.substr(0, 2) + "/" + sha256 +
         ".ireepkg";
}

bool fileHasContent(const std::string &path, uint64_t size,
                    const std::string &sha256) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) != size)
    return false;
  auto h = sha256File(path);
  return h && *h == sha256;
}

std::string registryCacheDir(const std::string &cacheRoot,
                             const std::string &url) {
  return cacheRoot + "/registries/" + registryId(url);
}

static int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string directoryOf(const std::string &url) {
  if (url.rfind("file://", 0) != 0)
    return url;
  std::string rest = url.substr(7);
  // file://localhost/path and file:///path name the same directory.
  if (rest.rfind("localhost/", 0) == 0)
    rest = rest.substr(9);
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    int hi, lo;
    if (rest[i] == '%' && i + 2 < rest.size() &&
        (hi = hexValue(rest[i + 1])) >= 0 &&
        (lo = hexValue(rest[i + 2])) >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

bool isDirectoryUrl(const std::string &url) {
  if (url.rfind("file://", 0) == 0)
    return true;
  return url.find("://") == std::string::npos;
}

std::string joinUrl(const std::string &base, const std::string &rel) {
  std::string b = base;
  while (!b.empty() && b.back() == '/')
    b.pop_back();
  size_t start = 0;
  while (start < rel.size() && rel[start] == '/')
    ++start;
  return b + "/" + rel.substr(start);
}

} // namespace detail

std::string normalizeRegistryUrl(const std::string &url) {
  std::string out;
  if (detail::isDirectoryUrl(url)) {
    out = "file://" + fsutil::absolutePath(detail::directoryOf(url));
  } else {
    size_t scheme = url.find("://");
    size_t hostEnd = url.find('/', scheme + 3);
    if (hostEnd == std::string::npos)
      hostEnd = url.size();
    out = url;
    for (size_t i = 0; i < hostEnd; ++i)
      if (out[i] >= 'A' && out[i] <= 'Z')
        out[i] = static_cast<char>(out[i] - 'A' + 'a');
  }
  while (out.size() > 1 && out.back() == '/' &&
         out.compare(out.size() - 3, 3, "://") != 0)
    out.pop_back();
  return out;
}

std::string registryId(const std::string &url) {
  return Sha256::hex(normalizeRegistryUrl(url)).substr(0, 16);
}

} // namespace ireepkg::registry
