//===- ireepkg/workflow/workflow.h - Lock, sync, install by name ----------===//
//
// The operations that tie projects, registries, the resolver and prefixes
// together:
//
//   lockProject     plugins.json -> plugins.lock.json, for every platform the
//                   project lists, keeping locked versions that still fit
//   syncProject     the project's prefix := exactly the lockfile, in one
//                   transaction, in the lock's activation order
//   installByName   `install simple-mul@^1.2`: resolve against a registry,
//                   keeping what the prefix has where it fits
//   outdated        locked vs. newest allowed vs. newest published
//   search          package names (and summaries) across registries
//   createBundle    a lockfile's packages as one offline file
//
// Where packages come from: a plugin that names its registry comes from
// it; every other package (dependencies included) from the first registry
// of plugins.json whose snapshot lists it, so that a name can never be
// taken over by a later registry. Local `path` plugins are read from their
// directory.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_WORKFLOW_H
#define IREEPKG_WORKFLOW_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/project/project_file.h"
#include "ireepkg/registry/client/client.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ireepkg::workflow {

/// What every operation that reads registries needs.
struct Environment {
  registry::ClientOptions client;
  /// The IREE version to resolve for; nullopt: the IREE in use
  /// (detectIree(), see ireepkg/iree_version.h), if one is found.
  std::optional<Version> ireeVersion;
  /// The IREE tool whose version is the IREE version; empty: the IREE
  /// tools found on PATH or in the virtual environment.
  std::string ireeCompile;
  /// Resolve for no particular IREE version.
  bool ignoreIree = false;
  /// sync: install packages whose requires.iree excludes the IREE in use
  /// (with a warning) instead of refusing them.
  bool ignoreIreeRequirements = false;
  /// An offline vendor bundle to take packages from instead of registries.
  std::string bundle;
};

/// The IREE version `env` resolves for (see Environment::ireeVersion), or
/// nullopt when none is given or found. `source` says where it came from;
/// `problem`, when none is found, why.
std::optional<Version> ireeVersionFor(const Environment &env,
                                      std::string *source = nullptr,
                                      std::optional<Error> *problem = nullptr);

/// What install and sync check every incoming package's requires.iree
/// against: the IREE `env` resolves for.
IreeRequirementCheck ireeCheckFor(const Environment &env);

using ireepkg::parseIreeVersion;

//===----------------------------------------------------------------------===//
// Projects
//===----------------------------------------------------------------------===//

// A project and its loading are pkg's (ireepkg/pkg/project/project_file.h).
using ireepkg::loadProject;
using ireepkg::Project;

struct LockRequest {
  /// Ignore the lock's version of these packages (update <name>...).
  std::set<std::string> upgrade;
  bool upgradeAll = false;
  /// Check only: fail (Conflict) if the lock would change.
  bool check = false;
  /// Resolve and report, write nothing: LockResult::written then says
  /// whether the lockfile would be written (--dry-run, and `add`/`rm`,
  /// which write plugins.json and the lock only once both are known).
  bool dryRun = false;
};

struct LockChange {
  std::string name;
  std::string from; ///< "" when added
  std::string to;   ///< "" when removed
};

struct LockResult {
  Lockfile lock;
  std::string text;     ///< the lockfile's bytes
  bool written = false; ///< false: the file already had these bytes (with
                        ///< LockRequest::dryRun: would be written)
  std::vector<LockChange> changes;
  std::optional<Version> ireeVersion;
};

Expected<LockResult> lockProject(const Project &project,
                                 const LockRequest &request,
                                 const Environment &env, Reporter &reporter);

struct SyncRequest {
  bool locked = false;              ///< fail when the lock is stale
  bool frozen = false;              ///< use the lock as it is, without checking
  std::string prefix;               ///< absolute
  std::optional<Platform> platform; ///< default: the prefix's, else host
  /// Sets the prefix's CPU level (InstallOptions::cpuLevel; "" clears it);
  /// nullopt keeps it.
  std::optional<std::string> cpuLevel;
  LockOptions lock;
  /// The caller has already said that no IREE is found (update, after its
  /// lock): the requirement check does not say it again.
  bool noIreeReported = false;
  /// Change nothing: relock in memory if the lock is stale, and report in
  /// SyncResult::install what the prefix would become (changes: by name and
  /// version, a package whose locked archive differs from the installed one
  /// as from == to; unchanged: the rest). No archive is fetched.
  bool dryRun = false;
  /// Use this lock instead of plugins.lock.json (a lock computed but not
  /// written yet: `update --dry-run`, `add`, `rm`). It is taken as fresh.
  std::optional<Lockfile> plannedLock;
};

struct SyncResult {
  InstallReport install;
  std::optional<LockResult> relocked; ///< when the lock was stale
};

Expected<SyncResult> syncProject(const Project &project,
                                 const SyncRequest &request,
                                 const Environment &env, Reporter &reporter);

//===----------------------------------------------------------------------===//
// Prefixes without a project
//===----------------------------------------------------------------------===//

struct NameRequest {
  std::string name;
  Constraint constraint; ///< default: any
};

/// Parses "name", "name@^1.2", "name@>=1.0, <2".
Expected<NameRequest> parseNameRequest(const std::string &text);

struct InstallByNameRequest {
  std::vector<NameRequest> packages;
  std::vector<registry::RegistrySpec> registries;
  std::string prefix;
  InstallOptions install;
};

Expected<InstallReport> installByName(const InstallByNameRequest &request,
                                      const Environment &env,
                                      Reporter &reporter);

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

struct OutdatedEntry {
  std::string name;
  std::string locked; ///< "" when not in the lock yet
  std::string wanted; ///< newest the constraints allow
  std::string latest; ///< newest published (not yanked)
  std::string registry;
};

Expected<std::vector<OutdatedEntry>>
outdated(const Project &project, const Environment &env, Reporter &reporter);

/// The newest version of `name` that is not yanked (releases before
/// pre-releases) in the registry named `registryName`, or, when that is
/// empty, in the first of the project's registries that lists it; with
/// `within`, the newest such version it matches. The errors name the
/// alternatives: a close package name when no registry has `name`, the
/// versions there are when none matches `within`.
Expected<Version> newestVersion(const Project &project, const std::string &name,
                                const std::string &registryName,
                                const Environment &env, Reporter &reporter,
                                const Constraint *within = nullptr);

struct SearchHit {
  std::string name;
  std::string latest;
  std::string summary;
  std::string registry; ///< its URL
  bool yanked = false;  ///< every version is yanked
};

Expected<std::vector<SearchHit>>
search(const std::vector<registry::RegistrySpec> &registries,
       const std::string &text, const Environment &env, Reporter &reporter);

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

struct BundleRequest {
  std::string output;              ///< <file>.ireebundle
  std::vector<Platform> platforms; ///< must all be in the lock
};

struct BundleResult {
  std::string path;
  uint64_t size = 0;
  std::string sha256;
  size_t packages = 0;
};

Expected<BundleResult> createBundle(const Project &project,
                                    const Lockfile &lock,
                                    const BundleRequest &request,
                                    const Environment &env, Reporter &reporter);

/// The registries of `project` as RegistrySpecs (URLs made absolute against
/// the project's directory).
std::vector<registry::RegistrySpec> projectRegistries(const Project &project);

} // namespace ireepkg::workflow

#endif // IREEPKG_WORKFLOW_H
