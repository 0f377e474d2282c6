//===- workflow/src/lock.cpp - Resolving a project into its lockfile ------===//
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
#include "ireepkg/base/teardown.h"
#include "ireepkg/registry/client/parsed_cache.h"
#include "ireepkg/registry/client/registry_cache.h"

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

/// Raised whenever the same inputs may resolve to another lockfile (the
/// resolver's choices, the lockfile's layout); the ireepkg version is part
/// of the key as well.
constexpr int kLockStampFormat = 2;

/// A no-op lock — plugins.json, the lockfile and the registries all as they
/// were when the last lock found the lockfile up to date — skips the
/// resolution and the parsing of the lockfile: <cache>/locks/<hash of the
/// lockfile's path> keeps the key of the inputs of that last lock, computed
/// here, and the lockfile as it parsed (parsed_cache.h). The key covers all a
/// resolution reads: the project as parsed (its input hash and option
/// values), the lockfile's bytes by their SHA-256 (its versions are the
/// preferred ones; a digest kept by the file's stamp saves hashing them
/// again, fsutil::readFileHashed), the
/// IREE version and platforms resolved for, and each registry's verified
/// snapshot (its hash pins every index file) and signing key. The
/// registries are opened, so their signatures, expiry and rollback are
/// checked as on every lock. nullopt: resolve in any case (an upgrade, no
/// lockfile yet, path packages, whose manifests are not in the key, a
/// bundle, or a registry that does not open: the resolution reports it).
std::optional<std::string> lockStampKey(const Project &project, Sources &src,
                                        const LockRequest &request,
                                        const ResolveRequest &rr,
                                        const std::string &oldSha,
                                        const Environment &env) {
  if (request.upgradeAll || !request.upgrade.empty() || oldSha.empty() ||
      src.cacheRoot().empty() || !env.bundle.empty())
    return std::nullopt;
  for (const ProjectPlugin &p : project.parsed.plugins)
    if (!p.path.empty())
      return std::nullopt;
  Sha256 h;
  auto field = [&](std::string_view text) {
    h.update(std::to_string(text.size()) + ":");
    h.update(text);
  };
  field("ireepkg lock stamp " + std::to_string(kLockStampFormat) +
        " " IREEPKG_VERSION);
  field(project::inputHash(project.parsed));
  for (const ProjectPlugin &p : project.parsed.plugins) {
    field(p.name);
    field(std::to_string(p.options.size()));
    for (const auto &[k, v] : p.options) {
      field(k);
      field(v.dump());
    }
  }
  field(oldSha);
  field(rr.ireeVersion ? rr.ireeVersion->str() : "-");
  for (const Platform &p : rr.platforms)
    field(p.str());
  for (size_t i = 0; i < src.specs().size(); ++i) {
    auto c = src.client(i);
    if (!c)
      return std::nullopt;
    field(src.specs()[i].url);
    field((*c)->snapshotSha256());
    field((*c)->signedBy());
  }
  return h.hexDigest();
}

std::string lockStampPath(const Sources &src, const Project &project) {
  return src.cacheRoot() + "/locks/" + Sha256::hex(project.lockPath);
}

} // namespace

