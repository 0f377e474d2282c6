//===- test_transaction.cpp - Prefix transactions: failure and crashes ----===//
//
// A failing install leaves the prefix byte for byte as it was; a process
// killed at each fault point of a transaction (IREEPKG_FAULT, see
// docs/architecture.md "Prefix transactions") leaves a prefix that the next
// operation rolls back (before the commit point) or completes (from it on).
// The crashing install runs in a forked child, so the test process itself
// survives; the transaction's private header is not used: everything is
// observed through the prefix and the public API.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <doctest/doctest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

struct TxFixture {
  TempDir tmp{"tx"};
  std::string prefix = tmp / "prefix";
  ScopedEnv mlir{"IREEPKG_MLIR_CHECK", "off"};
  ScopedEnv fault{"IREEPKG_FAULT", std::nullopt};
  InstallOptions options;
  RecordingReporter reporter;

  TxFixture() { options.useCache = false; }

  std::string package(const std::string &name, const std::string &version) {
    std::string src = tmp / ("src/" + name + "-" + version);
    writeHookPackageDir(src, name, version);
    fs::create_directories(tmp / "dist");
    return packOk(src, tmp / "dist");
  }

  void install(const std::vector<std::string> &archives) {
    auto r = installArchives(prefix, archives, options, reporter);
    REQUIRE_MESSAGE(r.has_value(), whyNot(r));
  }

  std::vector<std::string> installed() {
    auto s = readInstalledState(prefix, reporter);
    REQUIRE_MESSAGE(s.has_value(), whyNot(s));
    std::vector<std::string> out;
    for (const InstalledPackage &p : s->packages)
      out.push_back(p.name + " " + p.version.str());
    return out;
  }

  void verifyClean() {
    auto v = verifyPrefix(prefix, {}, reporter);
    REQUIRE_MESSAGE(v.has_value(), whyNot(v));
    for (const VerifyProblem &p : v->problems)
      FAIL_CHECK(p.package << "|" << p.path << "|" << p.kind << "|"
                           << p.detail);
  }

  /// No journal and no scratch space.
  void checkNoScratch() {
    CHECK_FALSE(exists(prefix + "/state/journal.json"));
    CHECK_FALSE(exists(prefix + "/.staging"));
    CHECK_FALSE(exists(prefix + "/.trash"));
  }
};

/// Runs installArchives in a child process with IREEPKG_FAULT=`point`;
/// returns the child's wait status. The child uses no doctest macro and
/// leaves with _exit, so nothing of the test process runs twice.
int installInChild(const std::string &prefix,
                   const std::vector<std::string> &archives,
                   const InstallOptions &options, const std::string &point) {
  return runWithFault(point, [&](Reporter &quiet) {
    return installArchives(prefix, archives, options, quiet).has_value();
  });
}

} // namespace

TEST_CASE("transaction: a failed install leaves the prefix as it was") {
  TxFixture f;
  std::string a1 = f.package("alpha", "1.0.0");
  std::string a2 = f.package("alpha", "2.0.0");
  std::string b = f.package("beta", "1.0.0");
  f.install({a1});
  auto before = snapshotTree(f.prefix);
  REQUIRE(before.count("packages/alpha/1.0.0/ireeplugin.json"));

  SUBCASE("an archive unsafe past its head, after good ones") {
    // The head is fine, so the transaction starts and the good archives are
    // staged; the third member leaves the package.
    std::string manifest = nlohmann::ordered_json{{"schema_version", 1},
                                                  {"name", "gamma"},
                                                  {"version", "1.0.0"},
                                                  {"summary", "unsafe"}}
                               .dump() +
                           "\n";
    Record record;
    record.files = {
        {kManifestName, Sha256::hex(manifest), manifest.size(), false}};
    std::string bad = f.tmp / "dist/gamma-1.0.0.ireepkg";
    REQUIRE(
        writeArchive(bad, {{kManifestName, manifest, "", false},
                           {kRecordName, serializeRecord(record), "", false},
                           {"../escape", "x", "", false}})
            .has_value());
    auto r = installArchives(f.prefix, {a2, b, bad}, f.options, f.reporter);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == "\"..\" components are not allowed");
    CHECK(r.error().where.member == "../escape");
    CHECK_FALSE(exists(f.tmp / "escape"));
    CHECK_FALSE(exists(f.prefix + "/escape"));
  }
  SUBCASE("an archive refused at its head") {
    writeText(f.tmp / "dist/junk.ireepkg", "not an archive");
    auto r = installArchives(f.prefix, {a2, b, f.tmp / "dist/junk.ireepkg"},
                             f.options, f.reporter);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.starts_with("not an ireepkg archive"));
  }
  SUBCASE("a removal refused") {
    auto r = removePackages(f.prefix, {"beta"}, {}, f.reporter);
    REQUIRE_FALSE(r.has_value());
  }
  CHECK(snapshotTree(f.prefix) == before);
  f.checkNoScratch();
  CHECK(f.installed() == std::vector<std::string>{"alpha 1.0.0"});
  f.verifyClean();
  CHECK(f.reporter.recoveries.empty());
}

