//===- test_platform.cpp - Names, platforms, suggestions, paths ----------===//
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/manifest_schema/platform.h"

#include <doctest/doctest.h>

using namespace ireepkg;
using nlohmann::json;

TEST_CASE("package names") {
  CHECK(isValidPackageName("simple-mul"));
  CHECK(isValidPackageName("a"));
  CHECK(isValidPackageName("0ab.c_d-e"));
  CHECK(isValidPackageName(std::string(64, 'a')));
  CHECK_FALSE(isValidPackageName(std::string(65, 'a')));
  CHECK_FALSE(isValidPackageName(""));
  CHECK_FALSE(isValidPackageName("-a"));
  CHECK_FALSE(isValidPackageName(".a"));
  CHECK_FALSE(isValidPackageName("Simple"));
  CHECK_FALSE(isValidPackageName("a b"));
  CHECK_FALSE(isValidPackageName("a/b"));
}

TEST_CASE("platforms parse and print") {
  auto p = Platform::parse("linux-aarch64");
  REQUIRE(p);
  CHECK(p->os == OS::Linux);
  CHECK(p->arch == Arch::AArch64);
  CHECK(p->str() == "linux-aarch64");
  CHECK_FALSE(Platform::parse("linux"));
  CHECK_FALSE(Platform::parse("linux-x86-64"));
  CHECK_FALSE(Platform::parse("x86_64-linux"));
  CHECK(platformNames().size() == 20);
  CHECK(hostPlatform().str().find('-') != std::string::npos);
}

TEST_CASE("suggestions catch typos and common aliases") {
  CHECK(suggestClosest("x86-64", archNames()) == "x86_64");
  CHECK(suggestClosest("X86_64", archNames()) == "x86_64");
  CHECK(suggestClosest("amd64", archNames()) == "x86_64");
  CHECK(suggestClosest("arm64", archNames()) == "aarch64");
  CHECK(suggestClosest("aarch46", archNames()) == "aarch64");
  CHECK(suggestClosest("linux-arm64", platformNames()) == "linux-aarch64");
  CHECK(suggestClosest("darwin-arm64", platformNames()) == "macos-aarch64");
  CHECK(suggestClosest("sparc", archNames()) == "");
  CHECK(didYouMean("x86-64", archNames()) == " (did you mean \"x86_64\"?)");
  CHECK(didYouMean("zzzzzz", archNames()) == "");
}

TEST_CASE("package paths") {
  CHECK(packagePathProblem("runtime/a.so") == "");
  CHECK(packagePathProblem("a") == "");
  CHECK(packagePathProblem("") == "an empty path");
  CHECK(packagePathProblem("/abs") == "an absolute path");
  CHECK(packagePathProblem("C:/x") == "an absolute path");
  CHECK(packagePathProblem("a/../b") == "a path that leaves the package ('..')");
  CHECK(packagePathProblem("..") == "a path that leaves the package ('..')");
  CHECK(packagePathProblem("./a") == "a path with a '.' segment");
  CHECK(packagePathProblem("a//b") == "a path with an empty segment");
  CHECK(packagePathProblem("a/") == "a path ending in '/'");
  CHECK(packagePathProblem("a\\b") == "a path with a backslash (use '/')");
  CHECK(packagePathProblem(std::string("a\0b", 3)) ==
        "a path with a control character");
  CHECK(packagePathProblem("data/\xc3\xa4.txt") ==
        "a path with a non-ASCII character");
  CHECK(packagePathProblem("a|b") ==
        "a path with '|', which Windows does not allow");
}

TEST_CASE("option values against option schemas") {
  json tile = {{"type", "integer"}, {"minimum", 1}, {"maximum", 128}};
  CHECK(optionValueProblem(tile, 16) == "");
  CHECK(optionValueProblem(tile, 16.0) == "");
  CHECK(optionValueProblem(tile, 0) == "0 is less than the minimum 1");
  CHECK(optionValueProblem(tile, 256) == "256 is greater than the maximum 128");
  CHECK(optionValueProblem(tile, "16") ==
        "expected an integer, got a string (\"16\")");
  CHECK(optionValueProblem(tile, 1.5) == "expected an integer, got a number (1.5)");
  json mode = {{"type", "string"}, {"enum", {"fast", "precise"}}};
  CHECK(optionValueProblem(mode, "fast") == "");
  CHECK(optionValueProblem(mode, "slow") ==
        "\"slow\" is not one of \"fast\", \"precise\"");
  json pat = {{"type", "string"}, {"pattern", "^[a-z]+$"}};
  CHECK(optionValueProblem(pat, "abc") == "");
  CHECK(optionValueProblem(pat, "ab1") ==
        "\"ab1\" does not match the pattern \"^[a-z]+$\"");
  json list = {{"type", "array"},
               {"items", {{"type", "integer"}, {"minimum", 0}}},
               {"maxItems", 2}};
  CHECK(optionValueProblem(list, json::array({1, 2})) == "");
  CHECK(optionValueProblem(list, json::array({1, -2})) ==
        "item 1: -2 is less than the minimum 0");
  CHECK(optionValueProblem(list, json::array({1, 2, 3})) ==
        "has 3 items, more than the maximum 2");
  CHECK(optionValueProblem({{"type", "boolean"}}, true) == "");
  CHECK(optionValueProblem({{"type", "number"}}, 2.5) == "");
}

TEST_CASE("RFC 3339 timestamps") {
  CHECK(parseRfc3339("1970-01-01T00:00:00Z") == 0);
  CHECK(parseRfc3339("2000-03-01T00:00:00Z") == 951868800);
  CHECK(parseRfc3339("2024-02-29T12:00:00.5+02:00") == 1709200800);
  CHECK_FALSE(parseRfc3339("2023-02-29T00:00:00Z"));
  CHECK_FALSE(parseRfc3339("2027-01-01"));
  CHECK_FALSE(parseRfc3339("2027-01-01T00:00:00"));
  CHECK_FALSE(parseRfc3339("2027-01-01T24:00:00Z"));
}

TEST_CASE("file kinds are detected by name") {
  CHECK(detectFileKind("x/ireeplugin.json") == FileKind::Manifest);
  CHECK(detectFileKind("plugins.json") == FileKind::Project);
  CHECK(detectFileKind("a/plugins.lock.json") == FileKind::Lock);
  CHECK(detectFileKind("reg/config.json") == FileKind::RegistryConfig);
  CHECK(detectFileKind("reg/snapshot.json") == FileKind::Snapshot);
  CHECK(detectFileKind("reg/index/simple-mul.json") == FileKind::Index);
  CHECK_FALSE(detectFileKind("other.json"));
}
