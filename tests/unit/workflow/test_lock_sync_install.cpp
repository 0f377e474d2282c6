//===- test_lock_sync_install.cpp - Lock, sync and install by name --------===//
//
// lockProject, syncProject and installByName (ireepkg/workflow/workflow.h)
// on a signed directory registry in a temporary directory (client_fixture.h:
// alpha 1.0.0 depending on beta ^2.0, and beta 2.0.0, plus what each test
// publishes): the lockfile a project gets and when it is written again; a
// prefix made exactly the lockfile, and a second sync that changes nothing;
// the newest version a request allows; and the errors, with their messages,
// when no version fits or no registry has a package. The IREE version is
// given (3.13.0), so nothing depends on the IREE of the machine.
//
//===----------------------------------------------------------------------===//
#include "client_fixture.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/workflow/workflow.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

std::string join(const std::vector<std::string> &parts) {
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : "; ") + p;
  return out;
}

using namespace ireepkg;
using namespace ireepkg::workflow;
using test::readText;
using test::writeText;
using test::client::ClientFixture;
using test::client::CountingReporter;

/// The fixture's registry, a project beside it naming it "test" by a
/// relative URL, a prefix and the environment every operation gets.
struct ProjectFixture : ClientFixture {
  std::string projectDir, prefix;
  Environment env;
  CountingReporter reporter;

  ProjectFixture() {
    projectDir = tmp.path() + "/proj";
    prefix = tmp.path() + "/prefix";
    fs::create_directories(projectDir);
    env.client = options();
    env.ireeVersion = *Version::parse("3.13.0");
  }

  /// Writes plugins.json with `plugins` and loads it.
  Project project(const nlohmann::json &plugins) {
    nlohmann::json p = {{"schema_version", 1},
                        {"registries",
                         {{{"name", "test"},
                           {"url", "../reg"},
                           {"public_key", spec().publicKeys.front()}}}},
                        {"plugins", plugins}};
    writeText(projectDir + "/plugins.json", p.dump(2) + "\n");
    auto loaded = loadProject(projectDir + "/plugins.json");
    REQUIRE_MESSAGE(loaded.has_value(), loaded.error().format());
    return *loaded;
  }

  LockResult lock(const Project &p, const LockRequest &request = {}) {
    auto r = lockProject(p, request, env, reporter);
    REQUIRE_MESSAGE(r.has_value(), r.error().format());
    return *r;
  }

  Lockfile lockfile(const Project &p) {
    auto l = readLockfile(p.lockPath);
    REQUIRE_MESSAGE(l.has_value(), l.error().format());
    REQUIRE(l->has_value());
    return **l;
  }

  SyncResult sync(const Project &p, SyncRequest request = {}) {
    request.prefix = prefix;
    auto r = syncProject(p, request, env, reporter);
    REQUIRE_MESSAGE(r.has_value(), r.error().format());
    return *r;
  }

  Expected<InstallReport> install(std::vector<std::string> requests,
                                  bool dryRun = false) {
    InstallByNameRequest r;
    for (const std::string &text : requests) {
      auto n = parseNameRequest(text);
      REQUIRE_MESSAGE(n.has_value(), n.error().format());
      r.packages.push_back(*n);
    }
    r.registries = {spec()};
    r.prefix = prefix;
    r.install.dryRun = dryRun;
    return installByName(r, env, reporter);
  }

  /// "name version" of every package in the prefix, in activation order
  /// (dependencies first) and marked when installed as a dependency,
  /// joined by "; ".
  std::string installed() {
    Reporter quiet;
    auto s = readInstalledState(prefix, quiet);
    REQUIRE_MESSAGE(s.has_value(), s.error().format());
    std::vector<std::string> out;
    for (const InstalledPackage &p : s->packages)
      out.push_back(p.name + " " + p.version.str() +
                    (p.explicitlyInstalled ? "" : " (dependency)"));
    return join(out);
  }

  std::string archiveSha(const std::string &name, const std::string &version) {
    return Sha256::hex(
        readText(tmp.path() + "/" + name + "-" + version + ".ireepkg"));
  }
};

/// The changes of a lock or a sync as "name: from -> to", joined by "; ".
template <typename Changes> std::string changed(const Changes &c) {
  std::vector<std::string> out;
  for (const auto &x : c)
    out.push_back(x.name + ": " + x.from + " -> " + x.to);
  return join(out);
}

using Strings = std::vector<std::string>;

/// The hint of a lock that finds no solution, resolving for IREE 3.13.0.
constexpr const char *kConstraintsHint =
    "change the version constraints in plugins.json (resolving for IREE "
    "3.13.0 from --iree-version; --iree-version picks another)";

} // namespace

