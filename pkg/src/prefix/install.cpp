//===- pkg/src/prefix/install.cpp - Installing, removing and verifying ----===//
//
// The prefix-changing operations. Each takes the prefix lock, recovers an
// interrupted transaction if there is one, checks everything it can before
// the transaction starts (archive heads, dependencies, platforms), then
// stages, verifies and commits in one transaction.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/prefix/shadowing.h"
#include "ireepkg/manifest_schema/suggest.h"

#include "ireepkg/base/file_util.h"
#include "iree/iree_requirement.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/checks/native_check.h"
#include "checks/pipeline_check.h"
#include "ireepkg/pkg/prefix/state.h"
#include "transaction.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace ireepkg {

namespace {

/// Lock, recover, read state: the start of every change.
struct Session {
  PrefixLock lock;
  InstalledState state;
};

Expected<Session> openForChange(const std::string &prefix,
                                const LockOptions &lockOptions,
                                Reporter &reporter) {
  Session s;
  auto lock = PrefixLock::acquire(prefix, lockOptions, reporter);
  if (!lock)
    return Unexpected(lock.error());
  s.lock = std::move(*lock);
  auto what = recoverPrefix(prefix);
  if (!what)
    return Unexpected(what.error());
  if (!what->empty())
    reporter.recovered(prefix, *what);
  auto st = readInstalledState(prefix, reporter);
  if (!st)
    return Unexpected(st.error());
  s.state = std::move(*st);
  return s;
}

/// openForChange, or for a dry run only the state: the prefix is neither
/// locked nor created.
Expected<Session> openForChangeOrPlan(const std::string &prefix,
                                      const LockOptions &lockOptions,
                                      bool dryRun, Reporter &reporter) {
  if (!dryRun)
    return openForChange(prefix, lockOptions, reporter);
  auto st = readInstalledState(prefix, reporter);
  if (!st)
    return Unexpected(st.error());
  Session s;
  s.state = std::move(*st);
  return s;
}

/// Which platforms a manifest has native builds for; empty = independent.
/// A FatELF ("fat") file counts for the architectures it holds once the
/// package's files are at `filesDir`, for any before.
bool supportsPlatform(const Manifest &m, const Platform &p, std::string &builds,
                      const std::string &filesDir = {}) {
  std::set<std::string> have;
  bool any = false, supported = false;
  for (const RuntimePlugin &rp : m.runtimePlugins)
    for (const auto &[key, path] : rp.library) {
      any = true;
      if (key == "fat" && rp.format == RuntimeFormat::EmbeddedElf &&
          !filesDir.empty()) {
        auto archs = fatElfArchitectures(filesDir + "/" + path);
        std::string held;
        for (Arch a : archs ? *archs : std::vector<Arch>{}) {
          held += (held.empty() ? "" : ", ") + std::string(archName(a));
          supported |= a == p.arch;
        }
        have.insert("fat (" + (held.empty() ? "no image" : held) + ")");
        continue;
      }
      have.insert(key);
      if (key == p.str() || key == archName(p.arch) || key == "fat")
        supported = true;
    }
  for (const CompilerPlugin &cp : m.compilerPlugins)
    for (const auto &[key, path] : cp.library) {
      any = true;
      have.insert(key);
      if (key == p.str())
        supported = true;
    }
  for (const std::string &h : have)
    builds += (builds.empty() ? "" : ", ") + h;
  return !any || supported;
}

Unexpected noBuildError(const Manifest &m, const Platform &platform,
                        const std::string &builds, const std::string &archive) {
  return makeError(ErrorCode::Unsupported,
                   "package \"" + m.name + "\" " + m.version.str() +
                       " has no build for " + platform.str() +
                       " (it has: " + builds + ")",
                   Location{archive, 0, 0, "", m.name, ""},
                   "install it into a prefix for a platform it supports "
                   "(--platform)");
}

/// Writes the state files for `state` into the transaction and commits it.
/// Packages in `staged` are read from their staging directories.
Status commitWithState(
    Transaction &tx, const std::string &prefix, const InstalledState &state,
    const std::map<std::string, Manifest> &manifests, Reporter &reporter,
    const std::map<std::string, StagedPackage> &staged = {}) {
  std::vector<ActivePackage> active;
  for (const InstalledPackage &p : state.packages) {
    auto s = staged.find(p.name);
    active.push_back({&p, &manifests.at(p.name),
                      packageDir(prefix, p.name, p.version),
                      s == staged.end() ? std::string() : s->second.dir});
  }
  auto gen = generateState(prefix, state.platform, active, state.project,
                           state.cpuLevel);
  if (!gen)
    return Unexpected(gen.error());
  for (const Diagnostic &d : gen->warnings)
    reporter.warning(d);
  // The files the state consists of now; those the last transaction wrote
  // that no writer produces any more leave with this one.
  StateRecord record{stateWriterName(), {kActivationFile}};
  for (const auto &[file, content] : gen->files) {
    if (!isStateFileName(file))
      return makeError(ErrorCode::Internal,
                       "a state writer produced \"" + file +
                           "\", which is not a name for a state file",
                       Location::inFile(prefix + "/state"));
    record.files.push_back(file);
  }
  std::sort(record.files.begin(), record.files.end());
  for (const std::string &old :
       state.stateRecord ? state.stateRecord->files : unrecordedStateFiles())
    if (!std::binary_search(record.files.begin(), record.files.end(), old))
      tx.removeStateFile(old);
  InstalledState recorded = state;
  recorded.stateRecord = std::move(record);
  tx.setStateFile(kInstalledFile, serializeInstalled(recorded));
  tx.setStateFile(kActivationFile, gen->activationJson);
  for (const auto &[file, content] : gen->files)
    tx.setStateFile(file, content);
  // The last moment to stop with nothing changed.
  if (reporter.interrupted())
    return Unexpected(interruptedError("installing"));
  return tx.commit();
}

/// Puts `state.packages` into activation order.
void reorder(InstalledState &state, const std::vector<std::string> &preferred) {
  std::vector<size_t> order = activationOrder(state.packages, preferred);
  std::vector<InstalledPackage> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(state.packages[i]));
  state.packages = std::move(sorted);
}

