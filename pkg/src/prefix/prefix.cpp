//===- pkg/src/prefix/prefix.cpp - Finding and reading prefixes -----------===//
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/project/project_file.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/prefix/state.h"
#include "transaction.h"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

Reporter::~Reporter() = default;
void Reporter::waitingForLock(const std::string &, const std::string &) {}
void Reporter::recovered(const std::string &, const std::string &) {}
void Reporter::warning(const Diagnostic &) {}
void Reporter::progress(const std::string &, uint64_t, uint64_t) {}
void Reporter::itemProgress(const std::string &, uint64_t, uint64_t) {}
bool Reporter::interrupted() { return false; }

Error interruptedError(const std::string &what) {
  return Error(ErrorCode::Interrupted, "interrupted while " + what, Location{},
               "the prefix was left as it was; run the command again to finish");
}
void Reporter::detail(int, const std::string &) {}

static std::string normal(const std::string &path) {
  std::string p = fsutil::absolutePath(path);
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  return p;
}

Expected<PrefixLocation>
locatePrefix(const std::optional<std::string> &explicitPrefix,
             const std::string &cwd) {
  auto check = [](PrefixLocation loc) -> Expected<PrefixLocation> {
    if (loc.path.find('\n') != std::string::npos)
      return makeError(ErrorCode::Invalid,
                       "prefix paths may not contain a newline",
                       Location::inFile(loc.path));
    return loc;
  };
  if (explicitPrefix) {
    if (explicitPrefix->empty())
      return makeError(ErrorCode::Usage, "--prefix is empty");
    return check({normal(*explicitPrefix), "--prefix", ""});
  }
  if (const char *env = environmentOverride("IREEPKG_PREFIX"); env && *env)
    return check({normal(env), "IREEPKG_PREFIX", ""});
  if (std::string project = findProjectFile(cwd); !project.empty()) {
    std::string prefix =
        (fs::path(project).parent_path() / ".iree-plugins").string();
    if (Status s = checkProjectPrefix(prefix); !s)
      return Unexpected(s.error());
    return check({prefix, "project", project});
  }
  if (const char *xdg = environmentOverride("XDG_DATA_HOME"); xdg && *xdg && xdg[0] == '/')
    return check({normal(std::string(xdg) + "/ireepkg"), "XDG_DATA_HOME", ""});
  auto home = homeDirectory();
  if (!home)
    return makeError(ErrorCode::NotFound, "cannot choose a prefix: HOME is not set",
                     {}, "pass --prefix or set IREEPKG_PREFIX");
  return check({normal(*home + "/.local/share/ireepkg"), "default", ""});
}

