//===- pkg/src/cache/cache.cpp - The package cache ------------------------===//
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <cstdlib>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg {

static std::atomic<const char *> gLastPlacement{""};
const char *PackageCache::lastPlacement() { return gLastPlacement; }

std::optional<PackageCache> PackageCache::openDefault() {
  if (const char *d = environmentOverride("IREEPKG_CACHE_DIR"); d && *d)
    return PackageCache(fsutil::absolutePath(d));
  if (const char *x = environmentOverride("XDG_CACHE_HOME"); x && x[0] == '/')
    return PackageCache(std::string(x) + "/ireepkg");
  if (auto home = homeDirectory())
    return PackageCache(*home + "/.cache/ireepkg");
  return std::nullopt;
}

std::string PackageCache::blobPath(const RecordEntry &e) const {
  return root_ + "/files/" + e.sha256.substr(0, 2) + "/" + e.sha256 +
         (e.executable ? ".x" : "");
}

std::string PackageCache::identityKey(const std::string &archivePath) const {
  struct stat st;
  if (::stat(archivePath.c_str(), &st) != 0)
    return {};
  std::string id = std::to_string(st.st_dev) + ":" +
                   std::to_string(st.st_ino) + ":" +
                   std::to_string(st.st_size) + ":" +
                   std::to_string(st.st_mtim.tv_sec) + "." +
                   std::to_string(st.st_mtim.tv_nsec) + ":" +
                   std::to_string(st.st_ctim.tv_sec) + "." +
                   std::to_string(st.st_ctim.tv_nsec);
  return Sha256::hex(id);
}

std::optional<PackageCache::Hit>
PackageCache::lookup(const std::string &archivePath,
                     const std::string &recordSha256) const {
  std::string key = identityKey(archivePath);
  if (key.empty())
    return std::nullopt;
  auto text =
      fsutil::readOwnCacheFile(root_ + "/archives/" + key + ".json", 1 << 20);
  if (!text)
    return std::nullopt;
  nlohmann::json j = parseJsonOrDiscarded(*text);
  if (!j.is_object() || j.value("record_sha256", "") != recordSha256)
    return std::nullopt;
  Hit hit;
  hit.archiveSha256 = j.value("archive_sha256", "");
  if (hit.archiveSha256.size() != 64)
    return std::nullopt;
  return hit;
}

/// Set once a reflink fails with "not supported here", so that the rest of
/// an install goes straight to hard links (one syscall per file).
static std::atomic<bool> gNoReflink{false};

/// Places `from` at `to`: reflink, else hard link, else copy. New files are
/// created read-only: `to` ends up with the final mode of an installed file.
static Status place(const std::string &from, const std::string &to,
                    bool executable) {
  mode_t mode = executable ? 0555 : 0444;
  if (!gNoReflink) {
    int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0)
      return Unexpected(fsutil::ioError("cannot open cached file", from, errno));
    int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (out < 0) {
      int e = errno;
      ::close(in);
      return Unexpected(fsutil::ioError("cannot create", to, e));
    }
    bool cloned = ::ioctl(out, FICLONE, in) == 0;
    int e = errno;
    ::close(in);
    ::close(out);
    if (cloned) {
      gLastPlacement = "reflink";
      return ok();
    }
    ::unlink(to.c_str());
    if (e == EOPNOTSUPP || e == ENOTTY || e == EINVAL || e == EXDEV ||
        e == ENOSYS)
      gNoReflink = true;
  }
  if (::link(from.c_str(), to.c_str()) == 0) {
    gLastPlacement = "hardlink";
    return ok();
  }
  if (errno == ENOENT)
    return Unexpected(fsutil::ioError("cached file is missing", from, ENOENT));
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return Unexpected(fsutil::ioError("cannot open cached file", from, errno));
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (out < 0) {
    int e = errno;
    ::close(in);
    return Unexpected(fsutil::ioError("cannot create", to, e));
  }
  struct stat st;
  ::fstat(in, &st);
  off_t left = st.st_size;
  while (left > 0) {
    ssize_t n = ::sendfile(out, in, nullptr, static_cast<size_t>(left));
    if (n <= 0) {
      int e = n < 0 ? errno : EIO;
      ::close(in);
      ::close(out);
      return Unexpected(fsutil::ioError("cannot copy", from, e));
    }
    left -= n;
  }
  ::close(in);
  ::close(out);
  gLastPlacement = "copy";
  return ok();
}

/// The name of the marker saying that `blob`, as `st` describes it, was
/// hashed and found to hold what its name says. A change of the blob's
/// bytes through any path (hard links share the inode with installed
/// files) changes its modification time, and so the marker's name.
static std::string verifiedMarker(const std::string &blob,
                                  const struct stat &st) {
  char key[96];
  std::snprintf(key, sizeof key, ".ok-%llx-%llx-%llx.%lx",
                static_cast<unsigned long long>(st.st_ino),
                static_cast<unsigned long long>(st.st_size),
                static_cast<unsigned long long>(st.st_mtim.tv_sec),
                static_cast<long>(st.st_mtim.tv_nsec));
  return blob + key;
}

