//===- test_project.cpp - plugins.json edits, input hash, lockfile -------===//
//
// Why one file of this size: the tests of one module (projects and
// lockfiles), with the fixtures they share.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/project/project.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/project/project_file.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace ireepkg;
using namespace ireepkg::project;
using json = nlohmann::json;

namespace {

const std::string kOrigin = "plugins.json";

/// Parses project text; fails the test on any problem.
ProjectFile parseOk(const std::string &text) {
  auto doc = JsonDocument::parse(text, kOrigin);
  REQUIRE_MESSAGE(doc, doc.error().format());
  DiagnosticList diags;
  ProjectFile p = parseProjectFile(*doc, ParseOptions{}, diags);
  std::string all;
  for (const Diagnostic &d : diags.items())
    all += d.format() + "\n";
  REQUIRE_MESSAGE(!diags.hasErrors(), all);
  return p;
}

std::string add(const std::string &text, const std::string &name,
                std::optional<std::string> constraint,
                std::map<std::string, json> options = {},
                const std::string &registry = "") {
  AddRequest r;
  r.name = name;
  r.constraint = std::move(constraint);
  r.options = std::move(options);
  r.registry = registry;
  auto out = addPlugin(text, r, kOrigin);
  REQUIRE_MESSAGE(out, out.error().format());
  parseOk(*out);
  return *out;
}

std::string rm(const std::string &text, const std::string &name) {
  auto out = removePlugin(text, name, kOrigin);
  REQUIRE_MESSAGE(out, out.error().format());
  parseOk(*out);
  return *out;
}

Error addError(const std::string &text, const AddRequest &r) {
  auto out = addPlugin(text, r, kOrigin);
  REQUIRE_FALSE(out);
  return out.error();
}

std::string crlf(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n')
      out += '\r';
    out += c;
  }
  return out;
}

std::string readText(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    path = std::filesystem::temp_directory_path() /
           ("ireepkg-project-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
};

} // namespace

//===----------------------------------------------------------------------===//
// add
//===----------------------------------------------------------------------===//

TEST_CASE("add appends to an expanded file with two-space indentation") {
  std::string in = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1.0"
    }
  ]
}
)";
  CHECK(add(in, "b", "^2.0") == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1.0"
    },
    {
      "name": "b",
      "version": "^2.0"
    }
  ]
}
)");
}

TEST_CASE("add copies compact one-line entries") {
  std::string in = R"({
  "schema_version": 1,
  "plugins": [
    { "name": "a", "version": "^1.0" },
    { "name": "b", "version": "^2.0" }
  ]
}
)";
  CHECK(add(in, "c", "^3", {{"tile", 16}, {"mode", "fast"}}) == R"({
  "schema_version": 1,
  "plugins": [
    { "name": "a", "version": "^1.0" },
    { "name": "b", "version": "^2.0" },
    { "name": "c", "version": "^3", "options": { "mode": "fast", "tile": 16 } }
  ]
}
)");
  // Tight spacing is copied too.
  std::string tight = "{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
                      "    {\"name\":\"a\",\"version\":\"^1\"}\n  ]\n}\n";
  CHECK(add(tight, "b", "^2") ==
        "{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
        "    {\"name\":\"a\",\"version\":\"^1\"},\n"
        "    {\"name\":\"b\",\"version\":\"^2\"}\n  ]\n}\n");
}

TEST_CASE("add keeps blank lines between entries and the separator style") {
  std::string in = "{\n  \"schema_version\": 1,\n\n  \"plugins\": [\n"
                   "    {\"name\": \"a\"},\n\n    {\"name\": \"b\"}\n  ]\n}\n";
  CHECK(add(in, "c", "1.0.0") ==
        "{\n  \"schema_version\": 1,\n\n  \"plugins\": [\n"
        "    {\"name\": \"a\"},\n\n    {\"name\": \"b\"},\n\n"
        "    {\"name\": \"c\", \"version\": \"1.0.0\"}\n  ]\n}\n");
}

TEST_CASE("add in a file indented with tabs") {
  std::string in = "{\n\t\"schema_version\": 1,\n\t\"plugins\": [\n\t\t{\n"
                   "\t\t\t\"name\": \"a\"\n\t\t}\n\t]\n}\n";
  CHECK(add(in, "b", "^2", {{"x", true}}) ==
        "{\n\t\"schema_version\": 1,\n\t\"plugins\": [\n\t\t{\n"
        "\t\t\t\"name\": \"a\"\n\t\t},\n\t\t{\n\t\t\t\"name\": \"b\",\n"
        "\t\t\t\"version\": \"^2\",\n\t\t\t\"options\": {\n"
        "\t\t\t\t\"x\": true\n\t\t\t}\n\t\t}\n\t]\n}\n");
}

TEST_CASE("add creates plugins in a four-space file that has none") {
  std::string in = R"({
    "schema_version": 1,
    "platforms": ["linux-x86_64"]
}
)";
  CHECK(add(in, "a", "^1.2") == R"({
    "schema_version": 1,
    "platforms": ["linux-x86_64"],
    "plugins": [
        {
            "name": "a",
            "version": "^1.2"
        }
    ]
}
)");
}

