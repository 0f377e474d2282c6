//===- test_mlir_check.cpp - Tests for the MLIR pipeline check ------------===//
//
// Unit tests for ireepkg/mlir_check.h: the request ireepkg sends to
// ireepkg-mlir-check (how each hook's pipeline is anchored and split into
// passes), the reading of its report into diagnostics (columns of passes and
// options in the hook's text, statuses, plugin failures, suggestions,
// malformed reports), and a few checks with the real tool, which the build
// puts beside this test binary.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/mlir_check.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ireepkg;
using nlohmann::json;

namespace {

PipelineSource source(std::string text,
                      HookPoint point = HookPoint::Preprocessing) {
  PipelineSource s;
  s.text = std::move(text);
  s.point = point;
  s.where = Location{"pkg/ireeplugin.json",        7,     21,
                     "/compiler/hooks/0/pipeline", "pkg", ""};
  return s;
}

json request(const std::vector<PipelineSource> &pipelines,
             const std::vector<PassPluginSource> &plugins = {}) {
  return mlirCheckRequest(pipelines, plugins, 5);
}

/// A report for `fragments`, each given as its JSON.
std::string output(const std::vector<json> &fragments,
                   const json &plugins = json::array()) {
  return json{{"mlir_version", "22.1.8"},
              {"plugins", plugins},
              {"fragments", json(fragments)}}
      .dump();
}

json okPass() { return {{"known", true}, {"errors", json::array()}}; }
json unknownPass() { return {{"known", false}}; }
json fragment(const std::vector<json> &passes,
              const std::vector<std::string> &unknown = {},
              json errors = json::array(), json suggestions = json::object()) {
  return {{"passes", json(passes)},
          {"unknown", json(unknown)},
          {"errors", errors},
          {"suggestions", suggestions}};
}

std::vector<std::string> messages(const DiagnosticList &diags,
                                  Severity severity) {
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.items())
    if (d.severity == severity)
      out.push_back(d.message);
  return out;
}

/// The ireepkg-mlir-check beside this binary, or "".
std::string checkerBesideTests() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "";
  auto tool = self.parent_path() / "ireepkg-mlir-check";
  return ::access(tool.c_str(), X_OK) == 0 ? tool.string() : "";
}

} // namespace

//===----------------------------------------------------------------------===//
// The request
//===----------------------------------------------------------------------===//

TEST_CASE("a builtin.module fragment is parsed from its inside") {
  json r = request({source(
      "builtin.module(func.func(canonicalize{max-iterations=3}), cse)")});
  REQUIRE(r["fragments"].size() == 1);
  const json &f = r["fragments"][0];
  CHECK(f["anchor"] == "builtin.module");
  CHECK(f["text"] == "func.func(canonicalize{max-iterations=3}), cse");
  CHECK(f["passes"] ==
        json::array({{{"name", "canonicalize"},
                      {"anchor", "func.func"},
                      {"options", "max-iterations=3"}},
                     {{"name", "cse"}, {"anchor", "builtin.module"}}}));
  CHECK(r["step_timeout_ms"] == 5000);
}

TEST_CASE("other fragments are parsed as they sit inside builtin.module") {
  for (HookPoint point : {HookPoint::Preprocessing, HookPoint::MlirPipeline}) {
    json r = request({source("func.func(cse){}", point), // syntax error
                      source(" canonicalize{} ,func.func(cse)", point)});
    REQUIRE(r["fragments"].size() == 1);
    const json &f = r["fragments"][0];
    CHECK(f["anchor"] == "builtin.module");
    CHECK(f["text"] == " canonicalize{} ,func.func(cse)");
    CHECK(f["passes"] ==
          json::array({{{"name", "canonicalize"},
                        {"anchor", "builtin.module"},
                        {"options", ""}},
                       {{"name", "cse"}, {"anchor", "func.func"}}}));
  }
}

TEST_CASE("an executable-preprocessing pipeline stands alone") {
  json r =
      request({source("cse,canonicalize", HookPoint::ExecutablePreprocessing),
               source("hal.executable.variant(builtin.module(cse))",
                      HookPoint::ExecutablePreprocessing)});
  REQUIRE(r["fragments"].size() == 2);
  CHECK(r["fragments"][0]["anchor"] == "any");
  CHECK(r["fragments"][0]["passes"][1] ==
        json{{"name", "canonicalize"}, {"anchor", "any"}});
  CHECK(r["fragments"][1]["anchor"] == "hal.executable.variant");
  CHECK(r["fragments"][1]["text"] == "builtin.module(cse)");
  CHECK(r["fragments"][1]["passes"][0]["anchor"] == "builtin.module");
}

TEST_CASE("the request names the plugin libraries and their kinds in order") {
  PassPluginSource a, b;
  a.path = "/p/a.so";
  b.path = "/p/b.so";
  b.dialect = true;
  CHECK(request({source("cse")}, {a, b})["plugins"] ==
        json::parse(R"([{"path": "/p/a.so", "kind": "pass"},
                        {"path": "/p/b.so", "kind": "dialect"}])"));
}

