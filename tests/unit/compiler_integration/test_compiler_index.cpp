// Decoding <prefix>/state/compiler.json (include/ireepkg/compiler_integration/compiler_index.h):
// whatever the file holds, a damaged index is an Error, never an exception.
#include "ireepkg/compiler_integration/compiler_index.h"

#include <doctest/doctest.h>

using namespace ireepkg;

TEST_CASE("compiler index: an empty index round-trips") {
  std::string text = encodeCompilerIndex({}, "linux-x86_64", ProjectSettings{});
  auto idx = decodeCompilerIndex(text, "compiler.json");
  REQUIRE(idx.has_value());
  CHECK(idx->platform == "linux-x86_64");
  CHECK(idx->packages.empty());
}

TEST_CASE("compiler index: a schema_version of the wrong type is an error") {
  // Found by fuzz_compiler_index: this threw nlohmann's type_error.
  for (const char *text :
       {R"({"schema_version": [1]})", R"({"schema_version": "1"})",
        R"({"schema_version": {}})", R"({"schema_version": 1.5})",
        R"({"schema_version": null})", R"({})"}) {
    CAPTURE(text);
    auto idx = decodeCompilerIndex(text, "compiler.json");
    REQUIRE_FALSE(idx.has_value());
    CHECK(idx.error().code == ErrorCode::Unsupported);
    CHECK(idx.error().message ==
          "the compiler index was written by another ireepkg");
  }
}

TEST_CASE("compiler index: members of the wrong type are corruption") {
  auto idx = decodeCompilerIndex(
      R"({"schema_version": 1, "platform": 7, "project": {}, "packages": []})",
      "compiler.json");
  REQUIRE_FALSE(idx.has_value());
  CHECK(idx.error().code == ErrorCode::Integrity);
}
