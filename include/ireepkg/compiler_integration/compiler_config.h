//===- ireepkg/compiler_integration/compiler_config.h ---------------------===//
//
// Compiler configuration.
//
// Turns the active compiler plugins of a prefix into compiler flags, in
// activation order:
//
//  - options: values from plugins.json and from `--set flag=value`, checked
//    against each plugin's option schema before any compiler runs, defaults
//    applied, unknown options refused with a suggestion;
//  - hooks: preprocessing fragments composed into one
//    --iree-preprocessing-pass-pipeline=builtin.module(...); repeatable hooks
//    in order; single-valued hooks (transform-spec, pdl-spec, tuning-spec,
//    transform-library, input-type) a conflict unless plugins.json chooses;
//    file hooks as absolute paths; executable-objects for the target's
//    architecture;
//  - plugins: iree-static -> --iree-plugin=<id>; iree-dynamic ->
//    --iree-load-plugin=<path> and --iree-plugin=<id> when the compiler can
//    load plugins (probed) and the library's id and plugin ABI hash (read
//    in ireepkg-plugin-probe, compiler_plugin_info.h) are the manifest's
//    and the compiler's; never for Windows, where IREE loads none;
//    mlir-pass-plugin / mlir-dialect-plugin -> --load-pass-plugin= /
//    --load-dialect-plugin= for MLIR tools.
//
// Every flag remembers the package that contributed it, so an error from
// the compiler can be reported against the package.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_COMPILER_CONFIG_H
#define IREEPKG_COMPILER_CONFIG_H

#include "ireepkg/compiler_integration/tuning_specs.h"
#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ireepkg {

enum class CompilerTool { IreeCompile, IreeOpt, MlirOpt };
std::optional<CompilerTool> parseCompilerTool(std::string_view name);
std::string_view compilerToolName(CompilerTool tool);

/// What a compiler binary can do, as far as ireepkg cares.
struct CompilerCapabilities {
  bool known = false;          ///< false: not probed (no compiler given)
  std::string path;            ///< the binary that was probed
  std::string version;         ///< e.g. "3.13.0rc20261016"
  bool loadsPlugins = false;   ///< has --iree-load-plugin
  bool pluginIdSpelling = false; ///< --iree-load-plugin=<id>=<path>
  /// The plugin API header hash this compiler accepts, in hex ("" when
  /// unknown), and where it was learned: the compiler's own refusal of a
  /// library with the hash 0 (libireepkg_compiler_abi_sentinel.so), else
  /// the table of IREE versions (compiler_plugin_abi.h).
  std::string pluginAbiHash;
  std::string pluginAbiHashFrom;
};

/// Why `compiler` would not load the iree-dynamic plugin library `path`
/// declared with id `id` ("" when nothing is known against it): its info
/// cannot be read (in ireepkg-plugin-probe, in the layout of the
/// compiler's IREE version), it reports another id, or it was built
/// against other plugin API headers (both hashes named).
std::string dynamicPluginProblem(const std::string &id, const std::string &path,
                                 const CompilerCapabilities &compiler);

/// Runs `<tool> --version` and `<tool> --help` once per binary (cached by
/// path, size and modification time under the package cache directory).
Expected<CompilerCapabilities> probeCompiler(const std::string &toolPath);

/// A package taking part, in activation order.
struct ActivatedPackage {
  std::string name;
  Version version;
  std::string dir; ///< absolute installed directory
  const Manifest *manifest = nullptr;
};

struct CompilerConfigRequest {
  CompilerTool tool = CompilerTool::IreeCompile;
  Platform platform = hostPlatform();
  /// plugins.json: package name -> flag -> value.
  std::map<std::string, std::map<std::string, nlohmann::json>> projectValues;
  /// `--set flag=value`, in order (later wins).
  std::vector<std::pair<std::string, std::string>> sets;
  /// plugins.json "choose": hook point -> package.
  std::map<std::string, std::string> choose;
  /// The compiler that will run; unknown means iree-dynamic plugins cannot
  /// be activated (an error names them).
  CompilerCapabilities compiler;
  /// Leave out what cannot be decided without a compiler (install time):
  /// iree-dynamic plugins become a note instead of an error.
  bool deferDynamic = false;
  /// What the compile is for (`flags compiler --target`, or what `exec`
  /// reads from the user's flags): it chooses the tuning specs.
  std::vector<CompileTarget> targets;
  /// The iree-opt that links tuning specs; "" for the one beside
  /// `compiler.path`.
  std::string ireeOpt;
};

struct CompilerFlag {
  std::string name;    ///< without dashes, e.g. "iree-plugin"
  std::string value;
  std::string package; ///< who contributed it ("" for composed ones)
  /// Process-global in IREE's embedding API (only through
  /// ireeCompilerSetupGlobalCL, not per session).
  bool global = false;
  /// Depends on the compile (its target, its compiler), so it is not in
  /// the prefix's compiler.flags: the linked tuning spec.
  bool perCompile = false;

  std::string text() const { return "--" + name + "=" + value; }
};

struct CompilerConfig {
  std::vector<CompilerFlag> flags;
  std::vector<Diagnostic> notes; ///< things left out, and why
};

/// Builds the configuration. Errors (invalid option values, unknown
/// options, hook conflicts, plugins the compiler cannot load) come back as
/// one Error with every diagnostic.
Expected<CompilerConfig>
buildCompilerConfig(const std::vector<ActivatedPackage> &packages,
                    const CompilerConfigRequest &request);

/// Is this flag process-global in IREE's embedding API (settable only
/// through ireeCompilerSetupGlobalCL, not per session)?
bool isGlobalCompilerFlag(std::string_view name);

class Reporter;

/// The configuration of an installed prefix: its packages in activation
/// order with the project settings it recorded, for `request.tool` (its
/// platform and project fields are filled in here). When a package has an
/// iree-dynamic plugin and `request.compiler` is not known yet,
/// `findCompiler` (if given) names the compiler binary to probe.
Expected<CompilerConfig>
buildPrefixCompilerConfig(const std::string &prefix,
                          CompilerConfigRequest request, Reporter &reporter,
                          const std::function<std::string()> &findCompiler = {});

/// The configuration of one package as its tests run it (package_test.h):
/// the package at `dir` (its `manifest`; a package directory, or one
/// installed) activated after its dependencies installed in `prefix`, in
/// activation order, with the prefix's project settings for them: what
/// `flags compiler` gives for a prefix holding just these packages. The
/// prefix is read only when it exists. A dependency not installed there is
/// an error (ErrorCode::NotFound).
Expected<CompilerConfig> buildPackageCompilerConfig(
    const std::string &prefix, const std::string &dir, const Manifest &manifest,
    CompilerConfigRequest request, Reporter &reporter,
    const std::function<std::string()> &findCompiler = {});

} // namespace ireepkg

#endif
