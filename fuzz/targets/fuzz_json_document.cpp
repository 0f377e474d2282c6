//===- fuzz_json_document.cpp - Fuzzes the JSON reader ===//
//
// The project's one JSON reader (JsonDocument): parsing with positions,
// duplicate keys, depth and size limits, then the position queries every
// diagnostic makes, for each member of the root and its first children.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/json_document.h"

#include <nlohmann/json.hpp>

using namespace ireepkg;

namespace {

void query(const JsonDocument &doc, const std::string &pointer) {
  (void)doc.locate(pointer);
  (void)doc.locateKey(pointer);
  (void)doc.valueOffset(pointer);
  (void)doc.keyOffset(pointer);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  JsonParseOptions small;
  small.maxDepth = 16;
  small.maxBytes = 4096;
  (void)JsonDocument::parse(text, "small.json", small);
  auto doc = JsonDocument::parse(text, "fuzz.json");
  if (!doc)
    return 0;
  query(*doc, "");
  query(*doc, "/no/such/member");
  const nlohmann::json &root = doc->root();
  (void)describeJsonType(root);
  if (root.is_object()) {
    for (const auto &[key, value] : root.items()) {
      std::string p = "/" + jsonPointerEscape(key);
      query(*doc, p);
      if (value.is_array() && !value.empty())
        query(*doc, p + "/0");
      else if (value.is_object() && !value.empty())
        query(*doc, p + "/" + jsonPointerEscape(value.begin().key()));
    }
  } else if (root.is_array()) {
    for (size_t i = 0; i < root.size() && i < 8; ++i)
      query(*doc, "/" + std::to_string(i));
  }
  uint32_t line = 0, column = 0;
  doc->lineColumn(size, line, column);
  doc->lineColumn(size / 2, line, column);
  return 0;
}
