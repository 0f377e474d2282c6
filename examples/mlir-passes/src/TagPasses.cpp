//===- TagPasses.cpp - ireepkg-tag-functions and ireepkg-count-ops --------===//
//
// See TagPasses.h for what the passes do. They are written without TableGen
// (PassWrapper and hand-declared options) to keep the example to two files.
//
//===----------------------------------------------------------------------===//

#include "TagPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

using namespace mlir;

namespace ireepkg::examples {
namespace {

//===----------------------------------------------------------------------===//
// ireepkg-tag-functions
//===----------------------------------------------------------------------===//

struct TagFunctionsPass
    : public PassWrapper<TagFunctionsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TagFunctionsPass)

  TagFunctionsPass() = default;
  // Options are not copyable; the pass manager copies their values with
  // copyOptionValuesFrom() after cloning.
  TagFunctionsPass(const TagFunctionsPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "ireepkg-tag-functions"; }
  StringRef getDescription() const final {
    return "Append a tag to the ireepkg.tags attribute of every func.func";
  }

  LogicalResult initialize(MLIRContext *context) override {
    if (tag.empty())
      return emitError(UnknownLoc::get(context))
             << "ireepkg-tag-functions: option 'tag' must not be empty";
    return success();
  }

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<Attribute> tags;
    if (Attribute existing = function->getAttr(kTagsAttrName)) {
      auto array = dyn_cast<ArrayAttr>(existing);
      if (!array) {
        function.emitOpError() << "has an '" << kTagsAttrName
                               << "' attribute that is not an array";
        return signalPassFailure();
      }
      tags.append(array.begin(), array.end());
    }
    tags.push_back(StringAttr::get(context, tag.getValue()));
    function->setAttr(kTagsAttrName, ArrayAttr::get(context, tags));
  }

  Option<std::string> tag{*this, "tag",
                          llvm::cl::desc("The tag to append (not empty)"),
                          llvm::cl::init("ireepkg")};
};

//===----------------------------------------------------------------------===//
// ireepkg-count-ops
//===----------------------------------------------------------------------===//

struct CountOpsPass
    : public PassWrapper<CountOpsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountOpsPass)

  CountOpsPass() = default;
  CountOpsPass(const CountOpsPass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "ireepkg-count-ops"; }
  StringRef getDescription() const final {
    return "Record the number of operations in each func.func as "
           "ireepkg.op_count";
  }

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    int64_t count = 0;
    function.getBody().walk([&](Operation *op) {
      if (dialect.empty() || op->getName().getDialectNamespace() == dialect)
        ++count;
    });
    function->setAttr(
        kOpCountAttrName,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), count));
    // Only an attribute changed: every analysis is still valid.
    markAllAnalysesPreserved();
  }

  Option<std::string> dialect{
      *this, "dialect",
      llvm::cl::desc("Count only operations of this dialect namespace "
                     "(default: all operations)"),
      llvm::cl::init("")};
};

/// Registers pass T unless its argument is taken already.
template <typename T> void registerOnce() {
  T probe;
  if (PassInfo::lookup(probe.getArgument()))
    return;
  PassRegistration<T>();
}

} // namespace

void registerTagPasses() {
  registerOnce<TagFunctionsPass>();
  registerOnce<CountOpsPass>();
}

} // namespace ireepkg::examples
