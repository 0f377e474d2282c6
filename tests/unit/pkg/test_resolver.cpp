//===- test_resolver.cpp - Tests for the PubGrub resolver ----------------===//
//
// Unit tests for ireepkg/resolver.h against an in-memory package source:
// the examples of the PubGrub documentation, pre-releases, yanked and locked
// versions, IREE and platform requirements, missing packages, determinism,
// a comparison with exhaustive search on small random registries, and a
// 2,000-package random registry. Every solution is checked for consistency;
// every failure's explanation is checked verbatim.
//
// Why one file of this size: the tests of one module (resolver.cpp), with the
// fixtures they share.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/resolve/resolver.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace ireepkg;

namespace {

Version V(const std::string &text) {
  Expected<Version> v = Version::parse(text);
  INFO("parsing version " << text);
  REQUIRE(v.has_value());
  return *v;
}

Constraint C(const std::string &text) {
  Expected<Constraint> c = Constraint::parse(text);
  INFO("parsing constraint " << text);
  REQUIRE(c.has_value());
  return *c;
}

Platform P(const std::string &text) {
  std::optional<Platform> p = Platform::parse(text);
  REQUIRE(p.has_value());
  return *p;
}

/// A constraint as candidates hold them.
std::shared_ptr<const Constraint> SC(const std::string &text) {
  return std::make_shared<const Constraint>(C(text));
}

using Deps = std::vector<std::pair<std::string, std::string>>;

/// A registry in memory that counts how often each package is asked for.
class MemorySource : public PackageSource {
public:
  CandidateVersion &add(const std::string &name, const std::string &version,
                        const Deps &deps = {}) {
    CandidateVersion cv;
    cv.version = V(version);
    std::map<std::string, Constraint> map;
    for (const auto &[dep, constraint] : deps)
      map.emplace(dep, C(constraint));
    cv.setRequirements(map, std::nullopt);
    std::vector<CandidateVersion> &list = packages[name];
    list.push_back(std::move(cv));
    return list.back();
  }

  Expected<std::vector<CandidateVersion>>
  versions(const std::string &name) override {
    ++calls[name];
    if (name == failing)
      return makeError(ErrorCode::Io, "registry unreachable");
    auto it = packages.find(name);
    if (it == packages.end())
      return makeError(ErrorCode::NotFound, "no package " + name);
    std::vector<CandidateVersion> out = it->second;
    if (reversed)
      std::reverse(out.begin(), out.end());
    if (shuffleSeed) {
      std::mt19937 rng(shuffleSeed);
      std::shuffle(out.begin(), out.end(), rng);
    }
    return out;
  }

  std::map<std::string, std::vector<CandidateVersion>> packages;
  std::map<std::string, int> calls;
  bool reversed = false;
  unsigned shuffleSeed = 0;
  std::string failing;
};

ResolveRequest request(const Deps &roots) {
  ResolveRequest r;
  for (const auto &[name, constraint] : roots)
    r.roots.emplace_back(name, C(constraint));
  return r;
}

const CandidateVersion *findVersion(const MemorySource &source,
                                    const std::string &name, const Version &v) {
  auto it = source.packages.find(name);
  if (it == source.packages.end())
    return nullptr;
  for (const CandidateVersion &cv : it->second)
    if (cv.version.identical(v))
      return &cv;
  return nullptr;
}

/// Checks that `r` is a solution of `req`: versions exist and may be
/// chosen, every requirement is met, nothing unreachable is selected, and
/// `dependencies` matches the chosen versions.
void checkSolution(const MemorySource &source, const ResolveRequest &req,
                   const Resolution &r) {
  for (const auto &[name, c] : req.roots) {
    INFO("root requirement " << name << " " << c.text());
    auto it = r.versions.find(name);
    REQUIRE(it != r.versions.end());
    CHECK(c.matches(it->second));
  }
  std::set<std::string> reachable;
  std::vector<std::string> todo;
  for (const auto &root : req.roots)
    todo.push_back(root.first);
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (!reachable.insert(name).second)
      continue;
    INFO("package " << name);
    auto it = r.versions.find(name);
    REQUIRE(it != r.versions.end());
    const CandidateVersion *cv = findVersion(source, name, it->second);
    REQUIRE(cv != nullptr);
    bool locked = !req.upgradeAll && !req.upgrade.count(name) &&
                  req.preferred.count(name) &&
                  req.preferred.at(name) == cv->version;
    CHECK((!cv->yanked || locked));
    if (cv->requiresIree && req.ireeVersion)
      CHECK(cv->requiresIree->set().contains(*req.ireeVersion));
    if (!cv->platforms.empty())
      for (const Platform &p : req.platforms)
        CHECK(std::find(cv->platforms.begin(), cv->platforms.end(), p) !=
              cv->platforms.end());
    std::vector<std::string> names;
    for (const auto &[dep, c] : cv->dependencies) {
      INFO("dependency " << dep << " " << c->text());
      names.push_back(dep);
      auto d = r.versions.find(dep);
      REQUIRE(d != r.versions.end());
      CHECK(c->matches(d->second));
      todo.push_back(dep);
    }
    REQUIRE(r.dependencies.count(name));
    CHECK(r.dependencies.at(name) == names);
  }
  CHECK(reachable.size() == r.versions.size());
  CHECK(r.dependencies.size() == r.versions.size());
}

/// Resolves, requires success and checks the solution.
Resolution solve(MemorySource &source, const ResolveRequest &req) {
  Expected<Resolution> r = resolve(req, source);
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.has_value());
  checkSolution(source, req, *r);
  return *r;
}

/// Resolves, requires a Conflict and returns its explanation.
std::string failure(MemorySource &source, const ResolveRequest &req) {
  Expected<Resolution> r = resolve(req, source);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::Conflict);
  return r.error().message;
}

std::map<std::string, std::string> versionsOf(const Resolution &r) {
  std::map<std::string, std::string> out;
  for (const auto &[name, v] : r.versions)
    out[name] = v.str();
  return out;
}