TEST_CASE("add to an empty plugins list") {
  std::string in = R"({
  "schema_version": 1,
  "plugins": []
}
)";
  std::string expanded = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1"
    }
  ]
}
)";
  CHECK(add(in, "a", "^1") == expanded);
  // Blanks inside the brackets go too.
  CHECK(add("{\n  \"schema_version\": 1,\n  \"plugins\": [ \n  ]\n}\n", "a",
            "^1") == expanded);
  // Entries take the style of the registries when there is no plugin yet.
  std::string withRegistry = R"({
  "schema_version": 1,
  "registries": [
    { "name": "main", "url": "https://plugins.example.org/iree" }
  ],
  "plugins": []
}
)";
  CHECK(add(withRegistry, "a", "^1", {}, "main") == R"({
  "schema_version": 1,
  "registries": [
    { "name": "main", "url": "https://plugins.example.org/iree" }
  ],
  "plugins": [
    { "name": "a", "version": "^1", "registry": "main" }
  ]
}
)");
}

TEST_CASE("add keeps CRLF line endings and a missing final newline") {
  std::string in = crlf("{\n  \"schema_version\": 1,\n  \"plugins\": []\n}");
  CHECK(add(in, "a", "^1") ==
        crlf("{\n  \"schema_version\": 1,\n  \"plugins\": [\n    {\n"
             "      \"name\": \"a\",\n      \"version\": \"^1\"\n    }\n"
             "  ]\n}"));
  std::string two = crlf("{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
                         "    {\n      \"name\": \"a\"\n    }\n  ]\n}\n");
  std::string out = add(two, "b", std::nullopt, {{"o", 1}});
  CHECK(out == crlf("{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
                    "    {\n      \"name\": \"a\"\n    },\n    {\n"
                    "      \"name\": \"b\",\n      \"options\": {\n"
                    "        \"o\": 1\n      }\n    }\n  ]\n}\n"));
  // No bare \n was introduced.
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] == '\n')
      CHECK((i > 0 && out[i - 1] == '\r'));
}

TEST_CASE("add to a file written on one line stays on one line") {
  CHECK(add("{\"schema_version\": 1}", "a", "^1") ==
        "{\"schema_version\": 1, \"plugins\": [{\"name\": \"a\", "
        "\"version\": \"^1\"}]}");
  CHECK(add("{\"schema_version\":1,\"plugins\":[]}\n", "a", "^1") ==
        "{\"schema_version\":1,\"plugins\":[{\"name\":\"a\",\"version\":"
        "\"^1\"}]}\n");
  CHECK(add("{\"schema_version\": 1, \"plugins\": [{\"name\": \"a\"}]}", "b",
            "^2") == "{\"schema_version\": 1, \"plugins\": [{\"name\": \"a\"}, "
                     "{\"name\": \"b\", \"version\": \"^2\"}]}");
}

TEST_CASE("add keeps key order: plugins before schema_version") {
  std::string in = R"({
  "plugins": [
    {"name": "a"}
  ],
  "schema_version": 1
}
)";
  CHECK(add(in, "b", "^2") == R"({
  "plugins": [
    {"name": "a"},
    {"name": "b", "version": "^2"}
  ],
  "schema_version": 1
}
)");
}

TEST_CASE("add replaces only the version of a listed plugin") {
  std::string in = R"({
  "schema_version": 1,
  "plugins": [
    { "name": "a", "version":   "^1.0", "options": { "x": 1 } },
    {
      "name": "b",
      "version": ">=2.0.0, <3.0.0"
    }
  ]
}
)";
  std::string out = add(in, "a", "^1.3");
  std::string expected = in;
  expected.replace(expected.find("\"^1.0\""), 6, "\"^1.3\"");
  CHECK(out == expected);
  out = add(in, "b", "~2.1");
  expected = in;
  expected.replace(expected.find("\">=2.0.0, <3.0.0\""), 17, "\"~2.1\"");
  CHECK(out == expected);
  // The same version again changes nothing.
  CHECK(add(in, "a", "^1.0") == in);
}

TEST_CASE("add inserts a version right after the name") {
  std::string expanded = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a"
    },
    {
      "name": "b",
      "options": {"x": 1}
    }
  ]
}
)";
  CHECK(add(expanded, "a", "^2") == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^2"
    },
    {
      "name": "b",
      "options": {"x": 1}
    }
  ]
}
)");
  CHECK(add(expanded, "b", "^3") == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a"
    },
    {
      "name": "b",
      "version": "^3",
      "options": {"x": 1}
    }
  ]
}
)");
  std::string compact = "{\"schema_version\": 1, \"registries\": [{\"name\": "
                        "\"r\", \"url\": \"../r\"}], \"plugins\": [{ \"name\": "
                        "\"a\", \"registry\": \"r\" }]}";
  CHECK(add(compact, "a", "^2") ==
        "{\"schema_version\": 1, \"registries\": [{\"name\": \"r\", \"url\": "
        "\"../r\"}], \"plugins\": [{ \"name\": \"a\", \"version\": \"^2\", "
        "\"registry\": \"r\" }]}");
}

TEST_CASE("add merges options into a listed plugin") {
  std::string in = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1",
      "options": {
        "x": 1,
        "y": "s"
      }
    }
  ]
}
)";
  CHECK(add(in, "a", std::nullopt, {{"y", "t"}, {"z", json::array({1, 2})}}) ==
        R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1",
      "options": {
        "x": 1,
        "y": "t",
        "z": [1, 2]
      }
    }
  ]
}
)");
  // No options yet: the member is added at the end of the entry.
  std::string bare = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1"
    }
  ]
}
)";
  CHECK(add(bare, "a", std::nullopt, {{"tile", 16}}) == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1",
      "options": {
        "tile": 16
      }
    }
  ]
}
)");
  // An empty options object is filled in the entry's style.
  std::string empty = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "options": {}
    }
  ]
}
)";
  CHECK(add(empty, "a", "^1", {{"tile", 16}, {"fast", false}}) == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "version": "^1",
      "options": {
        "fast": false,
        "tile": 16
      }
    }
  ]
}
)");
  std::string compact = "{\"schema_version\": 1, \"plugins\": [{\"name\": "
                        "\"a\", \"options\": {\"x\": 1}}]}";
  CHECK(add(compact, "a", std::nullopt, {{"x", 2}, {"y", 3.5}}) ==
        "{\"schema_version\": 1, \"plugins\": [{\"name\": \"a\", "
        "\"options\": {\"x\": 2, \"y\": 3.5}}]}");
}

