//===- test_environment.cpp - The environment policy ----------------------===//
//
// ireepkg/base/environment.h: environmentOverride, and terminalDescription
// for the variables that only describe the terminal (TERM, COLUMNS, LINES),
// which the CLI's colours and progress lines read. The privileged case is
// tested end to end by tests/cli/test_hardening.py (a set-user-ID copy).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/environment.h"

#include "temp_dir.h"

#include <doctest/doctest.h>

using namespace ireepkg;
using ireepkg::test::ScopedEnv;

namespace {

std::optional<std::string> value(const char *v) {
  return v ? std::optional<std::string>(v) : std::nullopt;
}

} // namespace

TEST_CASE("environmentOverride reads a variable of an unprivileged run") {
  REQUIRE_FALSE(runningPrivileged());
  ScopedEnv set("IREEPKG_TEST_OVERRIDE", "a b");
  CHECK(value(environmentOverride("IREEPKG_TEST_OVERRIDE")) == "a b");
  ScopedEnv unset("IREEPKG_TEST_OVERRIDE", std::nullopt);
  CHECK(environmentOverride("IREEPKG_TEST_OVERRIDE") == nullptr);
}

TEST_CASE("terminalDescription: TERM, COLUMNS, LINES; others as overrides") {
  ScopedEnv term("TERM", "dumb");
  ScopedEnv columns("COLUMNS", "132");
  ScopedEnv lines("LINES", std::nullopt);
  ScopedEnv other("IREEPKG_TEST_OVERRIDE", "x");
  CHECK(value(terminalDescription("TERM")) == "dumb");
  CHECK(value(terminalDescription("COLUMNS")) == "132");
  CHECK(terminalDescription("LINES") == nullptr);
  CHECK(value(terminalDescription("IREEPKG_TEST_OVERRIDE")) ==
        value(environmentOverride("IREEPKG_TEST_OVERRIDE")));
}
