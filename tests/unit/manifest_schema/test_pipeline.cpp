//===- test_pipeline.cpp - Tests for MLIR textual pass pipelines ----------===//
//
// Unit tests for ireepkg/pipeline.h: the syntax of MLIR textual pass
// pipelines (anchored pipelines and fragments, options with quotes, nested
// braces and lists, whitespace), every syntax error with its exact message
// and column, the list of pass names, and the composition of fragments into
// one builtin.module(...) pipeline. Valid cases include the examples of
// MLIR's PassManagement.md and pipeline-options-parsing.mlir, and IREE's
// usual shapes.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/pipeline.h"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace ireepkg;

namespace {

PassPipeline parse(std::string_view text) {
  auto p = parsePassPipeline(text);
  INFO("parsing: " << std::string(text));
  if (!p)
    FAIL("unexpected error: " << p.error().str());
  return *p;
}

/// The error, as `message (at column N)`.
std::string error(std::string_view text) {
  auto p = parsePassPipeline(text);
  INFO("parsing: " << std::string(text));
  REQUIRE_FALSE(p.has_value());
  return p.error().str();
}

/// Parses and prints back canonically.
std::string canonical(std::string_view text) { return parse(text).str(); }

std::vector<std::string> names(std::string_view text) {
  return pipelinePassNames(parse(text));
}

std::string compose(const std::vector<std::string> &fragments) {
  auto c = composePassPipelines(std::span<const std::string>(fragments));
  if (!c)
    FAIL("unexpected error in fragment " << c.error().index << ": "
                                         << c.error().error.str());
  return *c;
}

} // namespace

//===----------------------------------------------------------------------===//
// Valid pipelines
//===----------------------------------------------------------------------===//

TEST_CASE("pipeline: a single pass is a fragment") {
  PassPipeline p = parse("canonicalize");
  REQUIRE(p.elements.size() == 1);
  CHECK(p.elements[0].isPass());
  CHECK(p.elements[0].name == "canonicalize");
  CHECK(p.elements[0].column == 1);
  CHECK_FALSE(p.elements[0].hasOptions);
  CHECK_FALSE(p.isAnchored());
  CHECK(p.anchor() == "");
}

TEST_CASE("pipeline: a bare list of passes is a fragment") {
  PassPipeline p = parse("canonicalize,cse");
  REQUIRE(p.elements.size() == 2);
  CHECK(p.elements[1].name == "cse");
  CHECK(p.elements[1].column == 14);
  CHECK_FALSE(p.isAnchored());
  CHECK(p.str() == "canonicalize,cse");
}

TEST_CASE("pipeline: builtin.module anchor with a nested func.func") {
  PassPipeline p = parse("builtin.module(func.func(canonicalize,cse))");
  CHECK(p.isAnchored());
  CHECK(p.anchor() == "builtin.module");
  const PipelineElement &module = p.elements[0];
  CHECK(module.isNested());
  REQUIRE(module.elements.size() == 1);
  const PipelineElement &func = module.elements[0];
  CHECK(func.isNested());
  CHECK(func.name == "func.func");
  CHECK(func.column == 16);
  REQUIRE(func.elements.size() == 2);
  CHECK(func.elements[0].name == "canonicalize");
  CHECK(func.elements[0].column == 26);
  CHECK(func.elements[1].name == "cse");
}

TEST_CASE("pipeline: func.func and util.func anchors") {
  CHECK(parse("func.func(canonicalize)").anchor() == "func.func");
  CHECK(parse("util.func(iree-util-simplify-global-accesses)").anchor() ==
        "util.func");
  CHECK(parse("any(cse,canonicalize)").anchor() == "any");
}

TEST_CASE("pipeline: a nested pipeline followed by passes is a fragment") {
  PassPipeline p =
      parse("func.func(iree-flow-something{opt=1 other=\"a b\"}),canonicalize");
  CHECK_FALSE(p.isAnchored());
  REQUIRE(p.elements.size() == 2);
  CHECK(p.elements[0].isNested());
  CHECK(p.elements[1].isPass());
  const PipelineElement &pass = p.elements[0].elements.at(0);
  CHECK(pass.name == "iree-flow-something");
  CHECK(pass.hasOptions);
  CHECK(pass.optionsText == "opt=1 other=\"a b\"");
  REQUIRE(pass.options.size() == 2);
  CHECK(pass.options[0].key == "opt");
  CHECK(pass.options[0].value == "1");
  CHECK(pass.options[1].key == "other");
  CHECK(pass.options[1].value == "\"a b\"");
  CHECK(pass.options[1].literal() == "a b");
}

