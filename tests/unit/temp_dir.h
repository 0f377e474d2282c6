//===- temp_dir.h - Shared helpers of the library-level unit tests -*- C++
//-*-===//
//
// A temporary directory that removes itself (read-only trees included), file
// helpers, a scoped environment variable, a snapshot of a directory tree
// (paths, types, modes and bytes) for "left exactly as it was" checks, a
// Reporter that records what it is told, a prefix operation crashed in a
// forked child at a fault point, and builders for package
// directories and archives, written the way a plugin author (or, for
// archives pack would refuse, an attacker) writes them.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_TESTS_UNIT_TEMP_DIR_H
#define IREEPKG_TESTS_UNIT_TEMP_DIR_H

#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg::test {

namespace fs = std::filesystem;

/// Makes every directory under `root` writable again (installed package
/// trees are read-only), so that an ordinary user can delete the tree.
inline void makeTreeWritable(const std::string &root) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec)))
    return;
  fs::permissions(root, fs::perms::owner_all, fs::perm_options::add, ec);
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add,
                      ec);
}

/// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
public:
  explicit TempDir(const std::string &tag = "unit") {
    std::string tmpl =
        (fs::temp_directory_path() / ("ireepkg-" + tag + "-XXXXXX")).string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path_ = buf.data();
  }
  ~TempDir() {
    makeTreeWritable(path_);
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  /// `path()/rel`
  std::string operator/(const std::string &rel) const {
    return path_ + "/" + rel;
  }

private:
  std::string path_;
};

inline std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes `text` to `path`, creating parent directories.
inline void writeText(const std::string &path, const std::string &text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

inline bool exists(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

/// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(std::string name, const std::optional<std::string> &value)
      : name_(std::move(name)) {
    if (const char *old = std::getenv(name_.c_str()))
      old_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Every entry under `root` (relative path -> type, permission bits and, for
/// files, the bytes; for links, the target). Two equal snapshots mean the
/// tree is byte for byte the same (directory times aside).
inline std::map<std::string, std::string>
snapshotTree(const std::string &root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string rel = it->path().lexically_relative(root).generic_string();
    struct stat st;
    REQUIRE(::lstat(it->path().c_str(), &st) == 0);
    std::string mode = std::to_string(st.st_mode & 07777);
    if (S_ISDIR(st.st_mode))
      out[rel] = "dir " + mode;
    else if (S_ISLNK(st.st_mode))
      out[rel] = "link -> " + fs::read_symlink(it->path(), ec).string();
    else if (S_ISREG(st.st_mode))
      out[rel] = "file " + mode + " " + readText(it->path().string());
    else
      out[rel] = "other " + mode;
  }
  return out;
}

/// The names in `dir` (not recursive), sorted; empty if it does not exist.
inline std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// A Reporter that keeps what it is told.
class RecordingReporter : public Reporter {
public:
  std::vector<std::string> recoveries;
  std::vector<std::string> warnings;
  void recovered(const std::string &, const std::string &what) override {
    recoveries.push_back(what);
  }
  void warning(const Diagnostic &d) override { warnings.push_back(d.format()); }
};

/// Runs `change` (a prefix operation, given a Reporter) in a forked child
/// with IREEPKG_FAULT=`point`, and returns the child's wait status. The
/// child uses no doctest macro and leaves with _exit, so nothing of the test
/// process runs twice.
template <class Change>
int runWithFault(const std::string &point, Change change) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("IREEPKG_FAULT", point.c_str(), 1);
    Reporter quiet;
    ::_exit(change(quiet) ? 0 : 3);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

/// Why `result` failed, or "" when it did not: the message of a
/// REQUIRE_MESSAGE, which doctest also evaluates after a passing assertion
/// when it reports successes (-s).
template <class R> std::string whyNot(const R &result) {
  return result ? std::string() : result.error().format();
}

/// Writes a package archive from `files` (path -> content) with a correct
/// RECORD: ireeplugin.json first (from `manifest`, with schema_version,
/// name, version and summary filled in when absent), then RECORD, then the
/// files in path order. `executables` marks files as executable. Used for
/// archives `pack` would refuse, and for the archive format itself.
inline std::string
writePackageArchive(const std::string &path, nlohmann::ordered_json manifest,
                    std::map<std::string, std::string> files = {},
                    const std::vector<std::string> &executables = {}) {
  if (!manifest.contains("schema_version"))
    manifest["schema_version"] = 1;
  if (!manifest.contains("summary"))
    manifest["summary"] = "a test package";
  files[kManifestName] = manifest.dump(2) + "\n";
  auto isExec = [&](const std::string &p) {
    return std::find(executables.begin(), executables.end(), p) !=
           executables.end();
  };
  Record record;
  for (const auto &[p, content] : files)
    record.files.push_back(
        {p, Sha256::hex(content), content.size(), isExec(p)});
  std::vector<ArchiveMember> members;
  members.push_back({kManifestName, files[kManifestName], "", false});
  members.push_back({kRecordName, serializeRecord(record), "", false});
  for (const auto &[p, content] : files)
    if (p != kManifestName)
      members.push_back({p, content, "", isExec(p)});
  Status s = writeArchive(path, members);
  REQUIRE_MESSAGE(s.has_value(), whyNot(s));
  return path;
}

/// A package directory as a compiler-configuration author writes one: an
/// ireeplugin.json whose compiler hook runs a preprocessing pipeline, a
/// README and a data file. `deps` are (name, constraint).
inline void writeHookPackageDir(
    const std::string &dir, const std::string &name, const std::string &version,
    const std::string &pipeline = "func.func(canonicalize,cse)",
    const std::vector<std::pair<std::string, std::string>> &deps = {}) {
  nlohmann::ordered_json m;
  m["schema_version"] = 1;
  m["name"] = name;
  m["version"] = version;
  m["summary"] = name + ": a preprocessing pipeline";
  m["license"] = "Apache-2.0";
  if (!deps.empty()) {
    m["dependencies"] = nlohmann::ordered_json::object();
    for (const auto &[d, c] : deps)
      m["dependencies"][d] = c;
  }
  m["compiler"]["hooks"] = nlohmann::ordered_json::array(
      {{{"point", "preprocessing"}, {"pipeline", pipeline}}});
  writeText(dir + "/ireeplugin.json", m.dump(2) + "\n");
  writeText(dir + "/README.md", "# " + name + "\n\nVersion " + version + ".\n");
  writeText(dir + "/data/notes.txt", name + " " + version + " notes\n");
}

/// Packs `dir` into `outDir` (hook pipelines checked for syntax only:
/// MLIR's checker is another test's subject) and returns the archive path.
inline std::string packOk(const std::string &dir, const std::string &outDir) {
  ScopedEnv mlir("IREEPKG_MLIR_CHECK", "off");
  PackOptions o;
  o.outputDir = outDir;
  auto r = packDirectory(dir, o);
  REQUIRE_MESSAGE(r.has_value(), whyNot(r));
  return r->archivePath;
}

} // namespace ireepkg::test

#endif // IREEPKG_TESTS_UNIT_TEMP_DIR_H
