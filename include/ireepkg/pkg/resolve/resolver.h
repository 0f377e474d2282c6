//===- ireepkg/pkg/resolve/resolver.h - Dependency resolution ---*- C++ -*-===//
//
// Chooses one version of every package a project needs, with PubGrub
// (Natalie Weizenbaum's conflict-driven version solving algorithm, as used by
// Dart's pub): incompatibilities, unit propagation, conflict resolution that
// learns the root cause of every conflict, and decision making.
//
// When no solution exists, the error is ErrorCode::Conflict and its message
// is a complete, deterministic explanation derived from the proof the solver
// found, one sentence per line, for example:
//
//   Because simple-mul >=1.2.0 depends on common-ukernels >=2.0.0 and
//   fft-kit >=3.0.0, <4.0.0 depends on common-ukernels <2.0.0, simple-mul
//   >=1.2.0 and fft-kit >=3.0.0, <4.0.0 are incompatible.
//   And because plugins.json depends on simple-mul >=1.2.0 and plugins.json
//   depends on fft-kit >=3.0.0, <4.0.0, version solving failed.
//
// Ranges print in VersionSet::str() form. A line that later lines refer to
// starts with its number, "(1) ", and is referred to as "... (1)".
//
// Version choice: the locked (preferred) version when the constraints allow
// it, otherwise the newest allowed version. Pre-releases only where a
// constraint names one (Constraint::matches). Yanked versions are skipped
// unless locked; versions that require another IREE or lack a build for a
// requested platform are never chosen. The package with the fewest remaining
// candidates is decided first, ties in the order packages were first seen.
// The result depends only on the request and the registry's contents, never
// on the order a source lists versions in.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_RESOLVER_H
#define IREEPKG_RESOLVER_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/semver.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ireepkg {

/// What a version needs of another package. The constraint is shared:
/// the versions of a package mostly repeat the same constraints, and a
/// source hands one object to all of them instead of a copy to each.
struct Dependency {
  std::string name;
  std::shared_ptr<const Constraint> constraint;
};

/// One published version of a package.
struct CandidateVersion {
  Version version;
  /// What this version needs, sorted by package name, each name once.
  std::vector<Dependency> dependencies;
  /// The IREE versions this version works with; null: any.
  std::shared_ptr<const Constraint> requiresIree;
  /// The platforms it has builds for; empty: platform-independent.
  std::vector<Platform> platforms;
  bool yanked = false;

  /// Sets dependencies and requiresIree from the forms manifests and index
  /// entries use (each constraint copied once).
  void setRequirements(const std::map<std::string, Constraint> &deps,
                       const std::optional<Constraint> &iree);
  /// The dependency on `name`, or null.
  const Dependency *dependency(std::string_view name) const;
};

/// Where versions come from: a registry, a directory of archives, a test's
/// in-memory table. resolve() asks for each package at most once, and only
/// for packages a candidate solution reaches.
class PackageSource {
public:
  virtual ~PackageSource();

  /// Every version of `name`, in any order. An error with code
  /// ErrorCode::NotFound means "no such package": resolution goes on and
  /// explains it if it matters ("X does not exist"). Any other error stops
  /// resolution and is returned as is.
  virtual Expected<std::vector<CandidateVersion>>
  versions(const std::string &name) = 0;

  /// resolve() is about to ask for the versions of each of `names` (the
  /// dependencies of the version it just chose, in order): a source may
  /// start reading them meanwhile, on another thread. A hint only: it
  /// must change nothing versions() returns, and anything that goes wrong
  /// is for versions() to report. The default does nothing.
  virtual void prefetch(const std::vector<std::string> &names);
};

struct ResolveRequest {
  /// The project's own requirements, in project order.
  std::vector<std::pair<std::string, Constraint>> roots;
  /// How the project is named in explanations.
  std::string rootName = "plugins.json";
  /// When set, a version whose requiresIree does not contain it (by
  /// precedence, so IREE pre-releases and nightlies count) is never chosen.
  std::optional<Version> ireeVersion;
  /// Every chosen version must have a build for each of these (or be
  /// platform-independent).
  std::vector<Platform> platforms;
  /// Locked versions: chosen when the constraints allow them, even if
  /// yanked.
  std::map<std::string, Version> preferred;
  /// Packages whose locked version is ignored (`update <name>`).
  std::set<std::string> upgrade;
  /// Ignore every locked version (`update`).
  bool upgradeAll = false;
};

struct Resolution {
  /// Every package of the solution (the root excluded) -> chosen version,
  /// as the source published it (build metadata included).
  std::map<std::string, Version> versions;
  /// Every package of the solution -> the names of its dependencies, sorted;
  /// each of them is in `versions`.
  std::map<std::string, std::vector<std::string>> dependencies;
};

/// Solves `request` against `source`. Errors: ErrorCode::Conflict with the
/// explanation as the message when no solution exists; the source's own
/// error when it fails with anything but NotFound.
Expected<Resolution> resolve(const ResolveRequest &request,
                             PackageSource &source);

} // namespace ireepkg

#endif // IREEPKG_RESOLVER_H
