//===- pkg/src/prefix/transaction.cpp - Prefix lock and journal -----------===//
//
// See transaction.h for the protocol.
//
//===----------------------------------------------------------------------===//
#include "transaction.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/os.h"
#include "ireepkg/pkg/prefix/state.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <set>
#include <cstdio>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

void faultPoint(const char *point) {
  // IREEPKG_FAULT=<point> kills the process there; <point>:stop stops it
  // (SIGSTOP) until a test has changed the world and sends SIGCONT. Read
  // at every point, not once per process: a process forked to crash (the
  // unit tests) sets it after its parent has passed these points already.
  const char *fault = environmentOverride("IREEPKG_FAULT");
  if (!fault)
    return;
  size_t n = std::strlen(point);
  if (std::strncmp(fault, point, n) != 0)
    return;
  if (fault[n] == 0)
    ::kill(::getpid(), SIGKILL);
  else if (std::strcmp(fault + n, ":stop") == 0)
    ::kill(::getpid(), SIGSTOP);
}

//===----------------------------------------------------------------------===//
// Lock
//===----------------------------------------------------------------------===//

/// Tries to take the lock; returns 0, EAGAIN when held (setting `holder`),
/// or another errno. POSIX record locks (os::lockFile, not flock) so that
/// the holder's pid can be asked for without writing it into the file: a
/// command that changes nothing leaves the prefix byte-for-byte as it was.
static int tryLock(int fd, bool wait, pid_t &holder) {
  return os::lockFile(fd, wait, &holder);
}

