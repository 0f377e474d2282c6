//===- DialectPlugin.cpp - The entry point MLIR tools look for ------------===//
//
// `mlir-opt --load-dialect-plugin=libmlir_demo_dialect.so` opens this
// library, calls mlirGetDialectPluginInfo(), checks the API version and then
// hands the callback its DialectRegistry, before the input is parsed.
//
//===----------------------------------------------------------------------===//

#include "DemoDialect.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK
    __attribute__((visibility("default"))) ::mlir::DialectPluginLibraryInfo
    mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "mlir-demo-dialect", "0.1.0",
          [](mlir::DialectRegistry *registry) {
            ireepkg::demo::registerDemoDialect(*registry);
          }};
}
