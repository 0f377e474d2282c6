//===- sync.cpp - Making a prefix what the lockfile says ------------------===//
//
// Every operation checks all it can before it changes anything:
// resolution, option values, signatures and hashes come first; the prefix is
// changed in one transaction at the end, and the lockfile is written
// atomically (see ireepkg/registry/workflow.h).
//
//===----------------------------------------------------------------------===//
#include "sources.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/cache.h"
#include "ireepkg/pkg/file_util.h"
#include "ireepkg/pkg/hash.h"
#include "ireepkg/pkg/iree_version.h"
#include "ireepkg/pkg/package.h"
#include "ireepkg/pkg/project.h"
#include "ireepkg/pkg/state.h"
#include "ireepkg/registry/parsed_cache.h"
#include "registry_cache.h"

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

/// The lockfile, as readLockfile parses it; a sync of a project whose
/// lockfile did not change parses no JSON (a lockfile of 1,000 packages
/// takes tens of milliseconds to parse). The parsed form is kept in
/// <cache>/locks/<hash of the lockfile's path>.parsed (parsed_cache.h),
/// keyed by the SHA-256 of the lockfile's exact bytes, which are read and
/// hashed on every run, and of this ireepkg version: the same bytes parse
/// to the same lock. It is a cache of the user's own, trusted as far as
/// the rest of it (readOwnCacheFile: owned by the current user, writable
/// by no one else).
Expected<std::optional<Lockfile>> readLockfileKept(const std::string &path,
                                                   const std::string &root) {
  if (root.empty() || !fsutil::exists(path))
    return readLockfile(path);
  auto text = fsutil::readFile(path, JsonParseOptions{}.maxBytes);
  if (!text)
    return readLockfile(path); // its error
  Sha256 h;
  h.update("ireepkg parsed lockfile " IREEPKG_VERSION "\n");
  h.update(*text);
  const std::string key = h.hexDigest();
  const std::string kept = root + "/locks/" + Sha256::hex(path) + ".parsed";
  if (auto bin = fsutil::readOwnCacheFile(kept, 64ull << 20))
    if (auto lock = registry::decodeParsedLock(*bin, key))
      return std::optional<Lockfile>(std::move(*lock));
  auto lock = parseLockfileText(*text, path);
  if (!lock)
    return Unexpected(lock.error());
  // A cache: failing to write it changes nothing.
  if (fsutil::makeDirs(root + "/locks"))
    (void)fsutil::writeCacheFile(kept, registry::encodeParsedLock(*lock, key));
  return std::optional<Lockfile>(std::move(*lock));
}

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
  if (!lock) {
    auto lockRead = readLockfileKept(project.lockPath, src->get()->cacheRoot());
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
    result.relocked = std::move(*relocked);
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
                     : registry::detail::downloadCachePath(root, lp.sha256);
    if (!cached.empty() &&
        registry::detail::fileHasContent(cached, lp.size, lp.sha256)) {
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
  // Every package's requires.iree against the IREE in use (a lock may have
  // been resolved for another IREE, or on another machine). Relocking has
  // already said when no IREE is found.
  io.iree = ireeCheckFor(env);
  io.iree->nameArchives = false;
  if (result.relocked || request.noIreeReported)
    io.iree->problem.clear();
  io.platform = platform;
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
  auto report = installArchives(request.prefix, archives, io, reporter);
  cleanup();
  if (!report)
    return Unexpected(report.error());
  result.install = std::move(*report);
  return result;
}

} // namespace ireepkg::workflow
