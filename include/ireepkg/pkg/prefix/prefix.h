//===- ireepkg/pkg/prefix/prefix.h - Installed prefixes ---------*- C++ -*-===//
//
// A prefix is where packages are installed (formats.md §6):
//
//   <prefix>/packages/<name>/<version>/  extracted package, read-only
//   <prefix>/state/installed.json        what is installed, and why
//   <prefix>/state/activation.json       ordered, host-resolved entries
//   <prefix>/state/runtime.flags         --executable_plugin=... flagfile
//   <prefix>/state/compiler.flags        flagfile for iree-compile
//   <prefix>/state/lock                  advisory lock (fcntl)
//   <prefix>/state/journal.json          present while a change is applied
//   <prefix>/.staging/, .trash/          transaction scratch space
//
// Every change is one transaction: journal first, stage inside the prefix's
// file system, sync, mark committed, rename into place. A crash at any point
// leaves the prefix as it was before or as it is after, and the next command
// finishes or rolls back what the journal shows. One process changes a
// prefix at a time.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PREFIX_H
#define IREEPKG_PREFIX_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/package/package.h"

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg {

/// Receives what long operations want to tell a person. The CLI prints;
/// tests record. Every method has a do-nothing default.
class Reporter {
public:
  virtual ~Reporter();
  /// Another process holds the prefix lock; called once before waiting.
  virtual void waitingForLock(const std::string &prefix,
                              const std::string &holder);
  /// A journal from an interrupted command was completed or rolled back.
  virtual void recovered(const std::string &prefix, const std::string &what);
  virtual void warning(const Diagnostic &diagnostic);
  /// Bytes extracted so far of the current archive; for "downloading",
  /// bytes downloaded so far of every download under way together.
  virtual void progress(const std::string &label, uint64_t done,
                        uint64_t total);
  /// One download of several under way at once, named by `label`
  /// ("simple-mul 1.2.0"); called with done == total once it is complete.
  virtual void itemProgress(const std::string &label, uint64_t done,
                            uint64_t total);
  /// True once the person asked the command to stop (Ctrl-C). Long
  /// operations ask between steps and, before they change anything for
  /// good, give up with ErrorCode::Interrupted (see interruptedError).
  virtual bool interrupted();
  /// What is being done, for `--verbose`: where a registry's files come
  /// from, cache hits, downloads. `level` 1 is shown with -v, 2 with -vv.
  virtual void detail(int level, const std::string &message);
};

/// The error of an operation given up because `reporter.interrupted()`:
/// ErrorCode::Interrupted, "interrupted while <what>".
Error interruptedError(const std::string &what);

//===----------------------------------------------------------------------===//
// Finding the prefix
//===----------------------------------------------------------------------===//

struct PrefixLocation {
  std::string path;        ///< absolute
  std::string reason;      ///< "--prefix", "IREEPKG_PREFIX", "project", ...
  std::string projectFile; ///< the plugins.json, when reason is "project"
};

/// --prefix, else $IREEPKG_PREFIX, else <project>/.iree-plugins for the
/// plugins.json found upward from `cwd` (checkProjectPrefix), else
/// $XDG_DATA_HOME/ireepkg (default ~/.local/share/ireepkg).
Expected<PrefixLocation>
locatePrefix(const std::optional<std::string> &explicitPrefix,
             const std::string &cwd);

/// Checks a project's prefix, `<project>/.iree-plugins`, before it is used
/// without the user naming it (--prefix, IREEPKG_PREFIX). Whoever made the
/// checkout chose what is there, so it is refused when it is a symlink (it
/// could point at another prefix, which `sync` would then change) or when
/// the directory it is in may be written by another user (one not the
/// current user's or root's, or group- or world-writable without the
/// sticky bit), who could put such a link there at any time.
Status checkProjectPrefix(const std::string &prefix);

/// The plugins.json in `cwd` or the nearest directory above it; "" if none.
std::string findProjectFile(const std::string &cwd);

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

struct InstalledPackage {
  std::string name;
  Version version;
  bool explicitlyInstalled = true; ///< false: pulled in as a dependency
  std::vector<std::string> dependencies; ///< names, in the prefix
  std::string archiveSha256;
  std::string recordSha256; ///< of its .ireepkg/RECORD.json, for verify
  uint64_t installedSize = 0;
};

/// What a project file says about compiler configuration (kept in the
/// prefix so every regeneration of the state files agrees).
struct ProjectSettings {
  /// package -> option flag -> value (plugins.json "options")
  std::map<std::string, std::map<std::string, nlohmann::json>> values;
  /// hook point -> package (plugins.json "choose")
  std::map<std::string, std::string> choose;
  bool operator==(const ProjectSettings &) const = default;
};

/// What the last transaction wrote into state/ besides installed.json
/// (installed.json's "state"): the next one removes the files it lists that
/// no StateWriter produces any more, and verify knows what belongs there.
struct StateRecord {
  std::string writtenBy;          ///< "ireepkg 0.1.0" (see stateWriterName)
  std::vector<std::string> files; ///< names in state/, sorted
};

struct InstalledState {
  int schemaVersion = kSchemaVersion;
  std::string platform; ///< the prefix's target, e.g. linux-x86_64
  /// The CPU level runtime.flags chooses builds for ("x86_64_v3",
  /// "x86_64+avx512f"; install --cpu-level), for a prefix prepared for
  /// another machine; "" = the CPU of the machine that writes it.
  std::string cpuLevel;
  ProjectSettings project;
  /// In activation order: dependencies before dependents, otherwise the
  /// project file's order, otherwise install order.
  std::vector<InstalledPackage> packages;
  /// Absent in a prefix last changed by an ireepkg that did not record it.
  std::optional<StateRecord> stateRecord;

  const InstalledPackage *find(std::string_view name) const;
};

/// The directory of an installed package.
std::string packageDir(const std::string &prefix, const std::string &name,
                       const Version &version);

struct PackageRef {
  std::string_view name;
  const Version *version;
};
/// Whether the directory (packageDir) of every package given is in
/// `prefix`. Each is looked up relative to one handle on the prefix's
/// packages directory, not by its full path: a path lookup costs per
/// component, and a no-op sync makes one per locked package.
bool packageDirsExist(const std::string &prefix,
                      std::span<const PackageRef> packages);

/// Reads the prefix's state. If an interrupted transaction left a journal,
/// waits for the lock and recovers first. A prefix that does not exist yet
/// reads as empty.
Expected<InstalledState> readInstalledState(const std::string &prefix,
                                            Reporter &reporter);

/// The SHA-256 (hex) of the prefix's state/installed.json as it is now: a
/// fingerprint of what is recorded as installed, for a caller that keeps
/// what it concluded about the prefix (sync's record of a prefix it left
/// exactly as its lockfile says). Empty when there is no installed.json,
/// it cannot be read, or a change is under way or was interrupted (a
/// journal, .staging or .trash): no conclusion holds then. With a
/// `cacheRoot`, the digest is kept there by installed.json's stamp, and not
/// computed again while the file keeps it (fsutil::readFileHashed).
std::string installedStateFingerprint(const std::string &prefix,
                                      const std::string &cacheRoot = {});

/// Reads an installed package's manifest (leniently).
Expected<Manifest> readInstalledManifest(const std::string &prefix,
                                         const InstalledPackage &package,
                                         Reporter &reporter);

//===----------------------------------------------------------------------===//
// Changing the prefix
//===----------------------------------------------------------------------===//

struct LockOptions {
  /// Seconds to wait for the lock; nullopt waits without limit.
  std::optional<double> timeoutSeconds;
};

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

/// An active runtime plugin: which package, which plugin.
struct RuntimePluginRef {
  std::string package;
  std::string plugin;
};

/// An import that the active runtime plugins of more than one package
/// declare. IREE resolves imports in reverse registration order, and the
/// prefix registers plugins in activation order, so the package activated
/// last provides it; the others are shadowed.
struct ShadowedImport {
  std::string import;
  RuntimePluginRef used;                  ///< the one IREE calls
  std::vector<RuntimePluginRef> shadowed; ///< the others, latest first
};

/// The shadowed imports of a prefix, from its state/activation.json (empty
/// when it has none). Within one package, the last of its plugins that
/// declares an import stands for the package (a package may ship the same
/// kernel as an embedded ELF and a system library).
std::vector<ShadowedImport> shadowedImports(const std::string &prefix);

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
// Moved prefixes
//===----------------------------------------------------------------------===//

/// The "prefix" of `prefix`'s state/activation.json: the absolute path its
/// state files were written for; "" when there is none (no state yet, or a
/// file that does not read).
std::string activationPrefix(const std::string &prefix);

/// The absolute path a prefix's state files were written for (activation
/// .json's "prefix"), when that is not `prefix` (absolute, normalized) nor
/// the same directory: the prefix was moved, copied, unpacked or mounted
/// elsewhere since. nullopt when it was not, or when the prefix has no
/// state yet.
std::optional<std::string> prefixMovedFrom(const std::string &prefix);

/// Writes every state file of `prefix` again for where it is now (one
/// transaction, under the prefix's lock; the packages are unchanged), so
/// that the files that name paths (the flagfiles IREE reads literally,
/// activation.json, the indexes) name this prefix's files. Returns the
/// path it was moved from, or nullopt when it had not moved (nothing is
/// written then).
Expected<std::optional<std::string>>
rewriteMovedPrefix(const std::string &prefix, const LockOptions &lock,
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

#endif // IREEPKG_PREFIX_H