TEST_CASE("add keeps unicode text byte for byte") {
  std::string in =
      "{\n  \"schema_version\": 1,\n  \"registries\": [\n"
      "    {\"name\": \"r\", \"url\": \"https://例え.jp/plugins\"}\n"
      "  ],\n  \"plugins\": [\n"
      "    {\"name\": \"a\", \"options\": {\"label\": \"naïve ✓\"}}\n"
      "  ]\n}\n";
  std::string out = add(in, "b", "^1", {{"label", "größe \u00b5"}});
  CHECK(out == "{\n  \"schema_version\": 1,\n  \"registries\": [\n"
               "    {\"name\": \"r\", \"url\": \"https://例え.jp/plugins\"}\n"
               "  ],\n  \"plugins\": [\n"
               "    {\"name\": \"a\", \"options\": {\"label\": \"naïve ✓\"}},\n"
               "    {\"name\": \"b\", \"version\": \"^1\", \"options\": "
               "{\"label\": \"größe µ\"}}\n  ]\n}\n");
  CHECK(parseOk(out).plugins[1].options.at("label") == "größe µ");
  // Escapes in existing strings do not confuse the scan for their end.
  std::string escaped = "{\"schema_version\": 1, \"plugins\": [{\"name\": "
                        "\"a\", \"options\": {\"s\": \"q\\\"}{]\\\\\"}}]}";
  CHECK(add(escaped, "a", "^1") ==
        "{\"schema_version\": 1, \"plugins\": [{\"name\": \"a\", \"version\": "
        "\"^1\", \"options\": {\"s\": \"q\\\"}{]\\\\\"}}]}");
}

TEST_CASE("add writes the registry of a plugin") {
  std::string in = R"({
  "schema_version": 1,
  "registries": [
    {"name": "main", "url": "https://a.example"},
    {"name": "local", "url": "../registry"}
  ],
  "plugins": [
    {
      "name": "a",
      "version": "^1",
      "registry": "main"
    }
  ]
}
)";
  std::string out = add(in, "a", std::nullopt, {}, "local");
  std::string expected = in;
  expected.replace(expected.find("\"main\"\n"), 6, "\"local\"");
  CHECK(out == expected);
}

TEST_CASE("add refuses bad requests and broken files") {
  std::string in = R"({
  "schema_version": 1,
  "registries": [{"name": "main", "url": "https://a.example"}],
  "plugins": [
    {"name": "local-thing", "path": "./local"}
  ]
}
)";
  AddRequest r;
  r.name = "Bad_Name";
  CHECK(addError(in, r).code == ErrorCode::Invalid);
  r.name = "a";
  r.constraint = "^^1";
  CHECK(addError(in, r).code == ErrorCode::Invalid);
  r.constraint = "^1";
  r.registry = "mian";
  Error e = addError(in, r);
  CHECK(e.code == ErrorCode::NotFound);
  CHECK(e.message.find("registry \"mian\" is not defined") !=
        std::string::npos);
  CHECK(e.message.find("did you mean \"main\"") != std::string::npos);
  r.registry.clear();
  r.options = {{"--tile", 1}};
  e = addError(in, r);
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(e.hint.find("without its leading dashes, e.g. tile") !=
        std::string::npos);
  r.options = {{"label", "\xff\xfe"}};
  CHECK(addError(in, r).code == ErrorCode::Invalid);
  r.options.clear();

  // A version for a local package.
  r.name = "local-thing";
  e = addError(in, r);
  CHECK(e.code == ErrorCode::Conflict);
  CHECK(e.where.line == 5);

  // Not JSON: the parser's position.
  r.name = "a";
  e = addError("{\n  \"schema_version\": 1,\n  \"plugins\": [,]\n}\n", r);
  CHECK(e.code == ErrorCode::Parse);
  REQUIRE(!e.diagnostics.empty());
  CHECK(e.diagnostics[0].where.file == kOrigin);
  CHECK(e.diagnostics[0].where.line == 3);
  CHECK(e.diagnostics[0].where.column == 15);
  CHECK(e.format().find("plugins.json:3:15") != std::string::npos);

  // JSON, but not a valid project file: the rule's position.
  e = addError("{\n  \"schema_version\": 1,\n  \"plugnis\": []\n}\n", r);
  CHECK(e.code == ErrorCode::Invalid);
  REQUIRE(!e.diagnostics.empty());
  CHECK(e.diagnostics[0].where.line == 3);
  CHECK(e.diagnostics[0].where.pointer == "/plugnis");
  CHECK(e.format().find("plugins.json:3:3") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// rm
//===----------------------------------------------------------------------===//

TEST_CASE("rm removes the first, a middle, the last and the only entry") {
  std::string in = R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "options": {"x": 1}
    },
    {
      "name": "b"
    },
    {
      "name": "c"
    }
  ],
  "choose": {}
}
)";
  CHECK(rm(in, "a") == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "b"
    },
    {
      "name": "c"
    }
  ],
  "choose": {}
}
)");
  CHECK(rm(in, "b") == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "options": {"x": 1}
    },
    {
      "name": "c"
    }
  ],
  "choose": {}
}
)");
  CHECK(rm(in, "c") == R"({
  "schema_version": 1,
  "plugins": [
    {
      "name": "a",
      "options": {"x": 1}
    },
    {
      "name": "b"
    }
  ],
  "choose": {}
}
)");
  CHECK(rm(rm(rm(in, "b"), "a"), "c") == R"({
  "schema_version": 1,
  "plugins": [],
  "choose": {}
}
)");
}