Expected<PrefixLock> PrefixLock::acquire(const std::string &prefix,
                                         const LockOptions &options,
                                         Reporter &reporter) {
  std::string stateDir = prefix + "/state";
  if (Status s = fsutil::makeDirs(stateDir); !s)
    return Unexpected(s.error());
  std::string path = stateDir + "/lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Unexpected(fsutil::ioError("cannot open lock file", path, errno));
  PrefixLock lock;
  lock.fd_ = fsutil::UniqueFd(fd);
  pid_t holder = 0;
  int rc = tryLock(fd, false, holder);
  if (rc == 0)
    return lock;
  if (rc != EAGAIN)
    return Unexpected(fsutil::ioError("cannot lock", path, rc));
  std::string who = holder > 0 ? "ireepkg (pid " + std::to_string(holder) + ")"
                               : "another ireepkg";
  reporter.waitingForLock(prefix, who);
  if (!options.timeoutSeconds) {
    while ((rc = tryLock(fd, true, holder)) != 0)
      if (rc != EINTR)
        return Unexpected(fsutil::ioError("cannot lock", path, rc));
    return lock;
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(*options.timeoutSeconds);
  while ((rc = tryLock(fd, false, holder)) != 0) {
    if (rc != EAGAIN && rc != EINTR)
      return Unexpected(fsutil::ioError("cannot lock", path, rc));
    if (std::chrono::steady_clock::now() >= deadline) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", *options.timeoutSeconds);
      return makeError(ErrorCode::Conflict,
                       who + " is working on this prefix; gave up after " +
                           secs + " s",
                       Location::inFile(prefix),
                       "wait for it to finish, or raise --lock-timeout");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return lock;
}

//===----------------------------------------------------------------------===//
// Journal
//===----------------------------------------------------------------------===//

namespace {

struct Journal {
  std::string id;
  std::string phase;
  std::vector<std::pair<std::string, std::string>> adds, removes;
  std::vector<std::string> stateFiles;
  /// State files no writer produces any more, moved out after the new ones
  /// are in (absent from journals of earlier versions).
  std::vector<std::string> removedStateFiles;
};

std::string journalPath(const std::string &prefix) {
  return prefix + "/state/journal.json";
}
std::string stagingDir(const std::string &prefix, const std::string &id) {
  return prefix + "/.staging/" + id;
}
std::string trashDir(const std::string &prefix, const std::string &id) {
  return prefix + "/.trash/" + id;
}
std::string installedDir(const std::string &prefix, const std::string &name,
                         const std::string &version) {
  return prefix + "/packages/" + name + "/" + version;
}

std::string serializeJournal(const Journal &j) {
  nlohmann::ordered_json o;
  o["schema_version"] = 1;
  o["id"] = j.id;
  o["phase"] = j.phase;
  o["adds"] = j.adds;
  o["removes"] = j.removes;
  o["state_files"] = j.stateFiles;
  if (!j.removedStateFiles.empty())
    o["removed_state_files"] = j.removedStateFiles;
  return o.dump(1) + "\n";
}

Expected<Journal> parseJournal(const std::string &text,
                               const std::string &path) {
  nlohmann::json o = parseJsonOrDiscarded(text);
  auto bad = [&] {
    return makeError(ErrorCode::Integrity,
                     "the transaction journal is corrupted",
                     Location::inFile(path),
                     "an interrupted change cannot be completed; inspect the "
                     "prefix, then delete the journal and run `ireepkg "
                     "verify`");
  };
  if (o.is_discarded() || !o.is_object())
    return bad();
  Journal j;
  try {
    j.id = o.at("id").get<std::string>();
    j.phase = o.at("phase").get<std::string>();
    j.adds = o.at("adds").get<decltype(j.adds)>();
    j.removes = o.at("removes").get<decltype(j.removes)>();
    j.stateFiles = o.at("state_files").get<std::vector<std::string>>();
    j.removedStateFiles =
        o.value("removed_state_files", std::vector<std::string>{});
  } catch (const nlohmann::json::exception &) {
    return bad();
  }
  if (j.id.empty() || j.id.find('/') != std::string::npos ||
      (j.phase != "staging" && j.phase != "committing"))
    return bad();
  for (const auto &group : {j.adds, j.removes})
    for (const auto &[n, v] : group)
      if (!isValidPackageName(n) || !Version::parse(v))
        return bad();
  for (const std::string &f : j.stateFiles)
    if (f.empty() || f.find('/') != std::string::npos || f[0] == '.')
      return bad();
  for (const std::string &f : j.removedStateFiles)
    if (!isStateFileName(f))
      return bad();
  return j;
}

/// Whether the apply() in progress has moved anything yet.
bool movedBefore = false;

/// Moves `from` to `to` if `from` exists (idempotent step of apply). The
/// first move of each apply is a fault point ("applying").
Status moveIfPresent(const std::string &from, const std::string &to) {
  if (!fsutil::exists(from))
    return ok();
  if (Status s = fsutil::makeDirs(fs::path(to).parent_path().string()); !s)
    return s;
  // A directory moves to a new parent only if it is writable (".." changes);
  // prefixes written by older versions have read-only package directories.
  if (Status s = fsutil::makeDirectoryMovable(from); !s)
    return s;
  Status s = fsutil::renameDurable(from, to);
  if (s && !movedBefore) {
    movedBefore = true;
    faultPoint("applying");
  }
  return s;
}

/// Applies a committed journal. Every step checks what is already done, so
/// recovery can run it again after a crash at any point.
Status apply(const std::string &prefix, const Journal &j) {
  std::set<std::pair<std::string, std::string>> added(j.adds.begin(),
                                                      j.adds.end());
  std::string stage = stagingDir(prefix, j.id), trash = trashDir(prefix, j.id);
  movedBefore = false;
  // Replaced versions (same name and version) leave first.
  for (const auto &[n, v] : j.removes)
    if (added.count({n, v}) &&
        fsutil::exists(stage + "/packages/" + n + "/" + v))
      if (Status s = moveIfPresent(installedDir(prefix, n, v),
                                   trash + "/" + n + "/" + v);
          !s)
        return s;
  for (const auto &[n, v] : j.adds)
    if (Status s = moveIfPresent(stage + "/packages/" + n + "/" + v,
                                 installedDir(prefix, n, v));
        !s)
      return s;
  for (const std::string &f : j.stateFiles)
    if (Status s =
            moveIfPresent(stage + "/state/" + f, prefix + "/state/" + f);
        !s)
      return s;
  for (const std::string &f : j.removedStateFiles)
    if (Status s = moveIfPresent(prefix + "/state/" + f, trash + "/state/" + f);
        !s)
      return s;
  for (const auto &[n, v] : j.removes)
    if (!added.count({n, v}))
      if (Status s = moveIfPresent(installedDir(prefix, n, v),
                                   trash + "/" + n + "/" + v);
          !s)
        return s;
  faultPoint("applied");
  return ok();
}

/// Removes package name directories left empty by a removal.
void pruneEmptyNameDirs(const std::string &prefix) {
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(prefix + "/packages", ec))
    if (e.is_directory(ec) && fs::is_empty(e.path(), ec))
      fs::remove(e.path(), ec);
}

/// Deletes now-empty package name directories, then scratch space (in that
/// order, so that leftover scratch space tells recovery to prune again).
void cleanup(const std::string &prefix, const Journal &j) {
  if (!j.removes.empty())
    pruneEmptyNameDirs(prefix);
  (void)fsutil::removeTree(trashDir(prefix, j.id));
  (void)fsutil::removeTree(stagingDir(prefix, j.id));
}

Status finish(const std::string &prefix, const Journal &j) {
  if (Status s = apply(prefix, j); !s)
    return s;
  if (::unlink(journalPath(prefix).c_str()) != 0 && errno != ENOENT)
    return Unexpected(
        fsutil::ioError("cannot remove journal", journalPath(prefix), errno));
  if (Status s = fsutil::fsyncPath(prefix + "/state"); !s)
    return s;
  faultPoint("journal-removed");
  cleanup(prefix, j);
  return ok();
}

std::string newTransactionId() {
  std::random_device rd;
  std::mt19937_64 gen(rd() ^ static_cast<uint64_t>(::getpid()));
  static const char hex[] = "0123456789abcdef";
  std::string id;
  uint64_t v = gen();
  for (int i = 0; i < 16; ++i, v >>= 4)
    id += hex[v & 15];
  return id;
}

} // namespace

std::vector<std::string> leftoverTemporaryFiles(const std::string &prefix) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(prefix + "/state", ec))
    if (fsutil::isAtomicTempName(e.path().filename().string()) &&
        e.is_regular_file(ec) && !e.is_symlink(ec))
      found.push_back(e.path().string());
  return found;
}