TEST_CASE("pipeline: MLIR's documented examples") {
  CHECK(canonical("builtin.module(func.func(cse,canonicalize),"
                  "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1})") ==
        "builtin.module(func.func(cse,canonicalize),"
        "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1})");
  CHECK(canonical("builtin.module(any(cse,canonicalize),"
                  "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1})") ==
        "builtin.module(any(cse,canonicalize),"
        "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1})");
  CHECK(canonical("any(func.func(my-pass,my-pass))") ==
        "any(func.func(my-pass,my-pass))");
}

TEST_CASE("pipeline: IREE's deeply nested executable pipelines") {
  std::string text = "builtin.module(hal.executable(hal.executable.variant("
                     "builtin.module(func.func(iree-codegen-foo)))))";
  PassPipeline p = parse(text);
  CHECK(p.anchor() == "builtin.module");
  CHECK(p.str() == text);
  CHECK(pipelinePassNames(p) == std::vector<std::string>{"iree-codegen-foo"});
  CHECK(canonical("builtin.module(util.func(iree-preprocessing-pad-linalg-ops"
                  "{pad-size=16}))") ==
        "builtin.module(util.func(iree-preprocessing-pad-linalg-ops"
        "{pad-size=16}))");
}

TEST_CASE("pipeline: whitespace around names and punctuation") {
  PassPipeline p = parse(" builtin.module ( func.func ( cse , canonicalize ) "
                         ", cse { a=1 } )\n");
  CHECK(p.str() == "builtin.module(func.func(cse,canonicalize),cse{ a=1 })");
  CHECK(p.anchor() == "builtin.module");
  CHECK(canonical("cse,\n  canonicalize,\r\n\tcse") == "cse,canonicalize,cse");
}

TEST_CASE("pipeline: names with dots, dashes, underscores and digits") {
  PassPipeline p = parse("my_dialect.op-2(iree-codegen-llvmgpu-vector-distribute"
                         ",test.pass_v2)");
  CHECK(p.anchor() == "my_dialect.op-2");
  CHECK(pipelinePassNames(p) ==
        std::vector<std::string>{"iree-codegen-llvmgpu-vector-distribute",
                                 "test.pass_v2"});
}

TEST_CASE("pipeline: an empty anchor alone is MLIR's empty pipeline") {
  PassPipeline p = parse("builtin.module()");
  CHECK(p.isAnchored());
  CHECK(p.anchor() == "builtin.module");
  CHECK(p.elements[0].elements.empty());
  CHECK(p.str() == "builtin.module()");
  CHECK(parse(" func.func ( ) ").str() == "func.func()");
  CHECK(pipelinePassNames(p).empty());
}

