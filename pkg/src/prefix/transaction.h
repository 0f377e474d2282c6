//===- pkg/src/prefix/transaction.h - Prefix lock and journal (private) ---===//
//
// The mechanics behind "every change to a prefix is one transaction":
//
//  1. PrefixLock: a POSIX record lock (fcntl) on <prefix>/state/lock;
//     waits (with a message naming the holder's pid) or times out. The
//     kernel drops it when the process dies. The file is never written.
//  2. Transaction::begin writes the journal (phase "staging") before
//     anything else exists, so a crash while staging rolls back: the staged
//     files are deleted and the prefix was never touched.
//  3. Packages are extracted and new state files written under
//     <prefix>/.staging/<id>/ (same file system), then synced.
//  4. commit() rewrites the journal to phase "committing": the commit
//     point. From here recovery rolls forward.
//  5. Renames, in an order that keeps the state files pointing at existing
//     directories: replaced package directories out, new ones in, state
//     files, state files no writer produces any more out, then removed
//     directories out (into .trash/<id>/).
//  6. The journal is removed, then scratch space.
//
// IREEPKG_FAULT=<point> kills the process with SIGKILL at a named point, so
// tests can crash every step and check the recovery.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_TRANSACTION_H
#define IREEPKG_PKG_TRANSACTION_H

#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include "ireepkg/base/fault_point.h"

#include <map>
#include <string>
#include <vector>

namespace ireepkg {

class PrefixLock {
public:
  PrefixLock() = default;

  /// Creates <prefix>/state if needed and takes the lock.
  static Expected<PrefixLock> acquire(const std::string &prefix,
                                      const LockOptions &options,
                                      Reporter &reporter);

private:
  fsutil::UniqueFd fd_; ///< closing it releases the lock
};

/// The temporary files an interrupted writer left in the prefix's own
/// directories: only writeFileAtomic's names (fsutil::isAtomicTempName),
/// only regular files, only in <prefix>/state (the journal's; state files
/// and packages are staged under .staging/).
std::vector<std::string> leftoverTemporaryFiles(const std::string &prefix);

/// Finishes or rolls back an interrupted transaction and removes
/// leftoverTemporaryFiles. Call with the lock held. Returns a description of
/// what it did ("" if nothing).
Expected<std::string> recoverPrefix(const std::string &prefix);

class Transaction {
public:
  /// Writes the journal; the lock must be held.
  static Expected<Transaction> begin(const std::string &prefix);
  Transaction(Transaction &&) noexcept = default;
  ~Transaction(); ///< rolls back unless committed

  /// Where to extract package `name` `version` (does not exist yet).
  std::string stagePackage(const std::string &name, const Version &version);
  /// Moves the installed package directory out at commit.
  void removePackage(const std::string &name, const Version &version);
  /// Replaces <prefix>/state/<file> at commit.
  void setStateFile(const std::string &file, std::string content);
  /// Moves <prefix>/state/<file> out at commit, if it is there.
  void removeStateFile(const std::string &file);

  /// Stages the state files, syncs, marks the commit and applies it.
  Status commit();

private:
  Transaction() = default;
  Status writeJournal(const std::string &phase);
  void rollback();

  std::string prefix_;
  std::string id_;
  std::vector<std::pair<std::string, std::string>> adds_;    // name, version
  std::vector<std::pair<std::string, std::string>> removes_; // name, version
  std::map<std::string, std::string> stateFiles_;
  std::vector<std::string> removedStateFiles_;
  bool done_ = false;
};

} // namespace ireepkg

#endif
