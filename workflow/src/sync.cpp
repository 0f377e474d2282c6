//===- workflow/src/sync.cpp - Making a prefix what the lockfile says -----===//
//
// Every operation checks all it can before it changes anything:
// resolution, option values, signatures and hashes come first; the prefix is
// changed in one transaction at the end, and the lockfile is written
// atomically (see ireepkg/workflow/workflow.h).
//
//===----------------------------------------------------------------------===//
#include "sources.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/registry/client/parsed_cache.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/shadowing.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace ireepkg::workflow {

using namespace detail;

namespace {

/// Names a lockfile's exact bytes (by their SHA-256), as read by this
/// ireepkg version.
std::string lockBytesKeyOf(std::string_view sha256) {
  Sha256 h;
  h.update("ireepkg parsed lockfile " IREEPKG_VERSION "\n");
  h.update(sha256);
  return h.hexDigest();
}

/// The lockfile, as readLockfile parses it; a sync of a project whose
/// lockfile did not change parses no JSON (a lockfile of 1,000 packages
/// takes tens of milliseconds to parse). The parsed form is kept in
/// <cache>/locks/<hash of the lockfile's path>.parsed (parsed_cache.h),
/// keyed by the SHA-256 of the lockfile's exact bytes (hashed, or while
/// the file keeps its stamp taken from <cache>/digests/ without reading
/// it: fsutil::readFileHashed, knownDigest) and of this ireepkg version:
/// the same bytes parse to the same lock. It is a cache of the user's own, trusted as far
/// as the rest of it (readOwnCacheFile: owned by the current user, writable
/// by no one else).
///
/// `bytesKey` receives that key (empty when the lockfile was not read
/// through the cache): the same key means the same lockfile bytes.
Expected<std::optional<Lockfile>> readLockfileKept(const std::string &path,
                                                   const std::string &root,
                                                   std::string &bytesKey) {
  bytesKey.clear();
  if (root.empty() || !fsutil::exists(path))
    return readLockfile(path);
  const std::string memo = fsutil::digestMemoPath(root, path);
  const std::string kept = root + "/locks/" + Sha256::hex(path) + ".parsed";
  auto keptLock = [&](const std::string &key) -> std::optional<Lockfile> {
    if (auto bin = fsutil::readOwnCacheFile(kept, 64ull << 20))
      return registry::decodeParsedLock(*bin, key);
    return std::nullopt;
  };
  // Known by its stamp: not even read.
  if (auto sha = fsutil::knownDigest(path, memo)) {
    const std::string key = lockBytesKeyOf(*sha);
    if (auto lock = keptLock(key)) {
      bytesKey = key;
      return std::optional<Lockfile>(std::move(*lock));
    }
  }
  auto read = fsutil::readFileHashed(path, JsonParseOptions{}.maxBytes, memo);
  if (!read)
    return readLockfile(path); // its error
  const std::string key = lockBytesKeyOf(read->sha256);
  bytesKey = key;
  if (auto lock = keptLock(key))
    return std::optional<Lockfile>(std::move(*lock));
  auto lock = parseLockfileText(read->bytes, path);
  if (!lock)
    return Unexpected(lock.error());
  // A cache: failing to write it changes nothing.
  if (fsutil::makeDirs(root + "/locks"))
    (void)fsutil::writeCacheFile(kept, registry::encodeParsedLock(*lock, key));
  return std::optional<Lockfile>(std::move(*lock));
}

//===----------------------------------------------------------------------===//
// The record of a prefix a sync left exactly as its lockfile says
//===----------------------------------------------------------------------===//
//
// A sync whose lockfile and project did not change, into a prefix nothing
// else changed since, has nothing to do; finding that out the long way
// means hashing every locked archive in the download cache and reading its
// manifest and RECORD (seconds for large runtime libraries, and a download
// when the cache was cleaned). So a sync that ends with the prefix exactly
// as the lock says writes a record, <cache>/syncs/<hash of the prefix's
// path>, holding a digest of everything its outcome depended on:
//  - the lockfile's exact bytes (which pin every archive by SHA-256),
//  - what plugins.json gives besides the lock: the explicitly requested
//    names, option values and hook choices,
//  - the platform asked for, the IREE in use as requires.iree is checked
//    against it (version, where it came from, or why none was found unless
//    that was said already, and whether mismatches are only warnings),
//  - installed.json as the sync left it, taken under the prefix lock
//    (InstallReport::stateFingerprint), and this ireepkg's version.
// The next sync computes the same digest from the files as they are (the
// SHA-256 of the lockfile and of installed.json kept by their stamps in
// <cache>/digests/, fsutil::readFileHashed: a file changed since gets a
// new stamp, and is hashed again); when
// it matches and every locked package's directory is there, the prefix is
// what a full sync would leave, and it reports every package unchanged
// without opening an archive. Any install, removal or interrupted change
// rewrites installed.json (or leaves a journal), so it ends the record's
// use. Only a sync that reported no warnings writes one, so that a skipped
// check never hides a warning the full one would give again. Packages from
// a local path are packed again at every sync, so a lock with any of them
// is always checked in full. The record is a cache of the user's own
// (readOwnCacheFile): deleting it only makes the next sync check again.

std::string syncRecordPath(const std::string &root, const std::string &prefix) {
  return root + "/syncs/" + Sha256::hex(prefix);
}

std::string syncRecordKey(const std::string &lockBytesKey,
                          const Project &project, const SyncRequest &request,
                          const IreeRequirementCheck &iree,
                          const std::string &prefix,
                          const std::string &stateFingerprint) {
  nlohmann::json explicitNames = nlohmann::json::array(),
                 values = nlohmann::json::object();
  for (const ProjectPlugin &p : project.parsed.plugins) {
    explicitNames.push_back(p.name);
    for (const auto &[flag, value] : p.options)
      values[p.name][flag] = value;
  }
  nlohmann::json inputs = {
      {"prefix", prefix},
      {"lockfile", lockBytesKey},
      {"explicit", explicitNames},
      {"options", values},
      {"choose", project.parsed.choose},
      // Unset: the prefix's own platform (in installed.json), else the
      // host's.
      {"platform", request.platform ? request.platform->str()
                                    : "default, host " + hostPlatform().str()},
      // Unset: the prefix's own (in installed.json, fingerprinted below).
      {"cpu_level", request.cpuLevel ? *request.cpuLevel : "the prefix's"},
      {"iree",
       {{"version", iree.version ? iree.version->str() : ""},
        {"source", iree.source},
        {"problem", iree.problem},
        {"ignore", iree.ignore}}},
      {"installed", stateFingerprint}};
  Sha256 h;
  h.update("ireepkg sync record " IREEPKG_VERSION "\n");
  h.update(
      inputs.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return h.hexDigest();
}

/// Whether every locked package's directory is in `prefix`.
bool allPackageDirsExist(const std::string &prefix,
                         const std::vector<LockedPackage> &packages) {
  std::vector<PackageRef> refs;
  refs.reserve(packages.size());
  for (const LockedPackage &lp : packages)
    refs.push_back({lp.name, &lp.version});
  return packageDirsExist(prefix, refs);
}

/// Every package's requires.iree against the IREE in use (a lock may have
/// been resolved for another IREE, or on another machine). That no IREE
/// was found is said once: relocking has said it, or the caller has.
IreeRequirementCheck effectiveIreeCheck(const Environment &env,
                                        const SyncResult &result,
                                        const SyncRequest &request) {
  IreeRequirementCheck check = ireeCheckFor(env);
  check.nameArchives = false;
  if (result.relocked || request.noIreeReported)
    check.problem.clear();
  return check;
}

/// Counts the warnings an operation reports, passing everything on.
class CountingReporter : public Reporter {
public:
  explicit CountingReporter(Reporter &inner) : inner(inner) {}
  size_t warnings = 0;
  void waitingForLock(const std::string &prefix,
                      const std::string &holder) override {
    inner.waitingForLock(prefix, holder);
  }
  void recovered(const std::string &prefix, const std::string &what) override {
    inner.recovered(prefix, what);
  }
  void warning(const Diagnostic &diagnostic) override {
    ++warnings;
    inner.warning(diagnostic);
  }
  void progress(const std::string &label, uint64_t done,
                uint64_t total) override {
    inner.progress(label, done, total);
  }
  void itemProgress(const std::string &label, uint64_t done,
                    uint64_t total) override {
    inner.itemProgress(label, done, total);
  }
  bool interrupted() override { return inner.interrupted(); }
  void detail(int level, const std::string &message) override {
    inner.detail(level, message);
  }

private:
  Reporter &inner;
};

/// What syncing `prefix` to `lock` would change, by name and version (see
/// SyncRequest::dryRun), in the order installArchives reports it: removals
/// first, then the lock's packages.
Expected<SyncResult> planSync(const Lockfile &lock, const std::string &prefix,
                              SyncResult result, Reporter &reporter) {
  auto state = readInstalledState(prefix, reporter);
  if (!state)
    return Unexpected(state.error());
  InstallReport &plan = result.install;
  plan.prefix = prefix;
  std::set<std::string> locked;
  for (const LockedPackage &lp : lock.packages)
    locked.insert(lp.name);
  for (const InstalledPackage &p : state->packages)
    if (!locked.count(p.name))
      plan.changes.push_back({p.name, p.version.str(), ""});
  for (const LockedPackage &lp : lock.packages) {
    const InstalledPackage *old = state->find(lp.name);
    if (!old)
      plan.changes.push_back({lp.name, "", lp.version.str()});
    else if (!old->version.identical(lp.version) ||
             (lp.sourceKind == LockedPackage::SourceKind::Registry &&
              old->archiveSha256 != lp.sha256))
      plan.changes.push_back({lp.name, old->version.str(), lp.version.str()});
    else
      plan.unchanged.push_back(lp.name + " " + lp.version.str());
  }
  return result;
}

} // namespace

Expected<SyncResult> syncProject(const Project &project,
                                 const SyncRequest &request,
                                 const Environment &env, Reporter &reporter) {
  SyncResult result;
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());

