//===- fuzz_pipeline.cpp - Fuzzes MLIR pass pipeline text ===//
//
// The bytes as a hook's `pipeline` (parsePassPipeline). A pipeline that
// parses prints as canonical text that parses again and prints the same;
// composing it with another fragment gives a pipeline that parses.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/pipeline.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  auto p = parsePassPipeline(text);
  if (!p) {
    (void)p.error().str();
    return 0;
  }
  (void)pipelinePassNames(*p);
  (void)p->anchor();
  for (const PipelineElement &e : p->elements)
    for (const PassOption &o : e.options)
      (void)o.literal();
  std::string printed = p->str();
  auto again = parsePassPipeline(printed);
  if (!again)
    fuzz::invariantFailed("a pipeline's canonical text does not parse",
                          printed + " (" + again.error().str() + ")");
  if (again->str() != printed)
    fuzz::invariantFailed("canonical pipeline text is not stable",
                          printed + " -> " + again->str());
  std::vector<std::string> fragments = {std::string(text), "canonicalize"};
  auto composed = composePassPipelines(fragments);
  if (!composed)
    fuzz::invariantFailed("composing a valid pipeline failed", printed);
  if (!parsePassPipeline(*composed))
    fuzz::invariantFailed("a composed pipeline does not parse", *composed);
  return 0;
}
