//===- test_fast_index.cpp - The fast path for registry files -------------===//
//
// parseCleanRegistryIndex and parseCleanRegistrySnapshot (fast_index.h)
// must give a value exactly when the checking parser (JsonDocument, then
// parseRegistryIndex or parseRegistrySnapshot) reads the text with no
// diagnostic, and then the same one (an index compared through the binary
// form of parsed_cache.h, which holds every field). Checked on every
// fixture under tests/data, on edits of a full file that break (or keep)
// one rule each, and on random byte changes.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/fast_index.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/registry/client/parsed_cache.h"

#include "temp_dir.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <random>

using namespace ireepkg;
namespace fs = std::filesystem;

namespace {

const std::string kKey(64, 'a');

/// The result of checking parser `parse` (parseRegistryIndex,
/// parseRegistrySnapshot) on `text` as file `name`, when it reported
/// nothing.
template <typename T, typename Parse>
std::optional<T> checkedBy(std::string_view text, const char *name,
                           Parse parse) {
  auto doc = JsonDocument::parse(text, name);
  if (!doc)
    return std::nullopt;
  DiagnosticList diags;
  T parsed = parse(*doc, ParseOptions{false}, diags);
  if (!diags.items().empty())
    return std::nullopt;
  return parsed;
}

std::optional<RegistryIndex> checked(std::string_view text) {
  return checkedBy<RegistryIndex>(text, "index/x.json", parseRegistryIndex);
}

/// Whether both parsers agree on `text`; returns whether it was clean.
bool agree(std::string_view text) {
  auto fast = parseCleanRegistryIndex(text);
  auto slow = checked(text);
  if (fast) {
    CHECK(slow.has_value());
    if (slow)
      CHECK(registry::encodeParsedIndex(*fast, kKey) ==
            registry::encodeParsedIndex(*slow, kKey));
  } else if (slow) {
    CHECK(leftToCheckingParser(text));
  }
  return slow.has_value();
}

std::string fixture(const std::string &rel) {
  return test::readText(
      (fs::path(IREEPKG_SOURCE_DIR) / "tests/data" / rel).string());
}

/// `text` with the one occurrence of `from` replaced by `to`.
std::string edit(std::string text, const std::string &from,
                 const std::string &to) {
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  REQUIRE_MESSAGE(text.find(from, at + 1) == std::string::npos, from);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("fast index parser: agrees with the checking parser on every "
          "fixture") {
  int clean = 0;
  for (const auto &dir :
       fs::directory_iterator(fs::path(IREEPKG_SOURCE_DIR) / "tests/data")) {
    if (!dir.is_directory())
      continue;
    for (const auto &f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() != ".json")
        continue;
      CAPTURE(f.path().string());
      clean += agree(test::readText(f.path().string()));
    }
  }
  // The good index files, at least, take the fast path.
  CHECK(clean >= 2);
  CHECK(parseCleanRegistryIndex(fixture("index/good_full.json")));
  CHECK(parseCleanRegistryIndex(fixture("index/good_no_versions.json")));
  // And every bad one is left to the checking parser.
  for (const auto &f : fs::directory_iterator(fs::path(IREEPKG_SOURCE_DIR) /
                                              "tests/data/index"))
    if (f.path().filename().string().starts_with("bad_")) {
      CAPTURE(f.path().string());
      CHECK_FALSE(parseCleanRegistryIndex(test::readText(f.path().string())));
    }
}

TEST_CASE("fast index parser: one rule at a time") {
  const std::string full = fixture("index/good_full.json");
  REQUIRE(agree(full));
  struct Case {
    std::string from, to;
    bool clean; // what the checking parser says
  };
  const std::string sum = "\"summary\": \"Element-wise multiply as a custom "
                          "CPU dispatch\",\n      \"requires\": {\n        "
                          "\"iree\": \">=3.8.0";
  std::string accents; // 200 code points in 400 bytes, then one more
  for (int i = 0; i < 200; ++i)
    accents += "\xC3\xA9";
  const std::vector<Case> cases = {
      // Still clean.
      {"\"size\": 401002", "\"size\": 0", true},
      {"\"size\": 401002", "\"size\": -0", true},
      {"\"size\": 401002", "\"size\": 9223372036854775807", true},
      {"\"yanked\": true", "\"yanked\": false", true},
      {"\"dependencies\": {},", "", true},
      {"\"dependencies\": {},",
       "\"dependencies\": {\"a\": \"*\", \"b\": "
       "\"^1.2, <1.5\"},",
       true},
      {"\"requires\": {\n        \"iree\": \">=3.8.0, <4.0.0\"\n      },",
       "\"requires\": {},", true},
      {"\"version\": \"1.1.0\"", "\"version\": \"1.1.0+build.5\"", true},
      {sum,
       "\"summary\": \"" + std::string(200, 'x') +
           "\",\n      \"requires\": {\n        \"iree\": \">=3.8.0",
       true},
      {sum,
       "\"summary\": \"" + accents +
           "\",\n      \"requires\": {\n        \"iree\": \">=3.8.0",
       true},
      {sum,
       "\"summary\": \"\",\n      \"requires\": {\n        \"iree\": "
       "\">=3.8.0",
       true},
      {sum,
       "\"summary\": \"say \\\"mul\\\" \\\\ \\/ \\n\\t\",\n      "
       "\"requires\": {\n        \"iree\": \">=3.8.0",
       true},
      {"\"platforms\": [\n        \"linux-x86_64\"\n      ]",
       "\"platforms\": []", true},
      // An error or a warning each.
      {"\"schema_version\": 1", "\"schema_version\": 2", false},
      {"\"schema_version\": 1", "\"schema_version\": 0", false},
      {"\"schema_version\": 1", "\"schema_version\": \"1\"", false},
      {"\"schema_version\": 1", "\"schema_version\": 1.0", false},
      {"\"schema_version\": 1,", "", false},
      {"\"name\": \"simple-mul\"", "\"name\": \"\"", false},
      {"\"name\": \"simple-mul\"", "\"name\": \"Simple_Mul\"", false},
      {"\"name\": \"simple-mul\"", "\"name\": 5", false},
      {"\"name\": \"simple-mul\",",
       "\"name\": \"simple-mul\", \"name\": \"simple-mul\",", false},
      {"\"name\": \"simple-mul\",", "\"name\": \"simple-mul\", \"x\": 1,",
       false},
      {"\"version\": \"1.1.0\"", "\"version\": \"1.2.0\"", false},
      {"\"version\": \"1.1.0\"", "\"version\": \"v1.1.0\"", false},
      {"\"version\": \"1.1.0\"", "\"version\": 110", false},
      {"\"version\": \"1.1.0\",", "", false},
      {"\"version\": \"1.1.0\",", "\"version\": \"1.1.0\", \"latest\": true,",
       false},
      {"\"version\": \"1.1.0\",",
       "\"version\": \"1.1.0\", \"version\": \"1.1.0\",", false},
      {sum,
       "\"summary\": \"" + std::string(201, 'x') +
           "\",\n      \"requires\": {\n        \"iree\": \">=3.8.0",
       false},
      {sum,
       "\"summary\": \"" + accents +
           "\xC3\xA9\",\n      \"requires\": {\n        \"iree\": \">=3.8.0",
       false},
      {sum,
       "\"summary\": 3,\n      \"requires\": {\n        \"iree\": "
       "\">=3.8.0",
       false},
      {sum,
       "\"summary\": \"\\u0041\",\n      \"requires\": {\n        "
       "\"iree\": \">=3.8.0",
       true}, // clean, but left to the checking parser (see below)
      {sum,
       "\"summary\": \"\\ud800\",\n      \"requires\": {\n        "
       "\"iree\": \">=3.8.0",
       false},
      {sum,
       "\"summary\": \"a\tb\",\n      \"requires\": {\n        "
       "\"iree\": \">=3.8.0",
       false},
      {sum,
       "\"summary\": \"a\nb\",\n      \"requires\": {\n        "
       "\"iree\": \">=3.8.0",
       false},
      {sum,
       "\"summary\": \"a\xFF\",\n      \"requires\": {\n        "
       "\"iree\": \">=3.8.0",
       false},
      {sum,
       "\"summary\": \"a\xC0\xAF\",\n      \"requires\": {\n        "
       "\"iree\": \">=3.8.0",
       false},
      {"\"dependencies\": {},", "\"dependencies\": {\"simple-mul\": \"*\"},",
       false},
      {"\"dependencies\": {},", "\"dependencies\": {\"Bad Name\": \"*\"},",
       false},
      {"\"dependencies\": {},", "\"dependencies\": {\"a\": 1},", false},
      {"\"dependencies\": {},", "\"dependencies\": {\"a\": \"^^1\"},", false},
      {"\"dependencies\": {},",
       "\"dependencies\": {\"a\": \"*\", \"a\": \"*\"},", false},
      {"\"dependencies\": {},", "\"dependencies\": [],", false},
      {"\"dependencies\": {},", "\"dependencies\": null,", false},
      {"\"iree\": \">=3.8.0, <4.0.0\"", "\"iree\": 3", false},
      {"\"iree\": \">=3.8.0, <4.0.0\"", "\"iree\": \">=3.8.0\", \"x\": 1",
       false},
      {"\"iree\": \">=3.8.0, <4.0.0\"",
       "\"iree\": \">=3.8.0\", \"iree\": \">=3.8.0\"", false},
      {"\"iree\": \">=3.8.0, <4.0.0\"", "\"iree\": \">=3.8.0,,\"", false},
      {"\"requires\": {\n        \"iree\": \">=3.8.0, <4.0.0\"\n      },",
       "\"requires\": \"x\",", false},
      {"\"platforms\": [\n        \"linux-x86_64\"\n      ]",
       "\"platforms\": [\"linux-x86_64\", \"linux-x86_64\"]", false},
      {"\"platforms\": [\n        \"linux-x86_64\"\n      ]",
       "\"platforms\": [\"\"]", false},
      {"\"platforms\": [\n        \"linux-x86_64\"\n      ]",
       "\"platforms\": [\"linux-x86\"]", false},
      {"\"platforms\": [\n        \"linux-x86_64\"\n      ]",
       "\"platforms\": [1]", false},
      {"\"platforms\": [\n        \"linux-x86_64\"\n      ]",
       "\"platforms\": \"linux-x86_64\"", false},
      {"\"archive\": \"archives/simple-mul/simple-mul-1.1.0.ireepkg\"",
       "\"archive\": \"/abs.ireepkg\"", false},
      {"\"archive\": \"archives/simple-mul/simple-mul-1.1.0.ireepkg\"",
       "\"archive\": \"../x.ireepkg\"", false},
      {"\"archive\": \"archives/simple-mul/simple-mul-1.1.0.ireepkg\"",
       "\"archive\": \"\"", false},
      {"\"archive\": \"archives/simple-mul/simple-mul-1.1.0.ireepkg\",", "",
       false},
      {"62248ad4d17b140ebfb29ba8f4c3191ac93a3e62848c526aced3c6be0ac9b6dc",
       "62248AD4D17B140EBFB29BA8F4C3191AC93A3E62848C526ACED3C6BE0AC9B6DC",
       false},
      {"62248ad4d17b140ebfb29ba8f4c3191ac93a3e62848c526aced3c6be0ac9b6dc",
       "62248ad4", false},
      {"\"size\": 401002", "\"size\": -1", false},
      {"\"size\": 401002", "\"size\": 1.5", false},
      {"\"size\": 401002", "\"size\": 4.01002e5", false},
      {"\"size\": 401002", "\"size\": 9223372036854775808", false},
      {"\"size\": 401002", "\"size\": 99999999999999999999999", false},
      {"\"size\": 401002", "\"size\": \"401002\"", false},
      {"\"size\": 401002", "\"size\": 01", false},
      {"\"yanked\": true", "\"yanked\": \"true\"", false},
      {"\"yanked\": true", "\"yanked\": null", false},
      {"\"versions\": [", "\"versions\": [1, ", false},
      {"\"versions\": [", "\"extra\": [[[[[[[[[[]]]]]]]]]], \"versions\": [",
       false},
  };
  for (const Case &c : cases) {
    CAPTURE(c.to);
    std::string text = edit(full, c.from, c.to);
    CHECK(agree(text) == c.clean);
  }
  // Clean, but \u escapes are left to the checking parser.
  CHECK_FALSE(parseCleanRegistryIndex(edit(full, "\"name\": \"simple-mul\"",
                                           "\"name\": \"simple-\\u006dul\"")));
  CHECK(checked(edit(full, "\"name\": \"simple-mul\"",
                     "\"name\": \"simple-\\u006dul\"")));

  // The whole text.
  for (const std::string &text :
       {std::string(), std::string("null"), std::string("[]"),
        std::string("{}"), "\xEF\xBB\xBF" + full, full + " x", full + " {}",
        full + "\n\n \t", full + std::string(1, '\0'), " \r\n" + full})
    agree(text);
  for (size_t n = 0; n < full.size(); n += 3)
    CHECK_FALSE(agree(full.substr(0, n)));
}

TEST_CASE("fast index parser: random changes of bytes") {
  const std::string full = fixture("index/good_full.json");
  std::mt19937 rng(17);
  const std::string alphabet = "{}[]\":,\\ 0123456789-.eEabcfnrtux\t\n\x7f\xc3";
  int clean = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = full;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < edits; ++k) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text[at] = alphabet[rng() % alphabet.size()];
        break;
      case 1:
        text.erase(at, 1 + rng() % 4);
        break;
      default:
        text.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
      if (text.empty())
        text = "x";
    }
    CAPTURE(text);
    clean += agree(text);
  }
  // Some changes keep the file clean (inside a summary, say): both paths
  // were compared on those too.
  CHECK(clean > 0);
}

