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
#include "ireepkg/pkg/prefix/reporter.h"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg {

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

/// How a change waits for the prefix's lock (one process changes a prefix
/// at a time).
struct LockOptions {
  /// Seconds to wait for the lock; nullopt waits without limit.
  std::optional<double> timeoutSeconds;
};

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

} // namespace ireepkg

#endif // IREEPKG_PREFIX_H