TEST_CASE("rm in compact, one-line and CRLF files") {
  std::string compact = "{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
                        "    { \"name\": \"a\" },\n    { \"name\": \"b\" },\n"
                        "    { \"name\": \"c\" }\n  ]\n}\n";
  CHECK(rm(compact, "b") == "{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
                            "    { \"name\": \"a\" },\n"
                            "    { \"name\": \"c\" }\n  ]\n}\n");
  CHECK(rm(compact, "c") == "{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
                            "    { \"name\": \"a\" },\n"
                            "    { \"name\": \"b\" }\n  ]\n}\n");
  std::string line = "{\"schema_version\":1,\"plugins\":[{\"name\":\"a\"},"
                     "{\"name\":\"b\"},{\"name\":\"c\"}]}";
  CHECK(rm(line, "a") == "{\"schema_version\":1,\"plugins\":[{\"name\":\"b\"},"
                         "{\"name\":\"c\"}]}");
  CHECK(rm(line, "b") == "{\"schema_version\":1,\"plugins\":[{\"name\":\"a\"},"
                         "{\"name\":\"c\"}]}");
  CHECK(rm(line, "c") == "{\"schema_version\":1,\"plugins\":[{\"name\":\"a\"},"
                         "{\"name\":\"b\"}]}");
  CHECK(rm(crlf(compact), "a") ==
        crlf("{\n  \"schema_version\": 1,\n  \"plugins\": [\n"
             "    { \"name\": \"b\" },\n    { \"name\": \"c\" }\n  ]\n}\n"));
}

TEST_CASE("rm of a plugin that is not listed") {
  std::string in = "{\"schema_version\": 1, \"plugins\": [{\"name\": "
                   "\"simple-mul\"}, {\"name\": \"fft\"}]}";
  auto out = removePlugin(in, "simple-mull", kOrigin);
  REQUIRE_FALSE(out);
  CHECK(out.error().code == ErrorCode::NotFound);
  CHECK(out.error().message ==
        "plugin \"simple-mull\" is not listed (did you mean \"simple-mul\"?)");
  CHECK(out.error().where.file == kOrigin);
  CHECK(out.error().where.pointer == "/plugins");
  CHECK(out.error().hint == "it lists: simple-mul, fft");
  auto none = removePlugin("{\"schema_version\": 1}", "x", kOrigin);
  REQUIRE_FALSE(none);
  CHECK(none.error().hint == "the file lists no plugins");
}

TEST_CASE("add then rm gives back the original bytes") {
  std::string in = "{\n    \"schema_version\": 1,\n    \"plugins\": [\n"
                   "        {\"name\": \"a\", \"version\": \"^1\"}\n    ]\n}";
  CHECK(rm(add(in, "b", "^2", {{"k", "v"}}), "b") == in);
}

//===----------------------------------------------------------------------===//
// init
//===----------------------------------------------------------------------===//

