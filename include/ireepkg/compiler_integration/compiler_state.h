//===- ireepkg/compiler_integration/compiler_state.h ----------------------===//
//
// The compiler side of a prefix's state.
//
// compiler_integration's StateWriter (ireepkg/pkg/prefix/state.h): in every
// transaction it writes state/compiler.json (the compiler side of every
// active manifest, already checked, for `flags compiler`, `exec` and the
// embedding API) and state/compiler.flags (an LLVM response file for
// `iree-compile @file`), and puts what it left out of the flags, and why,
// into activation.json's "compiler"/"notes".
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_COMPILER_INTEGRATION_COMPILER_STATE_H
#define IREEPKG_COMPILER_INTEGRATION_COMPILER_STATE_H

#include "ireepkg/pkg/prefix/state.h"

namespace ireepkg {

/// The writer (one per process); register it with registerStateWriter.
const StateWriter &compilerStateWriter();

} // namespace ireepkg

#endif