TEST_CASE("pipeline: nesting up to 100 levels") {
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "a(";
  text += "cse";
  for (int i = 0; i < 100; ++i)
    text += ")";
  CHECK(parse(text).str() == text);
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

TEST_CASE("pipeline options: empty braces") {
  PassPipeline p = parse("cse{},canonicalize{ }");
  CHECK(p.elements[0].hasOptions);
  CHECK(p.elements[0].optionsText == "");
  CHECK(p.elements[0].options.empty());
  CHECK(p.elements[1].optionsText == " ");
  CHECK(p.elements[1].options.empty());
  CHECK(p.str() == "cse{},canonicalize{ }");
}

TEST_CASE("pipeline options: keys, values and columns") {
  PassPipeline p = parse("func.func(cse{a=1 b.c-d_e=x})");
  const PipelineElement &cse = p.elements[0].elements[0];
  CHECK(cse.column == 11);
  REQUIRE(cse.options.size() == 2);
  CHECK(cse.options[0].key == "a");
  CHECK(cse.options[0].column == 15);
  CHECK(cse.options[0].hasValue);
  CHECK(cse.options[1].key == "b.c-d_e");
  CHECK(cse.options[1].value == "x");
  CHECK(cse.options[1].column == 19);
}

TEST_CASE("pipeline options: a bare key and an empty value") {
  // MLIR prints an empty string option as `string= `.
  PassPipeline p =
      parse("builtin.module(func.func(test-options-pass{list=3 string= "
            "enable}))");
  const auto &options = p.elements[0].elements[0].elements[0].options;
  REQUIRE(options.size() == 3);
  CHECK(options[1].key == "string");
  CHECK(options[1].hasValue);
  CHECK(options[1].value == "");
  CHECK(options[2].key == "enable");
  CHECK_FALSE(options[2].hasValue);
}

TEST_CASE("pipeline options: lists are comma-separated values") {
  PassPipeline p = parse("test-options-pass{list=1,2,3 string-list=a,b}");
  const auto &options = p.elements[0].options;
  REQUIRE(options.size() == 2);
  CHECK(options[0].value == "1,2,3");
  CHECK(options[1].value == "a,b");
  // The commas inside the braces do not split pipeline elements.
  CHECK(p.elements.size() == 1);
}

TEST_CASE("pipeline options: nested braces") {
  PassPipeline p = parse("outer{a={b=1} c={d={e=2 f=3}}}");
  const auto &options = p.elements[0].options;
  REQUIRE(options.size() == 2);
  CHECK(options[0].value == "{b=1}");
  CHECK(options[0].literal() == "b=1");
  CHECK(options[1].value == "{d={e=2 f=3}}");
  CHECK(options[1].literal() == "d={e=2 f=3}");
}

TEST_CASE("pipeline options: MLIR's nested pipeline option with quotes") {
  std::string text =
      "builtin.module(func.func(test-options-pass{string-list=a "
      "list=1,2,3,4 string-list=b,c list=5 string-list=d "
      "string=nested_pipeline{arg1=10 arg2=\" {} \" arg3=true}}))";
  PassPipeline p = parse(text);
  const auto &options = p.elements[0].elements[0].elements[0].options;
  REQUIRE(options.size() == 6);
  CHECK(options[5].key == "string");
  CHECK(options[5].value == "nested_pipeline{arg1=10 arg2=\" {} \" arg3=true}");
  CHECK(p.str() == text);
}

TEST_CASE("pipeline options: quoted values keep spaces and other quotes") {
  PassPipeline p = parse("p{a='x y' b=\"c'd\" c=pre\"fix, (mid)\"post}");
  const auto &options = p.elements[0].options;
  REQUIRE(options.size() == 3);
  CHECK(options[0].value == "'x y'");
  CHECK(options[0].literal() == "x y");
  CHECK(options[1].literal() == "c'd");
  CHECK(options[2].value == "pre\"fix, (mid)\"post");
  CHECK(options[2].literal() == "pre\"fix, (mid)\"post");
}

TEST_CASE("pipeline options: a value may hold a pipeline in parentheses") {
  PassPipeline p =
      parse("iree-transform-dialect-interpreter{pipeline=builtin.module("
            "cse,canonicalize)},cse");
  REQUIRE(p.elements.size() == 2);
  CHECK(p.elements[0].options.at(0).value ==
        "builtin.module(cse,canonicalize)");
  CHECK(pipelinePassNames(p) ==
        std::vector<std::string>{"iree-transform-dialect-interpreter", "cse"});
}

TEST_CASE("pipeline options: whitespace between options") {
  CHECK(parse("p{  a=1   b=2  }").elements[0].options.size() == 2);
  // Leading and trailing tabs are trimmed by MLIR, and a tab next to a space
  // is harmless.
  CHECK(parse("p{\ta=1\t b=2\t}").elements[0].options.size() == 2);
  CHECK(parse("p{a=1 \nb=2}").elements[0].options.size() == 2);
}

TEST_CASE("pipeline options: literal() follows MLIR's unwrapping") {
  PassOption o;
  o.value = "\"  spaced  \"";
  CHECK(o.literal() == "spaced");
  o.value = "{b=1},{c=2}"; // a list of structs keeps its braces
  CHECK(o.literal() == "{b=1},{c=2}");
  o.value = "{a=\"}\"}";
  CHECK(o.literal() == "a=\"}\"");
  o.value = "\"";
  CHECK(o.literal() == "\"");
  o.value = "plain";
  CHECK(o.literal() == "plain");
}

//===----------------------------------------------------------------------===//
// Pass names
//===----------------------------------------------------------------------===//

TEST_CASE("pipeline pass names: every pass once, in order of first use") {
  CHECK(names("builtin.module(func.func(cse,canonicalize),cse,"
              "util.func(canonicalize),iree-foo{a=1})") ==
        std::vector<std::string>{"cse", "canonicalize", "iree-foo"});
}

TEST_CASE("pipeline pass names: operation names are not passes") {
  CHECK(names("builtin.module(func.func(cse))") ==
        std::vector<std::string>{"cse"});
  CHECK(names("any(builtin.module(a),b)") ==
        std::vector<std::string>{"a", "b"});
}

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

TEST_CASE("pipeline compose: fragments into one builtin.module") {
  CHECK(compose({"builtin.module(cse)", "func.func(canonicalize)", "a,b",
                 "builtin.module(func.func(x))"}) ==
        "builtin.module(cse,func.func(canonicalize),a,b,func.func(x))");
}

TEST_CASE("pipeline compose: nested anchors stay elements") {
  CHECK(compose({"func.func(cse)", "util.func(canonicalize)"}) ==
        "builtin.module(func.func(cse),util.func(canonicalize))");
  // Only a fragment that is one builtin.module(...) is unwrapped.
  CHECK(compose({"builtin.module(a),b"}) ==
        "builtin.module(builtin.module(a),b)");
}

TEST_CASE("pipeline compose: no fragments and empty anchors") {
  CHECK(compose({}) == "builtin.module()");
  CHECK(compose({"builtin.module()"}) == "builtin.module()");
  CHECK(compose({"builtin.module()", "cse"}) == "builtin.module(cse)");
  // The result is itself a valid, anchored pipeline.
  CHECK(parse(compose({})).anchor() == "builtin.module");
}

TEST_CASE("pipeline compose: options are kept verbatim, whitespace dropped") {
  CHECK(compose({" iree-foo{ a=1  b=\"x y\" } ", "func.func( cse )"}) ==
        "builtin.module(iree-foo{ a=1  b=\"x y\" },func.func(cse))");
}

TEST_CASE("pipeline compose: the composed text parses to the same passes") {
  std::vector<std::string> fragments = {
      "builtin.module(func.func(iree-global-opt-foo{x=1}))",
      "util.func(iree-preprocessing-bar),canonicalize"};
  std::string composed = compose(fragments);
  PassPipeline p = parse(composed);
  CHECK(p.anchor() == "builtin.module");
  CHECK(pipelinePassNames(p) ==
        std::vector<std::string>{"iree-global-opt-foo", "iree-preprocessing-bar",
                                 "canonicalize"});
}

TEST_CASE("pipeline compose: parsed pipelines") {
  std::vector<PassPipeline> parsed = {parse("builtin.module(a)"), parse("b")};
  CHECK(composePassPipelines(std::span<const PassPipeline>(parsed)) ==
        "builtin.module(a,b)");
}

TEST_CASE("pipeline compose: an empty anchored fragment adds nothing") {
  // "func.func()" alone is a valid (empty) pipeline; nested inside
  // builtin.module it would be an empty nested pipeline, which is not.
  std::string composed = compose({"func.func()", "cse", "builtin.module()"});
  CHECK(composed == "builtin.module(cse)");
  CHECK(parsePassPipeline(composed).has_value());
  CHECK(compose({"util.func()"}) == "builtin.module()");
}

TEST_CASE("pipeline compose: the first broken fragment is reported") {
  std::vector<std::string> fragments = {"cse", "func.func(cse", "x,,y"};
  auto c = composePassPipelines(std::span<const std::string>(fragments));
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().index == 1);
  CHECK(c.error().error.column == 14);
  CHECK(c.error().error.str() ==
        "expected ')' to close \"func.func(\" opened at column 10 "
        "(at column 14)");
}

