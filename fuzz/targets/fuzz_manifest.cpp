//===- fuzz_manifest.cpp - Fuzzes ireeplugin.json ===//
//
// The bytes as ireeplugin.json: JSON with positions (JsonDocument),
// then the format's checks, strict (pack, lock, manifest check) and lenient
// (reading what a newer tool wrote).
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/formats.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto doc = JsonDocument::parse(fuzz::bytes(data, size), "ireeplugin.json");
  if (!doc)
    return 0;
  for (bool strict : {true, false}) {
    DiagnosticList diags;
    auto parsed = parseManifest(*doc, ParseOptions{strict}, diags);
    if (!diags.hasErrors())
      (void)parsed.referencedPaths();
  }
  return 0;
}
