//===- fuzz_snapshot.cpp - Fuzzes a registry's snapshot.json ===//
//
// The bytes as a registry's snapshot.json: JSON with positions (JsonDocument),
// then the format's checks, strict (pack, lock, manifest check) and lenient
// (reading what a newer tool wrote). And the fast path the registry client
// tries first (fast_index.h): a value only for a snapshot the checking parser
// reads with no diagnostic, and then the same value; a clean snapshot is left
// to the checking parser only for the reasons fast_index.h gives.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/fast_index.h"
#include "ireepkg/manifest_schema/formats.h"

#include <cstdlib>

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text = fuzz::bytes(data, size);
  auto fast = parseCleanRegistrySnapshot(text);
  auto doc = JsonDocument::parse(text, "snapshot.json");
  if (!doc) {
    if (fast)
      std::abort(); // the fast path took a text that is not JSON
    return 0;
  }
  bool clean = false;
  RegistrySnapshot lenient;
  for (bool strict : {true, false}) {
    DiagnosticList diags;
    auto parsed = parseRegistrySnapshot(*doc, ParseOptions{strict}, diags);
    if (!strict) {
      clean = diags.items().empty();
      lenient = std::move(parsed);
    }
  }
  if (fast && (!clean || fast->schemaVersion != lenient.schemaVersion ||
               fast->version != lenient.version ||
               fast->expires != lenient.expires ||
               fast->expiresUnix != lenient.expiresUnix ||
               fast->index != lenient.index))
    std::abort(); // the paths disagree
  if (!fast && clean && !leftToCheckingParser(text))
    std::abort(); // a clean snapshot the fast path should have taken
  return 0;
}