TEST_CASE("transaction: a crash at every point is rolled back or completed") {
  // Every fault point of a transaction, in the order they are reached, and
  // whether the change is committed by then.
  struct Point {
    const char *name;
    bool committed;
    const char *recovery;
  };
  const Point points[] = {
      {"journal-written", false, "rolled back an interrupted change"},
      {"package-staged", false, "rolled back an interrupted change"},
      {"state-staged", false, "rolled back an interrupted change"},
      {"commit-marked", true, "completed an interrupted change"},
      {"applying", true, "completed an interrupted change"},
      {"applied", true, "completed an interrupted change"},
      {"journal-removed", true,
       "removed scratch files of an interrupted change"},
  };
  REQUIRE_FALSE(runningPrivileged()); // else IREEPKG_FAULT is ignored

  TxFixture f;
  std::string a1 = f.package("alpha", "1.0.0");
  std::string a2 = f.package("alpha", "2.0.0");
  std::string b = f.package("beta", "1.0.0");

  for (const Point &point : points) {
    CAPTURE(point.name);
    std::string prefix = f.tmp / (std::string("prefix-") + point.name);
    RecordingReporter reporter;
    auto r = installArchives(prefix, {a1}, f.options, reporter);
    REQUIRE(r.has_value());
    auto before = snapshotTree(prefix);

    // The change: an upgrade and a new package in one transaction.
    int status = installInChild(prefix, {a2, b}, f.options, point.name);
    REQUIRE_MESSAGE(WIFSIGNALED(status), "the child was not killed");
    CHECK(WTERMSIG(status) == SIGKILL);
    // The crash left a trace the next operation must deal with.
    CHECK((exists(prefix + "/state/journal.json") ||
           exists(prefix + "/.staging") || exists(prefix + "/.trash")));

    // The next reader recovers first.
    auto st = readInstalledState(prefix, reporter);
    REQUIRE_MESSAGE(st.has_value(), whyNot(st));
    CHECK(reporter.recoveries == std::vector<std::string>{point.recovery});
    std::vector<std::string> names;
    for (const InstalledPackage &p : st->packages)
      names.push_back(p.name + " " + p.version.str());
    if (point.committed) {
      CHECK(names == std::vector<std::string>{"alpha 2.0.0", "beta 1.0.0"});
      CHECK(listDir(prefix + "/packages/alpha") ==
            std::vector<std::string>{"2.0.0"});
    } else {
      CHECK(names == std::vector<std::string>{"alpha 1.0.0"});
      CHECK(snapshotTree(prefix) == before);
    }
    CHECK_FALSE(exists(prefix + "/state/journal.json"));
    CHECK_FALSE(exists(prefix + "/.staging"));
    CHECK_FALSE(exists(prefix + "/.trash"));
    auto v = verifyPrefix(prefix, {}, reporter);
    REQUIRE(v.has_value());
    CHECK(v->problems.empty());

    // And the prefix takes the change again (or has it already).
    auto again = installArchives(prefix, {a2, b}, f.options, reporter);
    REQUIRE_MESSAGE(again.has_value(), whyNot(again));
    CHECK(again->changes.size() == (point.committed ? 0u : 2u));
    CHECK(reporter.recoveries.size() == 1);
  }
}