TEST_CASE("starter project files are valid and formatted") {
  StarterOptions none;
  std::string host = hostPlatform().str();
  CHECK(starterProjectFile(none) ==
        "{\n  \"schema_version\": 1,\n  \"registries\": [],\n"
        "  \"platforms\": [\"" +
            host + "\"],\n  \"plugins\": []\n}\n");
  parseOk(starterProjectFile(none));

  StarterOptions full;
  full.registries.push_back(
      {"default",
       "https://plugins.example.org/iree",
       {"https://mirror.example.net/iree"},
       "RWRUBFAUiucqcHvoSzfAniLY42lbPDq5BRpExfL6yr3Ff8BO7+qVarZe"});
  full.platforms = {*Platform::parse("linux-x86_64"),
                    *Platform::parse("linux-aarch64")};
  std::string text = starterProjectFile(full);
  CHECK(text == R"({
  "schema_version": 1,
  "registries": [
    {
      "name": "default",
      "url": "https://plugins.example.org/iree",
      "mirrors": ["https://mirror.example.net/iree"],
      "public_key": "RWRUBFAUiucqcHvoSzfAniLY42lbPDq5BRpExfL6yr3Ff8BO7+qVarZe"
    }
  ],
  "platforms": ["linux-x86_64", "linux-aarch64"],
  "plugins": []
}
)");
  ProjectFile p = parseOk(text);
  CHECK(p.registries.size() == 1);
  CHECK(p.platforms.size() == 2);
  // A starter file takes its first plugin nicely.
  CHECK(add(text, "a", "^1")
            .find("  \"plugins\": [\n    {\n      \"name\": "
                  "\"a\",\n      \"version\": \"^1\"\n    }\n"
                  "  ]\n}\n") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// inputHash
//===----------------------------------------------------------------------===//

TEST_CASE("the input hash follows the resolvable parts only") {
  std::string base = R"({
  "schema_version": 1,
  "registries": [{"name": "main", "url": "https://a.example"}],
  "platforms": ["linux-x86_64", "linux-aarch64"],
  "plugins": [
    {"name": "a", "version": "^1", "options": {"x": 1}},
    {"name": "b", "path": "./b"}
  ],
  "choose": {"input-type": "a"}
})";
  std::string h = inputHash(parseOk(base));
  CHECK(h.size() == 7 + 64);
  CHECK(h.starts_with("sha256:"));
  CHECK(h.find_first_not_of("0123456789abcdef", 7) == std::string::npos);

  // Formatting, options, choose and platform order do not matter.
  std::string reformatted =
      "{\"choose\":{},\"plugins\":[{\"version\":\"^1\",\"name\":\"a\"},"
      "{\"name\":\"b\",\"path\":\"./b\"}],\"platforms\":[\"linux-aarch64\","
      "\"linux-x86_64\"],\"registries\":[{\"url\":\"https://a.example\","
      "\"name\":\"main\"}],\"schema_version\":1}";
  CHECK(inputHash(parseOk(reformatted)) == h);
  CHECK(inputHash(
            parseOk(add(base, "a", std::nullopt, {{"x", 2}, {"y", 3}}))) == h);

  // Everything resolution reads does.
  auto differs = [&](const std::string &from, const std::string &to) {
    std::string changed = base;
    size_t at = changed.find(from);
    REQUIRE(at != std::string::npos);
    changed.replace(at, from.size(), to);
    CHECK_MESSAGE(inputHash(parseOk(changed)) != h, to);
  };
  differs("\"^1\"", "\"^1.1\"");
  differs("\"./b\"", "\"./c\"");
  differs("https://a.example", "https://b.example");
  differs("\"name\": \"main\"", "\"name\": \"other\"");
  differs("\"linux-x86_64\", ", "");
  differs("{\"name\": \"main\", \"url\": \"https://a.example\"}",
          "{\"name\": \"main\", \"url\": \"https://a.example\", \"mirrors\": "
          "[\"https://m.example\"]}");
  differs("{\"name\": \"a\", \"version\": \"^1\", \"options\": {\"x\": 1}}",
          "{\"name\": \"a\", \"version\": \"^1\", \"registry\": \"main\"}");
  // Plugin order is activation order.
  differs("{\"name\": \"a\", \"version\": \"^1\", \"options\": {\"x\": 1}},\n"
          "    {\"name\": \"b\", \"path\": \"./b\"}",
          "{\"name\": \"b\", \"path\": \"./b\"},\n"
          "    {\"name\": \"a\", \"version\": \"^1\"}");
  CHECK(inputHash(parseOk(rm(base, "b"))) != h);
}

//===----------------------------------------------------------------------===//
// Lockfiles
//===----------------------------------------------------------------------===//

namespace {

Lockfile parseLockOk(const std::string &text) {
  auto doc = JsonDocument::parse(text, "plugins.lock.json");
  REQUIRE_MESSAGE(doc, doc.error().format());
  DiagnosticList diags;
  Lockfile lock = parseLockfile(*doc, ParseOptions{}, diags);
  std::string all;
  for (const Diagnostic &d : diags.items())
    all += d.format() + "\n";
  REQUIRE_MESSAGE(diags.empty(), all);
  return lock;
}

Version v(const char *text) { return *Version::parse(text); }

} // namespace

TEST_CASE("the lockfile fixtures are exactly what serializeLockfile writes") {
  std::filesystem::path dir =
      std::filesystem::path(IREEPKG_SOURCE_DIR) / "tests/data/lock";
  int checked = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("good_") || !name.ends_with(".json"))
      continue;
    CAPTURE(name);
    std::string text = readText(entry.path());
    CHECK(serializeLockfile(parseLockOk(text)) == text);
    ++checked;
  }
  CHECK(checked >= 3);
}