using Chosen = std::map<std::string, std::string>;

/// Process CPU time and wall time since construction.
class Stopwatch {
public:
  double cpuMs() const {
    return double(std::clock() - cpu_) * 1000.0 / CLOCKS_PER_SEC;
  }
  double wallMs() const {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - wall_)
        .count();
  }

private:
  std::clock_t cpu_ = std::clock();
  std::chrono::steady_clock::time_point wall_ =
      std::chrono::steady_clock::now();
};

} // namespace

//===----------------------------------------------------------------------===//
// Basics
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: no requirements give an empty solution") {
  MemorySource s;
  s.add("foo", "1.0.0");
  Resolution r = solve(s, request({}));
  CHECK(r.versions.empty());
  CHECK(r.dependencies.empty());
  CHECK(s.calls.empty());
}

TEST_CASE("resolver: the newest allowed version is chosen") {
  MemorySource s;
  for (const char *v : {"1.0.0", "1.2.0", "1.10.0", "2.0.0", "0.9.0"})
    s.add("foo", v);
  CHECK(versionsOf(solve(s, request({{"foo", "^1.0"}}))) ==
        Chosen{{"foo", "1.10.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", "*"}}))) ==
        Chosen{{"foo", "2.0.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", "<1.0.0"}}))) ==
        Chosen{{"foo", "0.9.0"}});
}

TEST_CASE("resolver: a chain of dependencies") {
  MemorySource s;
  s.add("a", "1.0.0", {{"b", "^1.0"}});
  s.add("b", "1.0.0", {{"c", ">=2.0.0"}});
  s.add("b", "1.1.0", {{"c", ">=2.1.0"}});
  s.add("b", "2.0.0", {{"c", ">=3.0.0"}});
  s.add("c", "2.0.0");
  s.add("c", "2.1.0");
  s.add("c", "3.0.0");
  Resolution r = solve(s, request({{"a", "*"}}));
  CHECK(versionsOf(r) ==
        Chosen{{"a", "1.0.0"}, {"b", "1.1.0"}, {"c", "3.0.0"}});
  CHECK(r.dependencies == std::map<std::string, std::vector<std::string>>{
                              {"a", {"b"}}, {"b", {"c"}}, {"c", {}}});
}

TEST_CASE("resolver: the source hears which packages come next before it is "
          "asked for them, and hints change nothing") {
  // Records prefetch hints and versions() calls in order.
  struct HintedSource : MemorySource {
    std::vector<std::string> events;
    Expected<std::vector<CandidateVersion>>
    versions(const std::string &name) override {
      events.push_back("versions " + name);
      return MemorySource::versions(name);
    }
    void prefetch(const std::vector<std::string> &names) override {
      std::string e = "prefetch";
      for (const std::string &n : names)
        e += " " + n;
      events.push_back(e);
    }
  };
  HintedSource s;
  s.add("app", "1.0.0", {{"b", "^1.0"}, {"c", "*"}, {"d", "*"}});
  s.add("b", "1.0.0", {{"c", "*"}});
  s.add("c", "1.0.0", {{"e", "*"}});
  s.add("d", "1.0.0");
  s.add("e", "1.0.0");
  s.add("tool", "1.0.0");
  ResolveRequest req = request({{"app", "*"}, {"tool", "*"}});
  Resolution r = solve(s, req);
  // The roots; then, as soon as a package's versions are known, the
  // dependencies of the version most likely chosen (its newest), each
  // named once, long before they are asked for.
  CHECK(s.events == std::vector<std::string>{
                        "prefetch app tool", "versions app", "prefetch b c d",
                        "versions tool", "versions b", "versions c",
                        "prefetch e", "versions d", "versions e"});
  // The same resolution as from a source that ignores hints.
  MemorySource plain;
  plain.packages = s.packages;
  CHECK(versionsOf(solve(plain, req)) == versionsOf(r));

  // When another version is chosen, its dependencies are named when it is.
  s.add("app", "2.0.0", {{"x", "*"}, {"y", "*"}});
  s.add("x", "1.0.0");
  s.add("y", "1.0.0");
  s.events.clear();
  Resolution older = solve(s, request({{"app", "<2.0"}, {"tool", "*"}}));
  CHECK(versionsOf(older) == versionsOf(r));
  CHECK(s.events ==
        std::vector<std::string>{"prefetch app tool", "versions app",
                                 "prefetch x y", "versions tool",
                                 "prefetch b c d", "versions b", "versions c",
                                 "prefetch e", "versions d", "versions e"});
  CHECK(versionsOf(r) == Chosen{{"app", "1.0.0"},
                                {"b", "1.0.0"},
                                {"c", "1.0.0"},
                                {"d", "1.0.0"},
                                {"e", "1.0.0"},
                                {"tool", "1.0.0"}});
}

TEST_CASE("resolver: a diamond takes the newest version both sides allow") {
  MemorySource s;
  s.add("app", "1.0.0", {{"left", "^1.0"}, {"right", "^1.0"}});
  s.add("left", "1.0.0", {{"shared", ">=1.1.0"}});
  s.add("right", "1.0.0", {{"shared", "<1.3.0"}});
  for (const char *v : {"1.0.0", "1.1.0", "1.2.0", "1.3.0"})
    s.add("shared", v);
  CHECK(versionsOf(solve(s, request({{"app", "^1.0"}}))) ==
        Chosen{{"app", "1.0.0"},
               {"left", "1.0.0"},
               {"right", "1.0.0"},
               {"shared", "1.2.0"}});
}

