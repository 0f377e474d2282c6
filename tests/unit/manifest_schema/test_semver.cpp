//===- test_semver.cpp - Tests for versions, sets and constraints ---------===//
//
// Unit tests for ireepkg/semver.h: strict SemVer 2.0.0 parsing and
// precedence, the VersionSet interval algebra, and the constraint syntax with
// its pre-release rule. Error messages are checked verbatim.
//
// Why one file of this size: the tests of one module (semver.cpp), mostly
// tables of versions and constraints.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/semver.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace ireepkg;

namespace doctest {
template <> struct StringMaker<Version> {
  static String convert(const Version &v) { return v.str().c_str(); }
};
template <> struct StringMaker<VersionSet> {
  static String convert(const VersionSet &s) { return s.str().c_str(); }
};
} // namespace doctest

namespace {

const std::string kMax = "18446744073709551615";
const std::string kInf = "\xE2\x88\x9E"; // U+221E INFINITY

Version V(const std::string &text) {
  Expected<Version> v = Version::parse(text);
  INFO("parsing version " << text);
  REQUIRE(v.has_value());
  return *v;
}

std::string versionError(const std::string &text) {
  Expected<Version> v = Version::parse(text);
  INFO("parsing version " << text);
  REQUIRE_FALSE(v.has_value());
  CHECK(v.error().code == ErrorCode::Parse);
  CHECK_FALSE(v.error().hint.empty());
  return v.error().message;
}

Constraint C(const std::string &text) {
  Expected<Constraint> c = Constraint::parse(text);
  INFO("parsing constraint " << text << ": "
                             << (c ? std::string() : c.error().message));
  REQUIRE(c.has_value());
  return *c;
}

std::string constraintError(const std::string &text) {
  Expected<Constraint> c = Constraint::parse(text);
  INFO("parsing constraint " << text);
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().code == ErrorCode::Parse);
  CHECK(c.error().hint.find("accepted forms: ") != std::string::npos);
  return c.error().message;
}

/// Checks that `constraint` matches every version in `yes` and none in `no`.
void checkMatches(const std::string &constraint,
                  const std::vector<std::string> &yes,
                  const std::vector<std::string> &no) {
  Constraint c = C(constraint);
  for (const std::string &v : yes) {
    INFO(constraint << " should match " << v);
    CHECK(c.matches(V(v)));
  }
  for (const std::string &v : no) {
    INFO(constraint << " should not match " << v);
    CHECK_FALSE(c.matches(V(v)));
  }
}

/// Versions around the interesting boundaries, for property checks.
std::vector<Version> sampleVersions() {
  std::vector<Version> out;
  for (const char *s :
       {"0.0.0-0",     "0.0.0-alpha", "0.0.0",   "0.0.1",       "0.1.0-rc.1",
        "0.1.0",       "0.9.9",       "1.0.0-0", "1.0.0-alpha", "1.0.0-rc.1",
        "1.0.0",       "1.0.1-0",     "1.0.1",   "1.2.3-beta",  "1.2.3",
        "1.2.4-0",     "1.2.4",       "1.3.0-0", "1.3.0",       "1.9.9",
        "2.0.0-0",     "2.0.0-rc.1",  "2.0.0",   "2.0.1",       "2.5.0",
        "3.0.0-alpha", "3.0.0",       "10.0.0"})
    out.push_back(V(s));
  return out;
}

/// A variety of sets for the algebra property checks.
std::vector<VersionSet> sampleSets() {
  return {VersionSet::any(),
          VersionSet::none(),
          VersionSet::exactly(V("1.0.0")),
          VersionSet::exactly(V("1.0.0-rc.1")),
          VersionSet::atLeast(V("1.2.3")),
          VersionSet::greaterThan(V("1.2.3")),
          VersionSet::lessThan(V("2.0.0")),
          VersionSet::atMost(V("1.0.0")),
          C("^1.2").set(),
          C("~0.1.0 || >=2.0.0").set(),
          C("<1.0.0 || 1.2.3 || >=2.0.1, <3.0.0").set(),
          C(">=1.0.0-alpha, <=2.0.0-rc.1").set()};
}

} // namespace

//===----------------------------------------------------------------------===//
// Version parsing
//===----------------------------------------------------------------------===//

TEST_CASE("Version::parse splits core, pre-release and build") {
  Version v = V("1.2.3-rc.1+build.5");
  CHECK(v.major == 1);
  CHECK(v.minor == 2);
  CHECK(v.patch == 3);
  CHECK(v.prerelease == std::vector<std::string>{"rc", "1"});
  CHECK(v.build == std::vector<std::string>{"build", "5"});
  CHECK(v.isPrerelease());

  Version plain = V("10.20.30");
  CHECK(plain.major == 10);
  CHECK(plain.minor == 20);
  CHECK(plain.patch == 30);
  CHECK(plain.prerelease.empty());
  CHECK(plain.build.empty());
  CHECK_FALSE(plain.isPrerelease());

  Version buildOnly = V("1.0.0+20130313144700");
  CHECK_FALSE(buildOnly.isPrerelease());
  CHECK(buildOnly.build == std::vector<std::string>{"20130313144700"});
}

TEST_CASE("Version::parse accepts every valid form and str() round-trips") {
  for (const char *text :
       {"0.0.0",
        "0.0.4",
        "1.2.3",
        "10.20.30",
        "1.1.2-prerelease+meta",
        "1.1.2+meta",
        "1.1.2+meta-valid",
        "1.0.0-alpha",
        "1.0.0-beta",
        "1.0.0-alpha.beta",
        "1.0.0-alpha.beta.1",
        "1.0.0-alpha.1",
        "1.0.0-alpha0.valid",
        "1.0.0-alpha.0valid",
        "1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay",
        "1.0.0-rc.1+build.1",
        "2.0.0-rc.1+build.123",
        "1.2.3-beta",
        "10.2.3-DEV-SNAPSHOT",
        "1.2.3-SNAPSHOT-123",
        "2.0.0+build.1848",
        "2.0.1-alpha.1227",
        "1.0.0-alpha+beta",
        "1.2.3----RC-SNAPSHOT.12.9.1--.12+788",
        "1.2.3----R-S.12.9.1--.12+meta",
        "1.2.3----RC-SNAPSHOT.12.9.1--.12",
        "1.0.0+0.build.1-rc.10000aaa-kk-0.1",
        "1.0.0-0A.is.legal",
        "1.0.0-x-y-z.--",
        "1.0.0-0",
        "1.0.0-0.0.0",
        "1.0.0+001",
        "1.0.0+-",
        "1.0.0--",
        "1.0.0-a+b.0.00"}) {
    INFO(text);
    Version v = V(text);
    CHECK(v.str() == text);
    Version again = V(v.str());
    CHECK(again.identical(v));
  }
}

TEST_CASE("Version::parse handles the largest numbers") {
  Version v = V(kMax + "." + kMax + "." + kMax);
  CHECK(v.major == UINT64_MAX);
  CHECK(v.minor == UINT64_MAX);
  CHECK(v.patch == UINT64_MAX);
  CHECK(v.str() == kMax + "." + kMax + "." + kMax);
  CHECK(V("18446744073709551614.0.0") < V(kMax + ".0.0"));

  // Numeric pre-release identifiers are compared as numbers of any size.
  Version big = V("1.0.0-99999999999999999999999999");
  CHECK(big.prerelease[0] == "99999999999999999999999999");
  CHECK(V("1.0.0-" + kMax) < big);
  CHECK(big < V("1.0.0-100000000000000000000000000"));
  CHECK(big < V("1.0.0-a"));
}

