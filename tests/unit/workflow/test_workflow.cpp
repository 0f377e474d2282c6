//===- test_workflow.cpp - IREE versions as ireepkg resolves for them ----===//
#include "ireepkg/workflow/workflow.h"

#include <doctest/doctest.h>

using namespace ireepkg;

TEST_CASE("iree-compile --version strings become SemVer versions") {
  auto v = workflow::parseIreeVersion("3.13.0");
  REQUIRE(v);
  CHECK(v->str() == "3.13.0");
  // Nightlies put the date right after the patch number.
  v = workflow::parseIreeVersion("3.13.0rc20261016");
  REQUIRE(v);
  CHECK(v->str() == "3.13.0-rc20261016");
  CHECK(v->isPrerelease());
  CHECK(*v < *workflow::parseIreeVersion("3.13.0"));
  v = workflow::parseIreeVersion(" 3.14.0.dev+abc123 ");
  REQUIRE(v);
  CHECK(v->str() == "3.14.0-dev+abc123");
  CHECK_FALSE(workflow::parseIreeVersion("3.13"));
  CHECK_FALSE(workflow::parseIreeVersion("IREE 3.13.0"));
  CHECK_FALSE(workflow::parseIreeVersion(""));
  // Whitespace around it only; nothing but [0-9A-Za-z.+-] after the patch.
  v = workflow::parseIreeVersion("\t3.13.0\r\n");
  REQUIRE(v);
  CHECK(v->str() == "3.13.0");
  CHECK_FALSE(workflow::parseIreeVersion("3.13.0 rc1"));
  CHECK_FALSE(workflow::parseIreeVersion("3.13.0_rc1"));
  CHECK_FALSE(workflow::parseIreeVersion("3..0"));
  CHECK_FALSE(workflow::parseIreeVersion("3.13."));
  CHECK_FALSE(workflow::parseIreeVersion(".3.13.0"));
  CHECK_FALSE(workflow::parseIreeVersion("3.13.0\xc3\xa9"));
  v = workflow::parseIreeVersion("10.0.2-rc.1");
  REQUIRE(v);
  CHECK(v->str() == "10.0.2-rc.1");
}

TEST_CASE("package requests on the command line") {
  auto r = workflow::parseNameRequest("simple-mul");
  REQUIRE(r);
  CHECK(r->name == "simple-mul");
  CHECK(r->constraint.set().isAny());
  r = workflow::parseNameRequest("simple-mul@^1.2");
  REQUIRE(r);
  CHECK(r->constraint.matches(*Version::parse("1.9.0")));
  CHECK_FALSE(r->constraint.matches(*Version::parse("2.0.0")));
  auto bad = workflow::parseNameRequest("Simple_Mul");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::Usage);
  bad = workflow::parseNameRequest("simple-mul@^^1");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("simple-mul@^^1") != std::string::npos);
}
