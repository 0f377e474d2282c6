// @IDENT@Dialect.cpp - the @IDENT@ dialect (src/@IDENT@Ops.td) and the entry
// point that makes it an MLIR dialect plugin (--load-dialect-plugin=).

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Support/Compiler.h"

#include "@IDENT@OpsDialect.h.inc"
#define GET_OP_CLASSES
#include "@IDENT@Ops.h.inc"

using namespace mlir;

#include "@IDENT@OpsDialect.cpp.inc"

void @IDENT@::PluginDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "@IDENT@Ops.cpp.inc"
      >();
}

LogicalResult @IDENT@::MarkerOp::verify() {
  if (getLabel().empty())
    return emitOpError("label must not be empty");
  return success();
}

#define GET_OP_CLASSES
#include "@IDENT@Ops.cpp.inc"

// The entry point MLIR tools look up in a dialect plugin.
extern "C" LLVM_ATTRIBUTE_WEAK
    __attribute__((visibility("default"))) ::mlir::DialectPluginLibraryInfo
    mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "@NAME@", "0.1.0",
          [](DialectRegistry *registry) {
            registry->insert<@IDENT@::PluginDialect>();
          }};
}