TEST_CASE("Version::parse rejects numbers that overflow 64 bits") {
  CHECK(versionError("18446744073709551616.0.0") ==
        "\"18446744073709551616.0.0\" is not a valid version: numeric part "
        "\"18446744073709551616\" is too large at column 1 (the maximum is "
        "18446744073709551615)");
  CHECK(versionError("0.18446744073709551616.0") ==
        "\"0.18446744073709551616.0\" is not a valid version: numeric part "
        "\"18446744073709551616\" is too large at column 3 (the maximum is "
        "18446744073709551615)");
  CHECK(versionError("0.0.99999999999999999999") ==
        "\"0.0.99999999999999999999\" is not a valid version: numeric part "
        "\"99999999999999999999\" is too large at column 5 (the maximum is "
        "18446744073709551615)");
  CHECK(versionError("0.0.100000000000000000000") ==
        "\"0.0.100000000000000000000\" is not a valid version: numeric part "
        "\"100000000000000000000\" is too large at column 5 (the maximum is "
        "18446744073709551615)");
}

TEST_CASE("Version::parse rejects invalid versions with precise messages") {
  struct Case {
    std::string input;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"", "the version is empty"},
      {"1", "expected MAJOR.MINOR.PATCH"},
      {"1.2", "expected MAJOR.MINOR.PATCH"},
      {"1.2-rc.1", "expected MAJOR.MINOR.PATCH"},
      {"1.2+build", "expected MAJOR.MINOR.PATCH"},
      {"1.2.", "expected a number at column 5, found end of input"},
      {"1.", "expected a number at column 3, found end of input"},
      {"1..3", "expected a number at column 3, found \".3\""},
      {".1.2.3", "expected a number at column 1, found \".1.2.3\""},
      {"-1.2.3", "expected a number at column 1, found \"-1.2.3\""},
      {"1.-2.3", "expected a number at column 3, found \"-2.3\""},
      {"1.2.3.4", "unexpected \".4\" at column 6"},
      {"1.2.3.4.5", "unexpected \".4.5\" at column 6"},
      {"01.2.3", "numeric part \"01\" has a leading zero at column 1"},
      {"1.02.3", "numeric part \"02\" has a leading zero at column 3"},
      {"1.2.03", "numeric part \"03\" has a leading zero at column 5"},
      {"00.0.0", "numeric part \"00\" has a leading zero at column 1"},
      {"1.2.3-01",
       "pre-release identifier \"01\" has a leading zero at column 7"},
      {"1.2.3-rc.00",
       "pre-release identifier \"00\" has a leading zero at column 10"},
      {"1.2.3-", "empty pre-release identifier at column 7"},
      {"1.2.3-rc.", "empty pre-release identifier at column 10"},
      {"1.2.3-rc..1", "empty pre-release identifier at column 10"},
      {"1.2.3-.rc", "empty pre-release identifier at column 7"},
      {"1.2.3-+b", "empty pre-release identifier at column 7"},
      {"1.2.3+", "empty build identifier at column 7"},
      {"1.2.3+b..c", "empty build identifier at column 9"},
      {"1.2.3+b.", "empty build identifier at column 9"},
      {"1.2.3+a+b", "unexpected \"+b\" at column 8"},
      {"1.2.3-a_b", "invalid character \"_\" at column 8"},
      {"1.2.3-rc#1", "invalid character \"#\" at column 9"},
      {"1.2.3_", "invalid character \"_\" at column 6"},
      {"1.2.3-_", "invalid character \"_\" at column 7"},
      {"1_2.3", "invalid character \"_\" at column 2"},
      {"1,2,3", "unexpected \",\" at column 2"},
      {"v1.2.3", "leading \"v\" at column 1 is not allowed"},
      {"V1.2.3", "leading \"V\" at column 1 is not allowed"},
      {" 1.2.3", "unexpected whitespace at column 1"},
      {"1.2.3 ", "unexpected whitespace at column 6"},
      {"1. 2.3", "unexpected whitespace at column 3"},
      {"1.2.3 +b", "unexpected whitespace at column 6"},
      {"1.2.x", "expected a number at column 5, found \"x\""},
      {"1.2.*", "expected a number at column 5, found \"*\""},
      {"1.2.3a", "expected a number at column 5, found \"3a\""},
      {"a.b.c", "expected a number at column 1, found \"a\""},
      {"latest", "expected a number at column 1, found \"latest\""},
      {">=1.2.3", "expected a number at column 1, found \">=1.2.3\""},
      {"1.2.3-\xCE\xB1", "invalid byte 0xCE at column 7"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.input);
    CHECK(versionError(c.input) ==
          "\"" + c.input + "\" is not a valid version: " + c.problem);
  }
  CHECK(cases.size() >= 20);
}

TEST_CASE("Version::parse quotes control characters and gives hints") {
  CHECK(versionError("1.2.3\n") ==
        "\"1.2.3\\x0A\" is not a valid version: unexpected whitespace at "
        "column 6");
  CHECK(versionError(std::string("1.2.3\0", 6)) ==
        "\"1.2.3\\x00\" is not a valid version: invalid byte 0x00 at column "
        "6");
  CHECK(versionError("\"1.2.3\"") ==
        "\"\\\"1.2.3\\\"\" is not a valid version: invalid character "
        "\"\\\"\" at column 1");

  Expected<Version> v = Version::parse("1.2");
  REQUIRE_FALSE(v.has_value());
  CHECK(v.error().hint == "versions look like 1.2.3 or 1.2.3-rc.1 "
                          "(MAJOR.MINOR.PATCH, then an optional -PRERELEASE "
                          "and +BUILD)");
  Expected<Version> withV = Version::parse("v1.2.3-rc.1");
  REQUIRE_FALSE(withV.has_value());
  CHECK(withV.error().hint == "write \"1.2.3-rc.1\" without the \"v\"");
  Expected<Version> tooLong = Version::parse("1.2.3.4");
  REQUIRE_FALSE(tooLong.has_value());
  CHECK(tooLong.error().hint ==
        "a version has exactly three numeric parts: MAJOR.MINOR.PATCH");
}

//===----------------------------------------------------------------------===//
// Version precedence
//===----------------------------------------------------------------------===//

TEST_CASE("Version precedence follows the SemVer spec chain") {
  const std::vector<std::string> chain = {
      "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
      "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
      "1.0.0-rc.1",  "1.0.0",         "2.0.0",
      "2.1.0",       "2.1.1"};
  for (size_t i = 0; i < chain.size(); ++i) {
    for (size_t j = 0; j < chain.size(); ++j) {
      CAPTURE(chain[i]);
      CAPTURE(chain[j]);
      Version a = V(chain[i]), b = V(chain[j]);
      int expected = i < j ? -1 : (i > j ? 1 : 0);
      CHECK(compare(a, b) == expected);
      CHECK((a < b) == (i < j));
      CHECK((a <= b) == (i <= j));
      CHECK((a > b) == (i > j));
      CHECK((a >= b) == (i >= j));
      CHECK((a == b) == (i == j));
      CHECK((a != b) == (i != j));
    }
  }
}

TEST_CASE("Version precedence compares the core numerically") {
  CHECK(V("1.9.0") < V("1.10.0"));
  CHECK(V("1.10.0") < V("1.11.0"));
  CHECK(V("0.0.9") < V("0.0.10"));
  CHECK(V("9.99.99") < V("10.0.0"));
  CHECK(V("1.2.3") < V("1.2.4"));
  CHECK(V("1.2.99") < V("1.3.0"));
  CHECK(V("1.99.99") < V("2.0.0"));
  CHECK(compare(V("1.2.3"), V("1.2.3")) == 0);
}

