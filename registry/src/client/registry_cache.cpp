//===- registry/src/client/registry_cache.cpp -----------------------------===//
// Where registries are cached.
#include "ireepkg/registry/client/registry_cache.h"

#include <algorithm>

#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/os.h"

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg::registry {

namespace cache {

Expected<FileLock> FileLock::acquire(const std::string &path) {
  FileLock lock;
  lock.fd_ = fsutil::UniqueFd(
      ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.fd_.get() < 0)
    return Unexpected(
        fsutil::ioError("cannot open the lock file", path, errno));
  while (int e = os::lockFile(lock.fd_.get(), /*wait=*/true)) {
    if (e == EINTR)
      continue;
    return Unexpected(fsutil::ioError("cannot lock", path, e));
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

Status copyMetadataFiles(Transport &transport,
                         const std::vector<std::string> &relPaths,
                         const std::string &dir) {
  // A few dozen at a time: over HTTP they are fetched in parallel
  // (fetchMany), and no more than that many bodies are held at once.
  constexpr size_t kChunk = 64;
  for (size_t at = 0; at < relPaths.size(); at += kChunk) {
    std::vector<std::string> chunk(relPaths.begin() + at,
                                   relPaths.begin() +
                                       std::min(relPaths.size(), at + kChunk));
    auto bodies = transport.fetchMany(chunk, 64ull << 20);
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (i >= bodies.size())
        return makeError(ErrorCode::Internal, "no answer for " + chunk[i] +
                                                  " from " +
                                                  transport.describe());
      if (!bodies[i])
        return Unexpected(bodies[i].error());
      const std::string to = dir + "/" + chunk[i];
      if (Status s = fsutil::makeDirs(std::filesystem::path(to).parent_path());
          !s)
        return s;
      if (Status s = fsutil::writeFileAtomic(to, bodies[i]->body); !s)
        return s;
    }
  }
  return {};
}

} // namespace cache

} // namespace ireepkg::registry
