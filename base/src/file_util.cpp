//===- base/src/file_util.cpp - Durable file operations ------------===//
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/fault_point.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/os.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <grp.h>
#include <mutex>
#include <optional>
#include <pwd.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace fs = std::filesystem;

namespace ireepkg::fsutil {

Error ioError(const std::string &what, const std::string &path, int err) {
  return Error(ErrorCode::Io, what + ": " + std::strerror(err),
               Location::inFile(path));
}

static FileStamp stampFrom(const struct stat &st) {
  FileStamp s;
  s.device = static_cast<uint64_t>(st.st_dev);
  s.inode = static_cast<uint64_t>(st.st_ino);
  s.size = static_cast<uint64_t>(st.st_size);
  s.modifiedNs =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.changedNs =
      static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return s;
}

Expected<UniqueFd> openForReading(const std::string &path,
                                  struct stat *status) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0)
    return Unexpected(ioError("cannot open", path, errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Unexpected(ioError("cannot read", path, errno));
  if (S_ISDIR(st.st_mode))
    return Unexpected(ioError("cannot read", path, EISDIR));
  if (!S_ISREG(st.st_mode))
    return makeError(ErrorCode::Invalid,
                     std::string("not read: not a regular file but ") +
                         (S_ISFIFO(st.st_mode)   ? "a named pipe (FIFO)"
                          : S_ISSOCK(st.st_mode) ? "a socket"
                                                 : "a device"),
                     Location::inFile(path), "give the path of a regular file");
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return Unexpected(ioError("cannot read", path, errno));
  if (status)
    *status = st;
  return fd;
}

//===----------------------------------------------------------------------===//
// Files of other users in the cache
//===----------------------------------------------------------------------===//

/// Whether `gid` is the effective user's own group: the user's primary
/// group, of the user's name, with no other members (a "user private
/// group", under which a umask of 002 makes files group-writable).
static bool userPrivateGroup(gid_t gid) {
  static const std::optional<gid_t> own = []() -> std::optional<gid_t> {
    struct passwd pw, *pwp = nullptr;
    struct group gr, *grp = nullptr;
    std::vector<char> buf(1 << 16);
    if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size() / 2, &pwp) != 0 ||
        !pwp)
      return std::nullopt;
    if (::getgrgid_r(pw.pw_gid, &gr, buf.data() + buf.size() / 2,
                     buf.size() / 2, &grp) != 0 ||
        !grp || std::strcmp(gr.gr_name, pw.pw_name) != 0 ||
        (gr.gr_mem && gr.gr_mem[0]))
      return std::nullopt;
    return pw.pw_gid;
  }();
  return own && *own == gid;
}

bool onlyOwnerWrites(const struct stat &st, bool orRoot) {
  return (st.st_uid == ::geteuid() || (orRoot && st.st_uid == 0)) &&
         !(st.st_mode & S_IWOTH) &&
         (!(st.st_mode & S_IWGRP) ||
          (S_ISDIR(st.st_mode) && userPrivateGroup(st.st_gid)));
}

namespace {

/// The effective user's, and no one else may write it.
bool ownAndPrivate(const struct stat &st) { return onlyOwnerWrites(st); }

struct CacheTrust {
  std::mutex mutex;
  /// Per directory (as given, and as resolved): "" when trusted, else the
  /// directory at fault.
  std::unordered_map<std::string, std::string> culprit;
  std::set<std::string> reported;
  std::function<void(const std::string &)> handler;
};

CacheTrust &cacheTrust() {
  static CacheTrust t;
  return t;
}

/// The directory at fault on the way up from `dir` ("" when none): the
/// highest of those another user owns or may write, below the first that
/// root owns and others may not write or that is sticky (/home, /tmp). With
/// `t.mutex` held. None when `dir` does not exist (nothing in it to trust).
std::optional<std::string> untrustedAbove(CacheTrust &t,
                                          const std::string &dir) {
  if (auto it = t.culprit.find(dir); it != t.culprit.end())
    return it->second;
  char *real = ::realpath(dir.c_str(), nullptr);
  if (!real)
    return std::nullopt;
  fs::path at(real);
  std::free(real);
  // The directories on the way up, and whether each is at fault.
  std::vector<std::pair<std::string, bool>> way;
  std::string fault; // of the rest of the way, known before
  for (;;) {
    const std::string p = at.string();
    if (auto it = t.culprit.find(p); it != t.culprit.end()) {
      fault = it->second;
      break;
    }
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return std::nullopt; // changed meanwhile
    if (st.st_uid == 0 && !ownAndPrivate(st)) {
      way.emplace_back(p, (st.st_mode & 022) && !(st.st_mode & S_ISVTX));
      break;
    }
    way.emplace_back(p, !ownAndPrivate(st));
    if (!at.has_relative_path())
      break; // "/"
    at = at.parent_path();
  }
  for (auto it = way.rbegin(); it != way.rend(); ++it) {
    if (fault.empty() && it->second)
      fault = it->first;
    t.culprit[it->first] = fault;
  }
  t.culprit[dir] = fault;
  return fault;
}

/// Reports `path` once, with `t.mutex` held.
void reportUntrusted(CacheTrust &t, const std::string &path) {
  if (t.handler && t.reported.insert(path).second)
    t.handler(path);
}

} // namespace