//===----------------------------------------------------------------------===//
// Errors: structure
//===----------------------------------------------------------------------===//

TEST_CASE("pipeline error: the column and message are separate") {
  auto p = parsePassPipeline("canonicalize,,cse");
  REQUIRE_FALSE(p.has_value());
  CHECK(p.error().column == 14);
  CHECK(p.error().message ==
        "unexpected ',' where a pass name or nested pipeline was expected");
  CHECK(p.error().str() == p.error().message + " (at column 14)");
}

TEST_CASE("pipeline error: empty text") {
  CHECK(error("") == "the pipeline is empty (at column 1)");
  CHECK(error(" \t\n") == "the pipeline is empty (at column 1)");
}

TEST_CASE("pipeline error: empty elements") {
  CHECK(error(",cse") == "unexpected ',' where a pass name or nested pipeline "
                         "was expected (at column 1)");
  CHECK(error("canonicalize,,cse") ==
        "unexpected ',' where a pass name or nested pipeline was expected "
        "(at column 14)");
  CHECK(error("func.func(,cse)") ==
        "unexpected ',' where a pass name or nested pipeline was expected "
        "(at column 11)");
  CHECK(error("func.func(cse,)") ==
        "unexpected ')' where a pass name or nested pipeline was expected "
        "(at column 15)");
}