TEST_CASE("Version precedence: numeric vs alphanumeric identifiers") {
  // Numeric identifiers compare numerically, not lexically.
  CHECK(V("1.0.0-2") < V("1.0.0-10"));
  CHECK(V("1.0.0-alpha.2") < V("1.0.0-alpha.10"));
  // Numeric identifiers are lower than alphanumeric ones.
  CHECK(V("1.0.0-1") < V("1.0.0-a"));
  CHECK(V("1.0.0-999") < V("1.0.0--"));
  CHECK(V("1.0.0-alpha.1") < V("1.0.0-alpha.a"));
  CHECK(V("1.0.0-2") < V("1.0.0-1a"));
  // Alphanumeric identifiers compare by ASCII order.
  CHECK(V("1.0.0-Z") < V("1.0.0-a"));
  CHECK(V("1.0.0-a") < V("1.0.0-b"));
  CHECK(V("1.0.0-alpha") < V("1.0.0-alpha-1"));
  CHECK(V("1.0.0-10a") < V("1.0.0-9a"));
  CHECK(V("1.0.0--") < V("1.0.0-0a"));
  // More identifiers win when the shared ones are equal.
  CHECK(V("1.0.0-a") < V("1.0.0-a.0"));
  CHECK(V("1.0.0-a.b") < V("1.0.0-a.b.c"));
  CHECK(V("1.0.0-1.2") < V("1.0.0-1.2.0"));
  // A pre-release is lower than its release and higher than earlier ones.
  CHECK(V("1.0.0-zzz") < V("1.0.0"));
  CHECK(V("1.0.0") < V("1.0.1-0"));
  CHECK(V("1.0.0-rc.1") > V("0.99.99"));
  // 0.0.0-0 is the lowest version there is.
  CHECK(V("0.0.0-0") < V("0.0.0-0.0"));
  CHECK(V("0.0.0-0") < V("0.0.0-1"));
  CHECK(V("0.0.0-0") < V("0.0.0-a"));
  CHECK(V("0.0.0-0") < V("0.0.0"));
}

TEST_CASE("Version build metadata is ignored by precedence but kept") {
  Version a = V("1.0.0+a");
  Version b = V("1.0.0+b");
  Version none = V("1.0.0");
  CHECK(a == b);
  CHECK(a == none);
  CHECK_FALSE(a != b);
  CHECK_FALSE(a < b);
  CHECK_FALSE(b < a);
  CHECK(a <= b);
  CHECK(a >= b);
  CHECK(compare(a, b) == 0);
  CHECK_FALSE(a.identical(b));
  CHECK_FALSE(a.identical(none));
  CHECK(a.identical(V("1.0.0+a")));
  CHECK(a.str() == "1.0.0+a");
  CHECK(b.str() == "1.0.0+b");
  CHECK(V("1.0.0-rc.1+x") < V("1.0.0"));
  CHECK(V("1.0.0-rc.1+x") == V("1.0.0-rc.1+y.z"));
  CHECK(V("1.0.0-rc.1+x") < V("1.0.0-rc.2+a"));
  CHECK(V("1.0.0-alpha+001").str() == "1.0.0-alpha+001");
}

TEST_CASE("Version identical compares every field") {
  Version v{1, 2, 3, {"rc", "1"}, {"b"}};
  CHECK(v.str() == "1.2.3-rc.1+b");
  CHECK(v.identical(V("1.2.3-rc.1+b")));
  CHECK_FALSE(v.identical(V("1.2.3-rc.1")));
  CHECK_FALSE(v.identical(V("1.2.3-rc.2+b")));
  CHECK_FALSE(v.identical(V("1.2.4-rc.1+b")));
  Version defaulted;
  CHECK(defaulted.str() == "0.0.0");
  CHECK(defaulted == V("0.0.0"));
}

//===----------------------------------------------------------------------===//
// VersionSet
//===----------------------------------------------------------------------===//

TEST_CASE("VersionSet any and none") {
  VersionSet any = VersionSet::any();
  VersionSet none = VersionSet::none();
  CHECK(any.isAny());
  CHECK_FALSE(any.isEmpty());
  CHECK(none.isEmpty());
  CHECK_FALSE(none.isAny());
  CHECK(VersionSet() == none);
  CHECK(any.str() == "*");
  CHECK(none.str() == "<empty>");
  for (const Version &v : sampleVersions()) {
    CHECK(any.contains(v));
    CHECK_FALSE(none.contains(v));
  }
  CHECK(any.contains(V(kMax + "." + kMax + "." + kMax)));
  CHECK(any.complement() == none);
  CHECK(none.complement() == any);
}

TEST_CASE("VersionSet exactly contains one version by precedence") {
  VersionSet s = VersionSet::exactly(V("1.2.3"));
  CHECK(s.contains(V("1.2.3")));
  CHECK(s.contains(V("1.2.3+build")));
  CHECK_FALSE(s.contains(V("1.2.3-rc.1")));
  CHECK_FALSE(s.contains(V("1.2.4-0")));
  CHECK_FALSE(s.contains(V("1.2.2")));
  CHECK(s.str() == "1.2.3");
  CHECK(VersionSet::exactly(V("1.2.3+build")) == s);
  CHECK(VersionSet::exactly(V("1.2.3+build")).str() == "1.2.3");

  VersionSet pre = VersionSet::exactly(V("1.0.0-rc.1"));
  CHECK(pre.contains(V("1.0.0-rc.1")));
  CHECK_FALSE(pre.contains(V("1.0.0-rc.1.0")));
  CHECK_FALSE(pre.contains(V("1.0.0-rc.2")));
  CHECK_FALSE(pre.contains(V("1.0.0")));
  CHECK(pre.str() == "1.0.0-rc.1");

  VersionSet top = VersionSet::exactly(V(kMax + "." + kMax + "." + kMax));
  CHECK(top.str() == kMax + "." + kMax + "." + kMax);
  CHECK(top.contains(V(kMax + "." + kMax + "." + kMax)));
  CHECK_FALSE(top.contains(V(kMax + "." + kMax + "." + kMax + "-rc")));
}

TEST_CASE("VersionSet bounds are pure precedence") {
  VersionSet ge = VersionSet::atLeast(V("1.2.3"));
  CHECK(ge.contains(V("1.2.3")));
  CHECK(ge.contains(V("1.2.4-alpha")));
  CHECK_FALSE(ge.contains(V("1.2.3-rc.1")));
  CHECK(ge.str() == ">=1.2.3");

  VersionSet gt = VersionSet::greaterThan(V("1.2.3"));
  CHECK_FALSE(gt.contains(V("1.2.3")));
  CHECK_FALSE(gt.contains(V("1.2.3+build")));
  CHECK(gt.contains(V("1.2.4-0")));
  CHECK(gt.str() == ">1.2.3");

  VersionSet lt = VersionSet::lessThan(V("2.0.0"));
  CHECK(lt.contains(V("1.99.99")));
  CHECK(lt.contains(V("2.0.0-rc.1"))); // a set has no pre-release rule
  CHECK_FALSE(lt.contains(V("2.0.0")));
  CHECK(lt.str() == "<2.0.0-" + kInf);

  VersionSet le = VersionSet::atMost(V("1.0.0"));
  CHECK(le.contains(V("1.0.0")));
  CHECK(le.contains(V("1.0.0+build")));
  CHECK(le.contains(V("0.0.0-0")));
  CHECK_FALSE(le.contains(V("1.0.1-0")));
  CHECK(le.str() == "<1.0.1");

  VersionSet ltPre = VersionSet::lessThan(V("2.0.0-0"));
  CHECK_FALSE(ltPre.contains(V("2.0.0-0")));
  CHECK_FALSE(ltPre.contains(V("2.0.0-rc.1")));
  CHECK(ltPre.contains(V("1.99.99")));
  CHECK(ltPre.str() == "<2.0.0");

  CHECK(VersionSet::lessThan(V("2.0.0-rc.1")).str() == "<2.0.0-rc.1");
  CHECK(VersionSet::atMost(V("1.0.0-rc.1")).str() == "<=1.0.0-rc.1");
  CHECK(VersionSet::greaterThan(V("1.0.0-rc.1")).str() == ">1.0.0-rc.1");
  CHECK(VersionSet::atLeast(V("1.0.0-rc.1")).str() == ">=1.0.0-rc.1");
  CHECK(VersionSet::atLeast(V("1.3.0-0")).str() == ">=1.3.0-0");
  CHECK(VersionSet::atLeast(V("0.0.0")).str() == ">=0.0.0");
}

