//===- pkg/src/checks/pipeline_check.h - Hook pipelines at pack, install --===//
//
// The checks that belong to the integrations, as `pack` and `install` run
// them through the registered CompilerChecks and RuntimeChecks
// (integration_checks.h); each is an error when it is not registered.
//
// The load check of MLIR plugins and the full check of hook pipelines with
// MLIR's own parser (see ireepkg/compiler_integration/mlir_check.h): pack
// loads the package's own MLIR pass and dialect plugins for the host (with
// or without pipelines) and checks its pipelines with them; install loads
// the incoming packages' MLIR plugins and checks their pipelines with the
// plugins of the prefix as it will be (installed and incoming), before the
// transaction commits.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_PIPELINE_CHECK_H
#define IREEPKG_PKG_PIPELINE_CHECK_H

#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/checks/integration_checks.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <map>
#include <string>
#include <vector>

namespace ireepkg {

/// Pack: the pipelines of the manifest in `doc`, with the package's MLIR pass
/// plugin for the host loaded when `loadPlugins`. Problems land in `diags`.
Expected<MlirCheckReport> checkPackPipelines(const Manifest &manifest,
                                             const JsonDocument &doc,
                                             const std::string &dir,
                                             bool loadPlugins,
                                             DiagnosticList &diags);

/// Pack: the declared imports of the runtime plugins of `m`
/// (runtime_integration), then the info of its dynamic compiler plugins
/// (compiler_integration). Problems land in `diags`.
void checkPackPlugins(const Manifest &m, const JsonDocument &doc,
                      const PackageFileOf &fileOf, DiagnosticList &diags);

/// A package extracted by the install in progress.
struct StagedPackage {
  std::string dir;     ///< its staging directory
  std::string archive; ///< where it came from
  const std::string *manifestText = nullptr;
};

/// Install: the pipelines of the `staged` packages, with the MLIR pass
/// plugins of every package of the prefix as it will be (`packages`, in
/// activation order; staged ones from their staging directory). Errors come
/// back as one Error; warnings go to `reporter`.
Expected<MlirCheckReport>
checkInstallPipelines(const std::string &prefix,
                      const std::vector<InstalledPackage> &packages,
                      const std::map<std::string, Manifest> &manifests,
                      const std::map<std::string, StagedPackage> &staged,
                      const Platform &platform, Reporter &reporter);

} // namespace ireepkg

#endif // IREEPKG_PKG_PIPELINE_CHECK_H