/// A blob is usable only while it is still read-only, of the recorded size,
/// and its bytes have the recorded SHA-256. The cache does not trust
/// itself: a blob is hashed the first time it is used as it now stands
/// (after which a marker keyed by inode, size and modification time spares
/// the hash until the blob changes), so a blob changed behind the cache's
/// back is never linked into a prefix. A changed blob whose modification
/// time was set back on purpose is not noticed here; `ireepkg verify` hashes
/// installed files. Nor is a blob used that another user owns, or that is
/// in a directory another user may write (fsutil::trustedCacheFile): a
/// hard link shares the file, and its owner could change it in the prefix
/// afterwards.
static bool blobIntact(const std::string &blob, const RecordEntry &e) {
  struct stat st;
  if (::stat(blob.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      (st.st_mode & 0222) != 0 || static_cast<uint64_t>(st.st_size) != e.size ||
      !fsutil::trustedCacheFile(blob, st))
    return false;
  std::string marker = verifiedMarker(blob, st);
  if (::access(marker.c_str(), F_OK) == 0)
    return true;
  auto sha = sha256File(blob);
  if (!sha || *sha != e.sha256)
    return false;
  struct stat again;
  if (::stat(blob.c_str(), &again) == 0 && again.st_ino == st.st_ino &&
      again.st_mtim.tv_sec == st.st_mtim.tv_sec &&
      again.st_mtim.tv_nsec == st.st_mtim.tv_nsec) {
    int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                    0444);
    if (fd >= 0)
      ::close(fd);
  }
  return true;
}

/// Marks a blob just written from bytes whose hash was verified.
static void markVerified(const std::string &blob) {
  struct stat st;
  if (::stat(blob.c_str(), &st) != 0)
    return;
  int fd = ::open(verifiedMarker(blob, st).c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  if (fd >= 0)
    ::close(fd);
}

Status PackageCache::materialize(const Record &record,
                                 const std::string &destDir) const {
  auto fail = [&](Error e) -> Status {
    (void)fsutil::removeTree(destDir);
    return Unexpected(std::move(e));
  };
  if (Status s = fsutil::makeDirs(destDir + "/.ireepkg"); !s)
    return fail(s.error());
  std::string lastDir;
  for (const RecordEntry &e : record.files) {
    size_t slash = e.path.rfind('/');
    if (slash == std::string::npos)
      continue;
    std::string dir = destDir + "/" + e.path.substr(0, slash);
    if (dir != lastDir) {
      if (Status s = fsutil::makeDirs(dir); !s)
        return fail(s.error());
      lastDir = dir;
    }
  }
  // One check and one link (or clone) per file is all the work left;
  // spread it over the cores, since each call mostly waits on directory
  // locks and the journal.
  auto placeChecked = [&](const RecordEntry &e) -> Status {
    std::string blob = blobPath(e);
    if (!blobIntact(blob, e))
      return makeError(ErrorCode::Integrity,
                       "cached file is missing or was changed",
                       Location{blob, 0, 0, "", "", e.path});
    return place(blob, destDir + "/" + e.path, e.executable);
  };
  // The first alone settles whether reflinks work here.
  if (Status s = placeChecked(record.files.front()); !s)
    return fail(s.error());
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  if (record.files.size() < 64)
    workers = 1;
  std::atomic<size_t> next{1};
  std::mutex errorMutex;
  std::optional<Error> firstError;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < record.files.size();) {
      const RecordEntry &e = record.files[i];
      if (Status s = placeChecked(e); !s) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!firstError)
          firstError = s.error();
        next = record.files.size();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < workers; ++t)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
  if (firstError)
    return fail(*firstError);
  if (Status s = fsutil::writeNewFile(destDir + "/" + kRecordName,
                                      serializeRecord(record), 0444);
      !s)
    return fail(s.error());
  // Files are read-only already (blobs are); only directories remain.
  if (Status s = fsutil::makeReadOnlyTree(destDir, /*filesToo=*/false); !s)
    return fail(s.error());
  return ok();
}

Status PackageCache::store(const std::string &archivePath,
                           const std::string &archiveSha256,
                           const std::string &recordSha256,
                           const Record &record,
                           const std::string &extractedDir) const {
  for (const RecordEntry &e : record.files) {
    std::string blob = blobPath(e);
    if (blobIntact(blob, e))
      continue; // a changed blob is replaced by the verified file below
    const std::string dir = root_ + "/files/" + e.sha256.substr(0, 2);
    if (Status s = fsutil::makeDirs(dir); !s)
      return s;
    // Another user's directory: nothing of it would be used.
    if (!fsutil::trustedCacheDirectory(dir))
      return ok();
    std::string src = extractedDir + "/" + e.path;
    std::string tmp = blob + ".tmp." + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    if (Status s = place(src, tmp, e.executable); !s)
      return s;
    if (::rename(tmp.c_str(), blob.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      return Unexpected(fsutil::ioError("cannot store in cache", blob, err));
    }
    // Extraction hashed these bytes against RECORD as it wrote them.
    markVerified(blob);
  }
  std::string key = identityKey(archivePath);
  if (key.empty())
    return ok();
  if (Status s = fsutil::makeDirs(root_ + "/archives"); !s)
    return s;
  if (!fsutil::trustedCacheDirectory(root_ + "/archives"))
    return ok();
  nlohmann::json j = {{"archive_sha256", archiveSha256},
                      {"record_sha256", recordSha256}};
  return fsutil::writeFileAtomic(root_ + "/archives/" + key + ".json",
                                 j.dump() + "\n");
}

} // namespace ireepkg