TEST_CASE("VersionSet bounds at the ends of the version space") {
  std::string top = kMax + "." + kMax + "." + kMax;
  CHECK(VersionSet::greaterThan(V(top)).isEmpty());
  CHECK(VersionSet::atMost(V(top)).isAny());
  CHECK(VersionSet::atLeast(V("0.0.0-0")).isAny());
  CHECK(VersionSet::lessThan(V("0.0.0-0")).isEmpty());
  CHECK(VersionSet::exactly(V("0.0.0-0")).str() == "<=0.0.0-0");
  CHECK(VersionSet::exactly(V("0.0.0-0")).contains(V("0.0.0-0")));
  CHECK(VersionSet::greaterThan(V(kMax + "." + kMax + ".0")).str() ==
        ">" + kMax + "." + kMax + ".0");
  CHECK(VersionSet::greaterThan(V("1.2." + kMax)) ==
        VersionSet::atLeast(V("1.3.0-0")));
}

TEST_CASE("VersionSet normalises equal sets to equal values") {
  CHECK(VersionSet::greaterThan(V("1.2.3")) ==
        VersionSet::atLeast(V("1.2.4-0")));
  CHECK(VersionSet::atLeast(V("1.2.4-0")).str() == ">1.2.3");
  CHECK(VersionSet::atMost(V("1.2.3")) == VersionSet::lessThan(V("1.2.4-0")));
  CHECK(VersionSet::lessThan(V("1.2.4-0")).str() == "<1.2.4");
  CHECK(VersionSet::greaterThan(V("1.0.0-rc")) ==
        VersionSet::atLeast(V("1.0.0-rc.0")));
  CHECK(VersionSet::atLeast(V("1.0.0-rc.0")).str() == ">1.0.0-rc");
  CHECK(VersionSet::exactly(V("1.2.3")) ==
        VersionSet::atLeast(V("1.2.3"))
            .intersect(VersionSet::atMost(V("1.2.3"))));
  CHECK(VersionSet::atLeast(V("1.2.3"))
            .intersect(VersionSet::lessThan(V("1.2.4-0")))
            .str() == "1.2.3");
  // Adjacent intervals merge.
  CHECK(VersionSet::atMost(V("1.0.0"))
            .unionWith(VersionSet::greaterThan(V("1.0.0")))
            .isAny());
  CHECK(VersionSet::lessThan(V("1.0.0"))
            .unionWith(VersionSet::atLeast(V("1.0.0")))
            .isAny());
  VersionSet a = C(">=1.0.0, <2.0.0").set();
  VersionSet b = C(">=2.0.0-0, <3.0.0").set();
  CHECK(a.unionWith(b) == C(">=1.0.0, <3.0.0").set());
  CHECK(a.unionWith(b).str() == ">=1.0.0, <3.0.0");
  // 1.0.0 and 1.0.1-0 are neighbours: nothing lies between them.
  CHECK(VersionSet::exactly(V("1.0.0"))
            .unionWith(VersionSet::exactly(V("1.0.1-0")))
            .str() == ">=1.0.0, <=1.0.1-0");
  CHECK(VersionSet::exactly(V("1.0.0"))
            .unionWith(VersionSet::exactly(V("1.0.1")))
            .str() == "1.0.0 || 1.0.1");
  // Overlaps merge and order does not matter.
  VersionSet x = C(">=1.0.0, <1.5.0").set();
  VersionSet y = C(">=1.2.0, <2.0.0").set();
  CHECK(x.unionWith(y) == y.unionWith(x));
  CHECK(x.unionWith(y).str() == ">=1.0.0, <2.0.0");
  CHECK(x.unionWith(x) == x);
  CHECK(x.intersect(x) == x);
}

TEST_CASE("VersionSet intersect") {
  VersionSet a = C(">=1.0.0, <2.0.0").set();
  VersionSet b = C(">=1.5.0, <3.0.0").set();
  VersionSet ab = a.intersect(b);
  CHECK(ab.str() == ">=1.5.0, <2.0.0");
  CHECK(ab == b.intersect(a));
  CHECK(ab.contains(V("1.5.0")));
  CHECK(ab.contains(V("1.9.9")));
  CHECK_FALSE(ab.contains(V("1.4.9")));
  CHECK_FALSE(ab.contains(V("2.0.0")));

  CHECK(a.intersect(C(">=2.0.0").set()).isEmpty());
  CHECK(a.intersect(VersionSet::any()) == a);
  CHECK(a.intersect(VersionSet::none()).isEmpty());
  CHECK(VersionSet::atMost(V("1.0.0"))
            .intersect(VersionSet::atLeast(V("1.0.0")))
            .str() == "1.0.0");
  CHECK(VersionSet::lessThan(V("1.0.0"))
            .intersect(VersionSet::atLeast(V("1.0.0")))
            .isEmpty());

  VersionSet multi = C("<1.0.0 || >=2.0.0, <3.0.0 || >=4.0.0").set();
  VersionSet mid = C(">=0.5.0, <4.5.0").set();
  CHECK(multi.intersect(mid).str() ==
        ">=0.5.0, <1.0.0 || >=2.0.0, <3.0.0 || >=4.0.0, <4.5.0");
  CHECK(multi.intersect(C("2.5.0 || 3.5.0").set()).str() == "2.5.0");
}

TEST_CASE("VersionSet union") {
  VersionSet lo = C("<1.0.0").set();
  VersionSet hi = C(">=2.0.0").set();
  VersionSet both = lo.unionWith(hi);
  CHECK(both.str() == "<1.0.0 || >=2.0.0");
  CHECK(hi.unionWith(lo) == both);
  CHECK(both.contains(V("0.9.0")));
  CHECK(both.contains(V("2.0.0")));
  CHECK_FALSE(both.contains(V("1.5.0")));
  CHECK(both.unionWith(VersionSet::none()) == both);
  CHECK(both.unionWith(VersionSet::any()).isAny());
  // Filling the gap makes it whole.
  CHECK(both.unionWith(VersionSet::atLeast(V("1.0.0-0"))
                           .intersect(VersionSet::lessThan(V("2.0.0"))))
            .isAny());
  CHECK_FALSE(both.unionWith(C(">=1.0.0-0, <2.0.0").set()).isAny());
  // A union of many pieces sorts and merges them.
  VersionSet pieces = VersionSet::exactly(V("3.0.0"))
                          .unionWith(VersionSet::exactly(V("1.0.0")))
                          .unionWith(VersionSet::exactly(V("2.0.0")))
                          .unionWith(C(">=1.5.0, <2.5.0").set());
  CHECK(pieces.str() == "1.0.0 || >=1.5.0, <2.5.0 || 3.0.0");
}

TEST_CASE("VersionSet complement") {
  VersionSet caret = C("^1.2").set(); // [1.2.0, 2.0.0-0)
  VersionSet comp = caret.complement();
  CHECK(comp.str() == "<1.2.0-" + kInf + " || >=2.0.0-0");
  CHECK(comp.contains(V("1.2.0-rc.1")));
  CHECK(comp.contains(V("2.0.0-0")));
  CHECK(comp.contains(V("2.0.0")));
  CHECK_FALSE(comp.contains(V("1.2.0")));
  CHECK_FALSE(comp.contains(V("1.99.0")));
  CHECK(comp.complement() == caret);
  CHECK(caret.unionWith(comp).isAny());
  CHECK(caret.intersect(comp).isEmpty());

  CHECK(VersionSet::atLeast(V("1.0.0")).complement() ==
        VersionSet::lessThan(V("1.0.0")));
  CHECK(VersionSet::greaterThan(V("1.0.0")).complement() ==
        VersionSet::atMost(V("1.0.0")));
  CHECK(VersionSet::greaterThan(V("1.0.0")).complement().str() == "<1.0.1");
  CHECK(VersionSet::exactly(V("1.0.0")).complement().str() ==
        "<1.0.0-" + kInf + " || >1.0.0");
  CHECK(C("<1.0.0 || >=2.0.0").set().complement().str() ==
        ">=1.0.0-0, <2.0.0-" + kInf);
}

