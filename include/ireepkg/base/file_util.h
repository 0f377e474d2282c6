//===- ireepkg/base/file_util.h - Durable file operations ----------===//
//
// The few file-system operations the transactions rely on, each reporting
// failures as ireepkg::Error with the path and errno text: atomic replace
// (write temp, fsync, rename, fsync directory), read-only trees, and tree
// removal that copes with read-only directories.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_FILE_UTIL_H
#define IREEPKG_BASE_FILE_UTIL_H

#include "ireepkg/base/error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace ireepkg::fsutil {

/// Owns a file descriptor and closes it when destroyed (which also
/// releases any fcntl lock taken through it).
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UniqueFd &operator=(UniqueFd &&other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  /// Gives up the descriptor without closing it.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
};

Error ioError(const std::string &what, const std::string &path, int err);

/// Opens `path` read-only when it is a regular file. Anything else is
/// refused, a FIFO, device or socket without being waited on (it is opened
/// O_NONBLOCK, checked with fstat, then made blocking again): a named pipe
/// given as a file would otherwise block the open until a writer comes.
/// `st`, when given, receives the file's status.
Expected<UniqueFd> openForReading(const std::string &path,
                                  struct stat *st = nullptr);

Expected<std::string> readFile(const std::string &path,
                               size_t maxBytes = 256u << 20);
/// Reads a cache file whose content is used as it is once read (a parsed
/// form, not checked again against a signed hash): only one that
/// trustedCacheFile trusts, so that someone else with write access to a
/// shared cache directory cannot plant one. Any other file is an error,
/// which callers treat as a cache miss.
Expected<std::string> readOwnCacheFile(const std::string &path,
                                       size_t maxBytes);

/// Whether no user but the effective one (or root, with `orRoot`) may
/// write the file of status `st`: it owns it (or root does) and neither
/// others nor its group may write it. A directory's group may, when that
/// group is the user's own (the user's primary group, of the user's name,
/// with no other members), as every directory made under a umask of 002
/// is.
bool onlyOwnerWrites(const struct stat &st, bool orRoot = false);
/// Whether no other user can change the cache file `path`, of status `st`
/// (the file, not a symlink to it): the effective user owns it and no one
/// else may write it, and the same holds for each directory it is in, up
/// to the first that root owns and others may not write, or that is sticky
/// (/home, /tmp). Symlinks on the way are followed. Anyone who may write
/// a directory on the way may rename another file over this one. A file
/// that is not trusted is reported, once per run, through the handler of
/// onUntrustedCachePath, with the directory (or the file) at fault.
bool trustedCacheFile(const std::string &path, const struct stat &st);
/// trustedCacheFile for a directory of the cache (itself and those above).
bool trustedCacheDirectory(const std::string &dir);
/// Sets what is called, once per path and run, with a directory of the
/// cache (or a file) another user owns or may write: the CLI warns.
void onUntrustedCachePath(std::function<void(const std::string &)> handler);

/// What tells whether a file's bytes changed without reading them: which
/// file it is (device, inode), its size, and when its bytes and its inode
/// last changed (mtime and ctime, in nanoseconds). Writing the file, or
/// renaming another over its path, gives it another stamp, and no one but
/// root can set a ctime back. With one exception: two changes within one
/// tick of the file system's clock (a few milliseconds) can leave the same
/// times, and so the same stamp if the size is the same too. A stamp
/// therefore stands for the bytes read with it only when it is settled:
/// when both its times were at least kSettledNs before the stamp was
/// taken, any later change has later times. (Git's "racily clean" index
/// entries and Mercurial's dirstate rest on the same rule.)
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t modifiedNs = 0;
  int64_t changedNs = 0;
  bool operator==(const FileStamp &) const = default;
  /// "device:inode:size:mtime:ctime", for records.
  std::string str() const;
};
inline constexpr int64_t kSettledNs = 2'000'000'000;
/// The stamp of the regular file at `path` (following symlinks); none when
/// there is none.
std::optional<FileStamp> fileStamp(const std::string &path);
/// Whether both of the stamp's times are at least kSettledNs before `nowNs`
/// (nanoseconds since the epoch; 0: the current time).
bool settled(const FileStamp &stamp, int64_t nowNs = 0);

/// A file's bytes, and the SHA-256 of them in hex.
struct HashedFile {
  std::string bytes;
  std::string sha256;
};
/// Reads the regular file at `path` (as readFile) with the SHA-256 of its
/// bytes. With a `memoPath` (a cache file, trusted as readOwnCacheFile
/// trusts one), the digest is not computed again when the memo holds one
/// for the file's stamp as it was both before and after the read; when it
/// does not and that stamp is settled (at `nowNs`, 0: now), the digest is
/// written there for the next read. Hashing a 500 KB lockfile takes about
/// 0.3 ms; a no-op sync takes a few.
Expected<HashedFile> readFileHashed(const std::string &path, size_t maxBytes,
                                    const std::string &memoPath = {},
                                    int64_t nowNs = 0);

