//===- fuzz_project.cpp - Fuzzes plugins.json and its text edits ===//
//
// The bytes as plugins.json: JSON with positions, the format's checks
// (strict and lenient), the resolution input hash, and the in-place text
// edits of `ireepkg add` and `ireepkg rm`, which work at the byte offsets
// the JSON reader reports.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/project/project.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  auto doc = JsonDocument::parse(text, "plugins.json");
  if (!doc)
    return 0;
  std::string firstPlugin;
  for (bool strict : {true, false}) {
    DiagnosticList diags;
    ProjectFile parsed = parseProjectFile(*doc, ParseOptions{strict}, diags);
    if (!diags.hasErrors()) {
      (void)project::inputHash(parsed);
      if (!parsed.plugins.empty())
        firstPlugin = parsed.plugins.front().name;
    }
  }
  // add: a new entry, and (when there is one) a replaced one.
  project::AddRequest add;
  add.name = "fuzz-added";
  add.constraint = "^1.2.0";
  add.options["tile"] = 4;
  (void)project::addPlugin(text, add, "plugins.json");
  if (!firstPlugin.empty()) {
    add.name = firstPlugin;
    (void)project::addPlugin(text, add, "plugins.json");
    (void)project::removePlugin(text, firstPlugin, "plugins.json");
  }
  (void)project::removePlugin(text, "fuzz-missing", "plugins.json");
  return 0;
}
