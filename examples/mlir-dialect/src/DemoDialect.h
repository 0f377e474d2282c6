//===- DemoDialect.h - The ireepkg_demo dialect -----------------*- C++ -*-===//
//
// Declarations generated from DemoOps.td by mlir-tblgen (see the package's
// CMakeLists.txt), and the function the plugin entry point calls.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_EXAMPLES_MLIR_DIALECT_DEMODIALECT_H
#define IREEPKG_EXAMPLES_MLIR_DIALECT_DEMODIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "DemoOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "DemoOps.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace ireepkg::demo {

/// Adds the ireepkg_demo dialect to `registry`.
void registerDemoDialect(mlir::DialectRegistry &registry);

} // namespace ireepkg::demo

#endif