TEST_CASE("resolver: dependency cycles") {
  MemorySource s;
  s.add("a", "1.0.0", {{"b", "^1.0"}});
  s.add("a", "2.0.0", {{"b", "^2.0"}});
  s.add("b", "1.0.0", {{"a", "^1.0"}});
  s.add("b", "2.0.0", {{"a", "^1.0"}});
  s.add("self", "1.0.0", {{"self", "^1.0"}});
  // a 2.0.0 needs b 2, which needs a 1: the cycle forces a 1.0.0.
  Resolution r = solve(s, request({{"a", "*"}, {"self", "*"}}));
  CHECK(versionsOf(r) ==
        Chosen{{"a", "1.0.0"}, {"b", "1.0.0"}, {"self", "1.0.0"}});
  CHECK(r.dependencies.at("self") == std::vector<std::string>{"self"});
}

TEST_CASE("resolver: a version that depends on another version of itself") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "2.0.0", {{"foo", "^1.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", "*"}}))) ==
        Chosen{{"foo", "1.0.0"}});
  CHECK(failure(s, request({{"foo", ">=2.0.0"}})) ==
        "Because foo >=2.0.0 depends on foo >=1.0.0, <2.0.0 and plugins.json "
        "depends on foo >=2.0.0, version solving failed.");
}

TEST_CASE("resolver: packages with many versions") {
  // More versions than fit one machine word.
  MemorySource s;
  for (int minor = 0; minor < 150; ++minor) {
    std::string v = "1." + std::to_string(minor) + ".0";
    s.add("big", v, {{"dep", minor % 2 ? "^2.0" : "^1.0"}});
    s.add("dep", v);
  }
  s.add("dep", "2.0.0").yanked = true;
  CHECK(versionsOf(solve(s, request({{"big", "*"}}))) ==
        Chosen{{"big", "1.148.0"}, {"dep", "1.149.0"}});
  CHECK(versionsOf(solve(
            s, request({{"big", ">=1.70.0, <1.100.0"}, {"dep", "<1.20.0"}}))) ==
        Chosen{{"big", "1.98.0"}, {"dep", "1.19.0"}});
  CHECK(failure(s, request({{"big", "1.99.0"}})) ==
        "Because big >=1.99.0, <1.100.0 depends on dep >=2.0.0, <3.0.0 and "
        "dep 2.0.0 is yanked, big >=1.99.0, <1.100.0 is forbidden.\n"
        "And because plugins.json depends on big 1.99.0, version solving "
        "failed.");
}

//===----------------------------------------------------------------------===//
// The examples of PubGrub's documentation
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: PubGrub example: no conflicts") {
  MemorySource s;
  s.add("foo", "1.0.0", {{"bar", "^1.0.0"}});
  s.add("bar", "1.0.0");
  s.add("bar", "2.0.0");
  CHECK(versionsOf(solve(s, request({{"foo", "^1.0.0"}}))) ==
        Chosen{{"foo", "1.0.0"}, {"bar", "1.0.0"}});
}

TEST_CASE("resolver: PubGrub example: avoiding conflict during decision "
          "making") {
  MemorySource s;
  s.add("foo", "1.1.0", {{"bar", "^2.0.0"}});
  s.add("foo", "1.0.0");
  s.add("bar", "1.0.0");
  s.add("bar", "1.1.0");
  s.add("bar", "2.0.0");
  CHECK(versionsOf(solve(s, request({{"foo", "^1.0.0"}, {"bar", "^1.0.0"}}))) ==
        Chosen{{"foo", "1.0.0"}, {"bar", "1.1.0"}});
}

TEST_CASE("resolver: PubGrub example: performing conflict resolution") {
  MemorySource s;
  s.add("foo", "2.0.0", {{"bar", "^1.0.0"}});
  s.add("foo", "1.0.0");
  s.add("bar", "1.0.0", {{"foo", "^1.0.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", ">=1.0.0"}}))) ==
        Chosen{{"foo", "1.0.0"}});
}

TEST_CASE("resolver: PubGrub example: conflict resolution with a partial "
          "satisfier") {
  MemorySource s;
  s.add("foo", "1.1.0", {{"left", "^1.0.0"}, {"right", "^1.0.0"}});
  s.add("foo", "1.0.0");
  s.add("left", "1.0.0", {{"shared", ">=1.0.0"}});
  s.add("right", "1.0.0", {{"shared", "<2.0.0"}});
  s.add("shared", "2.0.0");
  s.add("shared", "1.0.0", {{"target", "^1.0.0"}});
  s.add("target", "2.0.0");
  s.add("target", "1.0.0");
  CHECK(versionsOf(
            solve(s, request({{"foo", "^1.0.0"}, {"target", "^2.0.0"}}))) ==
        Chosen{{"foo", "1.0.0"}, {"target", "2.0.0"}});
}

TEST_CASE("resolver: PubGrub example: linear error reporting") {
  MemorySource s;
  s.add("foo", "1.0.0", {{"bar", "^2.0.0"}});
  s.add("bar", "2.0.0", {{"baz", "^3.0.0"}});
  s.add("baz", "1.0.0");
  s.add("baz", "3.0.0");
  CHECK(failure(s, request({{"foo", "^1.0.0"}, {"baz", "^1.0.0"}})) ==
        "Because every version of foo depends on bar >=2.0.0, <3.0.0 and "
        "every version of bar depends on baz >=3.0.0, <4.0.0, foo requires "
        "baz >=3.0.0, <4.0.0.\n"
        "And because plugins.json depends on foo >=1.0.0, <2.0.0 and "
        "plugins.json depends on baz >=1.0.0, <2.0.0, version solving "
        "failed.");
}