/// Stages the removal of `names` and drops them from `state`.
void removeFromState(Transaction &tx, InstalledState &state,
                     const std::set<std::string> &names,
                     InstallReport &report) {
  std::vector<InstalledPackage> kept;
  for (InstalledPackage &p : state.packages) {
    if (names.count(p.name)) {
      tx.removePackage(p.name, p.version);
      report.changes.push_back({p.name, p.version.str(), ""});
    } else {
      kept.push_back(std::move(p));
    }
  }
  state.packages = std::move(kept);
}

Error dependencyError(const DiagnosticList &problems) {
  Error e = makeError(ErrorCode::Conflict, problems).error();
  e.hint = "install the missing packages' archives in the same command, or "
           "remove the packages that need them";
  return e;
}

} // namespace

Expected<InstallReport>
installArchives(const std::string &prefix,
                const std::vector<std::string> &archives,
                const InstallOptions &options, Reporter &reporter) {
  auto session = openForChangeOrPlan(prefix, options.lock, options.dryRun,
                                     reporter);
  if (!session)
    return Unexpected(session.error());
  InstalledState state = std::move(session->state);
  Platform platform = options.platform.value_or(
      Platform::parse(state.platform).value_or(hostPlatform()));
  if (!state.platform.empty() && state.platform != platform.str())
    return makeError(ErrorCode::Conflict,
                     "this prefix is for " + state.platform + ", not " +
                         platform.str(),
                     Location::inFile(prefix),
                     "use a separate prefix for each platform");
  state.platform = platform.str();
  // The project's option values and choices as the prefix has them (and
  // its CPU level), to tell whether this install changes them.
  const bool settingsChanged =
      (options.project && *options.project != state.project) ||
      (options.cpuLevel && *options.cpuLevel != state.cpuLevel);
  if (options.project)
    state.project = *options.project;
  if (options.cpuLevel)
    state.cpuLevel = *options.cpuLevel;

  // Read every archive's manifest and RECORD before changing anything.
  // Each archive is opened once: its head and its files are read from the
  // same open file, whatever happens at its path meanwhile.
  struct Incoming {
    std::string archive;
    ArchiveFile file;
    ArchiveHead head;
    std::string recordSha;
    bool unchanged = false;
  };
  std::vector<Incoming> incoming;
  std::map<std::string, size_t> byName;
  for (const std::string &a : archives) {
    auto file = ArchiveFile::open(a);
    if (!file)
      return Unexpected(file.error());
    auto head = readArchiveHead(*file);
    if (!head)
      return Unexpected(head.error());
    for (const Diagnostic &d : head->warnings)
      reporter.warning(d);
    const std::string &name = head->manifest.name;
    if (auto it = byName.find(name); it != byName.end())
      return makeError(ErrorCode::Conflict,
                       "two archives provide package \"" + name + "\": " +
                           incoming[it->second].archive + " and " + a,
                       {}, "install one version of a package at a time");
    std::string builds;
    if (!supportsPlatform(head->manifest, platform, builds))
      return noBuildError(head->manifest, platform, builds, a);
    byName[name] = incoming.size();
    std::string recordSha = Sha256::hex(serializeRecord(head->record));
    incoming.push_back(
        {a, std::move(*file), std::move(*head), recordSha, false});
  }
  faultPoint("heads-read");
  // requires.iree against the IREE in use (install of archives, sync).
  if (options.iree) {
    std::vector<std::pair<const Manifest *, std::string>> checked;
    for (const Incoming &in : incoming)
      checked.emplace_back(&in.head.manifest, in.archive);
    if (Status s = checkIreeRequirements(*options.iree, checked, reporter); !s)
      return Unexpected(s.error());
  }

  // sync: what is installed but not given goes, in the same transaction.
  std::set<std::string> removing;
  if (options.exact)
    for (const InstalledPackage &p : state.packages)
      if (!byName.count(p.name))
        removing.insert(p.name);

  // The target set: what is installed, with the incoming packages laid over.
  std::map<std::string, Manifest> manifests;
  for (const InstalledPackage &p : state.packages) {
    if (byName.count(p.name) || removing.count(p.name))
      continue;
    auto m = readInstalledManifest(prefix, p, reporter);
    if (!m)
      return Unexpected(m.error());
    manifests.emplace(p.name, std::move(*m));
  }
  for (Incoming &in : incoming)
    manifests[in.head.manifest.name] = in.head.manifest;
  std::map<std::string, Version> versions;
  for (const InstalledPackage &p : state.packages)
    if (!removing.count(p.name))
      versions[p.name] = p.version;
  for (const Incoming &in : incoming)
    versions[in.head.manifest.name] = in.head.manifest.version;
  DiagnosticList problems;
  for (const auto &[name, m] : manifests)
    for (const auto &[dep, constraint] : m.dependencies) {
      Location where{"", 0, 0, "", name, ""};
      auto v = versions.find(dep);
      if (v == versions.end())
        problems.error(where, name + " " + m.version.str() + " depends on " +
                                  dep + " " + constraint.text() +
                                  ", which is neither installed nor given");
      else if (!constraint.matches(v->second))
        problems.error(where,
                       name + " " + m.version.str() + " depends on " + dep +
                           " " + constraint.text() + ", but " + dep + " " +
                           v->second.str() +
                           (byName.count(dep) ? " is being installed"
                                              : " is installed"));
    }
  if (problems.hasErrors())
    return Unexpected(dependencyError(problems));

  InstallReport report;
  report.prefix = prefix;
  for (Incoming &in : incoming) {
    const InstalledPackage *old = state.find(in.head.manifest.name);
    if (old && old->version.identical(in.head.manifest.version) &&
        old->recordSha256 == in.recordSha &&
        fsutil::isDirectory(packageDir(prefix, old->name, old->version))) {
      in.unchanged = true;
      report.unchanged.push_back(old->name + " " + old->version.str());
    }
  }
  bool anyChange = !removing.empty() ||
                   std::any_of(incoming.begin(), incoming.end(),
                               [](const Incoming &i) { return !i.unchanged; });
  auto wantExplicit = [&](const std::string &name) {
    return !options.asDependency.count(name);
  };
  if (!anyChange && state.packages.size() &&
      (!incoming.empty() || options.exact)) {
    // Everything requested is already there; only explicitness or the
    // project's activation order may change.
    bool flagChange = false;
    for (InstalledPackage &p : state.packages)
      if (byName.count(p.name) &&
          p.explicitlyInstalled !=
              (wantExplicit(p.name) ||
               (!options.exact && p.explicitlyInstalled)))
        flagChange = true;
    std::vector<size_t> order =
        activationOrder(state.packages, options.preferredOrder);
    bool reordered = false;
    for (size_t i = 0; i < order.size(); ++i)
      reordered |= order[i] != i;
    if (!flagChange && !reordered && !settingsChanged) {
      report.shadowedImports = shadowedImports(prefix);
      if (!options.dryRun)
        report.stateFingerprint = installedStateFingerprint(prefix);
      return report;
    }
    if (reordered)
      report.reordered = true;
    report.settingsChanged = settingsChanged;
  }

  if (options.dryRun) {
    for (const InstalledPackage &p : state.packages)
      if (removing.count(p.name))
        report.changes.push_back({p.name, p.version.str(), ""});
    for (const Incoming &in : incoming)
      if (!in.unchanged) {
        const InstalledPackage *old = state.find(in.head.manifest.name);
        report.changes.push_back({in.head.manifest.name,
                                  old ? old->version.str() : "",
                                  in.head.manifest.version.str()});
      }
    return report;
  }

  std::optional<PackageCache> cache;
  if (options.useCache)
    cache = PackageCache::openDefault();
  auto tx = Transaction::begin(prefix);
  if (!tx)
    return Unexpected(tx.error());
  removeFromState(*tx, state, removing, report);
  std::map<std::string, StagedPackage> staged;
  // Extracted packages go into the package cache only once they passed the
  // checks below, so that a refused archive leaves nothing behind.
  struct ToCache {
    const Incoming *in;
    std::string archiveSha, dest;
  };
  std::vector<ToCache> toCache;
  for (Incoming &in : incoming) {
    // Ctrl-C: the transaction, not committed, is rolled back.
    if (reporter.interrupted())
      return Unexpected(interruptedError("installing"));
    const Manifest &m = in.head.manifest;
    InstalledPackage *old = nullptr;
    for (InstalledPackage &p : state.packages)
      if (p.name == m.name)
        old = &p;
    if (in.unchanged) {
      // An explicit install keeps a package explicit; only sync (which
      // knows the whole project) may demote one to a dependency.
      old->explicitlyInstalled =
          wantExplicit(m.name) || (!options.exact && old->explicitlyInstalled);
      continue;
    }
    std::string dest = tx->stagePackage(m.name, m.version);
    uint64_t total = in.head.record.totalSize();
    // A version seen before is linked from the cache; anything else is
    // extracted and verified in one pass, then added to the cache.
    std::optional<PackageCache::Hit> hit;
    if (cache)
      hit = cache->lookup(in.archive, in.recordSha);
    std::string archiveSha;
    bool linked = hit && cache->materialize(in.head.record, dest);
    if (linked) {
      archiveSha = hit->archiveSha256;
    } else {
      auto result = extractArchive(
          in.file, dest, options.limits,
          [&](uint64_t done) {
            reporter.progress(m.name + " " + m.version.str(), done, total);
          },
          &in.head);
      if (!result)
        return Unexpected(result.error());
      archiveSha = result->archiveSha256;
      if (cache)
        toCache.push_back({&in, archiveSha, dest});
    }
    if (!linked) // a linked tree is read-only already
      if (Status s = fsutil::makeReadOnlyTree(dest); !s)
        return Unexpected(s.error());
    faultPoint("package-staged");
    staged[m.name] = {dest, in.archive, &in.head.manifestText};
    InstalledPackage entry;
    entry.name = m.name;
    entry.version = m.version;
    entry.explicitlyInstalled =
        wantExplicit(m.name) ||
        (!options.exact && old && old->explicitlyInstalled);
    for (const auto &[dep, c] : m.dependencies)
      entry.dependencies.push_back(dep);
    entry.archiveSha256 = archiveSha;
    entry.recordSha256 = in.recordSha;
    entry.installedSize = total;
    if (old) {
      tx->removePackage(old->name, old->version);
      report.changes.push_back({m.name, old->version.str(), m.version.str()});
      *old = std::move(entry); // keeps its place in the order
    } else {
      report.changes.push_back({m.name, "", m.version.str()});
      state.packages.push_back(std::move(entry));
    }
  }
  reorder(state, options.preferredOrder);
  // The incoming packages' native libraries against their manifests: the
  // archive may not have been made by `pack`.
  std::vector<NativeCheckPackage> native;
  for (const Incoming &in : incoming)
    if (auto s = staged.find(in.head.manifest.name); s != staged.end())
      native.push_back({&in.head.manifest, &in.head.manifestText,
                        &in.head.record, s->second.dir, in.archive});
  DiagnosticList nativeWarnings;
  if (Status s = checkStagedNativeLibraries(native, cache ? cache->root() : "",
                                            platform, nativeWarnings);
      !s)
    return Unexpected(s.error());
  for (const Diagnostic &d : nativeWarnings.items())
    reporter.warning(d);
  // A package whose only build for the platform was a FatELF file: the
  // file's table says whether it holds the platform's architecture.
  for (const Incoming &in : incoming) {
    auto s = staged.find(in.head.manifest.name);
    std::string builds;
    if (s != staged.end() &&
        !supportsPlatform(in.head.manifest, platform, builds, s->second.dir))
      return noBuildError(in.head.manifest, platform, builds, in.archive);
  }
  for (const ToCache &c : toCache)
    if (Status s = cache->store(c.in->archive, c.archiveSha, c.in->recordSha,
                                c.in->head.record, c.dest);
        !s)
      reporter.warning(Diagnostic{
          Severity::Warning, s.error().where,
          "could not add to the package cache: " + s.error().message, ""});
  // The incoming hook pipelines, with MLIR's parser and the pass plugins of
  // the prefix as it will be.
  auto pipelineCheck = checkInstallPipelines(prefix, state.packages, manifests,
                                             staged, platform, reporter);
  if (!pipelineCheck)
    return Unexpected(pipelineCheck.error());
  report.pipelineCheck = std::move(*pipelineCheck);
  if (Status s =
          commitWithState(*tx, prefix, state, manifests, reporter, staged);
      !s)
    return Unexpected(s.error());
  report.shadowedImports = shadowedImports(prefix);
  report.stateFingerprint = installedStateFingerprint(prefix); // still locked
  return report;
}