namespace detail {

Expected<LockResult> lockWith(const Project &project, Sources &src,
                              const LockRequest &request,
                              const Environment &env, Reporter &reporter) {
  LockResult result;
  std::string ireeSource;
  std::optional<Error> ireeProblem;
  result.ireeVersion = ireeVersionFor(env, &ireeSource, &ireeProblem);
  if (ireeProblem)
    warnIreeUnknown(*ireeProblem, reporter);

  // The lockfile's bytes (parsed below, unless nothing changed), and
  // their SHA-256 (taken from <cache>/digests/ while the file keeps the
  // stamp it had when it was hashed).
  std::string oldText, oldSha;
  if (fsutil::exists(project.lockPath))
    if (auto t = fsutil::readFileHashed(
            project.lockPath, 64ull << 20,
            fsutil::digestMemoPath(src.cacheRoot(), project.lockPath))) {
      oldText = std::move(t->bytes);
      oldSha = std::move(t->sha256);
    }

  ResolveRequest rr;
  rr.rootName = "plugins.json";
  rr.ireeVersion = result.ireeVersion;
  rr.platforms = projectPlatforms(project);
  rr.upgrade = request.upgrade;
  rr.upgradeAll = request.upgradeAll;
  for (const ProjectPlugin &p : project.parsed.plugins)
    rr.roots.push_back({p.name, p.version.value_or(Constraint::any())});

  // Nothing changed since the last lock found this lockfile up to date:
  // the lockfile stays, as parsed then.
  std::optional<std::string> stampKey =
      lockStampKey(project, src, request, rr, oldSha, env);
  if (stampKey)
    if (auto stamp =
            fsutil::readOwnCacheFile(lockStampPath(src, project), 64ull << 20))
      if (auto parsed = registry::decodeParsedLock(*stamp, *stampKey)) {
        reporter.detail(1, "plugins.lock.json is up to date: plugins.json, "
                           "the lockfile and the registries are as at the "
                           "last lock");
        result.text = std::move(oldText);
        result.lock = std::move(*parsed);
        return result;
      }

  auto old = readLockfile(project.lockPath);
  if (!old)
    return Unexpected(old.error());
  if (*old)
    for (const LockedPackage &lp : (*old)->packages)
      rr.preferred[lp.name] = lp.version;

  auto res = resolve(rr, src);
  if (!res) {
    Error e = res.error();
    if (e.code == ErrorCode::Conflict) {
      // The resolver's hint, when an IREE requirement is to blame, names
      // the manifests that hold it.
      if (e.hint.empty())
        e.hint = "change the version constraints in plugins.json";
      if (result.ireeVersion)
        e.hint += " (resolving for IREE " + result.ireeVersion->str() +
                  " from " + ireeSource + "; --iree-version picks another)";
    }
    if (e.where.file.empty())
      e.where.file = project.file;
    return Unexpected(std::move(e));
  }

  Lockfile lock;
  lock.inputHash = project::inputHash(project.parsed);
  lock.platforms = rr.platforms;
  lock.ireeVersion = result.ireeVersion;
  // Fill each package from where it came from.
  std::map<std::string, const ProjectPlugin *> byName;
  for (const ProjectPlugin &p : project.parsed.plugins)
    byName[p.name] = &p;
  std::vector<std::pair<std::string, Version>> toFetch;
  std::vector<size_t> toFetchRegistry;
  for (const auto &[name, version] : res->versions) {
    LockedPackage lp;
    lp.name = name;
    lp.version = version;
    for (const std::string &d : res->dependencies.at(name))
      lp.dependencies.push_back({d, res->versions.at(d)});
    if (const auto *path = src.path(name)) {
      lp.sourceKind = LockedPackage::SourceKind::Path;
      lp.source = byName.count(name) ? byName[name]->path : path->second;
    } else {
      auto r = src.registryOf(name);
      if (!r)
        return Unexpected(r.error());
      if (!*r)
        return makeError(ErrorCode::Internal,
                         "resolved package \"" + name + "\" has no registry");
      auto c = src.client(**r);
      if (!c)
        return Unexpected(c.error());
      auto entry = (*c)->entry(name, version);
      if (!entry)
        return Unexpected(entry.error());
      lp.sourceKind = LockedPackage::SourceKind::Registry;
      // The URL as plugins.json wrote it, so the lock stays portable.
      lp.source = project.parsed.registries[**r].url;
      lp.archive = (*entry)->archive;
      lp.sha256 = (*entry)->sha256;
      lp.size = (*entry)->size;
      lp.signedBy = (*c)->signedBy();
      lp.platforms = (*entry)->platforms;
      if (auto it = byName.find(name);
          it != byName.end() && !it->second->options.empty()) {
        toFetch.push_back({name, version});
        toFetchRegistry.push_back(**r);
      }
    }
    lock.packages.push_back(std::move(lp));
  }
  std::vector<std::string> order;
  for (const ProjectPlugin &p : project.parsed.plugins)
    order.push_back(p.name);
  lock.activation = activationFor(order, res->dependencies);

  // Option values are checked against each plugin's own option schema,
  // which lives in its manifest.
  DiagnosticList optionProblems;
  std::map<std::string, Manifest> manifests;
  for (size_t i = 0; i < toFetch.size(); ++i) {
    auto c = src.client(toFetchRegistry[i]);
    if (!c)
      return Unexpected(c.error());
    auto paths = (*c)->fetchArchives({toFetch[i]}, reporter);
    if (!paths)
      return Unexpected(paths.error());
    auto head = readArchiveHead(paths->front());
    if (!head)
      return Unexpected(head.error());
    manifests[toFetch[i].first] = std::move(head->manifest);
  }
  const auto &plugins = project.parsed.plugins;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (plugins[i].options.empty())
      continue;
    const Manifest *m = nullptr;
    if (const auto *path = src.path(plugins[i].name))
      m = &path->first;
    else if (auto it = manifests.find(plugins[i].name); it != manifests.end())
      m = &it->second;
    if (m)
      project::checkProjectOptions(plugins[i], i, *m, project.file,
                                   optionProblems);
  }
  if (optionProblems.hasErrors()) {
    Error e = makeError(ErrorCode::Invalid, optionProblems).error();
    e.hint = "fix the option values in plugins.json (see `ireepkg info "
             "<package>` for each plugin's options)";
    return Unexpected(std::move(e));
  }

