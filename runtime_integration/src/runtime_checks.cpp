//===- runtime_integration/src/runtime_checks.cpp - Pack checks -----------===//
#include "ireepkg/runtime_integration/runtime_checks.h"
#include "import_check.h"

namespace ireepkg {

namespace {

class RuntimeChecksImpl final : public RuntimeChecks {
public:
  void checkImports(const Manifest &m, const JsonDocument &doc,
                    const PackageFileOf &fileOf,
                    DiagnosticList &diags) const override {
    checkDeclaredImports(m, doc, fileOf, diags);
  }
};

} // namespace

const RuntimeChecks &runtimeChecks() {
  static const RuntimeChecksImpl checks;
  return checks;
}

} // namespace ireepkg