  std::optional<Lockfile> lock = request.plannedLock;
  std::string lockBytesKey; // of the lockfile read, when it was
  if (!lock) {
    auto lockRead = readLockfileKept(project.lockPath, src->get()->cacheRoot(),
                                     lockBytesKey);
    if (!lockRead)
      return Unexpected(lockRead.error());
    lock = std::move(*lockRead);
  }
  std::string hash = project::inputHash(project.parsed);
  bool stale = !request.plannedLock && (!lock || lock->inputHash != hash);
  if (request.frozen) {
    if (!lock)
      return makeError(ErrorCode::NotFound, "there is no plugins.lock.json",
                       Location::inFile(project.lockPath),
                       "run `ireepkg lock` first (--frozen installs exactly "
                       "the lockfile)");
  } else if (stale) {
    if (request.locked)
      return makeError(
          ErrorCode::Conflict,
          lock ? "plugins.lock.json is out of date: plugins.json changed "
                 "since it was written"
               : "there is no plugins.lock.json",
          Location{project.lockPath, 0, 0, lock ? "/input_hash" : "", "", ""},
          "run `ireepkg lock` and commit the lockfile (--locked refuses to "
          "change it)");
    LockRequest relock;
    relock.dryRun = request.dryRun;
    auto relocked = lockWith(project, **src, relock, env, reporter);
    if (!relocked)
      return Unexpected(relocked.error());
    lock = relocked->lock;
    if (!request.dryRun) // the bytes it wrote (or found already there)
      lockBytesKey = lockBytesKeyOf(Sha256::hex(relocked->text));
    result.relocked = std::move(*relocked);
  }

