//===- compiler_integration/src/compiler_checks.cpp - Pack, install -------===//
#include "ireepkg/compiler_integration/compiler_checks.h"
#include "ireepkg/compiler_integration/compiler_plugin_info.h"
#include "ireepkg/compiler_integration/mlir_check.h"

namespace ireepkg {

namespace {

class CompilerChecksImpl final : public CompilerChecks {
public:
  Expected<MlirCheckReport>
  checkPipelines(const std::vector<PipelineCheckPackage> &packages,
                 const Platform &platform, bool loadPlugins,
                 DiagnosticList &diags, bool authoring) const override {
    return checkPackagePipelines(packages, platform, loadPlugins, diags,
                                 authoring);
  }
  void checkDynamicPlugins(const Manifest &m, const JsonDocument &doc,
                           const PackageFileOf &fileOf,
                           DiagnosticList &diags) const override {
    checkDynamicCompilerPlugins(m, doc, fileOf, diags);
  }
};

} // namespace

const CompilerChecks &compilerChecks() {
  static const CompilerChecksImpl checks;
  return checks;
}

} // namespace ireepkg