//===----------------------------------------------------------------------===//
// Reading the report
//===----------------------------------------------------------------------===//

TEST_CASE("errors point at the option, or else the pass, in the hook's text") {
  //                        1234567890123456789012345678901234567890123
  std::vector<PipelineSource> p = {
      source("builtin.module(cse, canonicalize{top-down=1 bad=2})")};
  json passErrors =
      json::array({{{"message", "pass \"canonicalize\" has no option \"bad\""},
                    {"option", "bad"},
                    {"hint", "the options of \"canonicalize\" are: top-down"}},
                   {{"message", "something about the pass"}}});
  MlirCheckReport report;
  DiagnosticList diags;
  REQUIRE(readMlirCheckOutput(
      output({fragment({okPass(), {{"known", true}, {"errors", passErrors}}})}),
      p, {}, report, diags));
  REQUIRE(diags.items().size() == 2);
  const Diagnostic &d = diags.items()[0];
  CHECK(d.severity == Severity::Error);
  CHECK(d.message == "invalid pass pipeline (MLIR 22.1.8): pass "
                     "\"canonicalize\" has no option \"bad\" (at column 45)");
  CHECK(d.hint == "the options of \"canonicalize\" are: top-down");
  CHECK(d.where.file == "pkg/ireeplugin.json");
  CHECK(d.where.line == 7);
  CHECK(d.where.pointer == "/compiler/hooks/0/pipeline");
  CHECK(d.where.package == "pkg");
  CHECK(diags.items()[1].message ==
        "invalid pass pipeline (MLIR 22.1.8): something about the pass "
        "(at column 21)");
  REQUIRE(report.pipelines.size() == 1);
  CHECK(report.pipelines[0].status == "checked");
  CHECK(report.pipelines[0].errors == 2);
  CHECK(report.ran);
  CHECK(report.mlirVersion == "22.1.8");
}

TEST_CASE("a whole-pipeline error's column is moved past the anchor") {
  std::vector<PipelineSource> p = {source("builtin.module(cse)"),
                                   source("cse")};
  json err = json::array({{{"message", "odd"}, {"column", 2}}});
  MlirCheckReport report;
  DiagnosticList diags;
  REQUIRE(readMlirCheckOutput(
      output({fragment({okPass()}, {}, err), fragment({okPass()}, {}, err)}), p,
      {}, report, diags));
  CHECK(messages(diags, Severity::Error) ==
        std::vector<std::string>{
            "invalid pass pipeline (MLIR 22.1.8): odd (at column 17)",
            "invalid pass pipeline (MLIR 22.1.8): odd (at column 2)"});
}

TEST_CASE("passes MLIR does not know leave a pipeline partly or not checked") {
  std::vector<PipelineSource> p = {source("iree-a,cse"),
                                   source("func.func(iree-b)"),
                                   source("func.func(cse){}"), // bad syntax
                                   source("canonicalise,iree-flow-cse")};
  MlirCheckReport report;
  DiagnosticList diags;
  REQUIRE(readMlirCheckOutput(
      output({fragment({unknownPass(), okPass()}, {"iree-a"}),
              fragment({unknownPass()}, {"iree-b"}),
              fragment({unknownPass(), unknownPass()},
                       {"canonicalise", "iree-flow-cse"}, json::array(),
                       {{"canonicalise", "canonicalize"},
                        {"iree-flow-cse", "cse"}})}),
      p, {}, report, diags));
  REQUIRE(report.pipelines.size() == 4);
  CHECK(report.pipelines[0].status == "partial");
  CHECK(report.pipelines[0].unknownPasses ==
        std::vector<std::string>{"iree-a"});
  CHECK(report.pipelines[1].status == "not-checked");
  CHECK(report.pipelines[2].status == "syntax-only");
  CHECK(report.pipelines[3].status == "not-checked");
  CHECK_FALSE(diags.hasErrors());
  // A near name is a warning, except for IREE's namespace.
  CHECK(messages(diags, Severity::Warning) ==
        std::vector<std::string>{
            "pass \"canonicalise\" is not known to MLIR 22.1.8 or to a "
            "loaded pass plugin; did you mean \"canonicalize\"? (at column "
            "1)"});
}

TEST_CASE("a plugin that cannot be loaded: error if checked, else warning") {
  PassPluginSource own, other;
  own.path = "/staged/lib/own.so";
  own.label = "lib/own.so";
  own.checked = true;
  own.where.pointer = "/compiler/plugins/0/library/linux-x86_64";
  other.path = "/prefix/lib/other.so";
  json plugins = json::array(
      {{{"path", own.path}, {"loaded", false}, {"error", "it crashed"}},
       {{"path", other.path}, {"loaded", false}, {"error", "wrong API"}}});
  MlirCheckReport report;
  DiagnosticList diags;
  REQUIRE(readMlirCheckOutput(output({fragment({okPass()})}, plugins),
                              {source("cse")}, {own, other}, report, diags));
  REQUIRE(diags.items().size() == 2);
  CHECK(diags.items()[0].severity == Severity::Error);
  CHECK(diags.items()[0].message ==
        "MLIR pass plugin \"lib/own.so\" cannot be loaded by MLIR 22.1.8: it "
        "crashed");
  CHECK(diags.items()[0].where.pointer ==
        "/compiler/plugins/0/library/linux-x86_64");
  CHECK(diags.items()[1].severity == Severity::Warning);
  CHECK(diags.items()[1].message ==
        "MLIR pass plugin \"/prefix/lib/other.so\" cannot be loaded by MLIR "
        "22.1.8: wrong API; pipelines that use its passes are not checked");
  REQUIRE(report.plugins.size() == 2);
  CHECK_FALSE(report.plugins[0].loaded);
}