  // The record of the last sync (above): with the same inputs and the
  // prefix as that sync left it, there is nothing to do.
  const std::string &cacheRoot = src->get()->cacheRoot();
  std::optional<IreeRequirementCheck> iree;
  bool recordable =
      !request.dryRun && !request.plannedLock && !cacheRoot.empty() &&
      !lockBytesKey.empty() &&
      std::none_of(lock->packages.begin(), lock->packages.end(),
                   [](const LockedPackage &lp) {
                     return lp.sourceKind == LockedPackage::SourceKind::Path;
                   });
  if (recordable) {
    iree = effectiveIreeCheck(env, result, request);
    std::string fingerprint =
        installedStateFingerprint(request.prefix, cacheRoot);
    auto recorded = fingerprint.empty()
                        ? Expected<std::string>(std::string())
                        : fsutil::readOwnCacheFile(
                              syncRecordPath(cacheRoot, request.prefix), 256);
    if (recorded && !recorded->empty() &&
        *recorded == syncRecordKey(lockBytesKey, project, request, *iree,
                                   request.prefix, fingerprint) &&
        allPackageDirsExist(request.prefix, lock->packages)) {
      reporter.detail(1, "the prefix is as the last sync with this lockfile "
                         "and project left it: nothing to check");
      InstallReport &report = result.install;
      report.prefix = request.prefix;
      for (const LockedPackage &lp : lock->packages)
        report.unchanged.push_back(lp.name + " " + lp.version.str());
      report.shadowedImports = shadowedImports(request.prefix);
      report.stateFingerprint = fingerprint;
      return result;
    }
  }

