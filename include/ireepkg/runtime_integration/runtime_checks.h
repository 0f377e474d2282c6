//===- ireepkg/runtime_integration/runtime_checks.h - Pack checks ---------===//
//
// runtime_integration's checks of `pack`
// (ireepkg/pkg/checks/integration_checks.h): the declared imports of a
// package's runtime plugins, loaded in ireepkg-plugin-probe.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_RUNTIME_INTEGRATION_RUNTIME_CHECKS_H
#define IREEPKG_RUNTIME_INTEGRATION_RUNTIME_CHECKS_H

#include "ireepkg/pkg/checks/integration_checks.h"

namespace ireepkg {

/// The checks (one per process); register them with registerRuntimeChecks.
const RuntimeChecks &runtimeChecks();

} // namespace ireepkg

#endif // IREEPKG_RUNTIME_INTEGRATION_RUNTIME_CHECKS_H
