//===- test_teardown.cpp - Skipping frees at exit -------------------------===//
//
// ireepkg/base/teardown.h: discard() destroys at once by default, and
// keeps objects alive (never destroyed) once skipFreesAtExit is on, as the
// command-line tool sets it; the resolver hands its solver to it.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/resolve/resolver.h"
#include "ireepkg/base/teardown.h"

#include <doctest/doctest.h>

using namespace ireepkg;

namespace {

struct Counted {
  explicit Counted(int &destroyed) : destroyed(destroyed) {}
  ~Counted() { ++destroyed; }
  int &destroyed;
};

/// Restores the setting whatever a test case does.
struct Setting {
  bool before = skipFreesAtExit();
  ~Setting() { setSkipFreesAtExit(before); }
};

} // namespace

TEST_CASE("teardown: discard destroys at once unless frees are skipped") {
  Setting restore;
  static int destroyed = 0; // a kept object refers to it after the test
  destroyed = 0;
  setSkipFreesAtExit(false);
  CHECK_FALSE(skipFreesAtExit());
  discard(std::make_unique<Counted>(destroyed));
  CHECK(destroyed == 1);
  discard(std::unique_ptr<Counted>());
  CHECK(destroyed == 1);

  setSkipFreesAtExit(true);
  CHECK(skipFreesAtExit());
  discard(std::make_unique<Counted>(destroyed));
  CHECK(destroyed == 1); // kept until the process exits
}

TEST_CASE("teardown: a resolution gives the same result either way") {
  Setting restore;
  struct Source : PackageSource {
    Expected<std::vector<CandidateVersion>>
    versions(const std::string &name) override {
      std::vector<CandidateVersion> out(2);
      out[0].version = *Version::parse("1.0.0");
      out[1].version = *Version::parse("2.0.0");
      if (name == "a")
        for (CandidateVersion &cv : out)
          cv.setRequirements({{"b", *Constraint::parse("^1")}}, std::nullopt);
      return out;
    }
  };
  ResolveRequest req;
  req.roots = {{"a", *Constraint::parse("*")}};
  for (bool skip : {false, true}) {
    CAPTURE(skip);
    setSkipFreesAtExit(skip);
    Source src;
    auto r = resolve(req, src);
    REQUIRE(r.has_value());
    CHECK(r->versions.at("a").str() == "2.0.0");
    CHECK(r->versions.at("b").str() == "1.0.0");
    CHECK(r->dependencies.at("a") == std::vector<std::string>{"b"});
  }
}