TEST_CASE("VersionSet difference") {
  VersionSet a = C(">=1.0.0, <3.0.0").set();
  VersionSet b = C(">=2.0.0, <2.5.0").set();
  VersionSet d = a.difference(b);
  CHECK(d.str() == ">=1.0.0, <2.0.0-" + kInf + " || >=2.5.0-0, <3.0.0");
  CHECK(d.contains(V("1.0.0")));
  CHECK(d.contains(V("2.0.0-rc.1")));
  CHECK_FALSE(d.contains(V("2.0.0")));
  CHECK_FALSE(d.contains(V("2.4.9")));
  CHECK(d.contains(V("2.5.0")));
  CHECK(a.difference(a).isEmpty());
  CHECK(a.difference(VersionSet::none()) == a);
  CHECK(a.difference(VersionSet::any()).isEmpty());
  CHECK(b.difference(a).isEmpty());
  CHECK(VersionSet::any().difference(a) == a.complement());
  CHECK(a.difference(VersionSet::exactly(V("1.0.0"))).str() ==
        ">1.0.0, <3.0.0");
}

TEST_CASE("VersionSet subsetOf and disjoint") {
  VersionSet caret = C("^1.2").set();
  VersionSet tilde = C("~1.2.3").set();
  CHECK(tilde.subsetOf(caret));
  CHECK_FALSE(caret.subsetOf(tilde));
  CHECK(caret.subsetOf(caret));
  CHECK(VersionSet::none().subsetOf(caret));
  CHECK(caret.subsetOf(VersionSet::any()));
  CHECK_FALSE(VersionSet::any().subsetOf(caret));
  CHECK(VersionSet::exactly(V("1.5.0")).subsetOf(caret));
  CHECK_FALSE(VersionSet::exactly(V("2.0.0")).subsetOf(caret));
  CHECK(C("1.2.3 || 1.4.0").set().subsetOf(caret));
  CHECK_FALSE(C("1.2.3 || 2.4.0").set().subsetOf(caret));

  CHECK(caret.disjoint(C("^2").set()));
  CHECK(caret.disjoint(VersionSet::none()));
  CHECK_FALSE(caret.disjoint(tilde));
  CHECK_FALSE(caret.disjoint(VersionSet::any()));
  CHECK(VersionSet::lessThan(V("1.0.0"))
            .disjoint(VersionSet::atLeast(V("1.0.0"))));
  CHECK_FALSE(
      VersionSet::atMost(V("1.0.0")).disjoint(VersionSet::atLeast(V("1.0.0"))));
}

TEST_CASE("VersionSet algebra agrees with membership") {
  std::vector<VersionSet> sets = sampleSets();
  std::vector<Version> versions = sampleVersions();
  for (const VersionSet &a : sets) {
    CAPTURE(a);
    CHECK(a.complement().complement() == a);
    CHECK(a.unionWith(a.complement()).isAny());
    CHECK(a.intersect(a.complement()).isEmpty());
    for (const VersionSet &b : sets) {
      CAPTURE(b);
      VersionSet both = a.intersect(b);
      VersionSet either = a.unionWith(b);
      VersionSet minus = a.difference(b);
      CHECK(both == b.intersect(a));
      CHECK(either == b.unionWith(a));
      // De Morgan.
      CHECK(either.complement() == a.complement().intersect(b.complement()));
      CHECK(both.complement() == a.complement().unionWith(b.complement()));
      CHECK(minus.unionWith(both) == a);
      CHECK(both.subsetOf(a));
      CHECK(a.subsetOf(either));
      CHECK(minus.disjoint(b));
      CHECK(a.subsetOf(b) == (both == a));
      CHECK(a.disjoint(b) == both.isEmpty());
      for (const Version &v : versions) {
        CAPTURE(v);
        CHECK(both.contains(v) == (a.contains(v) && b.contains(v)));
        CHECK(either.contains(v) == (a.contains(v) || b.contains(v)));
        CHECK(minus.contains(v) == (a.contains(v) && !b.contains(v)));
        CHECK(a.complement().contains(v) == !a.contains(v));
      }
    }
  }
}

TEST_CASE("VersionSet str round-trips through Constraint::parse") {
  std::vector<VersionSet> sets = {
      VersionSet::any(),
      VersionSet::exactly(V("1.2.3")),
      VersionSet::exactly(V("1.2.3-rc.1")),
      VersionSet::atLeast(V("1.2.3")),
      VersionSet::atLeast(V("1.3.0-0")),
      VersionSet::greaterThan(V("1.2.3")),
      VersionSet::greaterThan(V("1.2.3-rc.1")),
      VersionSet::atMost(V("1.2.3")),
      VersionSet::atMost(V("1.2.3-rc.1")),
      VersionSet::lessThan(V("2.0.0-0")),
      VersionSet::lessThan(V("2.0.0-rc.1")),
      C("^1.2 || ~3.4.5 || 7.x").set(),
      C("<0.5.0 || 1.0.0 || >2.0.0").set(),
      C(">=1.0.0-alpha, <=1.0.0-beta").set(),
  };
  for (const VersionSet &s : sets) {
    CAPTURE(s);
    CHECK(C(s.str()).set() == s);
  }
}

//===----------------------------------------------------------------------===//
// Constraint forms
//===----------------------------------------------------------------------===//

TEST_CASE("Constraint caret") {
  CHECK(C("^1.2.3").str() == ">=1.2.3, <2.0.0");
  checkMatches("^1.2.3", {"1.2.3", "1.2.3+build", "1.2.4", "1.9.99", "1.99.0"},
               {"1.2.2", "1.2.3-rc.1", "0.9.9", "2.0.0-0", "2.0.0-rc.1",
                "2.0.0", "1.3.0-beta"});
  CHECK(C("^0.2.3").str() == ">=0.2.3, <0.3.0");
  checkMatches("^0.2.3", {"0.2.3", "0.2.99"},
               {"0.2.2", "0.3.0-0", "0.3.0", "1.0.0"});
  // ^0.0.3 is >=0.0.3, <0.0.4: nothing but 0.0.3 lies in there.
  CHECK(C("^0.0.3").set() == C(">=0.0.3, <0.0.4").set());
  CHECK(C("^0.0.3").str() == "0.0.3");
  checkMatches("^0.0.3", {"0.0.3"}, {"0.0.2", "0.0.4-0", "0.0.4", "0.1.0"});
  CHECK(C("^1.2").str() == ">=1.2.0, <2.0.0");
  checkMatches("^1.2", {"1.2.0", "1.99.0"},
               {"1.1.99", "1.2.0-rc.1", "2.0.0", "1.3.0-beta"});
  CHECK(C("^1").str() == ">=1.0.0, <2.0.0");
  checkMatches("^1", {"1.0.0", "1.99.99"}, {"0.99.99", "2.0.0", "1.0.0-rc"});
  CHECK(C("^0").str() == "<1.0.0");
  checkMatches("^0", {"0.0.0", "0.0.1", "0.99.99"}, {"1.0.0", "1.0.0-0"});
  CHECK(C("^0").set().contains(V("0.0.0-alpha")));
  CHECK(C("^0.0").str() == "<0.1.0");
  checkMatches("^0.0", {"0.0.0", "0.0.99"}, {"0.1.0", "0.1.0-rc"});
  CHECK(C("^0.2").str() == ">=0.2.0, <0.3.0");
  CHECK(C("^0.0.0").str() == "0.0.0");
  CHECK(C("^1.2.3-beta.2").str() == ">=1.2.3-beta.2, <2.0.0");
}