TEST_CASE("resolver: PubGrub example: branching error reporting") {
  MemorySource s;
  s.add("foo", "1.0.0", {{"a", "^1.0.0"}, {"b", "^1.0.0"}});
  s.add("foo", "1.1.0", {{"x", "^1.0.0"}, {"y", "^1.0.0"}});
  s.add("a", "1.0.0", {{"b", "^2.0.0"}});
  s.add("b", "1.0.0");
  s.add("b", "2.0.0");
  s.add("x", "1.0.0", {{"y", "^2.0.0"}});
  s.add("y", "1.0.0");
  s.add("y", "2.0.0");
  CHECK(failure(s, request({{"foo", "^1.0.0"}})) ==
        "    Because every version of a depends on b >=2.0.0, <3.0.0 and foo "
        "<1.1.0 depends on a >=1.0.0, <2.0.0, foo <1.1.0 requires b >=2.0.0, "
        "<3.0.0.\n"
        "(1) And because foo <1.1.0 depends on b >=1.0.0, <2.0.0, foo <1.1.0 "
        "is forbidden.\n"
        "\n"
        "    Because every version of x depends on y >=2.0.0, <3.0.0 and foo "
        ">=1.1.0 depends on x >=1.0.0, <2.0.0, foo >=1.1.0 requires y "
        ">=2.0.0, <3.0.0.\n"
        "    And because foo >=1.1.0 depends on y >=1.0.0, <2.0.0, foo "
        ">=1.1.0 is forbidden.\n"
        "    And because foo <1.1.0 is forbidden (1), foo is forbidden.\n"
        "    And because plugins.json depends on foo >=1.0.0, <2.0.0, "
        "version solving failed.");
}

TEST_CASE("resolver: two requirements that need different versions of a "
          "third package") {
  MemorySource s;
  s.add("simple-mul", "1.0.0", {{"common-ukernels", "^1.0.0"}});
  s.add("simple-mul", "1.1.0", {{"common-ukernels", "^1.0.0"}});
  s.add("simple-mul", "1.2.0", {{"common-ukernels", ">=2.0.0"}});
  s.add("simple-mul", "1.3.0", {{"common-ukernels", ">=2.0.0"}});
  s.add("fft-kit", "2.0.0");
  s.add("fft-kit", "3.0.0", {{"common-ukernels", "<2.0.0"}});
  s.add("fft-kit", "3.1.0", {{"common-ukernels", "<2.0.0"}});
  s.add("fft-kit", "4.0.0");
  for (const char *v : {"1.0.0", "1.5.0", "2.0.0", "2.1.0"})
    s.add("common-ukernels", v);
  CHECK(
      failure(s, request({{"simple-mul", ">=1.2.0"}, {"fft-kit", "^3.0.0"}})) ==
      "Because simple-mul >=1.2.0 depends on common-ukernels >=2.0.0 and "
      "fft-kit >=3.0.0, <4.0.0 depends on common-ukernels <2.0.0, "
      "simple-mul >=1.2.0 and fft-kit >=3.0.0, <4.0.0 are incompatible.\n"
      "And because plugins.json depends on simple-mul >=1.2.0 and "
      "plugins.json depends on fft-kit >=3.0.0, <4.0.0, version solving "
      "failed.");
  // Relaxing either requirement resolves it.
  CHECK(versionsOf(
            solve(s, request({{"simple-mul", "*"}, {"fft-kit", "^3.0.0"}}))) ==
        Chosen{{"simple-mul", "1.1.0"},
               {"fft-kit", "3.1.0"},
               {"common-ukernels", "1.5.0"}});
}

TEST_CASE("resolver: conflicting requirements of the project itself") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "2.0.0");
  CHECK(failure(s, request({{"foo", "^1.0"}, {"foo", "^2.0"}})) ==
        "Because plugins.json depends on foo >=1.0.0, <2.0.0 and "
        "plugins.json depends on foo >=2.0.0, <3.0.0, version solving "
        "failed.");
}

//===----------------------------------------------------------------------===//
// Missing packages and versions
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: a required package that does not exist") {
  MemorySource s;
  s.add("foo", "1.0.0");
  ResolveRequest req = request({{"foo", "*"}, {"nope", "^1.0"}});
  req.rootName = "my-project";
  CHECK(failure(s, req) ==
        "Because my-project depends on nope >=1.0.0, <2.0.0 and nope does "
        "not exist, version solving failed.");
}

TEST_CASE("resolver: a missing dependency is avoided by backtracking") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "1.1.0", {{"gone", "^1.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", "^1.0"}}))) ==
        Chosen{{"foo", "1.0.0"}});
  CHECK(s.calls == std::map<std::string, int>{{"foo", 1}, {"gone", 1}});
}

TEST_CASE("resolver: a missing dependency with no way around it") {
  MemorySource s;
  s.add("foo", "1.0.0", {{"bar", "^1.0"}});
  s.add("foo", "1.1.0", {{"gone", "^1.0"}});
  s.add("bar", "1.0.0", {{"gone", ">=0.5.0"}});
  CHECK(failure(s, request({{"foo", "^1.0"}})) ==
        "Because every version of bar depends on gone >=0.5.0 and gone does "
        "not exist, bar is forbidden.\n"
        "And because foo <1.1.0 depends on bar >=1.0.0, <2.0.0, foo <1.1.0 "
        "is forbidden.\n"
        "Because foo >=1.1.0 depends on gone >=1.0.0, <2.0.0 and gone does "
        "not exist, foo >=1.1.0 is forbidden.\n"
        "Thus, foo is forbidden.\n"
        "And because plugins.json depends on foo >=1.0.0, <2.0.0, version "
        "solving failed.");
}

TEST_CASE("resolver: a package without versions") {
  MemorySource s;
  s.packages["empty"];
  s.add("app", "1.0.0", {{"empty", "*"}});
  CHECK(failure(s, request({{"app", "*"}})) ==
        "Because every version of app depends on empty and empty has no "
        "versions, app is forbidden.\n"
        "And because plugins.json depends on app, version solving failed.");
}

TEST_CASE("resolver: no version matches a requirement") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "4.2.0");
  CHECK(failure(s, request({{"foo", ">=5.0.0"}})) ==
        "Because plugins.json depends on foo >=5.0.0 and no versions of foo "
        "match >=5.0.0, version solving failed.");
}

