//===- test_compiler_plugin_abi.cpp - Plugin info layouts per IREE version ===//
#include "ireepkg/compiler_integration/compiler_plugin_info.h"

#include <doctest/doctest.h>

using namespace ireepkg;

TEST_CASE("the plugin info layout of an IREE version") {
  const CompilerPluginAbi *abi = compilerPluginAbiFor("3.13.0");
  REQUIRE(abi);
  CHECK(abi->layout == CompilerPluginLayout::Hash64);
  // A release candidate, a later version: the newest row not newer.
  CHECK(compilerPluginAbiFor("3.13.0rc20261016") == abi);
  CHECK(compilerPluginAbiFor("3.14.2") == abi);
  CHECK(compilerPluginAbiFor("10.0.0") == abi);
  // Before IREE loaded dynamic plugins, or not a version.
  CHECK(compilerPluginAbiFor("3.12.9") == nullptr);
  CHECK(compilerPluginAbiFor("3.2") == nullptr);
  CHECK(compilerPluginAbiFor("") == nullptr);
  CHECK(compilerPluginAbiFor("latest") == nullptr);
}

TEST_CASE("the plugin API hash ireepkg knows for an IREE version") {
  CHECK(knownCompilerPluginHash("3.13.0") == "27493ee2eddc0611");
  CHECK(knownCompilerPluginHash("3.13.0rc20261016") == "27493ee2eddc0611");
  // Only for exactly that version: another one may have other headers.
  CHECK(knownCompilerPluginHash("3.13.1") == "");
  CHECK(knownCompilerPluginHash("3.14.0") == "");
  CHECK(knownCompilerPluginHash("x") == "");
}

TEST_CASE("layout names") {
  CHECK(compilerPluginLayoutName(CompilerPluginLayout::Hash64) == "hash64");
  CHECK(compilerPluginLayoutName(CompilerPluginLayout::ApiVersionHashString) ==
        "api-version-hash-string");
}