bool trustedCacheDirectory(const std::string &dir) {
  CacheTrust &t = cacheTrust();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto fault = untrustedAbove(t, dir);
  if (fault && !fault->empty())
    reportUntrusted(t, *fault);
  return fault && fault->empty();
}

bool trustedCacheFile(const std::string &path, const struct stat &st) {
  CacheTrust &t = cacheTrust();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::string dir = fs::path(path).parent_path().string();
  auto fault = untrustedAbove(t, dir.empty() ? "." : dir);
  if (!fault)
    return false;
  if (fault->empty() && !ownAndPrivate(st))
    fault = path;
  if (!fault->empty())
    reportUntrusted(t, *fault);
  return fault->empty();
}

void onUntrustedCachePath(std::function<void(const std::string &)> handler) {
  CacheTrust &t = cacheTrust();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.handler = std::move(handler);
}

/// Opens `path` for readRegularFile and mapOwnCacheFile: a regular file of
/// at most `maxBytes` and, with `ownOnly`, one trustedCacheFile trusts.
/// `st` receives its status.
static Expected<UniqueFd> openRegularFile(const std::string &path,
                                          size_t maxBytes, bool ownOnly,
                                          struct stat &st) {
  auto fd = openForReading(path, &st);
  if (!fd)
    return Unexpected(fd.error());
  if (ownOnly && !trustedCacheFile(path, st))
    return makeError(ErrorCode::Invalid,
                     "not read: the file or a directory it is in is not the "
                     "current user's, or others may write it",
                     Location::inFile(path));
  if (static_cast<size_t>(st.st_size) > maxBytes)
    return makeError(ErrorCode::Invalid,
                     "file is larger than " + std::to_string(maxBytes) +
                         " bytes",
                     Location::inFile(path));
  return fd;
}

/// `before` and `after`, when given, receive the file's stamp as it was
/// opened and as it was when every byte had been read.
static Expected<std::string> readRegularFile(const std::string &path,
                                             size_t maxBytes, bool ownOnly,
                                             FileStamp *before = nullptr,
                                             FileStamp *after = nullptr) {
  struct stat st;
  auto opened = openRegularFile(path, maxBytes, ownOnly, st);
  if (!opened)
    return Unexpected(opened.error());
  const int fd = opened->get();
  if (before)
    *before = stampFrom(st);
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Unexpected(ioError("read failed", path, n < 0 ? errno : EIO));
    done += static_cast<size_t>(n);
  }
  if (after) {
    if (::fstat(fd, &st) == 0)
      *after = stampFrom(st);
    else
      *after = FileStamp{}; // unknown: differs from `before`
  }
  return out;
}

//===----------------------------------------------------------------------===//
// File stamps
//===----------------------------------------------------------------------===//

std::string FileStamp::str() const {
  return std::to_string(device) + ":" + std::to_string(inode) + ":" +
         std::to_string(size) + ":" + std::to_string(modifiedNs) + ":" +
         std::to_string(changedNs);
}

std::optional<FileStamp> fileStamp(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt;
  return stampFrom(st);
}

