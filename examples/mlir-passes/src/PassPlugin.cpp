//===- PassPlugin.cpp - The entry point MLIR tools look for ---------------===//
//
// `mlir-opt --load-pass-plugin=libmlir_tag_passes.so` opens this library,
// calls mlirGetPassPluginInfo(), checks the API version and then calls the
// registration callback, after which the passes can be named in
// --pass-pipeline.
//
//===----------------------------------------------------------------------===//

#include "TagPasses.h"

#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK
    __attribute__((visibility("default"))) ::mlir::PassPluginLibraryInfo
    mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "mlir-tag-passes", "0.1.0",
          [] { ireepkg::examples::registerTagPasses(); }};
}
