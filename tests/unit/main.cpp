//===- main.cpp - doctest entry point for ireepkg's unit tests ------------===//
//
// Registers the integrations' state writers and checks, as the CLI does,
// so that the prefixes the tests make are complete and packing checks
// what it checks there.
//
//===----------------------------------------------------------------------===//
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "ireepkg/compiler_integration/compiler_checks.h"
#include "ireepkg/compiler_integration/compiler_state.h"
#include "ireepkg/runtime_integration/runtime_checks.h"
#include "ireepkg/runtime_integration/runtime_state.h"

int main(int argc, char **argv) {
  ireepkg::registerStateWriter(ireepkg::runtimeStateWriter());
  ireepkg::registerStateWriter(ireepkg::compilerStateWriter());
  ireepkg::registerRuntimeChecks(ireepkg::runtimeChecks());
  ireepkg::registerCompilerChecks(ireepkg::compilerChecks());
  doctest::Context context(argc, argv);
  return context.run();
}