Expected<std::string> recoverPrefix(const std::string &prefix) {
  std::string what;
  // A writer killed between writing a temporary file and renaming it (the
  // journal's) left it; the lock is held, so no writer is using it now.
  bool temporaries = false;
  for (const std::string &tmp : leftoverTemporaryFiles(prefix)) {
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT)
      return Unexpected(fsutil::ioError("cannot remove", tmp, errno));
    temporaries = true;
  }
  std::string jp = journalPath(prefix);
  if (fsutil::exists(jp)) {
    auto text = fsutil::readFile(jp, 16u << 20);
    if (!text)
      return Unexpected(text.error());
    auto j = parseJournal(*text, jp);
    if (!j)
      return Unexpected(j.error());
    if (j->phase == "staging") {
      (void)fsutil::removeTree(stagingDir(prefix, j->id));
      if (::unlink(jp.c_str()) != 0 && errno != ENOENT)
        return Unexpected(fsutil::ioError("cannot remove journal", jp, errno));
      if (Status s = fsutil::fsyncPath(prefix + "/state"); !s)
        return Unexpected(s.error());
      what = "rolled back an interrupted change";
    } else {
      if (Status s = finish(prefix, *j); !s)
        return Unexpected(s.error());
      what = "completed an interrupted change";
    }
  }
  // Scratch space only means something while a journal names it.
  bool leftovers = fsutil::exists(prefix + "/.staging") ||
                   fsutil::exists(prefix + "/.trash");
  if (leftovers)
    pruneEmptyNameDirs(prefix);
  (void)fsutil::removeTree(prefix + "/.staging");
  (void)fsutil::removeTree(prefix + "/.trash");
  if (what.empty() && (leftovers || temporaries))
    what = "removed scratch files of an interrupted change";
  return what;
}

Expected<Transaction> Transaction::begin(const std::string &prefix) {
  Transaction t;
  t.prefix_ = prefix;
  t.id_ = newTransactionId();
  if (Status s = t.writeJournal("staging"); !s)
    return Unexpected(s.error());
  faultPoint("journal-written");
  if (Status s = fsutil::makeDirs(stagingDir(prefix, t.id_) + "/packages");
      !s)
    return Unexpected(s.error());
  if (Status s = fsutil::makeDirs(stagingDir(prefix, t.id_) + "/state"); !s)
    return Unexpected(s.error());
  return t;
}

Transaction::~Transaction() {
  if (!done_ && !prefix_.empty())
    rollback();
}

void Transaction::rollback() {
  (void)fsutil::removeTree(stagingDir(prefix_, id_));
  ::unlink(journalPath(prefix_).c_str());
  (void)fsutil::fsyncPath(prefix_ + "/state");
  std::error_code ec;
  fs::remove(prefix_ + "/.staging", ec); // only if empty
  done_ = true;
}

Status Transaction::writeJournal(const std::string &phase) {
  Journal j{id_, phase, adds_, removes_, {}, removedStateFiles_};
  for (const auto &[f, content] : stateFiles_)
    j.stateFiles.push_back(f);
  return fsutil::writeFileAtomic(journalPath(prefix_), serializeJournal(j),
                                 0644, "journal-temp-written");
}

std::string Transaction::stagePackage(const std::string &name,
                                      const Version &version) {
  adds_.emplace_back(name, version.str());
  std::string dir = stagingDir(prefix_, id_) + "/packages/" + name;
  (void)fsutil::makeDirs(dir);
  return dir + "/" + version.str();
}

void Transaction::removePackage(const std::string &name,
                                const Version &version) {
  removes_.emplace_back(name, version.str());
}

void Transaction::setStateFile(const std::string &file, std::string content) {
  stateFiles_[file] = std::move(content);
}

void Transaction::removeStateFile(const std::string &file) {
  removedStateFiles_.push_back(file);
}

Status Transaction::commit() {
  std::string stage = stagingDir(prefix_, id_);
  for (const auto &[f, content] : stateFiles_)
    if (Status s = fsutil::writeNewFile(stage + "/state/" + f, content); !s)
      return s;
  faultPoint("state-staged");
  // One sync for everything staged (thousands of files), instead of an
  // fsync per file.
  if (Status s = fsutil::syncFileSystem(stage); !s)
    return s;
  if (Status s = writeJournal("committing"); !s)
    return s;
  faultPoint("commit-marked");
  Journal j{id_, "committing", adds_, removes_, {}, removedStateFiles_};
  for (const auto &[f, content] : stateFiles_)
    j.stateFiles.push_back(f);
  Status s = finish(prefix_, j);
  if (s) {
    done_ = true;
    std::error_code ec;
    fs::remove(prefix_ + "/.staging", ec);
    fs::remove(prefix_ + "/.trash", ec);
  } else {
    // Committed but not fully applied: leave the journal for recovery.
    done_ = true;
  }
  return s;
}

} // namespace ireepkg