  Platform platform = request.platform.value_or(hostPlatform());
  if (!request.platform) {
    DiagnosticList ignored;
    if (fsutil::exists(request.prefix + "/state/installed.json")) {
      auto text = fsutil::readFile(request.prefix + "/state/installed.json",
                                   64ull << 20);
      if (text)
        if (auto st = parseInstalled(*text, "installed.json", ignored);
            st && !st->platform.empty())
          if (auto p = Platform::parse(st->platform))
            platform = *p;
    }
  }
  if (!lock->platforms.empty() &&
      std::find(lock->platforms.begin(), lock->platforms.end(), platform) ==
          lock->platforms.end()) {
    std::string have;
    for (const Platform &p : lock->platforms)
      have += (have.empty() ? "" : ", ") + p.str();
    return makeError(ErrorCode::Unsupported,
                     "plugins.lock.json was resolved for " + have + ", not " +
                         platform.str(),
                     Location{project.lockPath, 0, 0, "/platforms", "", ""},
                     "add \"" + platform.str() +
                         "\" to \"platforms\" in plugins.json and run "
                         "`ireepkg lock`");
  }

  if (request.dryRun)
    return planSync(*lock, request.prefix, std::move(result), reporter);

  // Every archive, verified: from the download cache when it holds the
  // locked bytes, else from its registry (or bundle).
  std::vector<std::string> archives(lock->packages.size());
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> wanted;
  std::map<size_t, std::vector<std::pair<std::string, Version>>> fetchFrom;
  std::vector<std::string> tempDirs;
  auto cleanup = [&] {
    for (const std::string &d : tempDirs)
      (void)fsutil::removeTree(d);
  };
  std::vector<std::string> missingOffline;
  for (size_t i = 0; i < lock->packages.size(); ++i) {
    const LockedPackage &lp = lock->packages[i];
    if (lp.sourceKind == LockedPackage::SourceKind::Path) {
      std::string dir = fs::path(lp.source).is_absolute()
                            ? lp.source
                            : (fs::path(project.dir) / lp.source).string();
      std::string tmp = fs::temp_directory_path().string() + "/ireepkg-path-" +
                        std::to_string(::getpid()) + "-" + std::to_string(i);
      (void)fsutil::removeTree(tmp);
      tempDirs.push_back(tmp);
      PackOptions po;
      po.outputDir = tmp;
      auto packed = packDirectory(dir, po);
      if (!packed) {
        cleanup();
        Error e = packed.error();
        e.where.package = lp.name;
        return Unexpected(std::move(e));
      }
      if (!packed->manifest.version.identical(lp.version)) {
        cleanup();
        return makeError(ErrorCode::Conflict,
                         "local package \"" + lp.name + "\" in " + dir +
                             " is version " + packed->manifest.version.str() +
                             ", the lock says " + lp.version.str(),
                         Location{project.lockPath, 0, 0, "", lp.name, ""},
                         "run `ireepkg lock`");
      }
      archives[i] = packed->archivePath;
      continue;
    }
    const std::string &root = src->get()->cacheRoot();
    std::string cached =
        root.empty() ? ""
                     : registry::cache::downloadCachePath(root, lp.sha256);
    if (!cached.empty() &&
        registry::cache::fileHasContent(cached, lp.size, lp.sha256)) {
      archives[i] = cached;
      continue;
    }
    // Its registry, by the URL the lock names.
    std::optional<size_t> reg;
    for (size_t r = 0; r < project.parsed.registries.size(); ++r)
      if (project.parsed.registries[r].url == lp.source)
        reg = r;
    if (!reg) {
      cleanup();
      return makeError(ErrorCode::Conflict,
                       "package \"" + lp.name + "\" is locked to registry " +
                           lp.source + ", which plugins.json no longer lists",
                       Location{project.lockPath, 0, 0, "", lp.name, ""},
                       "run `ireepkg lock`");
    }
    if (env.client.offline && env.bundle.empty()) {
      missingOffline.push_back(lp.name + " " + lp.version.str());
      continue;
    }
    fetchFrom[*reg].push_back({lp.name, lp.version});
    wanted[lp.name].push_back({*reg, i});
  }
  if (!missingOffline.empty()) {
    cleanup();
    std::string list;
    for (const std::string &m : missingOffline)
      list += "\n  " + m;
    return makeError(ErrorCode::NotFound,
                     "--offline: " + std::to_string(missingOffline.size()) +
                         " locked package" +
                         (missingOffline.size() == 1 ? " is" : "s are") +
                         " not in the download cache:" + list,
                     Location::inFile(project.lockPath),
                     "run `ireepkg sync` once with network access, or use "
                     "an offline bundle (`ireepkg sync --bundle FILE`)");
  }
  for (const auto &[reg, which] : fetchFrom) {
    auto c = src->get()->client(reg);
    if (!c) {
      cleanup();
      return Unexpected(c.error());
    }
    // The registry must still publish exactly the locked bytes.
    for (const auto &[name, version] : which) {
      auto entry = (*c)->entry(name, version);
      if (!entry) {
        cleanup();
        Error e = entry.error();
        e.hint = "the registry no longer has the locked version; run "
                 "`ireepkg lock` to choose another";
        return Unexpected(std::move(e));
      }
      for (const auto &[r, i] : wanted[name]) {
        const LockedPackage &lp = lock->packages[i];
        if ((*entry)->sha256 != lp.sha256 || (*entry)->size != lp.size) {
          cleanup();
          return makeError(
              ErrorCode::Integrity,
              "the registry's archive of " + name + " " + version.str() +
                  " (sha256 " + (*entry)->sha256 +
                  ") is not the one the lock pins (sha256 " + lp.sha256 + ")",
              Location{project.lockPath, 0, 0, "", name, ""},
              "a published version must never change; if the change is "
              "expected, run `ireepkg lock --upgrade-package " +
                  name + "`");
        }
      }
    }
    auto paths = (*c)->fetchArchives(which, reporter);
    if (!paths) {
      cleanup();
      return Unexpected(paths.error());
    }
    for (size_t k = 0; k < which.size(); ++k)
      for (const auto &[r, i] : wanted[which[k].first])
        archives[i] = (*paths)[k];
  }

