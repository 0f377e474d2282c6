//===- ireepkg/pkg/prefix/install.h - Changing and verifying ---*- C++ -*-===//
//
// Changing a prefix (installing archives, removing packages), each change
// one transaction (prefix.h), and verifying what is installed against each
// package's RECORD and the state files.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_INSTALL_H
#define IREEPKG_PKG_INSTALL_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/prefix/shadowing.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ireepkg {

//===----------------------------------------------------------------------===//
// Changing the prefix
//===----------------------------------------------------------------------===//

/// How the IREE requirement (requires.iree) of the packages an install
/// brings in is checked against the IREE in use.
struct IreeRequirementCheck {
  /// The IREE in use; nullopt: none is known (`problem` says why).
  std::optional<Version> version;
  std::string source;  ///< where the version was read, for messages
  std::string problem; ///< why none is known; "" says nothing about it
  /// A package that excludes the IREE in use is installed with a warning
  /// instead of refused (--ignore-iree-version).
  bool ignore = false;
  /// Name the archive file in messages (false: the archives are ireepkg's
  /// own downloads, as in sync).
  bool nameArchives = true;
};

struct InstallOptions {
  LockOptions lock;
  std::optional<Platform> platform; ///< default: the prefix's, else host
  /// Sets the prefix's cpuLevel ("" clears it); nullopt keeps it.
  std::optional<std::string> cpuLevel;
  ArchiveLimits limits;
  /// Activation order preferred by a project (package names).
  std::vector<std::string> preferredOrder;
  /// A project's compiler settings; replaces the prefix's when set.
  std::optional<ProjectSettings> project;
  bool useCache = true;
  /// Make the prefix exactly the given archives (sync): every installed
  /// package that is not among them is removed in the same transaction.
  bool exact = false;
  /// Packages among the archives that are recorded as installed for a
  /// dependency rather than explicitly (sync, install by name).
  std::set<std::string> asDependency;
  /// Check each incoming package's requires.iree (nullopt: not checked).
  std::optional<IreeRequirementCheck> iree;
  /// Change nothing: read the archives and check them as for the install,
  /// then report in InstallReport::changes what would change (by name and
  /// version). The prefix is neither locked nor created.
  bool dryRun = false;
};

struct InstallReport {
  struct Change {
    std::string name;
    std::string from; ///< "" when newly installed
    std::string to;   ///< "" when removed
  };
  std::vector<Change> changes;
  std::vector<std::string> unchanged; ///< already installed, same bytes
  bool reordered = false; ///< the activation order changed (project order)
  /// No package changed, but the project's option values or hook choices
  /// (plugins.json) did: the prefix's flags were written again.
  bool settingsChanged = false;
  std::string prefix;
  /// How the incoming packages' pass pipelines were checked with MLIR.
  MlirCheckReport pipelineCheck;
  /// Imports more than one package provides, after the change.
  std::vector<ShadowedImport> shadowedImports;
  /// installedStateFingerprint of the prefix as the operation left it,
  /// taken while it still held the prefix lock (empty for a dry run): the
  /// state this report describes, whatever another process did after.
  std::string stateFingerprint;
};

Expected<InstallReport> installArchives(const std::string &prefix,
                                        const std::vector<std::string> &archives,
                                        const InstallOptions &options,
                                        Reporter &reporter);

struct RemoveOptions {
  LockOptions lock;
  bool cascade = false;
  /// Change nothing: report what would be removed.
  bool dryRun = false;
};

Expected<InstallReport> removePackages(const std::string &prefix,
                                       const std::vector<std::string> &names,
                                       const RemoveOptions &options,
                                       Reporter &reporter);
//===----------------------------------------------------------------------===//
// Verifying
//===----------------------------------------------------------------------===//

struct VerifyProblem {
  std::string package; ///< "" for prefix-level problems
  std::string path;    ///< relative to the package (or prefix)
  /// "modified", "missing", "extra", "permissions", "state", "stale",
  /// "outdated" (VerifyReport::outdated only)
  std::string kind;
  std::string detail;
};

struct VerifyReport {
  std::vector<std::string> checkedPackages;
  uint64_t checkedFiles = 0;
  std::vector<VerifyProblem> problems;
  /// State files another ireepkg wrote differently (kind "outdated"): not
  /// problems; the next transaction rewrites them.
  std::vector<VerifyProblem> outdated;
};

/// Re-hashes installed files against their RECORD and checks the state
/// files. `names` empty checks everything.
Expected<VerifyReport> verifyPrefix(const std::string &prefix,
                                    const std::vector<std::string> &names,
                                    Reporter &reporter);

} // namespace ireepkg

#endif // IREEPKG_PKG_INSTALL_H
