//===- fuzz_lock.cpp - Fuzzes plugins.lock.json ===//
//
// The bytes as plugins.lock.json: JSON with positions (JsonDocument),
// then the format's checks, strict (pack, lock, manifest check) and lenient
// (reading what a newer tool wrote).
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/project/project.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto doc = JsonDocument::parse(fuzz::bytes(data, size), "plugins.lock.json");
  if (!doc)
    return 0;
  for (bool strict : {true, false}) {
    DiagnosticList diags;
    auto parsed = parseLockfile(*doc, ParseOptions{strict}, diags);
    // A lockfile that reads back must also write.
    if (!diags.hasErrors())
      (void)project::serializeLockfile(parsed);
  }
  return 0;
}