  // Install exactly the lock, in its activation order, in one transaction.
  InstallOptions io;
  io.lock = request.lock;
  io.iree = iree ? *iree : effectiveIreeCheck(env, result, request);
  io.platform = platform;
  io.cpuLevel = request.cpuLevel;
  io.exact = true;
  io.preferredOrder = lock->activation;
  std::set<std::string> explicitNames;
  for (const ProjectPlugin &p : project.parsed.plugins)
    explicitNames.insert(p.name);
  for (const LockedPackage &lp : lock->packages)
    if (!explicitNames.count(lp.name))
      io.asDependency.insert(lp.name);
  ProjectSettings settings;
  for (const ProjectPlugin &p : project.parsed.plugins)
    if (!p.options.empty())
      settings.values[p.name] = p.options;
  settings.choose = project.parsed.choose;
  io.project = settings;
  CountingReporter counting(reporter);
  auto report = installArchives(request.prefix, archives, io, counting);
  cleanup();
  if (!report)
    return Unexpected(report.error());
  result.install = std::move(*report);
  // The prefix is now exactly the lock: recorded, unless a warning was
  // given that the next sync must give again. A cache: failing to write it
  // changes nothing.
  if (recordable && counting.warnings == 0 &&
      !result.install.stateFingerprint.empty() &&
      fsutil::makeDirs(cacheRoot + "/syncs"))
    (void)fsutil::writeCacheFile(
        syncRecordPath(cacheRoot, request.prefix),
        syncRecordKey(lockBytesKey, project, request, *iree, request.prefix,
                      result.install.stateFingerprint));
  return result;
}

} // namespace ireepkg::workflow
