//===- ireepkg/pkg/prefix/state.h - A prefix's state files ------*- C++ -*-===//
//
// installed.json (what is installed and why), the activation index
// activation.json (ordered, host-resolved, absolute paths: what discovery
// reads, so nothing has to be scanned at run time), and what the
// integrations' StateWriters add (the IREE flagfiles runtime.flags and
// compiler.flags, runtime.index, compiler.json), all derived from the
// installed packages' manifests in activation order.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_STATE_H
#define IREEPKG_PKG_STATE_H

#include "ireepkg/manifest_schema/platform_facts.h"
#include "ireepkg/pkg/prefix/prefix.h"

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg {

inline constexpr const char *kInstalledFile = "installed.json";
inline constexpr const char *kActivationFile = "activation.json";
// Written by the integrations' StateWriters.
inline constexpr const char *kRuntimeFlagsFile = "runtime.flags";
inline constexpr const char *kRuntimeIndexBinary = "runtime.index";
inline constexpr const char *kCompilerIndexFile = "compiler.json";
inline constexpr const char *kCompilerFlagsFile = "compiler.flags";

/// "ireepkg <version>": the program writing the state now, as a
/// StateRecord names it.
std::string stateWriterName();

/// The state files an ireepkg wrote before it recorded them (a prefix
/// without a StateRecord): activation.json and the integrations' four.
std::vector<std::string> unrecordedStateFiles();

/// Whether `name` may be a state file a StateWriter writes (and a
/// transaction removes): a plain file name, not one of the files pkg itself
/// keeps in state/ (installed.json, the lock, the journal).
bool isStateFileName(std::string_view name);

std::string serializeInstalled(const InstalledState &state);
/// Lenient: unknown fields are warnings (a newer ireepkg may have written it).
Expected<InstalledState> parseInstalled(std::string_view text,
                                        const std::string &path,
                                        DiagnosticList &warnings);

/// Orders packages for activation: dependencies before dependents;
/// otherwise by position in `preferred` (a project's order), then by the
/// current order. Returns indices into `packages`.
std::vector<size_t>
activationOrder(const std::vector<InstalledPackage> &packages,
                const std::vector<std::string> &preferred);

/// One installed package with its manifest, in activation order.
struct ActivePackage {
  const InstalledPackage *package;
  const Manifest *manifest;
  std::string dir; ///< absolute final directory
  /// Where its files are while the state is generated, when not at `dir`
  /// yet (a package staged by the transaction in progress); "" = `dir`.
  std::string filesDir = {};
};

/// What a prefix's state is generated from.
struct StateContext {
  const std::string &prefix;
  const Platform &platform;
  const std::vector<ActivePackage> &active; ///< activation order
  const ProjectSettings &project;
  /// The prefix's CPU level (InstalledState::cpuLevel); "" = this CPU.
  std::string cpuLevel = {};
};

/// An integration's share of a prefix's state: its own state files and its
/// notes in activation.json. pkg knows this interface only;
/// compiler_integration (compiler.json, compiler.flags) and
/// runtime_integration (runtime.index, runtime.flags) implement it, and the
/// program registers them (registerStateWriter) before it changes or
/// verifies a prefix: pkg never includes the integrations.
class StateWriter {
public:
  virtual ~StateWriter();
  /// Adds this writer's files to `files` (name in state/ -> bytes). It may
  /// add to `activation` (the activation.json document, ordered) and
  /// `warnings`. An error stops the transaction (or verify) before anything
  /// is written.
  virtual Status write(const StateContext &context,
                       std::map<std::string, std::string> &files,
                       nlohmann::ordered_json &activation,
                       std::vector<Diagnostic> &warnings) const = 0;
};

/// Registers a writer for every later transaction and verification of this
/// process (once; in the order given). Not thread-safe: call at start-up.
void registerStateWriter(const StateWriter &writer);
/// The registered writers, in registration order.
const std::vector<const StateWriter *> &stateWriters();

struct GeneratedState {
  std::string activationJson;
  /// Every other state file (name in state/ -> bytes): the writers'.
  std::map<std::string, std::string> files;
  std::vector<Diagnostic> warnings; ///< plugins without a build, conflicts
};

/// Builds the activation index and runs the registered writers for
/// `platform`. Fails when no writer is registered: a transaction without
/// them would leave the integrations' state files stale.
Expected<GeneratedState> generateState(const std::string &prefix,
                                       const std::string &platform,
                                       const std::vector<ActivePackage> &active,
                                       const ProjectSettings &project = {},
                                       const std::string &cpuLevel = {});

/// One argument as LLVM's GNU-style response file tokenizer reads it.
std::string responseFileQuote(const std::string &arg);

/// The runtime library a plugin uses on a platform.
struct RuntimeLibraryChoice {
  std::string rel;       ///< relative to the package; "" when none
  bool embedded = false; ///< an embedded ELF (the IREE spec needs `embedded:`)
  /// When `rel` is "": why, e.g. "no build for linux-riscv64 (its FatELF
  /// file runtime/k.sos holds x86_64, aarch64)".
  std::string reason;
  /// When `rel` is "" although the plugin has a build for the platform:
  /// the platform fact (platform_facts.h) that stops it, which `reason`
  /// describes.
  const ireepkg_platform_fact_t *fact = nullptr;
};

/// The rule every reader of the prefix applies: an embedded-elf plugin uses
/// the architecture's own file, else its "fat" FatELF file if that holds an
/// image IREE loads on the architecture (the file's table is read from
/// `filesDir`, the package's files); a system-library plugin uses the
/// platform's file. A build IREE's runtime cannot call on the platform's
/// operating system (an open fact of platform_facts.h: embedded ELF on
/// Windows) is not used.
RuntimeLibraryChoice chooseRuntimeLibrary(const RuntimePlugin &plugin,
                                          const Platform &platform,
                                          const std::string &filesDir);

/// Why `plugin` of `manifest`, which has a build for `platform`, is not
/// activated there (`choice.fact`, from chooseRuntimeLibrary), and which of
/// the package's other runtime plugins is used there, if any: what install,
/// info and doctor say ("on windows, ... (iree-org/iree#12801; ...); the
/// package's system-library plugin "k_dll" is used there").
std::string stoppedPluginNote(const Manifest &manifest,
                              const RuntimePlugin &plugin,
                              const Platform &platform,
                              const RuntimeLibraryChoice &choice,
                              const std::string &filesDir);

/// A runtime plugin with builds for platforms whose IREE runtime cannot
/// call them (an open fact of platform_facts.h), where no other runtime
/// plugin of the package has a build either: what `pack` warns about.
struct UncalledPlugin {
  size_t plugin; ///< index into Manifest::runtimePlugins
  const ireepkg_platform_fact_t *fact;
  std::vector<Platform> platforms;
};
/// Every such plugin of `manifest`, whose files are in `filesDir`.
std::vector<UncalledPlugin> uncalledPlugins(const Manifest &manifest,
                                            const std::string &filesDir);

/// The architectures IREE can load from the FatELF file at `path` (see
/// fatelf::loadableArchs), or the reason it cannot be read.
Expected<std::vector<Arch>> fatElfArchitectures(const std::string &path);

/// The runtime library path a plugin uses on `platform` ("" if none), and
/// whether it is an embedded ELF (needs `embedded:`); `filesDir` as above.
std::string runtimeLibraryFor(const RuntimePlugin &plugin,
                              const Platform &platform, bool &embedded,
                              const std::string &filesDir);

} // namespace ireepkg

#endif