TEST_CASE("transaction: a crash during a removal") {
  TxFixture f;
  std::string a = f.package("alpha", "1.0.0");
  std::string b = f.package("beta", "1.0.0");
  for (const char *point : {"state-staged", "applying"}) {
    CAPTURE(point);
    std::string prefix = f.tmp / (std::string("prefix-") + point);
    RecordingReporter reporter;
    REQUIRE(installArchives(prefix, {a, b}, f.options, reporter).has_value());
    auto before = snapshotTree(prefix);
    int status = runWithFault(point, [&](Reporter &quiet) {
      return removePackages(prefix, {"alpha"}, {}, quiet).has_value();
    });
    REQUIRE(WIFSIGNALED(status));
    auto st = readInstalledState(prefix, reporter);
    REQUIRE(st.has_value());
    if (std::string(point) == "state-staged") {
      CHECK(st->packages.size() == 2);
      CHECK(snapshotTree(prefix) == before);
    } else {
      REQUIRE(st->packages.size() == 1);
      CHECK(st->packages[0].name == "beta");
      CHECK(listDir(prefix + "/packages") == std::vector<std::string>{"beta"});
    }
    auto v = verifyPrefix(prefix, {}, reporter);
    REQUIRE(v.has_value());
    CHECK(v->problems.empty());
  }
}

namespace {

/// Forks a child that runs installArchives with IREEPKG_FAULT=`stopAt`
/// (a "<point>:stop"), and waits until it has stopped there. The child's
/// error message, if it fails, goes to `errorFile`.
pid_t stoppedInstall(const std::string &prefix,
                     const std::vector<std::string> &archives,
                     const InstallOptions &options, const char *stopAt,
                     const std::string &errorFile) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("IREEPKG_FAULT", stopAt, 1);
    Reporter quiet;
    auto r = installArchives(prefix, archives, options, quiet);
    if (!r) {
      std::ofstream out(errorFile);
      out << r.error().message;
    }
    ::_exit(r ? 0 : 3);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, WUNTRACED) == pid);
  REQUIRE_MESSAGE(WIFSTOPPED(status), "the child did not stop");
  return pid;
}

/// Lets a stopped child go on; returns its exit code.
int resume(pid_t pid) {
  REQUIRE(::kill(pid, SIGCONT) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

class LockReporter : public RecordingReporter {
public:
  std::string holder;
  void waitingForLock(const std::string &, const std::string &who) override {
    holder = who;
  }
};

} // namespace

TEST_CASE("transaction: one process changes a prefix at a time") {
  TxFixture f;
  std::string a = f.package("alpha", "1.0.0");
  std::string b = f.package("beta", "1.0.0");
  f.install({a});
  // The child holds the lock, stopped inside its transaction.
  pid_t child = stoppedInstall(f.prefix, {b}, f.options, "journal-written:stop",
                               f.tmp / "error");
  InstallOptions o = f.options;
  o.lock.timeoutSeconds = 0.2;
  LockReporter reporter;
  auto r = removePackages(f.prefix, {"alpha"}, RemoveOptions{o.lock, false},
                          reporter);
  REQUIRE_FALSE(r.has_value());
  std::string who = "ireepkg (pid " + std::to_string(child) + ")";
  CHECK(reporter.holder == who);
  CHECK(r.error().code == ErrorCode::Conflict);
  CHECK(r.error().message ==
        who + " is working on this prefix; gave up after 0.2 s");
  CHECK(r.error().hint == "wait for it to finish, or raise --lock-timeout");
  // Once it goes on, its change is made; then the removal goes through.
  CHECK(resume(child) == 0);
  CHECK(f.installed() == std::vector<std::string>{"alpha 1.0.0", "beta 1.0.0"});
  REQUIRE(removePackages(f.prefix, {"alpha"}, {}, reporter).has_value());
  CHECK(f.installed() == std::vector<std::string>{"beta 1.0.0"});
  f.verifyClean();
}

TEST_CASE("transaction: an archive rewritten in place during install") {
  TxFixture f;
  std::string a = f.package("alpha", "1.0.0");
  std::string b = f.package("beta", "1.0.0");
  f.install({a});
  auto before = snapshotTree(f.prefix);
  // Stopped after the heads were read and checked, before extraction.
  pid_t child = stoppedInstall(f.prefix, {b}, f.options, "heads-read:stop",
                               f.tmp / "error");
  {
    std::ofstream out(b, std::ios::binary | std::ios::trunc); // same inode
    out << readText(a);
  }
  CHECK(resume(child) == 3);
  CHECK(readText(f.tmp / "error") ==
        "the archive changed while it was being installed");
  CHECK(snapshotTree(f.prefix) == before);
  f.checkNoScratch();
  CHECK(f.installed() == std::vector<std::string>{"alpha 1.0.0"});
}
