//===- pkg/src/cache/cache_maintenance.cpp - Cleaning the package cache ---===//
#include "ireepkg/pkg/cache/cache_maintenance.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/package/package.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace ireepkg {

void CacheRemoval::add(const std::string &kind, uint64_t n, uint64_t size) {
  files += n;
  bytes += size;
  for (Part &p : parts)
    if (p.kind == kind) {
      p.files += n;
      p.bytes += size;
      return;
    }
  parts.push_back({kind, n, size});
}

/// Files (not directories) and their sizes under `path` (or `path` itself).
static void measure(const std::string &path, uint64_t &files, uint64_t &bytes) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return;
  if (!S_ISDIR(st.st_mode)) {
    ++files;
    bytes += static_cast<uint64_t>(st.st_size);
    return;
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end;
       it.increment(ec)) {
    struct stat s;
    if (::lstat(it->path().c_str(), &s) == 0 && !S_ISDIR(s.st_mode)) {
      ++files;
      bytes += static_cast<uint64_t>(s.st_size);
    }
  }
}

/// Removes `path` (file or tree), counting it as `kind`.
static Status removeCounted(const std::string &path, const std::string &kind,
                            CacheRemoval &out) {
  uint64_t files = 0, bytes = 0;
  measure(path, files, bytes);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return ok();
  if (S_ISDIR(st.st_mode)) {
    if (Status s = fsutil::removeTree(path); !s)
      return s;
  } else if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Unexpected(fsutil::ioError("cannot remove", path, errno));
  }
  out.add(kind, files, bytes);
  return ok();
}

static std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

static bool isDir(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Expected<CacheRemoval> cacheUsage(const std::string &root) {
  CacheRemoval u;
  uint64_t files = 0, bytes = 0;
  for (const std::string &n : listDir(root)) {
    files = bytes = 0;
    measure(root + "/" + n, files, bytes);
    u.add(n, files, bytes);
  }
  return u;
}

/// The entries of the cache's top level (cache.h, cache_maintenance.h);
/// nothing else is ever made there, but a file's temporary while it is
/// written (`tools.json.tmp.<pid>`).
static bool inCacheLayout(const std::string &name) {
  static const char *const kNames[] = {
      "files",   "archives",       "downloads", "registries",
      "bundles", "inspect",        "locks",     "syncs",
      "digests", "compilers.json", "tools.json"};
  for (const char *n : kNames)
    if (name == n)
      return true;
  for (const char *n : {"compilers.json.tmp.", "tools.json.tmp."})
    if (name.rfind(n, 0) == 0 && name.size() > std::strlen(n) &&
        name.find_first_not_of("0123456789", std::strlen(n)) ==
            std::string::npos)
      return true;
  return false;
}

Status checkCacheLayout(const std::string &root) {
  std::vector<std::string> foreign;
  for (const std::string &n : listDir(root))
    if (!inCacheLayout(n))
      foreign.push_back(n);
  if (foreign.empty())
    return ok();
  std::string list;
  for (size_t i = 0; i < foreign.size() && i < 5; ++i)
    list += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 5)
    list += " and " + std::to_string(foreign.size() - 5) + " more";
  return makeError(ErrorCode::Invalid,
                   "not an ireepkg cache directory: it holds " + list +
                       ", which ireepkg never makes there; nothing was removed",
                   Location::inFile(root),
                   "give the cache directory itself (`ireepkg cache dir` "
                   "prints it; IREEPKG_CACHE_DIR, XDG_CACHE_HOME and "
                   "cache-dir in config.toml choose it)");
}

Expected<CacheRemoval> cleanCache(const std::string &root) {
  if (Status s = checkCacheLayout(root); !s)
    return Unexpected(s.error());
  CacheRemoval out;
  for (const std::string &n : listDir(root))
    if (Status s = removeCounted(root + "/" + n, n, out); !s)
      return Unexpected(s.error());
  return out;
}

/// The pid in a partial name ("x.part-<pid>-<random>", "x.tmp-<pid>"), or
/// 0 when the name is not one.
static pid_t partialPid(const std::string &name) {
  // ".part-<pid>-<random>" (downloads and the metadata cache),
  // ".tmp-<pid>" (staging). The ".part-<random hex>" that the metadata
  // cache wrote before carries no pid, even when its random part happens
  // to be all digits.
  for (auto [tag, after] :
       {std::pair{".part-", '-'}, std::pair{".tmp-", '\0'}}) {
    size_t at = name.rfind(tag);
    if (at == std::string::npos)
      continue;
    const char *digits = name.c_str() + at + std::strlen(tag);
    if (*digits < '0' || *digits > '9')
      continue;
    char *end = nullptr;
    long pid = std::strtol(digits, &end, 10);
    if (pid > 0 && *end == after)
      return static_cast<pid_t>(pid);
  }
  return 0;
}

