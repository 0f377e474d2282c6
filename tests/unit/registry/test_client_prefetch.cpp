//===- test_client_prefetch.cpp - Index files read ahead of the resolver -===//
//
// RegistryClient::prefetch: index files fetched, checked and parsed on a
// second thread with its own transport, ahead of the resolver; the client
// gives exactly what a client that does not read ahead gives, reads itself
// a file the thread has not started on, waits for one it is working on,
// and reads again, reporting as always, one the thread could not use.
//
//===----------------------------------------------------------------------===//
#include "client_fixture.h"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace ireepkg;
using namespace ireepkg::registry;
using namespace ireepkg::test::client;

namespace {

/// What versions() gives, as text: each version and its dependencies.
std::string versionsText(RegistryClient &c, const std::string &name) {
  auto v = c.versions(name);
  if (!v)
    return "error: " + v.error().format();
  std::string out;
  for (const CandidateVersion &cv : *v) {
    out += cv.version.str() + (cv.yanked ? " yanked" : "") + ":";
    for (const Dependency &d : cv.dependencies)
      out += " " + d.name + " " + d.constraint->text();
    out += "\n";
  }
  return out;
}

/// versionsText() of each of `names` from a client that does not
/// prefetch, with a cache of its own; its index-file details in `details`,
/// its warnings in `warnings`.
std::map<std::string, std::string>
readPlainly(ClientFixture &f, const std::vector<std::string> &names,
            DetailReporter &report) {
  const std::string cache = f.cache;
  f.cache += "-plain";
  std::map<std::string, std::string> out;
  {
    auto c = f.open(*openTransport(f.spec(), f.options()), report);
    for (const std::string &n : names)
      out[n] = versionsText(*c, n);
  }
  f.cache = cache;
  return out;
}

/// The details about index files, in order.
std::vector<std::string> indexDetails(const DetailReporter &r) {
  std::vector<std::string> out;
  for (const std::string &d : r.details)
    if (d.starts_with("index/"))
      out.push_back(d);
  return out;
}

/// Index files `log` saw fetched.
size_t indexFetches(const FetchLog &log) {
  size_t n = 0;
  for (const auto &[rel, id] : log.fetched)
    n += rel.starts_with("index/");
  return n;
}

/// A client whose fetches go to `log` (held before its prefetch thread's
/// fetches when `held`), and what a client that does not read ahead gives
/// for `names`, to compare.
struct LoggedRun {
  DetailReporter plain, report;
  std::map<std::string, std::string> expected;
  std::shared_ptr<FetchLog> log = std::make_shared<FetchLog>();
  std::unique_ptr<RegistryClient> client;
  LoggedRun(ClientFixture &f, const std::vector<std::string> &names,
            bool held) {
    expected = readPlainly(f, names, plain);
    log->hold = held;
    client = loggedClient(f, log, report);
  }
};

/// A client that was told to read `names` ahead, once its thread has
/// fetched them all (it has them, or is parsing them).
struct ReadAhead : LoggedRun {
  ReadAhead(ClientFixture &f, const std::vector<std::string> &names)
      : LoggedRun(f, names, false) {
    client->prefetch(names);
    REQUIRE(log->waitFor([&] { return indexFetches(*log) == names.size(); }));
  }
};

/// A client whose prefetch thread took beta and is held before fetching
/// it (FetchLog::hold).
struct HeldOnBeta : LoggedRun {
  HeldOnBeta(ClientFixture &f, const std::vector<std::string> &names)
      : LoggedRun(f, names, true) {
    client->prefetch({"beta"});
    REQUIRE(log->waitFor([&] { return log->holding == 1; }));
  }
  /// Releases the thread 50 ms from now, from another thread.
  std::thread releaseSoon() {
    return std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      log->release();
    });
  }
};

} // namespace