namespace {

/// The lockfile as a json document, dumped as nlohmann dumps it: what
/// serializeLockfile, which writes the text directly, must give byte for
/// byte.
std::string lockfileThroughJson(const Lockfile &lock) {
  std::vector<LockedPackage> sorted = lock.packages;
  std::ranges::stable_sort(sorted, {}, &LockedPackage::name);
  auto platformNames = [](const std::vector<Platform> &ps) {
    std::set<std::string> names;
    for (const Platform &p : ps)
      names.insert(p.str());
    return std::vector<std::string>(names.begin(), names.end());
  };
  json out = json::array();
  for (const LockedPackage &package : sorted) {
    const LockedPackage *p = &package;
    bool archived = p->sourceKind != LockedPackage::SourceKind::Path;
    json j = {{"name", p->name}, {"version", p->version.str()}};
    const char *kind = p->sourceKind == LockedPackage::SourceKind::Path ? "path"
                       : p->sourceKind == LockedPackage::SourceKind::Bundle
                           ? "bundle"
                           : "registry";
    j["source"] = {{kind, p->source}};
    if (archived || !p->archive.empty())
      j["archive"] = p->archive;
    if (archived || !p->sha256.empty())
      j["sha256"] = p->sha256;
    if (archived || p->size != 0)
      j["size"] = p->size;
    if (!p->signedBy.empty())
      j["signed_by"] = p->signedBy;
    std::vector<std::string> deps;
    for (const auto &[name, version] : p->dependencies)
      deps.push_back(name + "@" + version.str());
    std::sort(deps.begin(), deps.end());
    j["dependencies"] = deps;
    if (!p->platforms.empty())
      j["platforms"] = platformNames(p->platforms);
    out.push_back(std::move(j));
  }
  json doc = {{"lock_version", lock.lockVersion},
              {"input_hash", lock.inputHash},
              {"platforms", platformNames(lock.platforms)},
              {"packages", std::move(out)},
              {"activation", lock.activation}};
  if (lock.ireeVersion)
    doc["iree_version"] = lock.ireeVersion->str();
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace

TEST_CASE("serializeLockfile writes what nlohmann's dump of the same "
          "document writes, on random lockfiles") {
  std::mt19937 rng(20261128);
  auto pick = [&](size_t n) { return size_t(rng() % n); };
  // Strings with what a JSON writer must take care of: quotes,
  // backslashes, control characters, DEL, UTF-8 and invalid bytes.
  const std::vector<std::string> pieces = {"a",
                                           "plugin",
                                           "/",
                                           "https://x.org/r",
                                           "\"",
                                           "\\",
                                           "\n",
                                           "\t",
                                           std::string(1, '\x01'),
                                           std::string(1, '\x1f'),
                                           "\x7f",
                                           "b\xc3\xa4se",
                                           "\xe2\x82\xac",
                                           "\xff",
                                           "\xc3",
                                           " ",
                                           "@",
                                           "{",
                                           "]"};
  auto text = [&] {
    std::string out;
    for (size_t n = pick(4); n > 0; --n)
      out += pieces[pick(pieces.size())];
    return out;
  };
  const std::vector<std::string> versions = {"1.0.0", "0.1.2-rc.1",
                                             "2.0.0+build.7", "10.20.30"};
  const std::vector<std::string> platforms = {"linux-x86_64", "linux-aarch64",
                                              "macos-arm64"};
  auto platformList = [&] {
    std::vector<Platform> out;
    for (size_t n = pick(3); n > 0; --n)
      out.push_back(*Platform::parse(platforms[pick(platforms.size())]));
    return out;
  };
  for (int round = 0; round < 300; ++round) {
    Lockfile lock;
    lock.lockVersion = int(pick(3));
    lock.inputHash = text();
    lock.platforms = platformList();
    if (pick(2))
      lock.ireeVersion = v(versions[pick(versions.size())].c_str());
    for (size_t n = pick(5); n > 0; --n) {
      LockedPackage p;
      p.name = text();
      p.version = v(versions[pick(versions.size())].c_str());
      p.sourceKind = LockedPackage::SourceKind(pick(3));
      p.source = text();
      p.archive = pick(2) ? text() : "";
      p.sha256 = pick(2) ? text() : "";
      p.size = pick(2) ? uint64_t(rng()) << 20 : 0;
      p.signedBy = pick(2) ? text() : "";
      for (size_t k = pick(3); k > 0; --k)
        p.dependencies.emplace_back(text(),
                                    v(versions[pick(versions.size())].c_str()));
      p.platforms = platformList();
      lock.packages.push_back(std::move(p));
    }
    for (size_t n = pick(4); n > 0; --n)
      lock.activation.push_back(text());
    CAPTURE(round);
    REQUIRE(serializeLockfile(lock) == lockfileThroughJson(lock));
  }
}

TEST_CASE("lockfiles are sorted, deterministic and read back the same") {
  Lockfile lock;
  lock.inputHash = "sha256:" + std::string(64, 'a');
  lock.platforms = {*Platform::parse("linux-x86_64"),
                    *Platform::parse("linux-aarch64")};
  LockedPackage top;
  top.name = "zeta";
  top.version = v("2.0.0-rc.1");
  top.source = "https://plugins.example.org/iree";
  top.archive = "archives/zeta/zeta-2.0.0-rc.1.ireepkg";
  top.sha256 = std::string(64, '1');
  top.size = 42;
  top.dependencies = {{"mid", v("1.1.0")}, {"base", v("1.0.0+build.7")}};
  top.platforms = {*Platform::parse("linux-x86_64"),
                   *Platform::parse("linux-aarch64")};
  LockedPackage mid;
  mid.name = "mid";
  mid.version = v("1.1.0");
  mid.sourceKind = LockedPackage::SourceKind::Bundle;
  mid.source = "vendor/b.ireebundle";
  mid.archive = "archives/mid/mid-1.1.0.ireepkg";
  mid.sha256 = std::string(64, '2');
  mid.size = 0;
  mid.signedBy = "702AE78A14500454";
  mid.dependencies = {{"base", v("1.0.0+build.7")}};
  LockedPackage base;
  base.name = "base";
  base.version = v("1.0.0+build.7");
  base.sourceKind = LockedPackage::SourceKind::Path;
  base.source = "./plugins/bäse";
  lock.packages = {top, mid, base};
  lock.activation = {"base", "mid", "zeta"};

  std::string text = serializeLockfile(lock);
  CHECK(text == serializeLockfile(lock));
  CHECK(text == R"({
  "activation": [
    "base",
    "mid",
    "zeta"
  ],
  "input_hash": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "lock_version": 1,
  "packages": [
    {
      "dependencies": [],
      "name": "base",
      "source": {
        "path": "./plugins/bäse"
      },
      "version": "1.0.0+build.7"
    },
    {
      "archive": "archives/mid/mid-1.1.0.ireepkg",
      "dependencies": [
        "base@1.0.0+build.7"
      ],
      "name": "mid",
      "sha256": "2222222222222222222222222222222222222222222222222222222222222222",
      "signed_by": "702AE78A14500454",
      "size": 0,
      "source": {
        "bundle": "vendor/b.ireebundle"
      },
      "version": "1.1.0"
    },
    {
      "archive": "archives/zeta/zeta-2.0.0-rc.1.ireepkg",
      "dependencies": [
        "base@1.0.0+build.7",
        "mid@1.1.0"
      ],
      "name": "zeta",
      "platforms": [
        "linux-aarch64",
        "linux-x86_64"
      ],
      "sha256": "1111111111111111111111111111111111111111111111111111111111111111",
      "size": 42,
      "source": {
        "registry": "https://plugins.example.org/iree"
      },
      "version": "2.0.0-rc.1"
    }
  ],
  "platforms": [
    "linux-aarch64",
    "linux-x86_64"
  ]
}
)");
  Lockfile back = parseLockOk(text);
  CHECK(serializeLockfile(back) == text);
  REQUIRE(back.packages.size() == 3);
  CHECK(back.packages[0].sourceKind == LockedPackage::SourceKind::Path);
  CHECK(back.packages[0].source == "./plugins/bäse");
  CHECK(back.packages[1].signedBy == "702AE78A14500454");
  CHECK(back.packages[2].version.identical(v("2.0.0-rc.1")));
  CHECK(back.activation == lock.activation);

  // The order things were given in does not change the bytes.
  std::swap(lock.packages[0], lock.packages[2]);
  std::swap(lock.platforms[0], lock.platforms[1]);
  std::swap(lock.packages[2].dependencies[0], lock.packages[2].dependencies[1]);
  CHECK(serializeLockfile(lock) == text);

  // A local package that was packed keeps its archive fields.
  lock.packages[0].archive = "archives/base/base-1.0.0+build.7.ireepkg";
  lock.packages[0].sha256 = std::string(64, '3');
  lock.packages[0].size = 7;
  std::string packed = serializeLockfile(lock);
  Lockfile packedBack = parseLockOk(packed);
  CHECK(packedBack.packages[0].size == 7);
  CHECK(serializeLockfile(packedBack) == packed);
}

//===----------------------------------------------------------------------===//
// Option checks
//===----------------------------------------------------------------------===//

TEST_CASE("project options are checked against the plugin's schemas") {
  ScratchDir dir;
  std::string projectPath = (dir.path / "plugins.json").string();
  std::string text = R"({
  "schema_version": 1,
  "plugins": [
    {"name": "other"},
    {
      "name": "simple-mul",
      "options": {
        "iree-simple-mul-tile": 64,
        "iree-simple-mul-mdoe": "fast",
        "iree-simple-mul-mode": "slow",
        "iree-simple-mul-shapes": [4, 8]
      }
    }
  ]
}
)";
  std::ofstream(projectPath, std::ios::binary) << text;
  ProjectFile project = parseOk(text);

  Manifest m;
  m.name = "simple-mul";
  m.version = v("1.2.4");
  CompilerPlugin cp;
  cp.id = "simple_mul";
  cp.options["iree-simple-mul-tile"] = {{"type", "integer"},
                                        {"minimum", 1},
                                        {"maximum", 32},
                                        {"default", 16},
                                        {"description", "tile size"}};
  cp.options["iree-simple-mul-mode"] = {
      {"type", "string"}, {"enum", json::array({"fast", "precise"})}};
  cp.options["iree-simple-mul-shapes"] = {{"type", "array"},
                                          {"items", {{"type", "integer"}}}};
  m.compilerPlugins.push_back(cp);

  DiagnosticList diags;
  checkProjectOptions(project.plugins[1], 1, m, projectPath, diags);
  REQUIRE(diags.errorCount() == 3);
  std::map<std::string, Diagnostic> byPointer;
  for (const Diagnostic &d : diags.items())
    byPointer[d.where.pointer] = d;

  const Diagnostic &tile =
      byPointer.at("/plugins/1/options/iree-simple-mul-tile");
  CHECK(tile.where.file == projectPath);
  CHECK(tile.where.line == 8);
  CHECK(tile.where.column == 33);
  CHECK(tile.message ==
        "plugin \"simple-mul\" option \"iree-simple-mul-tile\": "
        "64 is greater than the maximum 32");
  CHECK(tile.hint == "its schema: {\"maximum\":32,\"minimum\":1,\"type\":"
                     "\"integer\"} (tile size)");

  const Diagnostic &typo =
      byPointer.at("/plugins/1/options/iree-simple-mul-mdoe");
  CHECK(typo.where.line == 9);
  CHECK(typo.where.column == 9); // the key
  CHECK(typo.message == "plugin \"simple-mul\" has no option "
                        "\"iree-simple-mul-mdoe\" (did you mean "
                        "\"iree-simple-mul-mode\"?)");
  CHECK(typo.hint == "simple-mul 1.2.4 declares: iree-simple-mul-mode, "
                     "iree-simple-mul-shapes, iree-simple-mul-tile");

  const Diagnostic &mode =
      byPointer.at("/plugins/1/options/iree-simple-mul-mode");
  CHECK(mode.message.starts_with("plugin \"simple-mul\" option "
                                 "\"iree-simple-mul-mode\": \"slow\" is not "
                                 "one of"));
  CHECK(mode.format().starts_with(projectPath +
                                  ":10:33: "
                                  "/plugins/1/options/iree-simple-mul-mode: "));

  // Valid values and a plugin without options.
  DiagnosticList clean;
  checkProjectOptions(project.plugins[0], 0, m, projectPath, clean);
  CHECK(clean.empty());
  Manifest bare;
  bare.name = "simple-mul";
  bare.version = v("1.0.0");
  DiagnosticList noOptions;
  checkProjectOptions(project.plugins[1], 1, bare, projectPath, noOptions);
  CHECK(noOptions.errorCount() == 4);
  CHECK(noOptions.items()[0].hint.starts_with(
      "simple-mul 1.0.0 declares no options"));

  // Without the file, the pointer still says where.
  DiagnosticList missing;
  checkProjectOptions(project.plugins[1], 1, m,
                      (dir.path / "gone.json").string(), missing);
  REQUIRE(missing.errorCount() == 3);
  CHECK(missing.items()[0].where.line == 0);
  CHECK(missing.items()[0].where.pointer.starts_with("/plugins/1/options/"));
}