/// Another process still writing it: its pid is alive (and not ours).
static bool partialInUse(pid_t pid) {
  if (pid == ::getpid())
    return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

/// A partial without a process id (`x.part-<random>`, as the metadata
/// cache named them before): abandoned once it is an hour old.
static bool oldAnonymousPartial(const std::string &name,
                                const std::string &path) {
  if (name.find(".part-") == std::string::npos)
    return false;
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::time(nullptr) - st.st_mtime > 3600;
}

/// Removes the stale partials in `dir` (not in its subdirectories).
static Status prunePartials(const std::string &dir, CacheRemoval &out) {
  for (const std::string &n : listDir(dir)) {
    std::string path = dir + "/" + n;
    pid_t pid = partialPid(n);
    if (pid != 0 || oldAnonymousPartial(n, path)) {
      if (pid == 0 || !partialInUse(pid))
        if (Status s = removeCounted(path, "partial", out); !s)
          return s;
    }
  }
  return ok();
}

/// prunePartials in `dir` and in each directory in it.
static Status prunePartialsTwoDeep(const std::string &dir, CacheRemoval &out) {
  if (Status s = prunePartials(dir, out); !s)
    return s;
  for (const std::string &n : listDir(dir))
    if (isDir(dir + "/" + n))
      if (Status s = prunePartials(dir + "/" + n, out); !s)
        return s;
  return ok();
}

Expected<CacheRemoval> removeAbandonedPartials(const std::string &dir) {
  CacheRemoval out;
  if (Status s = prunePartialsTwoDeep(dir, out); !s)
    return Unexpected(s.error());
  return out;
}

Expected<CacheRemoval>
cleanCachedPackages(const std::string &root,
                    const std::vector<std::string> &names) {
  if (Status s = checkCacheLayout(root); !s)
    return Unexpected(s.error());
  CacheRemoval out;
  std::set<std::string> wanted(names.begin(), names.end());
  std::string downloads = root + "/downloads";
  for (const std::string &sub : listDir(downloads)) {
    std::string dir = downloads + "/" + sub;
    if (!isDir(dir))
      continue;
    for (const std::string &n : listDir(dir)) {
      std::string path = dir + "/" + n;
      if (partialPid(n) != 0 || isDir(path))
        continue;
      auto head = readArchiveHead(path);
      if (!head || !wanted.count(head->manifest.name))
        continue;
      if (Status s = removeCounted(path, "downloads", out); !s)
        return Unexpected(s.error());
      out.archives.push_back(head->manifest.name + " " +
                             head->manifest.version.str());
    }
  }
  std::sort(out.archives.begin(), out.archives.end());
  return out;
}

Expected<CacheRemoval> pruneCache(const std::string &root) {
  CacheRemoval out;
  if (!isDir(root))
    return out;
  if (Status s = checkCacheLayout(root); !s)
    return Unexpected(s.error());
  // Partials are written only in downloads/<aa>/, registries/<id>/http/
  // and bundles/.
  if (Status s = prunePartialsTwoDeep(root + "/downloads", out); !s)
    return Unexpected(s.error());
  for (const std::string &id : listDir(root + "/registries"))
    if (Status s = prunePartials(root + "/registries/" + id + "/http", out); !s)
      return Unexpected(s.error());
  if (Status s = prunePartials(root + "/bundles", out); !s)
    return Unexpected(s.error());
  std::string files = root + "/files";
  bool removedBlob = false;
  for (const std::string &sub : listDir(files)) {
    std::string dir = files + "/" + sub;
    if (!isDir(dir))
      continue;
    std::vector<std::string> entries = listDir(dir);
    std::set<std::string> present;
    // Blobs first, then markers (whose blob may just have gone).
    for (const std::string &n : entries) {
      if (n.find(".ok-") != std::string::npos)
        continue;
      std::string path = dir + "/" + n;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0)
        continue;
      if (S_ISREG(st.st_mode) && st.st_nlink == 1) {
        if (Status s = removeCounted(path, "blobs", out); !s)
          return Unexpected(s.error());
        removedBlob = true;
        continue;
      }
      present.insert(n);
    }
    for (const std::string &n : entries) {
      size_t at = n.find(".ok-");
      if (at == std::string::npos)
        continue;
      std::string blob = n.substr(0, at);
      // A marker names the blob's inode, size and mtime: it is stale when
      // the blob is gone or no longer matches.
      bool stale = !present.count(blob);
      if (!stale) {
        struct stat st;
        char key[96];
        if (::stat((dir + "/" + blob).c_str(), &st) == 0) {
          std::snprintf(key, sizeof key, ".ok-%llx-%llx-%llx.%lx",
                        static_cast<unsigned long long>(st.st_ino),
                        static_cast<unsigned long long>(st.st_size),
                        static_cast<unsigned long long>(st.st_mtim.tv_sec),
                        static_cast<long>(st.st_mtim.tv_nsec));
          stale = n.substr(at) != key;
        }
      }
      if (stale)
        if (Status s = removeCounted(dir + "/" + n, "markers", out); !s)
          return Unexpected(s.error());
    }
    ::rmdir(dir.c_str()); // only if now empty
  }
  // archives/ entries promise that an archive's blobs are here; once blobs
  // are gone they only send installs the long way round, so they go too.
  if (removedBlob)
    for (const std::string &n : listDir(root + "/archives"))
      if (Status s = removeCounted(root + "/archives/" + n, "archives", out);
          !s)
        return Unexpected(s.error());
  return out;
}

} // namespace ireepkg
