//===- ireepkg/base/partial_files.h - Partial files and signals ----===//
//
// A download is written to `<dest>.part-<pid>-<random>` and renamed into
// place when complete. While such a file exists it is registered here, so
// that a command interrupted by SIGINT, SIGTERM or SIGHUP removes it before
// the signal ends the process (the handler unlinks every registered path,
// passes the signal on to the handler that was there before, else restores
// the default action and raises it again). What a SIGKILL leaves is removed
// by the next run that downloads (removeAbandonedPartials).
//
// The registry has a fixed number of slots and is async-signal-safe; a
// path that finds no free slot is simply not removed on a signal.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_PARTIAL_FILES_H
#define IREEPKG_BASE_PARTIAL_FILES_H

#include <string>

namespace ireepkg {

/// Registers `path` for removal on an interrupting signal while the guard
/// lives (the first guard installs the handlers). The owner still removes
/// or renames the file itself.
class PartialFileGuard {
public:
  PartialFileGuard() = default;
  explicit PartialFileGuard(const std::string &path);
  ~PartialFileGuard();
  PartialFileGuard(PartialFileGuard &&other) noexcept;
  PartialFileGuard &operator=(PartialFileGuard &&other) noexcept;
  PartialFileGuard(const PartialFileGuard &) = delete;
  PartialFileGuard &operator=(const PartialFileGuard &) = delete;
  /// Stops watching the path (after it was renamed or removed).
  void release();

private:
  int slot_ = -1;
};

} // namespace ireepkg

#endif
