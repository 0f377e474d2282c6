//===- test_json_document.cpp - JsonDocument positions and limits --------===//
#include "ireepkg/manifest_schema/json_document.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace ireepkg;

static std::pair<uint32_t, uint32_t> at(const JsonDocument &d,
                                        const std::string &ptr) {
  Location l = d.locate(ptr);
  return {l.line, l.column};
}

TEST_CASE("values are located by JSON pointer") {
  auto d = JsonDocument::parse(
      "{\"a\": [1, {\"x\": 2}],\n \"b\": {\"c\": true}, \"d\" : -1.5e3,\n"
      " \"e~/f\": null, \"g\": \"s\\\"t\"}",
      "f.json");
  REQUIRE(d);
  CHECK(at(*d, "") == std::pair{1u, 1u});
  CHECK(at(*d, "/a") == std::pair{1u, 7u});
  CHECK(at(*d, "/a/0") == std::pair{1u, 8u});
  CHECK(at(*d, "/a/1") == std::pair{1u, 11u});
  CHECK(at(*d, "/a/1/x") == std::pair{1u, 17u});
  CHECK(at(*d, "/b/c") == std::pair{2u, 13u});
  CHECK(at(*d, "/d") == std::pair{2u, 26u});
  CHECK(at(*d, "/e~0~1f") == std::pair{3u, 10u});
  CHECK(at(*d, "/g") == std::pair{3u, 21u});
  CHECK(d->root()["g"] == "s\"t");
  // Keys have their own positions.
  Location k = d->locateKey("/b/c");
  CHECK(k.line == 2);
  CHECK(k.column == 8);
  // Unknown pointers fall back to the closest located ancestor.
  CHECK(at(*d, "/a/1/missing") == std::pair{1u, 11u});
  CHECK(d->locate("/a").file == "f.json");
}

TEST_CASE("numbers at the end of input and after whitespace") {
  auto d = JsonDocument::parse("[1,\n   22 ,333]", "n.json");
  REQUIRE(d);
  CHECK(at(*d, "/1") == std::pair{2u, 4u});
  CHECK(at(*d, "/2") == std::pair{2u, 8u});
  auto scalar = JsonDocument::parse("  42", "s.json");
  REQUIRE(scalar);
  CHECK(scalar->root() == 42);
  CHECK(at(*scalar, "") == std::pair{1u, 3u});
}

TEST_CASE("duplicate keys are errors that name both places") {
  auto d = JsonDocument::parse("{\"a\": 1,\n \"a\": 2}", "dup.json");
  REQUIRE(!d);
  REQUIRE(d.error().diagnostics.size() == 1);
  CHECK(d.error().diagnostics[0].format() ==
        "dup.json:2:2: /a: duplicate key \"a\" (first defined at line 1:2)");
}

TEST_CASE("syntax errors carry their position") {
  auto d = JsonDocument::parse("{\n  \"a\": tru\n}", "bad.json");
  REQUIRE(!d);
  CHECK(d.error().code == ErrorCode::Parse);
  CHECK(d.error().where.line == 2); // the newline that ends "tru"
  CHECK(d.error().message.rfind("invalid JSON: syntax error", 0) == 0);
}

TEST_CASE("nesting depth is bounded") {
  std::string deep(300, '[');
  auto d = JsonDocument::parse(deep, "deep.json");
  REQUIRE(!d);
  CHECK(d.error().message == "JSON nesting is deeper than 256 levels");
  CHECK(d.error().where.column == 257);
  JsonParseOptions opts;
  opts.maxDepth = 400;
  std::string ok = std::string(300, '[') + std::string(300, ']');
  CHECK(JsonDocument::parse(ok, "deep.json", opts).has_value());
}

TEST_CASE("size limit is checked before parsing") {
  JsonParseOptions opts;
  opts.maxBytes = 10;
  auto d = JsonDocument::parse("[1,2,3,4,5,6]", "big.json", opts);
  REQUIRE(!d);
  CHECK(d.error().message ==
        "file is 13 bytes, larger than the limit of 10 bytes");
}

TEST_CASE("messages quoting invalid bytes stay printable") {
  auto d = JsonDocument::parse("{\"a\": \"\xff\"}", "u.json");
  REQUIRE(!d);
  for (char c : d.error().message)
    CHECK((c >= 0x20 && c < 0x7f));
}

TEST_CASE("location tracking can be turned off") {
  JsonParseOptions opts;
  opts.trackLocations = false;
  auto d = JsonDocument::parse("{\n\"a\": 1}", "t.json", opts);
  REQUIRE(d);
  CHECK(d->root()["a"] == 1);
  CHECK(d->locate("/a").line == 0);
}

TEST_CASE("JSON pointer escaping") {
  CHECK(jsonPointerEscape("a/b~c") == "a~1b~0c");
  CHECK(jsonPointerEscape("plain") == "plain");
}
