//===- ireepkg/pkg/checks/pipeline_report.h - What hook checks found -----===//
//
// The reports of the checks of hook pipelines and MLIR plugins that `pack`,
// `install` and `doctor` run: pkg keeps them in PackResult and
// InstallReport and the CLI prints them, while the checks themselves are
// compiler_integration's (mlir_check.h, iree_pipeline_check.h), called
// through the registered CompilerChecks (integration_checks.h).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_PIPELINE_REPORT_H
#define IREEPKG_PKG_PIPELINE_REPORT_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

/// What IREE said of one hook's pipeline.
struct IreePipelineCheck {
  Location where;
  HookPoint point = HookPoint::Preprocessing;
  /// The pipeline as iree-opt was given it ("" when not run).
  std::string pipeline;
  /// "ok"; "invalid" (IREE cannot build it); "failed" (IREE built it, but
  /// it failed on an empty module: a warning); "not-checked" (`reason`).
  std::string status;
  std::string message; ///< IREE's words, or why it was not checked
};

struct IreePipelineReport {
  bool ran = false;
  std::string tool;    ///< the iree-opt that was run
  std::string skipped; ///< why it did not run, when it did not
  std::vector<IreePipelineCheck> pipelines;
};

nlohmann::json toJson(const IreePipelineReport &report);

/// What became of one pipeline.
struct PipelineCheck {
  Location where;
  HookPoint point = HookPoint::Preprocessing;
  /// "checked": MLIR parsed all of it; "partial": the passes MLIR knows were
  /// checked, the others (unknownPasses) were not; "not-checked": MLIR knows
  /// none of its passes; "syntax-only": the checker did not run.
  std::string status;
  std::vector<std::string> unknownPasses;
  size_t errors = 0;
};

/// What became of one plugin library.
struct PassPluginLoad {
  std::string path;
  bool dialect = false; ///< a dialect plugin (else a pass plugin)
  bool loaded = false;
  std::string name, version;         ///< as the plugin says
  std::vector<std::string> passes;   ///< the passes and pipelines it added
  std::vector<std::string> dialects; ///< the dialects it registered
  std::string error;
};

struct MlirCheckReport {
  bool ran = false;        ///< the checker ran
  std::string checker;     ///< its path
  std::string mlirVersion; ///< of the libMLIR it links
  std::string skipped;     ///< why it did not run, when it did not
  std::vector<PipelineCheck> pipelines;
  std::vector<PassPluginLoad> plugins;
  /// The same pipelines checked against IREE (checkPackagePipelines only).
  IreePipelineReport iree;
};

nlohmann::json toJson(const MlirCheckReport &report);

/// How MLIR's pass pipeline parser starts the errors it reports.
inline constexpr std::string_view kMlirPipelineParser =
    "MLIR Textual PassPipeline Parser:";

/// The line of an iree-compile's stderr by which IREE says that it could
/// not parse a pass pipeline it was given (it then goes on without it and
/// may exit with 0), or nullopt.
std::optional<std::string> ireePipelineErrorLine(std::string_view stderrText);

} // namespace ireepkg

#endif // IREEPKG_PKG_PIPELINE_REPORT_H