TEST_CASE("Constraint tilde") {
  CHECK(C("~1.2.3").str() == ">=1.2.3, <1.3.0");
  checkMatches("~1.2.3", {"1.2.3", "1.2.99"},
               {"1.2.2", "1.3.0-0", "1.3.0", "2.0.0"});
  CHECK(C("~1.2").str() == ">=1.2.0, <1.3.0");
  checkMatches("~1.2", {"1.2.0", "1.2.99"}, {"1.1.99", "1.3.0"});
  CHECK(C("~1").str() == ">=1.0.0, <2.0.0");
  checkMatches("~1", {"1.0.0", "1.99.0"}, {"0.9.0", "2.0.0"});
  CHECK(C("~0").str() == "<1.0.0");
  CHECK(C("~0.0").str() == "<0.1.0");
  CHECK(C("~0.2.3").str() == ">=0.2.3, <0.3.0");
  CHECK(C("~1.2.3-rc.1").str() == ">=1.2.3-rc.1, <1.3.0");
}

TEST_CASE("Constraint exact and bare versions") {
  for (const char *text : {"=1.2.3", "1.2.3", "= 1.2.3"}) {
    CAPTURE(text);
    CHECK(C(text).str() == "1.2.3");
    checkMatches(text, {"1.2.3", "1.2.3+build"},
                 {"1.2.2", "1.2.4", "1.2.3-rc.1", "1.2.4-0"});
  }
  for (const char *text : {"=1.2", "1.2"}) {
    CAPTURE(text);
    CHECK(C(text).str() == ">=1.2.0, <1.3.0");
    checkMatches(text, {"1.2.0", "1.2.99"}, {"1.1.99", "1.3.0", "1.3.0-rc"});
  }
  for (const char *text : {"=1", "1"}) {
    CAPTURE(text);
    CHECK(C(text).str() == ">=1.0.0, <2.0.0");
    checkMatches(text, {"1.0.0", "1.99.99"}, {"0.99.99", "2.0.0"});
  }
  CHECK(C("0").str() == "<1.0.0");
  CHECK(C("0.0").str() == "<0.1.0");
  CHECK(C("=1.2.3-rc.1").str() == "1.2.3-rc.1");
  checkMatches("1.2.3-rc.1", {"1.2.3-rc.1"},
               {"1.2.3-rc.2", "1.2.3-rc.1.0", "1.2.3", "1.2.3-rc.0"});
}

TEST_CASE("Constraint comparison operators") {
  CHECK(C(">=1.2.3").str() == ">=1.2.3");
  checkMatches(">=1.2.3", {"1.2.3", "1.2.4", "99.0.0"},
               {"1.2.2", "1.2.3-rc.1"});
  CHECK(C(">1.2.3").str() == ">1.2.3");
  checkMatches(">1.2.3", {"1.2.4", "2.0.0"},
               {"1.2.3", "1.2.3+build", "1.2.4-0"});
  CHECK(C("<1.2.3").str() == "<1.2.3");
  checkMatches("<1.2.3", {"1.2.2", "0.0.0"}, {"1.2.3", "1.2.3-rc.1"});
  CHECK(C("<=1.2.3").str() == "<1.2.4"); // "<X" excludes X's pre-releases
  checkMatches("<=1.2.3", {"1.2.3", "1.2.3+b", "0.1.0"}, {"1.2.4", "1.2.4-0"});

  CHECK(C(">=1.2").str() == ">=1.2.0");
  checkMatches(">=1.2", {"1.2.0", "3.0.0"}, {"1.1.99", "1.2.0-rc"});
  CHECK(C(">1.2").str() == ">=1.3.0");
  checkMatches(">1.2", {"1.3.0", "2.0.0"}, {"1.2.0", "1.2.99", "1.3.0-rc"});
  CHECK(C("<=1.2").str() == "<1.3.0");
  checkMatches("<=1.2", {"1.2.99", "1.0.0"}, {"1.3.0", "1.3.0-0"});
  CHECK(C("<1.2").str() == "<1.2.0");
  checkMatches("<1.2", {"1.1.99", "0.0.0"}, {"1.2.0", "1.2.0-rc"});
  CHECK(C(">1").str() == ">=2.0.0");
  checkMatches(">1", {"2.0.0"}, {"1.99.99", "2.0.0-rc"});
  CHECK(C(">=1").str() == ">=1.0.0");
  CHECK(C("<=1").str() == "<2.0.0");
  CHECK(C("<1").str() == "<1.0.0");
  CHECK(C(">=0").str() == "*");
  CHECK(C(">=0.0.0").str() == ">=0.0.0");
  CHECK(C("<0").str() == "<empty>");
  CHECK(C("<0.0.0").str() == "<empty>");

  // Upper bounds without a pre-release exclude the bound's pre-releases,
  // even as plain sets.
  CHECK(C("<2.0.0").set() == VersionSet::lessThan(V("2.0.0-0")));
  CHECK_FALSE(C("<2.0.0").set().contains(V("2.0.0-rc.1")));
  CHECK_FALSE(C("^1.2").set().contains(V("2.0.0-rc.1")));
  CHECK_FALSE(C("<=1.2").set().contains(V("1.3.0-rc.1")));
  // With a pre-release the bound is taken as written.
  CHECK(C("<2.0.0-rc.1").set() == VersionSet::lessThan(V("2.0.0-rc.1")));
  CHECK(C("<2.0.0-rc.1").set().contains(V("2.0.0-beta")));
  CHECK(C("<=2.0.0-rc.1").set() == VersionSet::atMost(V("2.0.0-rc.1")));
  CHECK(C(">2.0.0-rc.1").set() == VersionSet::greaterThan(V("2.0.0-rc.1")));
}

TEST_CASE("Constraint wildcards") {
  for (const char *text : {"*", "x", "X", "*.*", "x.x.x", " * "}) {
    CAPTURE(text);
    Constraint c = C(text);
    CHECK(c.set().isAny());
    CHECK(c.str() == "*");
    CHECK(c.matches(V("0.0.0")));
    CHECK(c.matches(V("123.4.5")));
    CHECK_FALSE(c.matches(V("1.0.0-rc.1")));
  }
  for (const char *text : {"1.*", "1.x", "1.X", "1.*.*", "1.x.x"}) {
    CAPTURE(text);
    CHECK(C(text).set() == C("1").set());
    checkMatches(text, {"1.0.0", "1.99.99"}, {"0.9.9", "2.0.0", "1.5.0-rc"});
  }
  for (const char *text : {"1.2.*", "1.2.x", "1.2.X"}) {
    CAPTURE(text);
    CHECK(C(text).str() == ">=1.2.0, <1.3.0");
    checkMatches(text, {"1.2.0", "1.2.99"}, {"1.1.0", "1.3.0"});
  }
  CHECK(C("0.*").str() == "<1.0.0");
  CHECK(C("^1.x").set() == C("^1").set());
  CHECK(C("^1.2.x").set() == C("^1.2").set());
  CHECK(C("~1.2.*").set() == C("~1.2").set());
  CHECK(C(">=1.x").str() == ">=1.0.0");
  CHECK(C(">1.2.x").str() == ">=1.3.0");
  CHECK(C("<1.x").str() == "<1.0.0");
  CHECK(C("<=1.x").str() == "<2.0.0");
}

TEST_CASE("Constraint intersections and unions of comparators") {
  CHECK(C(">=1.0.0, <2.0.0").str() == ">=1.0.0, <2.0.0");
  checkMatches(">=1.0.0, <2.0.0", {"1.0.0", "1.99.99"},
               {"0.9.9", "2.0.0-rc.1", "2.0.0"});
  CHECK(C("^1.2 || ^2.1").str() == ">=1.2.0, <2.0.0 || >=2.1.0, <3.0.0");
  checkMatches("^1.2 || ^2.1", {"1.2.0", "1.9.0", "2.1.0", "2.9.0"},
               {"1.1.0", "2.0.0", "2.0.9", "3.0.0"});
  CHECK(C("1.0.0 || 2.0.0 || 3.0.0").str() == "1.0.0 || 2.0.0 || 3.0.0");
  CHECK(C("3.0.0 || 1.0.0").str() == "1.0.0 || 3.0.0");
  CHECK(C("^1.2 || ~1.5.0").str() == ">=1.2.0, <2.0.0");
  CHECK(C("^1, ^2").set().isEmpty());
  CHECK(C("^1, ^2").str() == "<empty>");
  CHECK_FALSE(C("^1, ^2").matches(V("1.5.0")));
  CHECK(C(">=1.0.0, >=1.5.0, <3.0.0, <2.0.0").str() == ">=1.5.0, <2.0.0");
  CHECK(C(">=1.0.0 || <0.5").str() == "<0.5.0 || >=1.0.0");
  CHECK(C("<1.0.0 || >=1.0.0").str() == "<1.0.0 || >=1.0.0");
  CHECK(C("<=1.0.0 || >1.0.0").str() == "*");
}

