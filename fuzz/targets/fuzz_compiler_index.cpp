//===- fuzz_compiler_index.cpp - Fuzzes state/compiler.json ===//
//
// The bytes as a prefix's compiler index (decodeCompilerIndex), which
// `flags compiler`, `exec` and the embedded compiler read; an index that
// decodes is turned into compiler flags (buildCompilerConfig) with the
// project settings it records, as `flags compiler` does.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/compiler_integration/compiler_index.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto index = decodeCompilerIndex(fuzz::bytes(data, size), "compiler.json");
  if (!index)
    return 0;
  CompilerConfigRequest request;
  request.projectValues = index->project.values;
  request.choose = index->project.choose;
  request.deferDynamic = true;
  if (auto platform = Platform::parse(index->platform))
    request.platform = *platform;
  for (CompilerTool tool : {CompilerTool::IreeCompile, CompilerTool::MlirOpt}) {
    request.tool = tool;
    (void)buildCompilerConfig(index->packages, request);
  }
  return 0;
}
