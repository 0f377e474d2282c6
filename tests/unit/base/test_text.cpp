//===- test_text.cpp - The text helpers and base64 of base ----------------===//
//
// ireepkg/base/text.h (startsWith, endsWith, lower, splitLines, trim) and
// ireepkg/base/base64.h: the one copy each that signatures, OCI
// credentials, HTTP headers, the IREE version reader and the MLIR check
// use.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/base64.h"
#include "ireepkg/base/text.h"

#include <doctest/doctest.h>

#include <sodium.h>

using namespace ireepkg;

namespace {

std::vector<uint8_t> bytes(std::string_view s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::optional<std::string> decoded(std::string_view text, Base64Syntax syntax) {
  auto out = base64Decode(text, syntax);
  if (!out)
    return std::nullopt;
  return std::string(out->begin(), out->end());
}

/// libsodium's reading of padded standard base64, which minisign keys and
/// signatures were decoded with before base64Decode.
std::optional<std::vector<uint8_t>> sodiumDecode(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  std::vector<uint8_t> out(text.size() / 4 * 3 + 3);
  size_t length = 0;
  const char *end = nullptr;
  if (sodium_base642bin(out.data(), out.size(), text.data(), text.size(),
                        nullptr, &length, &end,
                        sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size())
    return std::nullopt;
  out.resize(length);
  return out;
}

} // namespace

TEST_CASE("startsWith, endsWith") {
  CHECK(startsWith("--flag", "--"));
  CHECK(startsWith("abc", ""));
  CHECK_FALSE(startsWith("-", "--"));
  CHECK(endsWith("x.dist-info", ".dist-info"));
  CHECK_FALSE(endsWith("info", ".dist-info"));
}

TEST_CASE("lower folds ASCII letters only") {
  CHECK(lower("Content-Type: X") == "content-type: x");
  CHECK(lower("\xC3\x84Z") == "\xC3\x84z");
}

TEST_CASE("splitLines reads lines as std::getline does") {
  using V = std::vector<std::string_view>;
  CHECK(splitLines("") == V{});
  CHECK(splitLines("a") == V{"a"});
  CHECK(splitLines("a\n") == V{"a"});
  CHECK(splitLines("a\n\nb\r\n") == V{"a", "", "b\r"});
  CHECK(splitLines("\n") == V{""});
}

TEST_CASE("trimmed with a set of characters") {
  CHECK(trimmed(" \tkey \r\n", " \t\r\n") == "key");
  CHECK(trimmed("\vkey\f", " \t\r\n") == "\vkey\f");
  CHECK(trimmed("  ") == "");
}

TEST_CASE("base64Encode: RFC 4648 test vectors") {
  const std::pair<const char *, const char *> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}};
  for (auto [plain, coded] : vectors) {
    auto b = bytes(plain);
    CHECK(base64Encode(b.data(), b.size()) == coded);
    if (*plain)
      CHECK(decoded(coded, Base64Syntax::Canonical) == std::string(plain));
  }
  const uint8_t high[] = {0xfb, 0xff, 0xbf};
  CHECK(base64Encode(high, 3) == "+/+/");
}

TEST_CASE("base64Decode canonical: what libsodium accepts, nothing else") {
  const char *texts[] = {
      "",         "Zg==",
      "Zm8=",     "Zm9v",
      "Zm9vYg==", "Zg",
      "Zg=",      "Zh==",
      "Zm9=",     "Z===",
      "Zg==Zg",   "Zg==\n",
      " Zg==",    "Zm-v",
      "Zm_v",     "Zm9v=",
      "====",     "Zm9vY",
      "+/+/",     "Zg=A",
      "Zm8=Zm8=", "RWQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"};
  for (const char *t : texts) {
    CAPTURE(t);
    CHECK(base64Decode(t, Base64Syntax::Canonical) == sodiumDecode(t));
  }
}

TEST_CASE("base64Decode lenient: docker credential files") {
  CHECK(decoded("dXNlcjpwYXNz", Base64Syntax::Lenient) == "user:pass");
  // Padding optional, line breaks and "=" ignored, URL-safe alphabet too.
  CHECK(decoded("dXNlcjpwYXNzMQ", Base64Syntax::Lenient) == "user:pass1");
  CHECK(decoded("dXNlcjpw\r\nYXNzMQ==", Base64Syntax::Lenient) == "user:pass1");
  CHECK(decoded("-_-_", Base64Syntax::Lenient) == "\xfb\xff\xbf");
  CHECK(decoded("", Base64Syntax::Lenient) == "");
  CHECK(decoded("dXNl cjpw", Base64Syntax::Lenient) == std::nullopt);
  CHECK(decoded("dXNl*", Base64Syntax::Lenient) == std::nullopt);
}