//===----------------------------------------------------------------------===//
// lockProject
//===----------------------------------------------------------------------===//

TEST_CASE("lock: the plugins and their dependencies, pinned to their "
          "archives") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}, {"version", "^1.0"}}});
  LockResult r = f.lock(p);
  CHECK(r.written);
  CHECK(changed(r.changes) == "alpha:  -> 1.0.0; beta:  -> 2.0.0");
  CHECK(readText(p.lockPath) == r.text);
  REQUIRE(r.ireeVersion);
  CHECK(r.ireeVersion->str() == "3.13.0");

  Lockfile l = f.lockfile(p);
  REQUIRE(l.ireeVersion);
  CHECK(l.ireeVersion->str() == "3.13.0");
  CHECK(l.inputHash == project::inputHash(p.parsed));
  CHECK(l.activation == Strings{"beta", "alpha"});
  REQUIRE(l.packages.size() == 2);
  const LockedPackage &alpha = l.packages[0];
  const LockedPackage &beta = l.packages[1];
  CHECK(alpha.name == "alpha");
  CHECK(alpha.version.str() == "1.0.0");
  REQUIRE(alpha.dependencies.size() == 1);
  CHECK(alpha.dependencies[0].first == "beta");
  CHECK(alpha.dependencies[0].second.str() == "2.0.0");
  CHECK(beta.name == "beta");
  CHECK(beta.version.str() == "2.0.0");
  CHECK(beta.dependencies.empty());
  for (const LockedPackage *lp : {&alpha, &beta}) {
    CAPTURE(lp->name);
    CHECK(lp->sourceKind == LockedPackage::SourceKind::Registry);
    // The URL as plugins.json writes it, so the lock stays portable.
    CHECK(lp->source == "../reg");
    CHECK(lp->sha256 == f.archiveSha(lp->name, lp->version.str()));
    CHECK(lp->size == fs::file_size(f.tmp.path() + "/" + lp->name + "-" +
                                    lp->version.str() + ".ireepkg"));
    CHECK(lp->signedBy == signing::keyIdHex(f.pair.publicKey));
    CHECK(fs::exists(f.reg + "/" + lp->archive));
  }
  CHECK(f.reporter.warnings.empty());
}

TEST_CASE("lock: an up-to-date lockfile is not written again, and --check "
          "says when one is not") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}}});
  LockRequest check;
  check.check = true;
  auto none = lockProject(p, check, f.env, f.reporter);
  REQUIRE_FALSE(none);
  CHECK(none.error().code == ErrorCode::Conflict);
  CHECK(none.error().message == "there is no plugins.lock.json");
  CHECK(none.error().hint == "run `ireepkg lock`");
  CHECK_FALSE(fs::exists(p.lockPath));

  LockRequest dry;
  dry.dryRun = true;
  LockResult planned = f.lock(p, dry);
  CHECK(planned.written); // would be written
  CHECK_FALSE(fs::exists(p.lockPath));

  LockResult first = f.lock(p);
  CHECK(first.written);
  CHECK(first.text == planned.text);
  LockResult second = f.lock(p);
  CHECK_FALSE(second.written);
  CHECK(second.changes.empty());
  CHECK(second.text == first.text);
  CHECK(f.lock(p, check).text == first.text);

  // plugins.json changes: the lock is out of date until locked again.
  Project q = f.project({{{"name", "alpha"}}, {{"name", "beta"}}});
  auto stale = lockProject(q, check, f.env, f.reporter);
  REQUIRE_FALSE(stale);
  CHECK(stale.error().code == ErrorCode::Conflict);
  CHECK(stale.error().message == "plugins.lock.json is out of date");
  CHECK(readText(p.lockPath) == first.text);
  LockResult third = f.lock(q);
  CHECK(third.written);
  CHECK(third.changes.empty()); // the same versions
  CHECK(third.text != first.text);
  // beta first: alpha depends on it.
  CHECK(f.lockfile(q).activation == Strings{"beta", "alpha"});
}