TEST_CASE("prefetch: index files are read on another thread, and the client "
          "uses them as if it had read them") {
  ClientFixture f;
  f.publish("gamma", "1.0.0", nlohmann::json::object());
  f.publish("gamma", "1.1.0", {{"beta", ">=2.0"}});
  f.publish("delta", "0.1.0", nlohmann::json::object());
  const std::vector<std::string> names = {"alpha", "beta", "gamma", "delta"};
  ReadAhead run(f, names);
  for (const std::string &n : names) {
    CHECK(versionsText(*run.client, n) == run.expected.at(n));
    // Fetched once, by the prefetch thread.
    auto who = run.log->fetchers("index/" + n + ".json");
    REQUIRE(who.size() == 1);
    CHECK(who[0] != std::this_thread::get_id());
  }
  // Reported as files the client reads itself, and kept parsed the same
  // way (index.pack), so that the next client reads no index file.
  CHECK(indexDetails(run.report) == indexDetails(run.plain));
  CHECK(run.report.warnings.empty());
  run.client->saveCache();
  std::set<std::string> keys, pins;
  for (const std::string &k : f.packKeys())
    keys.insert(k);
  for (const std::string &n : names)
    pins.insert(f.pinned(*run.client, n));
  CHECK(keys == pins);

  auto warmLog = std::make_shared<FetchLog>();
  DetailReporter warmReport;
  auto warm = loggedClient(f, warmLog, warmReport);
  warm->prefetch(names);
  for (const std::string &n : names)
    CHECK(versionsText(*warm, n) == run.expected.at(n));
  CHECK(indexFetches(*warmLog) == 0);
}

TEST_CASE("prefetch: a file the thread cannot use is read again by the "
          "client, and reported as always") {
  ClientFixture f;
  f.publish("gamma", "1.0.0", nlohmann::json::object());
  const std::string beta = readText(f.reg + "/index/beta.json");
  SUBCASE("bytes that are not the ones the snapshot pins") {
    writeText(f.reg + "/index/beta.json", beta + " ");
  }
  SUBCASE("a field this version does not know (a warning)") {
    nlohmann::json j = nlohmann::json::parse(beta);
    j["x_future"] = true;
    f.replaceIndex("beta", j.dump(2) + "\n");
  }
  SUBCASE("the index of another package") {
    f.replaceIndex("beta", readText(f.reg + "/index/gamma.json"));
  }
  const std::vector<std::string> names = {"beta", "gamma"};
  ReadAhead run(f, names);
  for (const std::string &n : names)
    CHECK(versionsText(*run.client, n) == run.expected.at(n));
  CHECK(run.report.warnings == run.plain.warnings);
  // beta was read again on the client's own thread; gamma was not.
  auto betaFetchers = run.log->fetchers("index/beta.json");
  REQUIRE(betaFetchers.size() >= 2);
  CHECK(betaFetchers[0] != std::this_thread::get_id());
  CHECK(betaFetchers[1] == std::this_thread::get_id());
  CHECK(run.log->fetchers("index/gamma.json").size() == 1);
}

TEST_CASE("prefetch: a file the thread has not started on is read by the "
          "client itself; one under way is waited for") {
  ClientFixture f;
  f.publish("gamma", "1.0.0", nlohmann::json::object());
  HeldOnBeta run(f, {"beta", "gamma"});
  // gamma waits in the queue behind beta.
  run.client->prefetch({"gamma"});
  CHECK(versionsText(*run.client, "gamma") == run.expected.at("gamma"));
  CHECK(run.log->fetchers("index/gamma.json") ==
        std::vector<std::thread::id>{std::this_thread::get_id()});
  // beta is under way: versions() waits for the thread rather than read it
  // a second time.
  std::thread releaser = run.releaseSoon();
  CHECK(versionsText(*run.client, "beta") == run.expected.at("beta"));
  releaser.join();
  auto who = run.log->fetchers("index/beta.json");
  REQUIRE(who.size() == 1);
  CHECK(who[0] != std::this_thread::get_id());
}

TEST_CASE("prefetch: a client closed while the thread works waits for it") {
  ClientFixture f;
  HeldOnBeta run(f, {"beta"});
  std::thread releaser = run.releaseSoon();
  run.client.reset(); // joins the thread once it is released
  releaser.join();
  CHECK(indexFetches(*run.log) == 1);
  // The cache is whole: the next client reads beta as ever.
  auto next = f.open();
  CHECK(versionsText(*next, "beta") == run.expected.at("beta"));
}
