//===- ireepkg/compiler_integration/compiler_checks.h - Pack, install -----===//
//
// compiler_integration's checks of `pack` and `install`
// (ireepkg/pkg/checks/integration_checks.h): hook pipelines with MLIR and
// IREE (mlir_check.h), and the info of dynamic compiler plugins
// (compiler_plugin_info.h).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_COMPILER_INTEGRATION_COMPILER_CHECKS_H
#define IREEPKG_COMPILER_INTEGRATION_COMPILER_CHECKS_H

#include "ireepkg/pkg/checks/integration_checks.h"

namespace ireepkg {

/// The checks (one per process); register them with registerCompilerChecks.
const CompilerChecks &compilerChecks();

} // namespace ireepkg

#endif // IREEPKG_COMPILER_INTEGRATION_COMPILER_CHECKS_H