TEST_CASE("resolver: two ranges whose overlap has no versions") {
  MemorySource s;
  s.add("bar", "1.0.0");
  s.add("bar", "1.1.0");
  s.add("bar", "1.6.0");
  s.add("foo", "1.0.0", {{"bar", ">=1.2.0"}});
  CHECK(failure(s, request({{"bar", ">=1.0.0, <1.5.0"}, {"foo", "*"}})) ==
        "Because every version of foo depends on bar >=1.2.0 and "
        "plugins.json depends on bar >=1.0.0, <1.5.0, foo requires bar "
        ">=1.2.0, <1.5.0.\n"
        "And because plugins.json depends on foo and no versions of bar "
        "match >=1.2.0, <1.5.0, version solving failed.");
}

TEST_CASE("resolver: two dependencies whose overlap has no versions") {
  MemorySource s;
  s.add("a", "1.0.0", {{"bar", ">=1.2.0"}});
  s.add("b", "1.0.0", {{"bar", "<1.5.0"}});
  s.add("c", "1.0.0");
  s.add("bar", "1.0.0");
  s.add("bar", "1.6.0");
  CHECK(failure(s, request({{"c", "*"}, {"a", "*"}, {"b", "*"}})) ==
        "Because every version of a depends on bar >=1.2.0 and every "
        "version of b depends on bar <1.5.0, a and b together require bar "
        ">=1.2.0, <1.5.0.\n"
        "And because no versions of bar match >=1.2.0, <1.5.0, a and b are "
        "incompatible.\n"
        "And because plugins.json depends on a and plugins.json depends on "
        "b, version solving failed.");
}

//===----------------------------------------------------------------------===//
// Pre-releases
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: pre-releases are chosen only where a constraint names "
          "one") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "1.1.0-beta.1");
  s.add("foo", "2.0.0-rc.1");
  CHECK(versionsOf(solve(s, request({{"foo", "*"}}))) ==
        Chosen{{"foo", "1.0.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", "^1.0"}}))) ==
        Chosen{{"foo", "1.0.0"}});
  CHECK(versionsOf(solve(s, request({{"foo", ">=1.1.0-beta"}}))) ==
        Chosen{{"foo", "1.1.0-beta.1"}});
  CHECK(versionsOf(solve(s, request({{"foo", ">=2.0.0-rc.1"}}))) ==
        Chosen{{"foo", "2.0.0-rc.1"}});
}

TEST_CASE("resolver: a dependency naming a pre-release") {
  MemorySource s;
  s.add("app", "1.0.0", {{"lib", ">=2.0.0-rc.1, <3.0.0"}});
  s.add("lib", "1.0.0");
  s.add("lib", "2.0.0-rc.1");
  s.add("lib", "2.0.0-rc.2");
  CHECK(versionsOf(solve(s, request({{"app", "*"}}))) ==
        Chosen{{"app", "1.0.0"}, {"lib", "2.0.0-rc.2"}});
  s.add("lib", "2.0.0");
  CHECK(versionsOf(solve(s, request({{"app", "*"}}))) ==
        Chosen{{"app", "1.0.0"}, {"lib", "2.0.0"}});
}

TEST_CASE("resolver: only pre-releases in range") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "2.0.0-rc.1");
  CHECK(failure(s, request({{"foo", "^2.0"}})) ==
        "Because plugins.json depends on foo >=2.0.0, <3.0.0 and no versions "
        "of foo match >=2.0.0, <3.0.0, version solving failed.");
}

//===----------------------------------------------------------------------===//
// Yanked, locked and upgraded versions
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: yanked versions are skipped") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "1.1.0").yanked = true;
  s.add("foo", "1.2.0").yanked = true;
  CHECK(versionsOf(solve(s, request({{"foo", "^1.0"}}))) ==
        Chosen{{"foo", "1.0.0"}});
}

TEST_CASE("resolver: a locked yanked version is kept") {
  MemorySource s;
  s.add("foo", "1.0.0");
  s.add("foo", "1.1.0").yanked = true;
  s.add("foo", "1.2.0");
  ResolveRequest req = request({{"foo", "^1.0"}});
  req.preferred["foo"] = V("1.1.0");
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.1.0"}});
  // Updating it moves away from the yanked version.
  req.upgrade.insert("foo");
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.2.0"}});
}

TEST_CASE("resolver: every matching version is yanked") {
  MemorySource s;
  s.add("foo", "1.0.0").yanked = true;
  s.add("foo", "2.0.0");
  CHECK(failure(s, request({{"foo", "^1.0"}})) ==
        "Because plugins.json depends on foo >=1.0.0, <2.0.0 and foo 1.0.0 "
        "is yanked, version solving failed.");

  MemorySource t;
  t.add("foo", "0.9.0");
  t.add("foo", "1.0.0").yanked = true;
  t.add("foo", "1.1.0").yanked = true;
  t.add("foo", "1.2.0").yanked = true;
  t.add("foo", "2.0.0");
  CHECK(failure(t, request({{"foo", "^1.0"}})) ==
        "Because plugins.json depends on foo >=1.0.0, <2.0.0 and foo "
        ">=1.0.0, <2.0.0 is yanked, version solving failed.");
}

TEST_CASE("resolver: locked versions are kept") {
  MemorySource s;
  s.add("app", "1.0.0", {{"lib", "^1.0"}});
  s.add("app", "1.1.0", {{"lib", "^1.1"}});
  for (const char *v : {"1.0.0", "1.1.0", "1.2.0"})
    s.add("lib", v);
  ResolveRequest req = request({{"app", "^1.0"}});
  req.preferred = {{"app", V("1.0.0")}, {"lib", V("1.1.0")}};
  CHECK(versionsOf(solve(s, req)) ==
        Chosen{{"app", "1.0.0"}, {"lib", "1.1.0"}});

  SUBCASE("update one package") {
    req.upgrade = {"lib"};
    CHECK(versionsOf(solve(s, req)) ==
          Chosen{{"app", "1.0.0"}, {"lib", "1.2.0"}});
  }
  SUBCASE("update everything") {
    req.upgradeAll = true;
    CHECK(versionsOf(solve(s, req)) ==
          Chosen{{"app", "1.1.0"}, {"lib", "1.2.0"}});
  }
  SUBCASE("a lock the constraints no longer allow") {
    req.roots = request({{"app", "^1.1"}}).roots;
    CHECK(versionsOf(solve(s, req)) ==
          Chosen{{"app", "1.1.0"}, {"lib", "1.1.0"}});
  }
  SUBCASE("a locked version that no longer exists") {
    req.preferred["lib"] = V("1.1.5");
    CHECK(versionsOf(solve(s, req)) ==
          Chosen{{"app", "1.0.0"}, {"lib", "1.2.0"}});
  }
}