//===----------------------------------------------------------------------===//
// snapshot.json
//===----------------------------------------------------------------------===//

namespace {

std::optional<RegistrySnapshot> checkedSnapshot(std::string_view text) {
  return checkedBy<RegistrySnapshot>(text, "snapshot.json",
                                     parseRegistrySnapshot);
}

/// As agree(), for snapshots.
bool agreeSnapshot(std::string_view text) {
  auto fast = parseCleanRegistrySnapshot(text);
  auto slow = checkedSnapshot(text);
  if (fast) {
    CHECK(slow.has_value());
    if (slow) {
      CHECK(fast->schemaVersion == slow->schemaVersion);
      CHECK(fast->version == slow->version);
      CHECK(fast->expires == slow->expires);
      CHECK(fast->expiresUnix == slow->expiresUnix);
      CHECK(fast->index == slow->index);
    }
  } else if (slow) {
    CHECK(leftToCheckingParser(text));
  }
  return slow.has_value();
}

} // namespace

TEST_CASE("fast snapshot parser: agrees with the checking parser") {
  for (const auto &dir :
       fs::directory_iterator(fs::path(IREEPKG_SOURCE_DIR) / "tests/data")) {
    if (!dir.is_directory())
      continue;
    for (const auto &f : fs::directory_iterator(dir.path()))
      if (f.path().extension() == ".json") {
        CAPTURE(f.path().string());
        const std::string text = test::readText(f.path().string());
        bool clean = agreeSnapshot(text);
        if (dir.path().filename() == "snapshot")
          CHECK(clean == f.path().filename().string().starts_with("good_"));
      }
  }
  const std::string full = fixture("snapshot/good_full.json");
  REQUIRE(parseCleanRegistrySnapshot(full));
  const std::string hash =
      "sha256:ee30ab907d6f5fc14bb34074d4410b981004222da579b07a77297a194eec348c";
  struct Case {
    std::string from, to;
    bool clean;
  };
  const std::vector<Case> cases = {
      {"\"version\": 42", "\"version\": 1", true},
      {"\"version\": 42", "\"version\": 9223372036854775807", true},
      {"\"expires\": \"2027-01-01T00:00:00Z\"",
       "\"expires\": \"2027-01-01T00:00:00.5-05:30\"", true},
      {"\"common-ukernels\"", "\"zz-last\"", true}, // out of order
      {"\"schema_version\": 1", "\"schema_version\": 2", false},
      {"\"schema_version\": 1,", "", false},
      {"\"version\": 42", "\"version\": 0", false},
      {"\"version\": 42", "\"version\": -1", false},
      {"\"version\": 42", "\"version\": 42.0", false},
      {"\"version\": 42", "\"version\": \"42\"", false},
      {"\"version\": 42", "\"version\": 9223372036854775808", false},
      {"\"version\": 42,", "", false},
      {"\"version\": 42,", "\"version\": 42, \"version\": 42,", false},
      {"\"version\": 42,", "\"version\": 42, \"signed\": true,", false},
      {"\"expires\": \"2027-01-01T00:00:00Z\"", "\"expires\": \"\"", false},
      {"\"expires\": \"2027-01-01T00:00:00Z\"",
       "\"expires\": \"2027-02-30T00:00:00Z\"", false},
      {"\"expires\": \"2027-01-01T00:00:00Z\"", "\"expires\": 1798761600",
       false},
      {"\"common-ukernels\"", "\"Common Ukernels\"", false},
      {"\"common-ukernels\"", "\"simple-mul\"", false}, // repeated
      {hash, "sha512:ee30", false},
      {hash, hash.substr(7), false},
      {hash,
       "sha256:EE30AB907D6F5FC14BB34074D4410B981004222DA579B07A77297A19"
       "4EEC348C",
       false},
      {"\"" + hash + "\"", "1", false},
      {"\"index\": {", "\"index\": [], \"x\": {", false},
  };
  for (const Case &c : cases) {
    CAPTURE(c.to);
    CHECK(agreeSnapshot(edit(full, c.from, c.to)) == c.clean);
  }
  for (size_t n = 0; n < full.size(); n += 2)
    CHECK_FALSE(agreeSnapshot(full.substr(0, n)));
  std::mt19937 rng(23);
  const std::string alphabet = "{}[]\":,\\ 0123456789-.:TZabcfnrtux\t\n\x7f";
  for (int i = 0; i < 2000; ++i) {
    std::string text = full;
    size_t at = rng() % text.size();
    switch (rng() % 3) {
    case 0:
      text[at] = alphabet[rng() % alphabet.size()];
      break;
    case 1:
      text.erase(at, 1 + rng() % 4);
      break;
    default:
      text.insert(at, 1, alphabet[rng() % alphabet.size()]);
    }
    CAPTURE(text);
    agreeSnapshot(text);
  }
}
