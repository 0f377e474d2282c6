//===- runtime_state.h - The runtime side of a prefix's state --*- C++ -*-===//
//
// runtime_integration's StateWriter (ireepkg/pkg/state.h): in every
// transaction it writes state/runtime.index (the binary index
// libireepkg_runtime maps; runtime_index.h) and state/runtime.flags (the
// prefix platform's --executable_plugin= flags for IREE's --flagfile=).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_RUNTIME_INTEGRATION_RUNTIME_STATE_H
#define IREEPKG_RUNTIME_INTEGRATION_RUNTIME_STATE_H

#include "ireepkg/pkg/state.h"

namespace ireepkg {

/// The writer (one per process); register it with registerStateWriter.
const StateWriter &runtimeStateWriter();

} // namespace ireepkg

#endif