TEST_CASE("resolver: a lock gives way when it would conflict") {
  MemorySource s;
  s.add("a", "1.0.0", {{"c", "^1.0"}});
  s.add("b", "1.0.0", {{"c", ">=1.1.0"}});
  s.add("c", "1.0.0");
  s.add("c", "1.1.0");
  ResolveRequest req = request({{"a", "*"}, {"b", "*"}});
  req.preferred["c"] = V("1.0.0");
  CHECK(versionsOf(solve(s, req)) ==
        Chosen{{"a", "1.0.0"}, {"b", "1.0.0"}, {"c", "1.1.0"}});
}

//===----------------------------------------------------------------------===//
// IREE versions and platforms
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: versions for another IREE are skipped") {
  MemorySource s;
  s.add("foo", "1.0.0").requiresIree = SC(">=3.0.0");
  s.add("foo", "1.1.0").requiresIree = SC(">=3.12.0");
  s.add("foo", "1.2.0").requiresIree = SC(">=4.0.0");
  s.add("foo", "1.3.0");
  ResolveRequest req = request({{"foo", "<1.3.0"}});
  req.ireeVersion = V("3.13.0");
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.1.0"}});
  req.ireeVersion = V("3.5.0");
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.0.0"}});
  // IREE pre-releases and nightlies count by precedence.
  req.ireeVersion = V("4.0.1-rc.1");
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.2.0"}});
  // Without an IREE version, the requirement is not checked.
  req.ireeVersion.reset();
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.2.0"}});
}

TEST_CASE("resolver: a version that requires another IREE") {
  MemorySource s;
  s.add("foo", "1.0.0").requiresIree = SC(">=4.0.0");
  ResolveRequest req = request({{"foo", "^1.0"}});
  req.ireeVersion = V("3.13.0");
  CHECK(failure(s, req) ==
        "Because plugins.json depends on foo >=1.0.0, <2.0.0 and foo 1.0.0 "
        "requires IREE >=4.0.0, but IREE 3.13.0 is in use, version solving "
        "failed.");

  MemorySource t;
  t.add("app", "1.0.0", {{"foo", "*"}});
  t.add("foo", "1.0.0").requiresIree = SC("^3.0");
  t.add("foo", "2.0.0").requiresIree = SC(">=4.0.0");
  t.add("foo", "2.1.0").requiresIree = SC(">=4.0.0");
  req = request({{"app", "*"}, {"foo", ">=2.0.0"}});
  req.ireeVersion = V("3.13.0");
  CHECK(failure(t, req) ==
        "Because plugins.json depends on foo >=2.0.0 and foo >=2.0.0 "
        "requires IREE >=4.0.0, but IREE 3.13.0 is in use, version solving "
        "failed.");
}

TEST_CASE("resolver: versions without a build for a platform are skipped") {
  MemorySource s;
  s.add("foo", "1.0.0").platforms = {P("linux-x86_64"), P("linux-riscv64")};
  s.add("foo", "1.1.0").platforms = {P("linux-x86_64")};
  s.add("foo", "1.2.0").platforms = {P("linux-x86_64"), P("linux-aarch64")};
  ResolveRequest req = request({{"foo", "*"}});
  req.platforms = {P("linux-x86_64")};
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.2.0"}});
  req.platforms = {P("linux-x86_64"), P("linux-riscv64")};
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.0.0"}});
  req.platforms = {};
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.2.0"}});
  // A locked version without a build for the platform gives way.
  req.platforms = {P("linux-x86_64"), P("linux-riscv64")};
  req.preferred["foo"] = V("1.1.0");
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.0.0"}});
}

TEST_CASE("resolver: platform-independent versions suit every platform") {
  MemorySource s;
  s.add("foo", "1.0.0").platforms = {P("linux-x86_64")};
  s.add("foo", "1.1.0");
  s.add("foo", "1.2.0").platforms = {P("macos-aarch64")};
  ResolveRequest req = request({{"foo", "*"}});
  req.platforms = {P("linux-riscv64"), P("windows-x86_64")};
  CHECK(versionsOf(solve(s, req)) == Chosen{{"foo", "1.1.0"}});
}

TEST_CASE("resolver: a version without a build for a required platform") {
  MemorySource s;
  s.add("app", "1.0.0", {{"foo", "^1.0"}});
  s.add("foo", "1.0.0").platforms = {P("linux-x86_64"), P("macos-aarch64")};
  ResolveRequest req = request({{"app", "*"}});
  req.platforms = {P("linux-x86_64"), P("linux-riscv64")};
  CHECK(failure(s, req) ==
        "Because every version of app depends on foo >=1.0.0, <2.0.0 and foo "
        "1.0.0 has no build for linux-riscv64, app is forbidden.\n"
        "And because plugins.json depends on app, version solving failed.");
}

//===----------------------------------------------------------------------===//
// The source
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: the source is asked once per package, only for what "
          "is reachable") {
  MemorySource s;
  s.add("a", "1.0.0", {{"b", "*"}, {"c", "*"}});
  s.add("a", "2.0.0", {{"b", "^2.0"}, {"c", "*"}});
  s.add("b", "1.0.0", {{"c", "*"}});
  s.add("b", "2.0.0", {{"c", "^9.0"}});
  s.add("c", "1.0.0");
  s.add("unrelated", "1.0.0");
  solve(s, request({{"a", "*"}}));
  CHECK(s.calls == std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}});
}