TEST_CASE("pipeline error: a trailing comma") {
  CHECK(error("cse,") == "the pipeline ends where a pass name or nested "
                         "pipeline was expected (at column 5)");
  CHECK(error("func.func(cse, ") ==
        "the pipeline ends where a pass name or nested pipeline was expected "
        "(at column 16)");
  CHECK(error("func.func(") ==
        "the pipeline ends where a pass name or nested pipeline was expected "
        "(at column 11)");
}

TEST_CASE("pipeline error: unclosed parentheses name the innermost opening") {
  CHECK(error("func.func(canonicalize,cse") ==
        "expected ')' to close \"func.func(\" opened at column 10 "
        "(at column 27)");
  CHECK(error("builtin.module(func.func(canonicalize,cse") ==
        "expected ')' to close \"func.func(\" opened at column 25 "
        "(at column 42)");
  CHECK(error("builtin.module(func.func(canonicalize,cse)") ==
        "expected ')' to close \"builtin.module(\" opened at column 15 "
        "(at column 43)");
  CHECK(error("builtin.module(func.func(cse)") ==
        "expected ')' to close \"builtin.module(\" opened at column 15 "
        "(at column 30)");
  CHECK(error("builtin.module (cse  ") ==
        "expected ')' to close \"builtin.module(\" opened at column 16 "
        "(at column 22)");
}

TEST_CASE("pipeline error: extra closing parentheses") {
  CHECK(error("cse)") ==
        "unexpected ')': no nested pipeline is open (at column 4)");
  CHECK(error("builtin.module(cse))") ==
        "unexpected ')': no nested pipeline is open (at column 20)");
  CHECK(error(")") == "unexpected ')' where a pass name or nested pipeline "
                      "was expected (at column 1)");
}

TEST_CASE("pipeline error: empty nested pipelines") {
  CHECK(error("builtin.module(func.func())") ==
        "unexpected ')' where a pass name or nested pipeline was expected "
        "(at column 26)");
  CHECK(error("builtin.module(),cse") ==
        "unexpected ')' where a pass name or nested pipeline was expected "
        "(at column 16)");
  CHECK(error("cse,builtin.module()") ==
        "unexpected ')' where a pass name or nested pipeline was expected "
        "(at column 20)");
}

TEST_CASE("pipeline error: two names without a comma") {
  CHECK(error("cse cse") == "unexpected 'c' after \"cse\": expected ',' or "
                            "the end of the pipeline (at column 5)");
  CHECK(error("func.func(cse cse)") ==
        "unexpected 'c' after \"cse\": expected ',' or ')' (at column 15)");
  CHECK(error("func.func(cse) cse") ==
        "unexpected 'c' after \"func.func(...)\": expected ',' or the end of "
        "the pipeline (at column 16)");
}

TEST_CASE("pipeline error: characters that are not part of a name") {
  CHECK(error("canonicalize!") ==
        "unexpected '!' after \"canonicalize\": expected ',' or the end of "
        "the pipeline (at column 13)");
  CHECK(error("func.func(cse;canonicalize)") ==
        "unexpected ';' after \"cse\": expected ',' or ')' (at column 14)");
  CHECK(error("canonicaliz\xC3\xA9") ==
        "unexpected byte 0xC3 after \"canonicaliz\": expected ',' or the end "
        "of the pipeline (at column 12)");
  CHECK(error("cse}") == "unexpected '}' after \"cse\": expected ',' or the "
                         "end of the pipeline (at column 4)");
}

TEST_CASE("pipeline error: an element must start with a letter or '_'") {
  CHECK(error("\"cse\"") == "unexpected '\"' where a pass name or nested "
                            "pipeline was expected (at column 1)");
  CHECK(error("1cse") == "unexpected '1' where a pass name or nested pipeline "
                         "was expected (at column 1)");
  CHECK(error("(cse)") == "unexpected '(' where a pass name or nested "
                          "pipeline was expected (at column 1)");
  CHECK(error("cse,{a=1}") == "unexpected '{' where a pass name or nested "
                              "pipeline was expected (at column 5)");
}

TEST_CASE("pipeline error: command-line dashes") {
  CHECK(error("--canonicalize") ==
        "unexpected '-' where a pass name or nested pipeline was expected; "
        "write pass names without leading dashes (at column 1)");
  CHECK(error("func.func(-cse)") ==
        "unexpected '-' where a pass name or nested pipeline was expected; "
        "write pass names without leading dashes (at column 11)");
}

