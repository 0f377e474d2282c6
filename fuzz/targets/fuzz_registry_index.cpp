//===- fuzz_registry_index.cpp - Fuzzes a registry's index/<name>.json ===//
//
// The bytes as a registry's index/<name>.json: JSON with positions (JsonDocument),
// then the format's checks, strict (pack, lock, manifest check) and lenient
// (reading what a newer tool wrote).
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/formats.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto doc = JsonDocument::parse(fuzz::bytes(data, size), "index/fuzz.json");
  if (!doc)
    return 0;
  for (bool strict : {true, false}) {
    DiagnosticList diags;
    auto parsed = parseRegistryIndex(*doc, ParseOptions{strict}, diags);
    (void)parsed;
  }
  return 0;
}
