//===- fuzz_registry_index.cpp - Fuzzes a registry's index/<name>.json ===//
//
// The bytes as a registry's index/<name>.json: JSON with positions
// (JsonDocument), then the format's checks, strict (pack, lock, manifest check)
// and lenient (reading what a newer tool wrote). And the fast path the registry
// client tries first (fast_index.h): it must give a value only for a file that
// the checking parser reads with no diagnostic, and then the same value (the
// binary forms of parsed_cache.h are compared); it may leave a clean file
// to the checking parser only for the reasons fast_index.h gives.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/fast_index.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/registry/client/parsed_cache.h"

#include <cstdlib>

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text = fuzz::bytes(data, size);
  auto fast = parseCleanRegistryIndex(text);
  auto doc = JsonDocument::parse(text, "index/fuzz.json");
  if (!doc) {
    if (fast)
      std::abort(); // the fast path took a text that is not JSON
    return 0;
  }
  bool clean = false;
  RegistryIndex lenient;
  for (bool strict : {true, false}) {
    DiagnosticList diags;
    auto parsed = parseRegistryIndex(*doc, ParseOptions{strict}, diags);
    if (!strict) {
      clean = diags.items().empty();
      lenient = std::move(parsed);
    }
  }
  const std::string key(64, '0');
  if (fast && (!clean || registry::encodeParsedIndex(*fast, key) !=
                             registry::encodeParsedIndex(lenient, key)))
    std::abort(); // the paths disagree
  if (!fast && clean && !leftToCheckingParser(text))
    std::abort(); // a clean file the fast path should have taken
  return 0;
}