bool settled(const FileStamp &stamp, int64_t nowNs) {
  if (nowNs == 0) {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    nowNs = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  return stamp.inode != 0 && stamp.modifiedNs <= nowNs - kSettledNs &&
         stamp.changedNs <= nowNs - kSettledNs;
}

namespace {

/// A memo of readFileHashed: "ireepkg file digest 1", then the file's
/// path, its stamp and the SHA-256 of its bytes, one per line.
constexpr std::string_view kDigestMemoHeader = "ireepkg file digest 1\n";

std::string digestMemoHead(const std::string &path, const FileStamp &stamp) {
  return std::string(kDigestMemoHeader) + path + "\n" + stamp.str() + "\n";
}

/// The digest `memo` (a memo's bytes) records for `path` with `stamp`.
std::optional<std::string> digestIn(const std::string &memo,
                                    const std::string &path,
                                    const FileStamp &stamp) {
  const std::string head = digestMemoHead(path, stamp);
  if (memo.size() != head.size() + 65 ||
      std::string_view(memo).substr(0, head.size()) != head ||
      memo.back() != '\n')
    return std::nullopt;
  return memo.substr(head.size(), 64);
}

} // namespace

std::string digestMemoPath(const std::string &cacheRoot,
                           const std::string &path) {
  if (cacheRoot.empty())
    return {};
  return cacheRoot + "/digests/" + Sha256::hex(path);
}

std::optional<std::string> knownDigest(const std::string &path,
                                       const std::string &memoPath) {
  if (memoPath.empty())
    return std::nullopt;
  auto stamp = fileStamp(path);
  if (!stamp)
    return std::nullopt;
  auto memo = readOwnCacheFile(memoPath, 1 << 12);
  if (!memo)
    return std::nullopt;
  return digestIn(*memo, path, *stamp);
}

Expected<HashedFile> readFileHashed(const std::string &path, size_t maxBytes,
                                    const std::string &memoPath,
                                    int64_t nowNs) {
  FileStamp before, after;
  auto bytes = readRegularFile(path, maxBytes, /*ownOnly=*/false,
                               memoPath.empty() ? nullptr : &before,
                               memoPath.empty() ? nullptr : &after);
  if (!bytes)
    return Unexpected(bytes.error());
  HashedFile out;
  out.bytes = std::move(*bytes);
  // The same stamp before and after the read: no change in between, so
  // these are the bytes of that stamp.
  const bool steady = !memoPath.empty() && before == after;
  if (steady) {
    if (auto memo = readOwnCacheFile(memoPath, 1 << 12))
      if (auto sha = digestIn(*memo, path, before)) {
        out.sha256 = std::move(*sha);
        return out;
      }
  }
  out.sha256 = Sha256::hex(out.bytes);
  // A memo only of a settled stamp: a file changed again within the
  // clock's tick after it was read could otherwise keep that stamp. A
  // cache: failing to write it changes nothing.
  if (steady && settled(before, nowNs)) {
    std::string dir = fs::path(memoPath).parent_path().string();
    if (dir.empty() || makeDirs(dir))
      (void)writeCacheFile(memoPath,
                           digestMemoHead(path, before) + out.sha256 + "\n");
  }
  return out;
}

Expected<MappedFile> mapOwnCacheFile(const std::string &path, size_t maxBytes) {
  struct stat st;
  auto fd = openRegularFile(path, maxBytes, /*ownOnly=*/true, st);
  if (!fd)
    return Unexpected(fd.error());
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0)
    return MappedFile();
  std::shared_ptr<const char> map = os::mapReadOnly(fd->get(), size);
  if (!map)
    return Unexpected(ioError("cannot map", path, errno));
  return MappedFile(std::move(map), size);
}

Expected<std::string> readFile(const std::string &path, size_t maxBytes) {
  return readRegularFile(path, maxBytes, /*ownOnly=*/false);
}

Expected<std::string> readOwnCacheFile(const std::string &path,
                                       size_t maxBytes) {
  return readRegularFile(path, maxBytes, /*ownOnly=*/true);
}

Status writeAllToFd(int fd, std::string_view content, const std::string &path) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Unexpected(ioError("write failed", path, errno));
    done += static_cast<size_t>(n);
  }
  return ok();
}

static Status writeAll(int fd, std::string_view content,
                       const std::string &path, bool durable = true) {
  if (Status s = writeAllToFd(fd, content, path); !s)
    return s;
  if (durable && ::fsync(fd) != 0)
    return Unexpected(ioError("fsync failed", path, errno));
  return ok();
}

Status writeNewFile(const std::string &path, std::string_view content,
                    mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return Unexpected(ioError("cannot create", path, errno));
  Status s = writeAll(fd, content, path);
  ::close(fd);
  return s;
}

Expected<std::string> writeTemporaryFile(std::string_view content,
                                         std::string_view stem,
                                         std::string_view suffix) {
  const char *tmp = environmentOverride("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" +
                        std::string(stem) + "-XXXXXX" + std::string(suffix);
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemps(name.data(), static_cast<int>(suffix.size()));
  if (fd < 0)
    return Unexpected(
        ioError("cannot create a temporary file", pattern, errno));
  const char *p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int e = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(name.data());
      return Unexpected(ioError("cannot write", name.data(), e));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::close(fd);
  return std::string(name.data());
}

Status fsyncPath(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Unexpected(ioError("cannot open", path, errno));
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0 && e != EINVAL)
    return Unexpected(ioError("fsync failed", path, e));
  return ok();
}