Expected<InstallReport> removePackages(const std::string &prefix,
                                       const std::vector<std::string> &names,
                                       const RemoveOptions &options,
                                       Reporter &reporter) {
  auto session = openForChangeOrPlan(prefix, options.lock, options.dryRun,
                                     reporter);
  if (!session)
    return Unexpected(session.error());
  InstalledState state = std::move(session->state);
  std::vector<std::string> installedNames;
  for (const InstalledPackage &p : state.packages)
    installedNames.push_back(p.name);
  std::set<std::string> removing;
  for (const std::string &n : names) {
    if (!state.find(n))
      return makeError(ErrorCode::NotFound,
                       "package \"" + n + "\" is not installed" +
                           didYouMean(n, std::span<const std::string>(
                                             installedNames)),
                       Location::inFile(prefix),
                       "see `ireepkg list`");
    removing.insert(n);
  }
  // Dependents of what is removed: refused, or removed too with --cascade.
  bool grew = true;
  while (grew) {
    grew = false;
    for (const InstalledPackage &p : state.packages) {
      if (removing.count(p.name))
        continue;
      for (const std::string &d : p.dependencies)
        if (removing.count(d)) {
          if (!options.cascade)
            return makeError(
                ErrorCode::Conflict,
                "cannot remove \"" + d + "\": \"" + p.name + "\" " +
                    p.version.str() + " depends on it",
                Location::inFile(prefix),
                "remove \"" + p.name + "\" too, or use --cascade");
          removing.insert(p.name);
          grew = true;
          break;
        }
    }
  }
  std::map<std::string, Manifest> manifests;
  for (const InstalledPackage &p : state.packages)
    if (!removing.count(p.name)) {
      auto m = readInstalledManifest(prefix, p, reporter);
      if (!m)
        return Unexpected(m.error());
      manifests.emplace(p.name, std::move(*m));
    }
  InstallReport report;
  report.prefix = prefix;
  if (options.dryRun) {
    for (const InstalledPackage &p : state.packages)
      if (removing.count(p.name))
        report.changes.push_back({p.name, p.version.str(), ""});
    return report;
  }
  auto tx = Transaction::begin(prefix);
  if (!tx)
    return Unexpected(tx.error());
  removeFromState(*tx, state, removing, report);
  if (Status s = commitWithState(*tx, prefix, state, manifests, reporter); !s)
    return Unexpected(s.error());
  return report;
}

