//===- ireepkg/pkg/checks/integration_checks.h - Checks the program adds --===//
//
// The checks of `pack` and `install` that belong to an integration, as pkg
// calls them. pkg knows this interface only; compiler_integration (hook
// pipelines with MLIR and IREE, dynamic compiler plugins' info:
// compilerChecks()) and runtime_integration (declared runtime imports:
// runtimeChecks()) implement it, and the program registers them at
// start-up, as it does the StateWriters (prefix/state.h): pkg never
// includes the integrations. A check that is needed but not registered is
// an error that says so.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_INTEGRATION_CHECKS_H
#define IREEPKG_PKG_INTEGRATION_CHECKS_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/pkg/checks/pipeline_report.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {

/// A package whose hooks and plugins take part in a check.
struct PipelineCheckPackage {
  std::string name;
  const Manifest *manifest = nullptr;
  std::string dir; ///< where its files are (installed, staged, or packed)
  /// Its manifest, for line:column (without it, locations have the JSON
  /// pointer only). `file` names it in messages when there is no document.
  const JsonDocument *document = nullptr;
  std::string file;
  /// Its pipelines are checked, and a plugin of it that cannot be loaded is
  /// an error. Other packages only provide their plugins.
  bool check = false;
};

/// Maps a manifest path to the file to load.
using PackageFileOf = std::function<std::string(const std::string &)>;

/// compiler_integration's checks.
class CompilerChecks {
public:
  virtual ~CompilerChecks();
  /// checkPackagePipelines (ireepkg/compiler_integration/mlir_check.h).
  virtual Expected<MlirCheckReport>
  checkPipelines(const std::vector<PipelineCheckPackage> &packages,
                 const Platform &platform, bool loadPlugins,
                 DiagnosticList &diags, bool authoring) const = 0;
  /// checkDynamicCompilerPlugins
  /// (ireepkg/compiler_integration/compiler_plugin_info.h).
  virtual void checkDynamicPlugins(const Manifest &m, const JsonDocument &doc,
                                   const PackageFileOf &fileOf,
                                   DiagnosticList &diags) const = 0;
};

/// runtime_integration's checks.
class RuntimeChecks {
public:
  virtual ~RuntimeChecks();
  /// checkDeclaredImports (runtime_integration/src/import_check.h).
  virtual void checkImports(const Manifest &m, const JsonDocument &doc,
                            const PackageFileOf &fileOf,
                            DiagnosticList &diags) const = 0;
};

/// Register the checks for every later pack and install of this process
/// (the last one registered holds). Not thread-safe: call at start-up.
void registerCompilerChecks(const CompilerChecks &checks);
void registerRuntimeChecks(const RuntimeChecks &checks);

/// The registered checks, or nullptr.
const CompilerChecks *registeredCompilerChecks();
const RuntimeChecks *registeredRuntimeChecks();

/// Whether pack may load the package's code (loadChecksEnabled); a value
/// it cannot read is an error in `diags` and nullopt.
std::optional<bool> packLoadChecks(DiagnosticList &diags);

/// ireepkg-plugin-probe, which loads plugins for both integrations'
/// checks: $IREEPKG_PROBE, else the one beside this executable (which may
/// not exist: running it then says so).
std::string findPluginProbe();

} // namespace ireepkg

#endif // IREEPKG_PKG_INTEGRATION_CHECKS_H