Status writeFileAtomic(const std::string &path, std::string_view content,
                       mode_t mode, const char *faultPointName) {
  fs::path p(path);
  std::string tmp = (p.parent_path() / ("." + p.filename().string() + ".tmp." +
                                        std::to_string(::getpid())))
                        .string();
  ::unlink(tmp.c_str());
  if (Status s = writeNewFile(tmp, content, mode); !s) {
    ::unlink(tmp.c_str()); // a partly written temporary (disk full)
    return s;
  }
  if (faultPointName)
    faultPoint(faultPointName);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return Unexpected(ioError("cannot replace", path, e));
  }
  std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  return fsyncPath(dir);
}

bool isAtomicTempName(std::string_view name) {
  constexpr std::string_view kTmp = ".tmp.";
  size_t at = name.rfind(kTmp);
  if (name.size() < 2 || name[0] != '.' || at == std::string_view::npos ||
      at < 2 || at + kTmp.size() == name.size())
    return false;
  for (char c : name.substr(at + kTmp.size()))
    if (c < '0' || c > '9')
      return false;
  return true;
}

Status writeCacheFile(const std::string &path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return Unexpected(ioError("cannot create", tmp, errno));
  Status s = writeAll(fd, content, tmp, /*durable=*/false);
  ::close(fd);
  if (s && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = Unexpected(ioError("cannot replace", path, errno));
  if (!s)
    ::unlink(tmp.c_str());
  return s;
}

Status makeDirs(const std::string &path, mode_t mode) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec)
    return Unexpected(ioError("cannot create directory", path, ec.value()));
  (void)mode;
  return ok();
}

Status removeTree(const std::string &path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)))
    return ok();
  // Read-only directories must become writable before their entries can go.
  if (fs::is_directory(fs::symlink_status(path, ec))) {
    ::chmod(path.c_str(), 0755);
    for (auto it = fs::recursive_directory_iterator(
             path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        ::chmod(it->path().c_str(), 0755);
  }
  fs::remove_all(path, ec);
  if (ec)
    return Unexpected(ioError("cannot remove", path, ec.value()));
  return ok();
}

Status makeReadOnlyTree(const std::string &path, bool filesToo) {
  std::error_code ec;
  std::vector<std::string> dirs{path};
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string p = it->path().string();
    if (!filesToo) {
      if (it->is_directory(ec) && !it->is_symlink(ec))
        dirs.push_back(p);
      continue;
    }
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0)
      return Unexpected(ioError("cannot stat", p, errno));
    if (S_ISDIR(st.st_mode)) {
      dirs.push_back(p);
    } else if (S_ISREG(st.st_mode)) {
      mode_t m = (st.st_mode & 0100) ? 0555 : 0444;
      if (::chmod(p.c_str(), m) != 0)
        return Unexpected(ioError("cannot chmod", p, errno));
    }
  }
  if (ec)
    return Unexpected(ioError("cannot walk", path, ec.value()));
  // One mode for every directory, whatever the umask was when it was made.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    if (::chmod(it->c_str(), 0755) != 0)
      return Unexpected(ioError("cannot chmod", *it, errno));
  return ok();
}

Status makeDirectoryMovable(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      (st.st_mode & S_IWUSR))
    return ok();
  if (::chmod(path.c_str(), (st.st_mode & 07777) | S_IWUSR) != 0)
    return Unexpected(ioError("cannot make writable", path, errno));
  return ok();
}

Status renameDurable(const std::string &from, const std::string &to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    return Unexpected(ioError("cannot rename to " + to, from, errno));
  fs::path a = fs::path(from).parent_path(), b = fs::path(to).parent_path();
  if (Status s = fsyncPath(a.empty() ? "." : a.string()); !s)
    return s;
  if (a != b)
    return fsyncPath(b.empty() ? "." : b.string());
  return ok();
}

bool exists(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string absolutePath(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  return (ec ? fs::path(path) : p).lexically_normal().string();
}

Status syncFileSystem(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Unexpected(ioError("cannot open", path, errno));
  int rc = ::syncfs(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0)
    return Unexpected(ioError("syncfs failed", path, e));
  return ok();
}

} // namespace ireepkg::fsutil