TEST_CASE("Constraint allows whitespace around tokens and trims text") {
  Constraint c = C("  >=  1.2.3 ,<2.0.0\t||\t3.x  ");
  CHECK(c.text() == ">=  1.2.3 ,<2.0.0\t||\t3.x");
  CHECK(c.str() == ">=1.2.3, <2.0.0 || >=3.0.0, <4.0.0");
  CHECK(C(">=1.2.3,<2.0.0||3.x").set() == c.set());
  CHECK(C("^ 1.2").set() == C("^1.2").set());
  CHECK(C("\n^1.2\n").text() == "^1.2");
}

TEST_CASE("Constraint numbers at the edge of 64 bits") {
  CHECK(C("^" + kMax).str() == ">=" + kMax + ".0.0");
  CHECK(C(">" + kMax).set().isEmpty());
  CHECK(C("<=" + kMax).set().isAny());
  CHECK(C(kMax).str() == ">=" + kMax + ".0.0");
  CHECK(C("~1." + kMax).str() == ">=1." + kMax + ".0, <2.0.0");
  CHECK(C(">1." + kMax).str() == ">=2.0.0");
  // Nothing lies between 0.0.MAX and 0.1.0-0.
  CHECK(C("^0.0." + kMax).str() == "0.0." + kMax);
  CHECK(C("^0.0." + kMax).set() == C(">=0.0." + kMax + ", <0.1.0").set());
}

//===----------------------------------------------------------------------===//
// Pre-release rule
//===----------------------------------------------------------------------===//

TEST_CASE("Constraint pre-release rule") {
  // A caret never admits pre-releases it does not name.
  CHECK(C("^1.2").set().contains(V("1.3.0-beta")));
  CHECK_FALSE(C("^1.2").matches(V("1.3.0-beta")));
  CHECK_FALSE(C("^1.2").matches(V("1.2.0-beta")));

  // Naming a pre-release admits the pre-releases of that core only.
  checkMatches(
      ">=1.3.0-beta",
      {"1.3.0-beta", "1.3.0-beta.2", "1.3.0-rc.1", "1.3.0", "1.4.0", "2.0.0"},
      {"1.4.0-alpha", "1.3.0-alpha", "2.0.0-rc.1", "1.2.0"});
  checkMatches(">=1.0.0-rc.1, <2.0.0",
               {"1.0.0-rc.1", "1.0.0-rc.2", "1.0.0", "1.5.0"},
               {"1.0.0-beta", "1.5.0-beta", "2.0.0-rc.1", "2.0.0"});
  checkMatches("^1.2.3-beta.2",
               {"1.2.3-beta.2", "1.2.3-beta.3", "1.2.3-rc", "1.2.3", "1.9.0"},
               {"1.2.3-beta.1", "1.2.3-alpha", "1.2.4-beta", "2.0.0-0"});
  checkMatches("~1.2.3-rc.1", {"1.2.3-rc.1", "1.2.3-rc.2", "1.2.5"},
               {"1.2.3-beta", "1.2.4-rc.1", "1.3.0"});
  checkMatches("<2.0.0-rc.1", {"2.0.0-beta", "2.0.0-0", "1.9.0"},
               {"2.0.0-rc.1", "1.9.0-beta", "2.0.0"});
  checkMatches("<=2.0.0-rc.1", {"2.0.0-rc.1", "2.0.0-beta"},
               {"2.0.0-rc.1.1", "2.0.0-rc.2", "1.0.0-rc.1"});
  checkMatches(">1.0.0-rc.1", {"1.0.0-rc.2", "1.0.0-rc.1.0", "1.0.0"},
               {"1.0.0-rc.1", "1.1.0-rc.1"});

  // The allowance is per constraint, across alternatives.
  checkMatches("1.0.0-rc.1 || 2.x", {"1.0.0-rc.1", "2.0.0", "2.5.0"},
               {"1.0.0-rc.2", "2.0.0-rc.1", "1.0.0"});
  checkMatches(">=1.0.0-0", {"1.0.0-0", "1.0.0-alpha", "1.0.0", "3.0.0"},
               {"3.0.0-alpha"});

  // Sets alone do not apply the rule.
  CHECK(C("*").set().contains(V("1.0.0-rc.1")));
  CHECK_FALSE(C("*").matches(V("1.0.0-rc.1")));
  CHECK_FALSE(Constraint::any().matches(V("1.0.0-rc.1")));

  // Build metadata on the candidate is ignored.
  CHECK(C(">=1.3.0-beta").matches(V("1.3.0-beta.2+build.7")));
  CHECK(C("^1.2").matches(V("1.4.0+build")));
}

//===----------------------------------------------------------------------===//
// Constraint accessors and intersect
//===----------------------------------------------------------------------===//

TEST_CASE("Constraint::any and the default constraint") {
  Constraint any = Constraint::any();
  CHECK(any.text() == "*");
  CHECK(any.str() == "*");
  CHECK(any.set().isAny());
  CHECK(any.matches(V("0.0.0")));
  CHECK(any.matches(V("7.0.0+b")));
  Constraint defaulted;
  CHECK(defaulted.text() == "*");
  CHECK(defaulted.set() == any.set());
}

TEST_CASE("Constraint::text keeps the written form, str the canonical one") {
  Constraint c = C(" ^1.2 ");
  CHECK(c.text() == "^1.2");
  CHECK(c.str() == ">=1.2.0, <2.0.0");
  CHECK(c.set() == C(">=1.2.0, <2.0.0").set());
  CHECK(C("1.x || 3.*").text() == "1.x || 3.*");
}

TEST_CASE("Constraint::intersect") {
  Constraint lo = C(">=1.0.0");
  Constraint hi = C("<2.0.0");
  Constraint both = lo.intersect(hi);
  CHECK(both.text() == ">=1.0.0, <2.0.0");
  CHECK(both.str() == ">=1.0.0, <2.0.0");
  CHECK(both.set() == C(">=1.0.0, <2.0.0").set());
  CHECK(both.matches(V("1.5.0")));
  CHECK_FALSE(both.matches(V("2.0.0")));
  CHECK_FALSE(both.matches(V("0.9.0")));

  // Pre-release allowances from both sides apply.
  Constraint pre = C(">=1.0.0-rc.1").intersect(C("<2.0.0"));
  CHECK(pre.text() == ">=1.0.0-rc.1, <2.0.0");
  CHECK(pre.matches(V("1.0.0-rc.2")));
  CHECK_FALSE(pre.matches(V("1.1.0-rc.1")));
  Constraint pre2 = C("^1").intersect(C(">=1.5.0-beta"));
  CHECK(pre2.matches(V("1.5.0-beta.3")));
  CHECK_FALSE(pre2.matches(V("1.5.0-alpha"))); // not in the set
  CHECK_FALSE(pre2.matches(V("1.6.0-beta")));
  Constraint pre3 = C("1.5.0-beta || 1.6.0-beta").intersect(C("<1.6.0"));
  CHECK(pre3.matches(V("1.5.0-beta")));
  CHECK_FALSE(pre3.matches(V("1.6.0-beta")));

  // Disjoint constraints give an empty set.
  Constraint none = C("^1").intersect(C("^2"));
  CHECK(none.set().isEmpty());
  CHECK(none.str() == "<empty>");
  CHECK(none.text() == "^1, ^2");
  CHECK_FALSE(none.matches(V("1.0.0")));
  CHECK_FALSE(none.matches(V("2.0.0")));

  // Intersecting with any changes nothing but the text.
  Constraint caret = C("^1.2");
  Constraint withAny = caret.intersect(Constraint::any());
  CHECK(withAny.set() == caret.set());
  CHECK(withAny.text() == "^1.2, *");
  CHECK(C(withAny.text()).set() == withAny.set());

  // Unions inside either side are kept as sets.
  Constraint alt = C("^1 || ^3").intersect(C(">=1.5.0"));
  CHECK(alt.str() == ">=1.5.0, <2.0.0 || >=3.0.0, <4.0.0");
}