TEST_CASE("resolver: a failing source stops resolution") {
  MemorySource s;
  s.add("a", "1.0.0", {{"b", "*"}});
  s.failing = "b";
  Expected<Resolution> r = resolve(request({{"a", "*"}}), s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::Io);
  CHECK(r.error().message == "registry unreachable");
}

TEST_CASE("resolver: versions of equal precedence and build metadata") {
  MemorySource s;
  s.add("foo", "1.0.0+b2");
  s.add("foo", "1.0.0+b1");
  s.add("foo", "0.9.0+x");
  Resolution r = solve(s, request({{"foo", "*"}}));
  CHECK(r.versions.at("foo").str() == "1.0.0+b1");
  s.reversed = true;
  CHECK(resolve(request({{"foo", "*"}}), s)->versions.at("foo").str() ==
        "1.0.0+b1");
}

//===----------------------------------------------------------------------===//
// Determinism
//===----------------------------------------------------------------------===//

TEST_CASE("resolver: results do not depend on runs or on the source's "
          "order") {
  auto registry = [] {
    MemorySource s;
    s.add("app", "1.0.0", {{"x", "^1.0"}, {"y", "^1.0"}});
    s.add("app", "1.1.0", {{"x", "^2.0"}, {"y", "^1.0"}});
    for (const char *v : {"1.0.0", "1.1.0", "2.0.0", "2.1.0"})
      s.add("x", v, {{"z", v[0] == '1' ? "^1.0" : "^2.0"}});
    s.add("y", "1.0.0", {{"z", ">=1.1.0, <2.0.0"}});
    s.add("y", "1.1.0", {{"z", "^1.2"}});
    for (const char *v : {"1.0.0", "1.1.0", "1.2.0", "2.0.0"})
      s.add("z", v);
    return s;
  };
  const ResolveRequest ok = request({{"app", "*"}});
  const ResolveRequest bad = request({{"app", "*"}, {"z", "^2.0"}});
  MemorySource base = registry();
  Resolution expected = solve(base, ok);
  CHECK(
      versionsOf(expected) ==
      Chosen{{"app", "1.0.0"}, {"x", "1.1.0"}, {"y", "1.1.0"}, {"z", "1.2.0"}});
  std::string explanation = failure(base, bad);
  CHECK(explanation ==
        "Because y >=1.1.0 depends on z >=1.2.0, <2.0.0 and y <1.1.0 depends "
        "on z >=1.1.0, <2.0.0, y requires z >=1.1.0, <2.0.0.\n"
        "And because every version of app depends on y >=1.0.0, <2.0.0, app "
        "requires z >=1.1.0, <2.0.0.\n"
        "And because plugins.json depends on app and plugins.json depends on "
        "z >=2.0.0, <3.0.0, version solving failed.");
  for (unsigned seed = 0; seed < 8; ++seed) {
    MemorySource s = registry();
    s.reversed = seed == 1;
    s.shuffleSeed = seed > 1 ? seed : 0;
    CHECK(versionsOf(solve(s, ok)) == versionsOf(expected));
    CHECK(failure(s, bad) == explanation);
  }
}

//===----------------------------------------------------------------------===//
// Random registries
//===----------------------------------------------------------------------===//

namespace {

/// Whether any selection of versions satisfies `req`, by trying them all.
bool solvableByExhaustiveSearch(const MemorySource &source,
                                const ResolveRequest &req) {
  std::vector<std::string> names;
  for (const auto &[name, versions] : source.packages)
    names.push_back(name);
  std::map<std::string, const CandidateVersion *> chosen;
  auto satisfied = [&](const std::string &name, const Constraint &c) {
    auto it = chosen.find(name);
    return it != chosen.end() && it->second && c.matches(it->second->version);
  };
  std::function<bool(size_t)> search = [&](size_t i) -> bool {
    if (i == names.size()) {
      for (const auto &[name, c] : req.roots)
        if (!satisfied(name, c))
          return false;
      for (const auto &[name, cv] : chosen)
        if (cv)
          for (const auto &[dep, c] : cv->dependencies)
            if (!satisfied(dep, *c))
              return false;
      return true;
    }
    chosen[names[i]] = nullptr;
    if (search(i + 1))
      return true;
    for (const CandidateVersion &cv : source.packages.at(names[i])) {
      if (cv.yanked)
        continue;
      chosen[names[i]] = &cv;
      if (search(i + 1))
        return true;
    }
    chosen.erase(names[i]);
    return false;
  };
  return search(0);
}

} // namespace

TEST_CASE("resolver: small random registries agree with exhaustive "
          "search") {
  const std::vector<std::string> versions = {"1.0.0", "1.1.0", "2.0.0",
                                             "2.1.0-rc.1"};
  const std::vector<std::string> constraints = {
      "^1.0", ">=1.1.0", "<2.0.0", "2.0.0", "*", ">=3.0.0", "^2.1.0-rc.1"};
  int solved = 0, failed = 0;
  for (unsigned seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return size_t(rng() % n); };
    MemorySource s;
    for (int p = 0; p < 5; ++p)
      for (const std::string &v : versions) {
        if (pick(4) == 0)
          continue;
        Deps deps;
        for (size_t k = pick(3); k-- > 0;) {
          size_t target = pick(6); // one call per statement: a fixed order
          size_t constraint = pick(constraints.size());
          deps.emplace_back("p" + std::to_string(target),
                            constraints[constraint]);
        }
        bool yanked = pick(10) == 0;
        s.add("p" + std::to_string(p), v, deps).yanked = yanked;
      }
    Deps roots;
    for (size_t k = 1 + pick(2); k-- > 0;) {
      size_t target = pick(5);
      size_t constraint = pick(constraints.size());
      roots.emplace_back("p" + std::to_string(target), constraints[constraint]);
    }
    ResolveRequest req = request(roots);
    INFO("seed " << seed);
    bool expected = solvableByExhaustiveSearch(s, req);
    Expected<Resolution> r = resolve(req, s);
    CHECK(r.has_value() == expected);
    if (r) {
      checkSolution(s, req, *r);
      ++solved;
    } else {
      CHECK(r.error().code == ErrorCode::Conflict);
      CHECK(r.error().message.ends_with("version solving failed."));
      ++failed;
    }
    for (const auto &[name, n] : s.calls)
      CHECK(n == 1);
  }
  // Both outcomes are well represented.
  CHECK(solved > 50);
  CHECK(failed > 50);
}