std::optional<std::string> prefixMovedFrom(const std::string &prefix) {
  std::string written = activationPrefix(prefix);
  if (written.empty() || written == prefix)
    return std::nullopt;
  struct stat a, b;
  if (::stat(written.c_str(), &a) == 0 && ::stat(prefix.c_str(), &b) == 0 &&
      a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    return std::nullopt; // the same directory by another path
  return written;
}

Expected<std::optional<std::string>>
rewriteMovedPrefix(const std::string &prefix, const LockOptions &lock,
                   Reporter &reporter) {
  if (!prefixMovedFrom(prefix))
    return std::optional<std::string>();
  auto session = openForChange(prefix, lock, reporter);
  if (!session)
    return Unexpected(session.error());
  // Under the lock: another process may have done it meanwhile.
  std::optional<std::string> from = prefixMovedFrom(prefix);
  if (!from)
    return from;
  std::map<std::string, Manifest> manifests;
  for (const InstalledPackage &p : session->state.packages) {
    auto m = readInstalledManifest(prefix, p, reporter);
    if (!m)
      return Unexpected(m.error());
    manifests.emplace(p.name, std::move(*m));
  }
  auto tx = Transaction::begin(prefix);
  if (!tx)
    return Unexpected(tx.error());
  if (Status s =
          commitWithState(*tx, prefix, session->state, manifests, reporter);
      !s)
    return Unexpected(s.error());
  return from;
}

Expected<VerifyReport> verifyPrefix(const std::string &prefix,
                                    const std::vector<std::string> &names,
                                    Reporter &reporter) {
  auto st = readInstalledState(prefix, reporter);
  if (!st)
    return Unexpected(st.error());
  VerifyReport report;
  for (const std::string &n : names)
    if (!st->find(n))
      return makeError(ErrorCode::NotFound,
                       "package \"" + n + "\" is not installed",
                       Location::inFile(prefix), "see `ireepkg list`");
  auto problem = [&](const std::string &pkg, const std::string &path,
                     const std::string &kind, const std::string &detail) {
    report.problems.push_back({pkg, path, kind, detail});
  };
  std::map<std::string, Manifest> manifests;
  for (const InstalledPackage &p : st->packages) {
    bool selected =
        names.empty() || std::find(names.begin(), names.end(), p.name) !=
                             names.end();
    std::string dir = packageDir(prefix, p.name, p.version);
    if (!fsutil::isDirectory(dir)) {
      problem(p.name, "", "missing", "the package directory is missing");
      continue;
    }
    if (auto m = readInstalledManifest(prefix, p, reporter))
      manifests.emplace(p.name, std::move(*m));
    if (!selected)
      continue;
    report.checkedPackages.push_back(p.name);
    auto recordText = fsutil::readFile(dir + "/" + kRecordName, 64u << 20);
    if (!recordText) {
      problem(p.name, kRecordName, "missing", recordText.error().message);
      continue;
    }
    if (!p.recordSha256.empty() &&
        Sha256::hex(*recordText) != p.recordSha256)
      problem(p.name, kRecordName, "modified",
              "RECORD.json differs from the one installed");
    auto record = parseRecord(*recordText, kRecordName);
    if (!record) {
      problem(p.name, kRecordName, "modified", record.error().message);
      continue;
    }
    std::set<std::string> listed = {kRecordName};
    for (const RecordEntry &e : record->files) {
      listed.insert(e.path);
      std::string full = dir + "/" + e.path;
      struct stat sb;
      if (::lstat(full.c_str(), &sb) != 0) {
        problem(p.name, e.path, "missing", "the file is missing");
        continue;
      }
      ++report.checkedFiles;
      if (!S_ISREG(sb.st_mode)) {
        problem(p.name, e.path, "modified", "is no longer a regular file");
        continue;
      }
      auto sha = sha256File(full);
      if (!sha)
        problem(p.name, e.path, "modified", sha.error().message);
      else if (*sha != e.sha256 || static_cast<uint64_t>(sb.st_size) != e.size)
        problem(p.name, e.path, "modified",
                "content differs from RECORD (size " +
                    std::to_string(sb.st_size) + ", expected " +
                    std::to_string(e.size) + ")");
      else if (sb.st_mode & 0222)
        problem(p.name, e.path, "permissions",
                "is writable; installed files are read-only");
    }
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec))
        continue;
      std::string rel = it->path().lexically_relative(dir).generic_string();
      if (!listed.count(rel))
        problem(p.name, rel, "extra", "is not part of the package");
    }
  }
  // Package directories nothing lists.
  std::error_code ec;
  for (const auto &nameDir :
       fs::directory_iterator(prefix + "/packages", ec)) {
    std::string name = nameDir.path().filename().string();
    for (const auto &verDir : fs::directory_iterator(nameDir.path(), ec)) {
      const InstalledPackage *p = st->find(name);
      if (!p || p->version.str() != verDir.path().filename().string())
        problem("", "packages/" + name + "/" +
                        verDir.path().filename().string(),
                "extra", "is not an installed package");
    }
  }
  // The state files are exactly what the installed packages produce.
  if (!st->packages.empty() || fsutil::exists(prefix + "/state/" + kInstalledFile)) {
    std::vector<ActivePackage> active;
    bool complete = true;
    for (const InstalledPackage &p : st->packages) {
      auto it = manifests.find(p.name);
      if (it == manifests.end()) {
        complete = false;
        break;
      }
      active.push_back({&p, &it->second, packageDir(prefix, p.name, p.version)});
    }
    if (complete) {
      auto gen = generateState(prefix, st->platform, active, st->project,
                               st->cpuLevel);
      if (!gen)
        return Unexpected(gen.error());
      std::map<std::string, std::string> expected = gen->files;
      expected[kActivationFile] = gen->activationJson;
      // Bytes that differ are damage when this ireepkg wrote them; else
      // they are what another version wrote (installed.json's "state"
      // record names it; a prefix without one is older than the record).
      const std::string writer = stateWriterName();
      const bool ours = st->stateRecord && st->stateRecord->writtenBy == writer;
      for (const auto &[file, want] : expected) {
        auto have = fsutil::readFile(prefix + "/state/" + file, 64u << 20);
        if (!have)
          problem("", "state/" + file, "missing", have.error().message);
        else if (*have == want)
          continue;
        else if (ours)
          problem("", "state/" + file, "state",
                  "does not match the installed packages");
        else
          report.outdated.push_back(
              {"", "state/" + file, "outdated",
               "written by " +
                   (st->stateRecord ? st->stateRecord->writtenBy
                                    : std::string("an older ireepkg")) +
                   ", not by " + writer +
                   ", which writes it differently; the next install, remove "
                   "or sync that changes the prefix rewrites it"});
      }
      // Anything else in state/: what an earlier transaction wrote and no
      // writer produces any more, or what no ireepkg wrote.
      std::vector<std::string> recorded =
          st->stateRecord ? st->stateRecord->files : unrecordedStateFiles();
      std::error_code sec;
      for (const auto &e : fs::directory_iterator(prefix + "/state", sec)) {
        std::string name = e.path().filename().string();
        if (expected.count(name) || name == kInstalledFile || name == "lock" ||
            name == "journal.json")
          continue;
        if (std::find(recorded.begin(), recorded.end(), name) != recorded.end())
          problem("", "state/" + name, "stale",
                  "an earlier transaction wrote it, but no state writer "
                  "produces it now; the next install, remove or sync that "
                  "changes the prefix removes it");
        else
          problem("", "state/" + name, "extra",
                  "is not part of the prefix's state (no state writer "
                  "produces it)");
      }
    }
  }
  return report;
}

} // namespace ireepkg
