//===- ireepkg/compiler_integration/mlir_check.h - Pipelines by MLIR ------===//
//
// The load check of MLIR pass and dialect plugins, and the full check of
// hook pipelines (preprocessing, mlir-pipeline and
// executable-preprocessing), after the syntax check of ireepkg/pipeline.h:
// every pass that MLIR knows, from MLIR itself (mlir::registerAllPasses) or
// from an MLIR pass plugin that is loaded, is parsed by MLIR's own pass
// pipeline parser, which checks its options, their values and its nesting.
// Passes MLIR does not know (IREE's own, or those of plugins that are not
// installed) are left out, and their pipeline reported as not (or only
// partially) checked; that is not an error.
//
// A plugin of a checked package that names other MLIR tools than mlir-opt
// ("tools") is also loaded into each of them found on PATH (an empty input,
// a child process): one that fails with it loaded is an error at its
// "tools" entry, a named tool not found a warning.
//
// The work is done by the `ireepkg-mlir-check` tool (links libMLIR) run as a
// child process, so that the ireepkg binary links no LLVM or MLIR, and a
// plugin that crashes or hangs cannot take ireepkg down. The tool is found
// beside the running executable, or through IREEPKG_MLIR_CHECK (a path, or
// "off" to skip the check). When it is missing, pipelines are checked for
// syntax only and a warning says so. IREEPKG_MLIR_CHECK_TIMEOUT sets the
// time limit of each step (loading a plugin, checking a pipeline) in
// seconds (default 30).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_MLIR_CHECK_H
#define IREEPKG_MLIR_CHECK_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/compiler_integration/iree_pipeline_check.h"
#include "ireepkg/pkg/checks/integration_checks.h"
#include "ireepkg/pkg/checks/pipeline_report.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ireepkg {

/// One hook's pipeline, and where it is written.
struct PipelineSource {
  std::string text;
  HookPoint point = HookPoint::Preprocessing;
  /// Of the pipeline's string value: file, line:column, JSON pointer,
  /// package, archive member.
  Location where;
};

/// An MLIR pass or dialect plugin library to load (and so check) before the
/// pipelines are checked.
struct PassPluginSource {
  std::string path;  ///< absolute
  std::string label; ///< as messages name it (the manifest's path)
  Location where;    ///< of its library entry in the manifest
  /// It belongs to a package being checked: a plugin that cannot be loaded
  /// is an error (otherwise a warning).
  bool checked = false;
  /// An mlir-dialect-plugin (mlirGetDialectPluginInfo) rather than an
  /// mlir-pass-plugin (mlirGetPassPluginInfo).
  bool dialect = false;
};

/// Loads `plugins` with MLIR's checks (each in the checker's worker: one
/// that fails, crashes or hangs is that plugin's failure), then checks
/// `pipelines` (which passed the syntax check) with MLIR. Runs the checker
/// when there is a pipeline or a `checked` plugin. Every problem lands in
/// `diags`: errors in pipelines (with the column in the pipeline text),
/// plugins that cannot be loaded (errors or warnings, see
/// PassPluginSource::checked), a missing checker (warning) and unknown
/// passes close to a known name (warning). The Error is for when the
/// checker itself fails.
Expected<MlirCheckReport>
checkPipelinesWithMlir(const std::vector<PipelineSource> &pipelines,
                       const std::vector<PassPluginSource> &plugins,
                       DiagnosticList &diags);

/// The checker's request for `pipelines` and `plugins` (see
/// compiler_integration/tools/mlir_check.cpp), and the reading of its
/// report into `report` and `diags` (exposed for tests).
nlohmann::json mlirCheckRequest(const std::vector<PipelineSource> &pipelines,
                                const std::vector<PassPluginSource> &plugins,
                                double stepTimeoutSeconds);
Status readMlirCheckOutput(std::string_view output,
                           const std::vector<PipelineSource> &pipelines,
                           const std::vector<PassPluginSource> &plugins,
                           MlirCheckReport &report, DiagnosticList &diags);

/// Checks the pipelines of the packages marked `check`, with the MLIR pass
/// and dialect plugins of all `packages` (in order) for `platform` loaded
/// when `loadPlugins` and `platform` is the host's. Every MLIR plugin of a
/// package marked `check` is load-checked, whether or not there are
/// pipelines; the other packages' plugins are loaded only for pipelines.
/// Then the pipelines MLIR found no error in are checked against IREE
/// (iree_pipeline_check.h), with the IREE dynamic plugins of all
/// `packages` loaded; a pass IREE does not know is only a warning when a
/// checked package depends on a package that is not in `packages`.
/// `authoring` (pack): a missing IREE is a warning even when no IREE
/// compiler is found at all (at install, that is said elsewhere).
Expected<MlirCheckReport>
checkPackagePipelines(const std::vector<PipelineCheckPackage> &packages,
                      const Platform &platform, bool loadPlugins,
                      DiagnosticList &diags, bool authoring = false);

} // namespace ireepkg

#endif // IREEPKG_MLIR_CHECK_H
