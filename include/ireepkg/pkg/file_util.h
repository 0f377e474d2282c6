//===- file_util.h - Durable file operations (private) ---------*- C++ -*-===//
//
// The few file-system operations the transactions rely on, each reporting
// failures as ireepkg::Error with the path and errno text: atomic replace
// (write temp, fsync, rename, fsync directory), read-only trees, and tree
// removal that copes with read-only directories.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_FILE_UTIL_H
#define IREEPKG_PKG_FILE_UTIL_H

#include "ireepkg/manifest_schema/error.h"

#include <string>
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
  void reset() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
};

Error ioError(const std::string &what, const std::string &path, int err);

Expected<std::string> readFile(const std::string &path,
                               size_t maxBytes = 256u << 20);
/// Reads a cache file whose content is used as it is once read (a parsed
/// form, not checked again against a signed hash): only one owned by the
/// effective user that no other user may write, so that someone else with
/// write access to a shared cache directory cannot plant one. Any other
/// file is an error, which callers treat as a cache miss.
Expected<std::string> readOwnCacheFile(const std::string &path,
                                       size_t maxBytes);
/// Writes `content` to `path` atomically and durably.
Status writeFileAtomic(const std::string &path, std::string_view content,
                       mode_t mode = 0644);
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