//===----------------------------------------------------------------------===//
// Finding the project file
//===----------------------------------------------------------------------===//

TEST_CASE("the project file is found in the nearest directory upward") {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path / "a/b/c");
  std::ofstream(dir.path / "a/plugins.json") << "{}";
  CHECK(findProjectFile((dir.path / "a/b/c").string()) ==
        (dir.path / "a/plugins.json").string());
  CHECK(findProjectFile((dir.path / "a/b/c/").string()) ==
        (dir.path / "a/plugins.json").string());
  std::ofstream(dir.path / "a/b/plugins.json") << "{}";
  CHECK(findProjectFile((dir.path / "a/b/c").string()) ==
        (dir.path / "a/b/plugins.json").string());
}

//===----------------------------------------------------------------------===//
// Many layouts
//===----------------------------------------------------------------------===//

namespace {

/// Writes `v` with layout choices taken from `rng`: each object or array
/// spread over lines or kept on one, spaces around ':' and ',' or not.
struct RandomPrinter {
  std::mt19937 &rng;
  std::string unit;
  std::string nl;

  bool coin() { return rng() % 2 == 0; }

  std::string print(const json &v, const std::string &indent,
                    const std::vector<std::string> *order = nullptr) {
    if (!v.is_object() && !v.is_array())
      return v.dump();
    bool object = v.is_object();
    if (v.empty())
      return object ? (coin() ? "{}" : "{ }") : (coin() ? "[]" : "[ ]");
    std::vector<std::string> keys;
    if (object) {
      if (order)
        keys = *order;
      else
        for (auto it = v.begin(); it != v.end(); ++it)
          keys.push_back(it.key());
    }
    size_t n = object ? keys.size() : v.size();
    bool expanded = coin();
    std::string colon = coin() ? ": " : ":";
    std::string sep = coin() ? ", " : ",";
    std::string out = object ? "{" : "[";
    std::string inner = indent + unit;
    for (size_t i = 0; i < n; ++i) {
      if (expanded)
        out += (i ? "," : "") + nl + inner;
      else
        out += i ? sep : "";
      const json &item = object ? v.at(keys[i]) : v.at(i);
      if (object)
        out += json(keys[i]).dump() + colon;
      out += print(item, expanded ? inner : indent);
    }
    out += expanded ? nl + indent : "";
    return out + (object ? "}" : "]");
  }
};

} // namespace