/// Where a cache at `cacheRoot` keeps the digest of the file at `path` for
/// readFileHashed and knownDigest: <cacheRoot>/digests/<SHA-256 of the
/// path>. Empty (no memo) when `cacheRoot` is.
std::string digestMemoPath(const std::string &cacheRoot,
                           const std::string &path);
/// The SHA-256 of the file at `path` as `memoPath` keeps it for the file's
/// present stamp (a memo readFileHashed wrote), without reading the file;
/// none when the memo has no digest for that stamp. A memo is written only
/// for a settled stamp that was the same before and after the bytes were
/// read, so while the file keeps it, it holds those bytes.
std::optional<std::string> knownDigest(const std::string &path,
                                       const std::string &memoPath);

/// A file's bytes, mapped read-only (mapOwnCacheFile); empty when default
/// constructed. Copies share the mapping, which ends with the last of them.
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(std::shared_ptr<const char> map, size_t size)
      : map_(std::move(map)), size_(size) {}
  std::string_view bytes() const { return {map_.get(), size_}; }
  bool empty() const { return size_ == 0; }

private:
  std::shared_ptr<const char> map_;
  size_t size_ = 0;
};
/// readOwnCacheFile, mapped rather than read: the file's pages are in the
/// page cache already, so this costs neither a copy nor fresh memory (on
/// a virtual machine whose host takes freed memory back, fresh memory is
/// what a run pays most for: docs/performance.md). Only for files that are
/// never truncated or rewritten in place (replaced by a rename, as
/// writeCacheFile does, or only appended to): the mapping keeps the bytes
/// it was made of. The same errors as readOwnCacheFile.
Expected<MappedFile> mapOwnCacheFile(const std::string &path, size_t maxBytes);

/// Writes `content` to `path` atomically and durably, through the
/// temporary file ".<name>.tmp.<pid>" beside it (isAtomicTempName). With
/// `faultPointName`, that fault point (fault_point.h) is passed once the
/// temporary file is written, before it is renamed.
Status writeFileAtomic(const std::string &path, std::string_view content,
                       mode_t mode = 0644,
                       const char *faultPointName = nullptr);
/// Whether `name` (a file name, no directory) is one of writeFileAtomic's
/// temporary files: "." + a name + ".tmp." + digits.
bool isAtomicTempName(std::string_view name);
/// Writes a cache entry: atomically (temporary file and rename) but not
/// durably. For files that are checked (by hash) whenever they are read,
/// so that one lost in a crash is only fetched again.
Status writeCacheFile(const std::string &path, std::string_view content);
/// Writes all of `content` to `fd`, through short writes and EINTR;
/// `path` names the file in the error. No fsync.
Status writeAllToFd(int fd, std::string_view content, const std::string &path);
/// Writes `content` to a new file (no rename) and fsyncs it.
Status writeNewFile(const std::string &path, std::string_view content,
                    mode_t mode = 0644);
Status fsyncPath(const std::string &path);
/// Writes `content` to a new file in $TMPDIR (else /tmp) named
/// `<stem>-XXXXXX<suffix>`, and returns its path; the caller removes it.
Expected<std::string> writeTemporaryFile(std::string_view content,
                                         std::string_view stem,
                                         std::string_view suffix);
Status makeDirs(const std::string &path, mode_t mode = 0755);
/// Removes a tree, making read-only directories writable first. Missing is
/// fine.
Status removeTree(const std::string &path);
/// Gives an installed package tree its final modes: every file read-only
/// (0444, or 0555 when executable) and every directory 0755. Directories stay
/// writable by their owner: Linux lets only a process that may write a
/// directory move it to a new parent (the commit's rename), and people
/// delete a prefix with `rm -rf`, which needs write permission on each
/// directory. With `filesToo` false, only the directories are set (files
/// linked from the cache have their modes already).
Status makeReadOnlyTree(const std::string &path, bool filesToo = true);
/// Adds owner write permission to a directory that lacks it (package
/// directories of prefixes written before directories stayed writable), so
/// that it can be renamed or emptied. Not a directory, or already
/// writable: nothing to do.
Status makeDirectoryMovable(const std::string &path);
/// Renames, and fsyncs both parent directories.
Status renameDurable(const std::string &from, const std::string &to);
bool exists(const std::string &path);
bool isDirectory(const std::string &path);
/// Absolute, lexically normal form of `path` (no symlink resolution).
std::string absolutePath(const std::string &path);
/// Flushes the file system holding `path` (one call instead of an fsync per
/// file after extracting thousands of files).
Status syncFileSystem(const std::string &path);

} // namespace ireepkg::fsutil

#endif