//===----------------------------------------------------------------------===//
// Constraint parse errors
//===----------------------------------------------------------------------===//

TEST_CASE("Constraint::parse errors quote the text, token and column") {
  struct Case {
    std::string input;
    std::string quotedText; ///< the trimmed text as quoted
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"", "", "the constraint is empty"},
      {"   ", "", "the constraint is empty"},
      {"^1.2.x.4", "^1.2.x.4", "unexpected \".4\" at column 7"},
      {"1.2.3,", "1.2.3,", "expected a comparator after \",\" at column 6"},
      {"1.2.3, ", "1.2.3,", "expected a comparator after \",\" at column 6"},
      {"1.2.3 ||", "1.2.3 ||",
       "expected a comparator after \"||\" at column 7"},
      {",1.2.3", ",1.2.3", "unexpected \",\" at column 1"},
      {"1.2.3,,2", "1.2.3,,2", "unexpected \",\" at column 7"},
      {"  1.2.3,,", "1.2.3,,", "unexpected \",\" at column 7"},
      {"|| 1.2.3", "|| 1.2.3", "unexpected \"||\" at column 1"},
      {"1 || || 2", "1 || || 2", "unexpected \"||\" at column 6"},
      {"1.2.3 | 2", "1.2.3 | 2", "unexpected \"|\" at column 7"},
      {">=", ">=", "expected a version after \">=\" at column 1"},
      {">=, <2", ">=, <2", "expected a version after \">=\" at column 1"},
      {"<", "<", "expected a version after \"<\" at column 1"},
      {"<=", "<=", "expected a version after \"<=\" at column 1"},
      {">", ">", "expected a version after \">\" at column 1"},
      {"=", "=", "expected a version after \"=\" at column 1"},
      {"^", "^", "expected a version after \"^\" at column 1"},
      {"~", "~", "expected a version after \"~\" at column 1"},
      {"^1, ~", "^1, ~", "expected a version after \"~\" at column 5"},
      {">>1.2.3", ">>1.2.3", "expected a version after \">\" at column 1"},
      {"1.2.3+build", "1.2.3+build",
       "build metadata \"+build\" at column 6 is not allowed in a "
       "constraint"},
      {">=1.0.0+b, <2", ">=1.0.0+b, <2",
       "build metadata \"+b\" at column 8 is not allowed in a constraint"},
      {"^*", "^*", "unexpected \"*\" at column 2 after \"^\""},
      {"~x", "~x", "unexpected \"x\" at column 2 after \"~\""},
      {">=*", ">=*", "unexpected \"*\" at column 3 after \">=\""},
      {"=*", "=*", "unexpected \"*\" at column 2 after \"=\""},
      {"< x.x", "< x.x", "unexpected \"x.x\" at column 3 after \"<\""},
      {"1.*.3", "1.*.3", "unexpected \".3\" at column 4"},
      {"*.1", "*.1", "unexpected \".1\" at column 2"},
      {"1.x.0", "1.x.0", "unexpected \".0\" at column 4"},
      {">=1.0.0 <2.0.0", ">=1.0.0 <2.0.0",
       "missing \",\" before \"<2.0.0\" at column 9"},
      {"1.2.3 2.0.0", "1.2.3 2.0.0",
       "missing \",\" before \"2.0.0\" at column 7"},
      {"1.2.3<2", "1.2.3<2", "missing \",\" before \"<2\" at column 6"},
      {"1.2.3 - 2.0.0", "1.2.3 - 2.0.0",
       "missing \",\" before \"-\" at column 7"},
      {"1.2-rc.1", "1.2-rc.1",
       "unexpected \"-rc.1\" at column 4; a pre-release needs a full "
       "MAJOR.MINOR.PATCH version"},
      {"1.*-rc", "1.*-rc",
       "unexpected \"-rc\" at column 4; a pre-release needs a full "
       "MAJOR.MINOR.PATCH version"},
      {"^1.02", "^1.02", "numeric part \"02\" has a leading zero at column 4"},
      {"1.2.3-01", "1.2.3-01",
       "pre-release identifier \"01\" has a leading zero at column 7"},
      {"1.2.3-", "1.2.3-", "empty pre-release identifier at column 7"},
      {"1.2.3-, 2", "1.2.3-, 2", "empty pre-release identifier at column 7"},
      {">= 1.2.3-rc..1", ">= 1.2.3-rc..1",
       "empty pre-release identifier at column 13"},
      {"v1.2.3", "v1.2.3", "leading \"v\" at column 1 is not allowed"},
      {"^v1", "^v1", "leading \"v\" at column 2 is not allowed"},
      {"1.2.3.4", "1.2.3.4", "unexpected \".4\" at column 6"},
      {"abc", "abc", "expected a version at column 1, found \"abc\""},
      {"latest", "latest", "expected a version at column 1, found \"latest\""},
      {"1.abc", "1.abc",
       "expected a number or wildcard at column 3, found \"abc\""},
      {"1.2.", "1.2.",
       "expected a number or wildcard at column 5, found end of input"},
      {"1.,2", "1.,2",
       "expected a number or wildcard at column 3, found \",\""},
      {"^18446744073709551616", "^18446744073709551616",
       "numeric part \"18446744073709551616\" is too large at column 2 (the "
       "maximum is 18446744073709551615)"},
      {"1.2.3;", "1.2.3;", "invalid character \";\" at column 6"},
      {"!=1.3.0", "!=1.3.0", "invalid character \"!\" at column 1"},
      {"1.2.3 !", "1.2.3 !", "missing \",\" before \"!\" at column 7"},
      {">=1.2.3, <2.0.0-\xCE\xB1", ">=1.2.3, <2.0.0-\xCE\xB1",
       "invalid byte 0xCE at column 17"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.input);
    CHECK(constraintError(c.input) ==
          "\"" + c.quotedText +
              "\" is not a valid version constraint: " + c.problem);
  }
}

TEST_CASE("Constraint::parse error hints") {
  const std::string forms =
      "accepted forms: 1.2.3, =1.2.3, >=1.2.3, >1.2.3, <=1.2.3, <1.2.3, "
      "^1.2.3, ~1.2.3, 1.2.*, 1.*, * (versions may be partial, as in ^1.2); "
      "join comparators with \",\" and alternatives with \"||\"";
  Expected<Constraint> empty = Constraint::parse("");
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().hint == forms);

  Expected<Constraint> comma = Constraint::parse(">=1.0.0 <2.0.0");
  REQUIRE_FALSE(comma.has_value());
  CHECK(comma.error().hint ==
        "separate comparators with \",\", as in >=1.0.0, <2.0.0; " + forms);

  Expected<Constraint> build = Constraint::parse("1.2.3+build");
  REQUIRE_FALSE(build.has_value());
  CHECK(build.error().hint ==
        "build metadata never affects precedence; remove \"+build\"; " + forms);

  Expected<Constraint> pipe = Constraint::parse("1 | 2");
  REQUIRE_FALSE(pipe.has_value());
  CHECK(pipe.error().hint == "join alternatives with \"||\"; " + forms);

  Expected<Constraint> wild = Constraint::parse("^*");
  REQUIRE_FALSE(wild.has_value());
  CHECK(wild.error().hint ==
        "a wildcard stands alone; write \"*\" for any version; " + forms);

  CHECK(wild.error().format() ==
        "\"^*\" is not a valid version constraint: unexpected \"*\" at "
        "column 2 after \"^\"\n  hint: " +
            wild.error().hint);
}
