// @IDENT@.cpp - an MLIR pass plugin with one pass, `@NAME@-count-ops`:
// records the number of operations in each func.func as the attribute
// `@IDENT@.op_count`. mlir-opt loads it with --load-pass-plugin=.

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Support/Compiler.h"

#include <cstdint>

using namespace mlir;

namespace {

struct CountOpsPass
    : public PassWrapper<CountOpsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountOpsPass)

  StringRef getArgument() const final { return "@NAME@-count-ops"; }
  StringRef getDescription() const final {
    return "Record the number of operations of each func.func as "
           "@IDENT@.op_count";
  }

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    int64_t count = 0;
    function.getBody().walk([&](Operation *) { ++count; });
    function->setAttr("@IDENT@.op_count",
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       count));
  }
};

} // namespace

// The entry point MLIR tools look up in a pass plugin.
extern "C" LLVM_ATTRIBUTE_WEAK
    __attribute__((visibility("default"))) ::mlir::PassPluginLibraryInfo
    mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "@NAME@", "0.1.0",
          [] { PassRegistration<CountOpsPass>(); }};
}