TEST_CASE("pipeline error: options without braces") {
  CHECK(error("cse=1") == "unexpected '=' after \"cse\": pass options are "
                          "written in braces, as in cse{key=value} "
                          "(at column 4)");
}

TEST_CASE("pipeline error: options on a nested pipeline") {
  CHECK(error("func.func(cse){a=1}") ==
        "unexpected '{' after \"func.func(...)\": a nested pipeline takes no "
        "options (at column 15)");
}

TEST_CASE("pipeline error: options given twice") {
  CHECK(error("cse{a=1}{b=2}") ==
        "unexpected '{' after the options of \"cse\": expected ',' or the end "
        "of the pipeline (at column 9)");
  CHECK(error("cse{a=1}(x)") ==
        "unexpected '(' after the options of \"cse\": expected ',' or the end "
        "of the pipeline (at column 9)");
}

TEST_CASE("pipeline error: nesting deeper than 100 levels") {
  std::string text;
  for (int i = 0; i < 101; ++i)
    text += "a(";
  text += "cse";
  for (int i = 0; i < 101; ++i)
    text += ")";
  CHECK(error(text) == "pipelines may nest at most 100 levels deep "
                       "(at column 202)");
}

//===----------------------------------------------------------------------===//
// Errors: options
//===----------------------------------------------------------------------===//

TEST_CASE("pipeline error: unclosed options") {
  CHECK(error("cse{a=1") == "expected '}' to close the options of \"cse\" "
                            "opened at column 4 (at column 8)");
  CHECK(error("cse{a={b=1}") == "expected '}' to close the options of \"cse\" "
                                "opened at column 4 (at column 12)");
  CHECK(error("func.func(cse{a={b=1})") ==
        "expected '}' to close the options of \"cse\" opened at column 14 "
        "(at column 23)");
}

TEST_CASE("pipeline error: a missing option name") {
  CHECK(error("cse{=1}") == "unexpected '=' where an option name was expected "
                            "in the options of \"cse\" (at column 5)");
  CHECK(error("cse{a=1 2}") ==
        "unexpected '2' where an option name was expected in the options of "
        "\"cse\" (at column 9)");
  CHECK(error("cse{a=1 \"b\"=2}") ==
        "unexpected '\"' where an option name was expected in the options of "
        "\"cse\" (at column 9)");
}

TEST_CASE("pipeline error: spaces around '='") {
  CHECK(error("canonicalize{max-iterations = 10}") ==
        "unexpected '=' where an option name was expected in the options of "
        "\"canonicalize\"; write key=value without spaces around '=' "
        "(at column 29)");
}

TEST_CASE("pipeline error: a bad character in an option name") {
  CHECK(error("cse{a+b=1}") ==
        "unexpected '+' after option name \"a\" in the options of \"cse\": "
        "expected '=' or a space (at column 6)");
  CHECK(error("cse{a{b}=1}") ==
        "unexpected '{' after option name \"a\" in the options of \"cse\": "
        "expected '=' or a space (at column 6)");
}

TEST_CASE("pipeline error: options separated by a tab or newline") {
  CHECK(error("cse{a=1\tb=2}") == "unexpected tab in the options of \"cse\": "
                                  "separate options with spaces "
                                  "(at column 8)");
  CHECK(error("cse{a\nb}") == "unexpected newline in the options of \"cse\": "
                              "separate options with spaces (at column 6)");
}

TEST_CASE("pipeline error: unterminated quotes") {
  CHECK(error("cse{a=\"x y}") == "unterminated '\"' in the value of option "
                                 "\"a\" of \"cse\" (at column 7)");
  CHECK(error("cse{a='x}") == "unterminated \"'\" in the value of option "
                              "\"a\" of \"cse\" (at column 7)");
}

TEST_CASE("pipeline error: a quoted brace ends the options, as in MLIR") {
  CHECK(error("cse{a=\"}\"}") ==
        "unterminated '\"' in the value of option \"a\" of \"cse\"; MLIR ends "
        "pass options at the '}' that balances the '{', even inside quotes "
        "(at column 7)");
}

TEST_CASE("pipeline error: unbalanced braces inside a value") {
  CHECK(error("cse{a={x=\"}\" }}") ==
        "expected '}' to close '{' opened at column 7 in the value of option "
        "\"a\" of \"cse\" (at column 14)");
  CHECK(error("cse{a=\"{\" b=}}") ==
        "unexpected '}' in the value of option \"b\" of \"cse\" "
        "(at column 13)");
}