namespace {

/// A registry of `count` packages with `perPackage` versions each (majors
/// 1-4, minors 0-4 ...), each package depending on `fanout` later packages.
/// Versions of one major series share their constraints, as real packages
/// do. One planted version of each package depends on the planted versions
/// of its dependencies, so a solution exists; the others ask for random
/// majors. Returns the project's requirements (the first 20 packages).
Deps randomRegistry(MemorySource &s, uint32_t count, uint32_t perPackage,
                    uint32_t fanout, uint32_t seed) {
  std::mt19937 rng(seed);
  auto name = [](uint32_t i) {
    std::string n = std::to_string(i);
    return "pkg-" + std::string(5 - n.size(), '0') + n;
  };
  auto majorOf = [](uint32_t v) { return v / 5 + 1; };
  auto versionText = [&](uint32_t v) {
    return std::to_string(majorOf(v)) + "." + std::to_string(v % 5) + ".0";
  };
  std::vector<uint32_t> planted(count);
  for (uint32_t &p : planted)
    p = uint32_t(rng() % perPackage);
  uint32_t majors = majorOf(perPackage - 1);
  for (uint32_t p = 0; p < count; ++p) {
    std::vector<uint32_t> targets;
    for (uint32_t k = 0; k < fanout && p + 1 < count; ++k)
      targets.push_back(
          p + 1 + uint32_t(rng() % std::min<uint32_t>(count - p - 1, 400)));
    std::vector<std::vector<std::string>> series(majors + 1);
    for (auto &constraints : series)
      for (size_t k = 0; k < targets.size(); ++k) {
        uint32_t m = 1 + uint32_t(rng() % majors);
        constraints.push_back(rng() % 4 ? "^" + std::to_string(m) + ".0"
                                        : ">=" + std::to_string(m) + ".0.0");
      }
    for (uint32_t v = 0; v < perPackage; ++v) {
      Deps deps;
      for (size_t k = 0; k < targets.size(); ++k) {
        std::string c = series[majorOf(v)][k];
        if (v == planted[p])
          c = "^" + std::to_string(majorOf(planted[targets[k]])) + ".0";
        deps.emplace_back(name(targets[k]), c);
      }
      // Duplicate targets: the last constraint wins, as in a JSON object.
      std::map<std::string, std::string> unique(deps.begin(), deps.end());
      s.add(name(p), versionText(v), Deps(unique.begin(), unique.end()));
    }
  }
  Deps roots;
  for (uint32_t p = 0; p < std::min<uint32_t>(20, count); ++p)
    roots.emplace_back(name(p),
                       "^" + std::to_string(majorOf(planted[p])) + ".0");
  return roots;
}

} // namespace

TEST_CASE("resolver: a random registry of 2,000 packages x 20 versions") {
  MemorySource s;
  ResolveRequest req = request(randomRegistry(s, 2000, 20, 3, 2024));
  // CPU time: the wall clock of a loaded machine says little.
  Stopwatch watch;
  Expected<Resolution> r = resolve(req, s);
  double ms = watch.cpuMs();
  MESSAGE("resolved " << (r ? r->versions.size() : 0) << " of 2000 packages"
                      << " in " << ms << " ms of CPU time (" << watch.wallMs()
                      << " ms wall)");
  INFO((r ? std::string() : r.error().message));
  REQUIRE(r.has_value());
  checkSolution(s, req, *r);
  CHECK(r->versions.size() > 1000);
  CHECK(ms < 1000);
  // The same again, from a source listing versions newest first.
  MemorySource reversed;
  randomRegistry(reversed, 2000, 20, 3, 2024);
  reversed.reversed = true;
  Expected<Resolution> again = resolve(req, reversed);
  REQUIRE(again.has_value());
  CHECK(versionsOf(*again) == versionsOf(*r));
}

TEST_CASE("resolver: many random registries") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    MemorySource s;
    ResolveRequest req = request(randomRegistry(s, 200, 10, 3, seed));
    solve(s, req);
  }
}

TEST_CASE("resolver: deep backtracking") {
  // p0 ... p49: every version k of p(i) needs p(i+1) >= k, but the last
  // package only has versions up to 1.4.0; newest-first choice has to back
  // off all the way down the chain. A second chain ends in a conflict.
  MemorySource s;
  const int chain = 50, perPackage = 20;
  auto version = [](int k) {
    return std::to_string(k / 5 + 1) + "." + std::to_string(k % 5) + ".0";
  };
  for (int i = 0; i < chain; ++i)
    for (int k = 0; k < (i + 1 < chain ? perPackage : 5); ++k) {
      Deps deps;
      if (i + 1 < chain)
        deps.emplace_back("p" + std::to_string(i + 1), ">=" + version(k));
      s.add("p" + std::to_string(i), version(k), deps);
    }
  Stopwatch watch;
  Resolution r = solve(s, request({{"p0", "*"}}));
  double ms = watch.cpuMs();
  MESSAGE("deep backtracking: " << ms << " ms of CPU time");
  CHECK(r.versions.at("p0").str() == "1.4.0");
  CHECK(r.versions.at("p49").str() == "1.4.0");
  CHECK(ms < 1000);

  // Now nothing works: the end of the chain also needs a missing version.
  s.packages["p49"].clear();
  s.add("p49", "1.0.0", {{"end", ">=2.0.0"}});
  s.add("end", "1.0.0");
  std::string why = failure(s, request({{"p0", "*"}}));
  CHECK(why.ends_with("version solving failed."));
  CHECK(why.find("no versions of end match >=2.0.0") != std::string::npos);
}