TEST_CASE("a report that does not match the request is refused") {
  std::vector<PipelineSource> p = {source("cse")};
  MlirCheckReport report;
  DiagnosticList diags;
  for (const std::string &bad :
       {std::string("not json"), std::string("[]"), output({}),
        output({fragment({okPass(), okPass()})}),
        output({fragment({okPass()})}, json::array({json::object()}))}) {
    auto s = readMlirCheckOutput(bad, p, {}, report, diags);
    REQUIRE_FALSE(s);
    CHECK(s.error().code == ErrorCode::Internal);
    CHECK(s.error().message.find("ireepkg-mlir-check output") == 0);
  }
}

TEST_CASE("JSON of a report") {
  MlirCheckReport r;
  r.ran = true;
  r.checker = "/bin/ireepkg-mlir-check";
  r.mlirVersion = "22.1.8";
  PipelineCheck c;
  c.where = Location{"f.json", 3, 4, "/compiler/hooks/1/pipeline", "p", ""};
  c.point = HookPoint::MlirPipeline;
  c.status = "partial";
  c.unknownPasses = {"iree-x"};
  r.pipelines.push_back(c);
  json j = toJson(r);
  CHECK(j["ran"] == true);
  CHECK(j["mlir_version"] == "22.1.8");
  CHECK(j["pipelines"][0] == json{{"point", "mlir-pipeline"},
                                  {"status", "partial"},
                                  {"unknown_passes", {"iree-x"}},
                                  {"errors", 0},
                                  {"package", "p"},
                                  {"file", "f.json"},
                                  {"line", 3},
                                  {"column", 4},
                                  {"pointer", "/compiler/hooks/1/pipeline"}});
}

//===----------------------------------------------------------------------===//
// With the real ireepkg-mlir-check
//===----------------------------------------------------------------------===//

TEST_CASE("the real checker") {
  if (checkerBesideTests().empty()) {
    MESSAGE("ireepkg-mlir-check is not built (no MLIR 22): skipped");
    return;
  }
  ::unsetenv("IREEPKG_MLIR_CHECK");
  std::vector<PipelineSource> p = {
      source("builtin.module(func.func(canonicalize{max-iterations=3}),cse)"),
      source("canonicalize{no-such-option=1}"),
      source("func.func(canonicalize{max-iterations=abc})"),
      source("iree-flow-foo,cse"),
      source("promote-buffers-to-stack"),
  };
  DiagnosticList diags;
  auto report = checkPipelinesWithMlir(p, {}, diags);
  REQUIRE(report);
  CHECK(report->ran);
  CHECK(report->mlirVersion.rfind("22.", 0) == 0);
  REQUIRE(report->pipelines.size() == 5);
  CHECK(report->pipelines[0].status == "checked");
  CHECK(report->pipelines[0].errors == 0);
  CHECK(report->pipelines[3].status == "partial");
  const std::string v =
      "invalid pass pipeline (MLIR " + report->mlirVersion + "): ";
  CHECK(messages(diags, Severity::Error) ==
        std::vector<std::string>{
            v + "pass \"canonicalize\" has no option \"no-such-option\" (at "
                "column 14)",
            v + "invalid value for option \"max-iterations\" of pass "
                "\"canonicalize\": \"abc\" is not an integer (at column 24)",
            v + "pass \"promote-buffers-to-stack\" runs on \"func.func\" "
                "operations, but here it is nested on \"builtin.module\" (at "
                "column 1)"});
  CHECK(diags.warningCount() == 0);
}

TEST_CASE("IREEPKG_MLIR_CHECK=off and a missing checker") {
  std::vector<PipelineSource> p = {source("cse")};
  ::setenv("IREEPKG_MLIR_CHECK", "off", 1);
  DiagnosticList diags;
  auto report = checkPipelinesWithMlir(p, {}, diags);
  REQUIRE(report);
  CHECK_FALSE(report->ran);
  CHECK(report->skipped == "disabled by IREEPKG_MLIR_CHECK=off");
  CHECK(report->pipelines[0].status == "syntax-only");
  CHECK(diags.empty());

  ::setenv("IREEPKG_MLIR_CHECK", "/nonexistent/ireepkg-mlir-check", 1);
  auto missing = checkPipelinesWithMlir(p, {}, diags);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::NotFound);
  CHECK(missing.error().message ==
        "IREEPKG_MLIR_CHECK names '/nonexistent/ireepkg-mlir-check', which "
        "is not an executable file");
  ::unsetenv("IREEPKG_MLIR_CHECK");
}
