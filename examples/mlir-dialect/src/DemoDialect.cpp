//===- DemoDialect.cpp - The ireepkg_demo dialect -------------------------===//

#include "DemoDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace ireepkg::demo;

#include "DemoOpsDialect.cpp.inc"

void IreepkgDemoDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "DemoOps.cpp.inc"
      >();
}

LogicalResult MarkerOp::verify() {
  if (getLabel().empty())
    return emitOpError("label must not be empty");
  return success();
}

#define GET_OP_CLASSES
#include "DemoOps.cpp.inc"

void ireepkg::demo::registerDemoDialect(DialectRegistry &registry) {
  registry.insert<IreepkgDemoDialect>();
}