  result.text = project::serializeLockfile(lock);
  // What changed, for the report.
  std::map<std::string, std::string> before, after;
  if (*old)
    for (const LockedPackage &lp : (*old)->packages)
      before[lp.name] = lp.version.str();
  for (const LockedPackage &lp : lock.packages)
    after[lp.name] = lp.version.str();
  for (const auto &[n, v] : after)
    if (!before.count(n) || before[n] != v)
      result.changes.push_back({n, before.count(n) ? before[n] : "", v});
  for (const auto &[n, v] : before)
    if (!after.count(n))
      result.changes.push_back({n, v, ""});
  result.lock = std::move(lock);

  auto existing = fsutil::exists(project.lockPath)
                      ? fsutil::readFile(project.lockPath, 64ull << 20)
                      : Expected<std::string>(std::string());
  bool same = existing && *existing == result.text;
  // The lockfile is up to date: remember these inputs (a cache; failing to
  // write it changes nothing).
  if (same && stampKey && *existing == oldText &&
      fsutil::makeDirs(src.cacheRoot() + "/locks"))
    (void)fsutil::writeCacheFile(
        lockStampPath(src, project),
        registry::encodeParsedLock(result.lock, *stampKey));
  if (request.check) {
    if (!same)
      return makeError(
          ErrorCode::Conflict,
          fsutil::exists(project.lockPath) ? "plugins.lock.json is out of date"
                                           : "there is no plugins.lock.json",
          Location::inFile(project.lockPath), "run `ireepkg lock`");
    return result;
  }
  if (request.dryRun) {
    result.written = !same;
    return result;
  }
  if (!same) {
    if (Status s = fsutil::writeFileAtomic(project.lockPath, result.text); !s)
      return Unexpected(s.error());
    result.written = true;
  }
  return result;
}

} // namespace detail

Expected<LockResult> lockProject(const Project &project,
                                 const LockRequest &request,
                                 const Environment &env, Reporter &reporter) {
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());
  auto out = lockWith(project, **src, request, env, reporter);
  (*src)->saveCaches();
  discard(std::move(*src));
  return out;
}

} // namespace ireepkg::workflow