TEST_CASE("lock: locked versions stay until they are upgraded") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}}});
  f.lock(p);
  f.publish("beta", "2.1.0", nlohmann::json::object());
  f.publish("beta", "3.0.0", nlohmann::json::object());
  f.publish("alpha", "1.1.0", {{"beta", "^3.0"}});

  // Nothing in plugins.json changed, and the locked versions still fit.
  LockResult kept = f.lock(p);
  CHECK_FALSE(kept.written);
  CHECK(kept.changes.empty());

  // update beta: the newest beta alpha 1.0.0 allows; alpha stays.
  LockRequest beta;
  beta.upgrade = {"beta"};
  LockResult r = f.lock(p, beta);
  CHECK(r.written);
  CHECK(changed(r.changes) == "beta: 2.0.0 -> 2.1.0");

  // update (all): the newest of both.
  LockRequest all;
  all.upgradeAll = true;
  r = f.lock(p, all);
  CHECK(changed(r.changes) == "alpha: 1.0.0 -> 1.1.0; beta: 2.1.0 -> 3.0.0");
  Lockfile l = f.lockfile(p);
  REQUIRE(l.packages.size() == 2);
  CHECK(l.packages[0].version.str() == "1.1.0");
  CHECK(l.packages[1].version.str() == "3.0.0");

  // A plugin removed from plugins.json leaves the lock with its
  // dependencies.
  Project q = f.project({{{"name", "beta"}}});
  r = f.lock(q);
  CHECK(changed(r.changes) == "alpha: 1.1.0 -> ");
  CHECK(f.lockfile(q).activation == Strings{"beta"});
}

TEST_CASE("lock: no version fits, or no registry has the package") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}, {"version", "^3.0"}}});
  auto r = lockProject(p, {}, f.env, f.reporter);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::Conflict);
  CHECK(r.error().message ==
        "Because plugins.json depends on alpha >=3.0.0, <4.0.0 and no "
        "versions of alpha match >=3.0.0, <4.0.0, version solving failed.");
  CHECK(r.error().hint == kConstraintsHint);
  CHECK(r.error().where.file == p.file);
  CHECK_FALSE(fs::exists(p.lockPath));

  Project q = f.project({{{"name", "alpha"}}, {{"name", "gamma"}}});
  r = lockProject(q, {}, f.env, f.reporter);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::Conflict);
  CHECK(r.error().message == "Because plugins.json depends on gamma and gamma "
                             "does not exist, version solving failed.");
  CHECK(r.error().hint == kConstraintsHint);
  CHECK_FALSE(fs::exists(q.lockPath));

  // A dependency no version of which fits.
  f.publish("delta", "1.0.0", {{"beta", "^5.0"}});
  Project d = f.project({{{"name", "delta"}}});
  r = lockProject(d, {}, f.env, f.reporter);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::Conflict);
  CHECK(r.error().message ==
        "Because every version of delta depends on beta >=5.0.0, <6.0.0 and "
        "no versions of beta match >=5.0.0, <6.0.0, delta is forbidden.\n"
        "And because plugins.json depends on delta, version solving failed.");
}

//===----------------------------------------------------------------------===//
// syncProject
//===----------------------------------------------------------------------===//

TEST_CASE("sync: the prefix becomes the lockfile; a second sync changes "
          "nothing") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}}});
  f.lock(p);
  SyncResult first = f.sync(p);
  CHECK_FALSE(first.relocked);
  CHECK(changed(first.install.changes) == "alpha:  -> 1.0.0; beta:  -> 2.0.0");
  CHECK(f.installed() == "beta 2.0.0 (dependency); alpha 1.0.0");
  CHECK(readText(packageDir(f.prefix, "beta", *Version::parse("2.0.0")) +
                 "/data/x.txt") == "beta\n");
  CHECK_FALSE(first.install.stateFingerprint.empty());
  CHECK(first.install.stateFingerprint == installedStateFingerprint(f.prefix));

  auto before = test::snapshotTree(f.prefix);
  SyncResult second = f.sync(p);
  CHECK(second.install.changes.empty());
  CHECK_FALSE(second.relocked);
  CHECK(second.install.stateFingerprint == first.install.stateFingerprint);
  CHECK(test::snapshotTree(f.prefix) == before);
  CHECK(f.reporter.warnings.empty());
}

TEST_CASE("sync: a stale lock is locked again, or refused with --locked") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}}});
  f.lock(p);
  f.sync(p);
  f.publish("gamma", "0.1.0", nlohmann::json::object());
  Project q = f.project({{{"name", "alpha"}}, {{"name", "gamma"}}});

  SyncRequest locked;
  locked.locked = true;
  locked.prefix = f.prefix;
  auto before = test::snapshotTree(f.prefix);
  auto refused = syncProject(q, locked, f.env, f.reporter);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::Conflict);
  CHECK(refused.error().message == "plugins.lock.json is out of date: "
                                   "plugins.json changed since it was written");
  CHECK(refused.error().hint == "run `ireepkg lock` and commit the lockfile "
                                "(--locked refuses to change it)");
  CHECK(test::snapshotTree(f.prefix) == before);

  SyncResult r = f.sync(q);
  REQUIRE(r.relocked);
  CHECK(r.relocked->written);
  CHECK(changed(r.relocked->changes) == "gamma:  -> 0.1.0");
  CHECK(changed(r.install.changes) == "gamma:  -> 0.1.0");
  CHECK(f.installed() == "beta 2.0.0 (dependency); alpha 1.0.0; gamma 0.1.0");
  CHECK(readText(q.lockPath) == r.relocked->text);
}