TEST_CASE("add and rm keep any layout valid and byte-stable") {
  std::mt19937 rng(20240611);
  const std::vector<std::string> units = {"  ", "    ", "\t", " "};
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    json doc = {{"schema_version", 1}};
    doc["registries"] = json::array({{{"name", "main"}, {"url", "../r"}}});
    int plugins = static_cast<int>(rng() % 4);
    bool listPlugins = plugins > 0 || rng() % 2;
    json list = json::array();
    for (int i = 0; i < plugins; ++i) {
      json p = {{"name", "p" + std::to_string(i)}};
      if (rng() % 2)
        p["version"] = "^" + std::to_string(i + 1);
      if (rng() % 2)
        p["options"] = {{"k" + std::to_string(i), i}};
      if (rng() % 3 == 0)
        p["registry"] = "main";
      list.push_back(p);
    }
    if (listPlugins)
      doc["plugins"] = list;
    std::vector<std::string> order = {"schema_version", "registries"};
    if (listPlugins)
      order.insert(order.begin() + static_cast<long>(rng() % 3), "plugins");
    RandomPrinter printer{rng, units[rng() % units.size()],
                          rng() % 3 == 0 ? "\r\n" : "\n"};
    std::string text = printer.print(doc, "", &order);
    if (rng() % 2)
      text += printer.nl;
    CAPTURE(text);
    parseOk(text);

    // A new plugin, then taking it out again.
    std::map<std::string, json> options;
    if (rng() % 2)
      options["t"] = json::array({1, 2});
    std::string added =
        add(text, "new", "^9.1", options, rng() % 2 ? "main" : "");
    CHECK(added.size() > text.size());
    if (plugins > 0)
      CHECK(rm(added, "new") == text);
    // Nothing before the plugins list changed.
    size_t at = text.find("\"plugins\"");
    if (at != std::string::npos)
      CHECK(added.compare(0, at, text, 0, at) == 0);
    // Line endings stay what they were.
    if (printer.nl == "\r\n")
      for (size_t i = 0; i < added.size(); ++i)
        if (added[i] == '\n')
          CHECK((i > 0 && added[i - 1] == '\r'));

    // Changing and removing listed plugins.
    if (plugins > 0) {
      std::string name = "p" + std::to_string(rng() % plugins);
      std::string changed = add(text, name, "=1.0.0", {{"z", "v"}});
      ProjectFile p = parseOk(changed);
      CHECK(p.plugins.size() == static_cast<size_t>(plugins));
      std::string removed = rm(changed, name);
      CHECK(parseOk(removed).plugins.size() ==
            static_cast<size_t>(plugins - 1));
      CHECK(inputHash(parseOk(rm(text, name))) == inputHash(parseOk(removed)));
    }
  }
}
