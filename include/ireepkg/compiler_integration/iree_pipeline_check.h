//===- ireepkg/compiler_integration/iree_pipeline_check.h - By IREE -------===//
//
// The check of hook pipelines against the IREE in use. IREE's compiler
// registers its own passes, and only some of MLIR's; the MLIR check
// (mlir_check.h) knows MLIR's passes and none of IREE's. `iree-compile`
// 3.13 prints a pass-pipeline parse error for a
// --iree-preprocessing-pass-pipeline= it cannot parse (an unknown pass, a
// bad option) and then exits with 0, compiling without the pipeline: a
// broken hook would go unnoticed. So `pack`, `install` and `doctor` run
// IREE's `iree-opt` (found on PATH, then in $VIRTUAL_ENV/bin) on an empty
// module with each preprocessing pipeline (and each executable-preprocessing
// pipeline written as `builtin.module(...)`), in a child process with a
// time limit, and `exec` fails when iree-compile reports a pipeline error
// although it exits with 0 (ireePipelineErrorLine).
//
// IREEPKG_IREE_OPT names the iree-opt to run (a path or a name on PATH), or
// is "off" to skip the check. Without iree-opt the pipelines are not checked
// against IREE, and a warning says so; with load checks off
// (IREEPKG_LOAD_CHECKS=0) the check is not run. The IREE dynamic compiler
// plugins given are loaded into iree-opt
// (--iree-load-plugin=), since their passes may be named.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_IREE_PIPELINE_CHECK_H
#define IREEPKG_IREE_PIPELINE_CHECK_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/checks/pipeline_report.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

struct PipelineSource;

/// Options of checkPipelinesWithIree.
struct IreePipelineCheckOptions {
  /// IREE dynamic compiler plugin libraries to load into iree-opt.
  std::vector<std::string> dynamicPlugins;
  /// A pass IREE does not know may come from a dependency that is not part
  /// of the check (at pack): that is a warning, not an error.
  bool passesMayComeFromDependencies = false;
  /// Warn of a missing iree-opt even when no IREE compiler is found at all
  /// (at pack; elsewhere that case is said by what needs IREE).
  bool warnWithoutIree = false;
  /// The time limit of each iree-opt run, in seconds.
  double timeoutSeconds = 60;
  /// The iree-opt to run; "" for IREEPKG_IREE_OPT, else iree-opt on PATH,
  /// then in $VIRTUAL_ENV/bin.
  std::string ireeOpt;
};

/// Checks the preprocessing and executable-preprocessing pipelines of
/// `pipelines` (the others are left out) with IREE's iree-opt. Problems
/// land in `diags` (errors for pipelines IREE cannot build, warnings for
/// those it could not run on an empty module and for a missing iree-opt);
/// the Error is for when ireepkg cannot run the tool at all.
Expected<IreePipelineReport>
checkPipelinesWithIree(const std::vector<PipelineSource> &pipelines,
                       const IreePipelineCheckOptions &options,
                       DiagnosticList &diags);

} // namespace ireepkg

#endif // IREEPKG_IREE_PIPELINE_CHECK_H