TEST_CASE("sync: what the lock no longer holds leaves the prefix; a dry run "
          "changes nothing") {
  ProjectFixture f;
  Project p = f.project({{{"name", "alpha"}}});
  f.lock(p);
  f.sync(p);
  Project q = f.project({{{"name", "beta"}}});
  f.lock(q);

  SyncRequest dry;
  dry.dryRun = true;
  auto before = test::snapshotTree(f.prefix);
  SyncResult plan = f.sync(q, dry);
  CHECK(changed(plan.install.changes) == "alpha: 1.0.0 -> ");
  CHECK(test::snapshotTree(f.prefix) == before);

  SyncResult r = f.sync(q);
  CHECK(changed(r.install.changes) == "alpha: 1.0.0 -> ");
  CHECK(f.installed() == "beta 2.0.0");
  CHECK_FALSE(
      fs::exists(packageDir(f.prefix, "alpha", *Version::parse("1.0.0"))));
}

//===----------------------------------------------------------------------===//
// installByName
//===----------------------------------------------------------------------===//

TEST_CASE("install by name: the newest version the request allows") {
  ProjectFixture f;
  f.publish("beta", "2.1.0", nlohmann::json::object());
  f.publish("beta", "2.2.0-rc.1", nlohmann::json::object());
  f.publish("beta", "3.0.0", nlohmann::json::object());

  auto r = f.install({"beta@^2.0"});
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  CHECK(changed(r->changes) == "beta:  -> 2.1.0");
  CHECK(f.installed() == "beta 2.1.0");

  // alpha needs beta ^2.0, which the installed 2.1.0 meets: it stays,
  // though a newer 2.x is published now.
  f.publish("beta", "2.3.0", nlohmann::json::object());
  r = f.install({"alpha"});
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  CHECK(changed(r->changes) == "alpha:  -> 1.0.0");
  CHECK(f.installed() == "beta 2.1.0; alpha 1.0.0");

  // The same request again: nothing to do.
  auto before = test::snapshotTree(f.prefix);
  r = f.install({"alpha"});
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  CHECK(r->changes.empty());
  CHECK(r->unchanged == Strings{"alpha 1.0.0"});
  CHECK(test::snapshotTree(f.prefix) == before);
  CHECK(f.reporter.warnings.empty());
}

TEST_CASE("install by name: dependencies come with the package; a dry run "
          "only says what would change") {
  ProjectFixture f;
  f.publish("beta", "2.5.0", nlohmann::json::object());
  auto plan = f.install({"alpha"}, /*dryRun=*/true);
  REQUIRE_MESSAGE(plan.has_value(), plan.error().format());
  CHECK(changed(plan->changes) == "alpha:  -> 1.0.0; beta:  -> 2.5.0");
  CHECK_FALSE(fs::exists(f.prefix + "/state"));

  auto r = f.install({"alpha"});
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  CHECK(f.installed() == "beta 2.5.0 (dependency); alpha 1.0.0");
  // Asked for by name, the dependency becomes explicit.
  r = f.install({"beta"});
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  CHECK(f.installed() == "beta 2.5.0; alpha 1.0.0");
}

TEST_CASE("install by name: no version fits, no registry has the package, "
          "no registry") {
  ProjectFixture f;
  auto r = f.install({"beta@^9"});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::Conflict);
  CHECK(r.error().message ==
        "Because the command line depends on beta >=9.0.0, <10.0.0 and no "
        "versions of beta match >=9.0.0, <10.0.0, version solving failed.");
  CHECK_FALSE(fs::exists(f.prefix + "/state"));

  r = f.install({"gamma"});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::Conflict);
  CHECK(r.error().message == "Because the command line depends on gamma and "
                             "gamma does not exist, version solving failed.");
  CHECK_FALSE(fs::exists(f.prefix + "/state"));

  InstallByNameRequest none;
  none.packages = {*parseNameRequest("alpha")};
  none.prefix = f.prefix;
  r = installByName(none, f.env, f.reporter);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::Usage);
  CHECK(r.error().message == "no registry to install from");
  CHECK(r.error().hint ==
        "pass --registry URL --registry-key KEY, set IREEPKG_REGISTRY and "
        "IREEPKG_REGISTRY_KEY, or run in a project whose plugins.json lists "
        "registries");
}