Status checkProjectPrefix(const std::string &prefix) {
  const std::string hint = "pass --prefix " + prefix +
                           " to use it all the same, if you trust it";
  struct stat st;
  if (::lstat(prefix.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    fs::path target = fs::read_symlink(prefix, ec);
    return makeError(ErrorCode::Invalid,
                     "the project's prefix is a symlink" +
                         (ec ? std::string()
                             : " (to " + target.string() + ")") +
                         ": not used, since whoever made the checkout chose "
                         "where it points",
                     Location::inFile(prefix), hint + ", or remove the link");
  }
  const std::string dir = fs::path(prefix).parent_path().string();
  if (::stat(dir.c_str(), &st) == 0 && !fsutil::onlyOwnerWrites(st, true) &&
      !((st.st_uid == ::geteuid() || st.st_uid == 0) &&
        (st.st_mode & S_ISVTX)))
    return makeError(ErrorCode::Invalid,
                     "the project's prefix is in a directory another user "
                     "may write (" +
                         dir +
                         "): not used, since that user could replace it with "
                         "a link to another prefix",
                     Location::inFile(prefix),
                     hint + ", or make the directory yours alone "
                            "(chmod go-w)");
  return ok();
}

std::string findProjectFile(const std::string &cwd) {
  // A privileged process takes no project from where it was started: the
  // caller chooses the current directory, and with it what would be
  // installed where (as the Vulkan loader ignores its search-path variables).
  if (runningPrivileged())
    return "";
  for (fs::path dir = normal(cwd);; dir = dir.parent_path()) {
    std::error_code ec;
    if (fs::is_regular_file(dir / "plugins.json", ec))
      return (dir / "plugins.json").string();
    if (dir == dir.root_path() || dir.empty())
      return "";
  }
}

std::string packageDir(const std::string &prefix, const std::string &name,
                       const Version &version) {
  return prefix + "/packages/" + name + "/" + version.str();
}

/// A change is under way in `prefix`, or one was interrupted.
static bool changeUnderWay(const std::string &prefix) {
  return fsutil::exists(prefix + "/state/journal.json") ||
         fsutil::exists(prefix + "/.staging") ||
         fsutil::exists(prefix + "/.trash") ||
         !leftoverTemporaryFiles(prefix).empty();
}

std::string installedStateFingerprint(const std::string &prefix,
                                      const std::string &cacheRoot) {
  if (changeUnderWay(prefix))
    return "";
  const std::string path = prefix + "/state/" + kInstalledFile;
  const std::string memoPath = fsutil::digestMemoPath(cacheRoot, path);
  if (auto known = fsutil::knownDigest(path, memoPath))
    return *known;
  auto read = fsutil::readFileHashed(path, 64u << 20, memoPath);
  if (!read)
    return "";
  return read->sha256;
}

bool packageDirsExist(const std::string &prefix,
                      std::span<const PackageRef> packages) {
  // The layout of packageDir, from <prefix>/packages.
  int fd =
      ::open((prefix + "/packages").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return packages.empty();
  bool all = true;
  std::string rel;
  for (const PackageRef &p : packages) {
    rel.assign(p.name);
    rel += '/';
    rel += p.version->str();
    struct stat st;
    if (::fstatat(fd, rel.c_str(), &st, 0) != 0 || !S_ISDIR(st.st_mode)) {
      all = false;
      break;
    }
  }
  ::close(fd);
  return all;
}

Expected<InstalledState> readInstalledState(const std::string &prefix,
                                            Reporter &reporter) {
  if (changeUnderWay(prefix)) {
    // An interrupted (or running) change: wait for the lock, then finish or
    // roll back whatever is still there.
    auto lock = PrefixLock::acquire(prefix, {}, reporter);
    if (!lock)
      return Unexpected(lock.error());
    auto what = recoverPrefix(prefix);
    if (!what)
      return Unexpected(what.error());
    if (!what->empty())
      reporter.recovered(prefix, *what);
  }
  std::string path = prefix + "/state/" + kInstalledFile;
  if (!fsutil::exists(path))
    return InstalledState{};
  auto text = fsutil::readFile(path, 64u << 20);
  if (!text)
    return Unexpected(text.error());
  DiagnosticList warnings;
  auto st = parseInstalled(*text, path, warnings);
  for (const Diagnostic &d : warnings.items())
    reporter.warning(d);
  return st;
}

Expected<Manifest> readInstalledManifest(const std::string &prefix,
                                         const InstalledPackage &package,
                                         Reporter &reporter) {
  std::string path = packageDir(prefix, package.name, package.version) + "/" +
                     kManifestName;
  // Installed manifests were checked with positions when they were packed;
  // reading them again (every `flags compiler`, `list`) skips the position
  // tables, which cost more than the parse.
  JsonParseOptions fast;
  fast.trackLocations = false;
  auto doc = JsonDocument::load(path, fast);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ParseOptions lenient;
  lenient.strict = false;
  Manifest m = parseManifest(*doc, lenient, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Integrity, diags);
  for (const Diagnostic &d : diags.items())
    reporter.warning(d);
  return m;
}

} // namespace ireepkg
