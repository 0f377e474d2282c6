//===- client_fixture.h - A registry and a client for the unit tests -*- C++
//-*-===//
//
// Shared by the tests of the registry client (test_parsed_cache_client.cpp,
// test_client_prefetch.cpp): a signed registry in a temporary directory
// with alpha (depending on beta) and beta, a client cache beside it;
// reporters that keep what they are told; a transport that logs what it
// fetches and on which thread, and can hold the prefetch thread.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_TESTS_UNIT_CLIENT_FIXTURE_H
#define IREEPKG_TESTS_UNIT_CLIENT_FIXTURE_H

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/client/parsed_cache.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"
#include "temp_dir.h"

#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ireepkg::test::client {

using namespace ireepkg::registry;
namespace fs = std::filesystem;
using test::readText;
using test::writeText;

/// A registry with alpha (depending on beta) and beta, and a client cache.
struct ClientFixture {
  test::TempDir tmp;
  std::string reg, cache;
  signing::KeyPair pair = signing::generateKeyPair();
  SigningOptions signing;
  Reporter reporter;

  ClientFixture() {
    reg = tmp.path() + "/reg";
    cache = tmp.path() + "/cache";
    auto paths = signing::writeKeyPair(pair, tmp.path() + "/signing", {});
    REQUIRE(paths.has_value());
    signing.secretKeyPath = paths->secretKey;
    InitOptions o;
    o.signing = signing;
    o.name = "test-registry";
    REQUIRE(initRegistry(reg, o).has_value());
    publish("beta", "2.0.0", nlohmann::json::object());
    publish("alpha", "1.0.0", {{"beta", "^2.0"}});
  }

  void publish(const std::string &name, const std::string &version,
               nlohmann::json deps) {
    nlohmann::json m = {{"schema_version", 1},
                        {"name", name},
                        {"version", version},
                        {"summary", "test package " + name},
                        {"dependencies", deps}};
    std::map<std::string, std::string> files = {
        {"ireeplugin.json", m.dump(2) + "\n"}, {"data/x.txt", name + "\n"}};
    Record record;
    for (const auto &[p, content] : files)
      record.files.push_back({p, Sha256::hex(content), content.size(), false});
    std::vector<ArchiveMember> members = {
        {"ireeplugin.json", files["ireeplugin.json"], "", false},
        {kRecordName, serializeRecord(record), "", false},
        {"data/x.txt", files["data/x.txt"], "", false}};
    std::string path = tmp.path() + "/" + name + "-" + version + ".ireepkg";
    REQUIRE(writeArchive(path, members).has_value());
    auto r = publishArchive(reg, path, signing);
    REQUIRE_MESSAGE(r.has_value(), r.error().format());
  }

  RegistrySpec spec() const {
    RegistrySpec s;
    s.url = reg;
    s.publicKeys = {signing::publicKeyBase64(pair.publicKey)};
    return s;
  }
  ClientOptions options() const {
    ClientOptions o;
    o.cacheRoot = cache;
    return o;
  }

  std::unique_ptr<RegistryClient> open() {
    auto c = RegistryClient::open(spec(), options(), reporter);
    REQUIRE_MESSAGE(c.has_value(), c.error().format());
    return std::move(*c);
  }
  /// A client over `transport`, reporting to `to`.
  std::unique_ptr<RegistryClient> open(std::unique_ptr<Transport> transport,
                                       Reporter &to) {
    auto c = RegistryClient::open(spec(), std::move(transport), options(), to);
    REQUIRE_MESSAGE(c.has_value(), c.error().format());
    return std::move(*c);
  }

  std::string stateDir() const {
    return cache + "/registries/" + registryId(reg);
  }
  /// The hash the snapshot pins for `name`'s index file.
  std::string pinned(RegistryClient &c, const std::string &name) {
    return c.snapshot().index.at(name).substr(7);
  }
  std::string packFile() const { return stateDir() + "/index.pack"; }
  /// The keys of index.pack's frames, in order.
  std::vector<std::string> packKeys() const {
    std::vector<std::string> keys;
    if (!fs::exists(packFile()))
      return keys;
    const std::string pack = readText(packFile());
    for (const PackedIndex &p : splitParsedIndexPack(pack))
      keys.emplace_back(p.key);
    return keys;
  }
  std::string verifiedIndex(RegistryClient &c, const std::string &name) {
    return stateDir() + "/index/" + pinned(c, name) + ".json";
  }

  /// Replaces index/<name>.json of the registry by `text` and signs a
  /// snapshot (one version up) that pins it, as a registry written by a
  /// newer ireepkg would be.
  void replaceIndex(const std::string &name, const std::string &text) {
    writeText(reg + "/index/" + name + ".json", text);
    nlohmann::json snap =
        nlohmann::json::parse(readText(reg + "/snapshot.json"));
    snap["version"] = snap["version"].get<int64_t>() + 1;
    snap["index"][name] = "sha256:" + Sha256::hex(text);
    const std::string snapText = snap.dump(2) + "\n";
    writeText(reg + "/snapshot.json", snapText);
    signing::SignOptions so;
    so.trustedComment = "timestamp:0\tfile:snapshot.json\thashed";
    auto sig = signing::signBuffer(pair.secretKey, snapText, so);
    REQUIRE(sig.has_value());
    REQUIRE(signing::writeSignatureFile(*sig, reg + "/snapshot.json.minisig")
                .has_value());
  }
};

/// Counts the warnings it is given.
struct CountingReporter : Reporter {
  std::vector<std::string> warnings;
  void warning(const Diagnostic &d) override { warnings.push_back(d.message); }
};

inline void checkAlpha(RegistryClient &c) {
  auto v = c.versions("alpha");
  REQUIRE_MESSAGE(v.has_value(), v.error().format());
  REQUIRE(v->size() == 1);
  CHECK((*v)[0].version.str() == "1.0.0");
  const Dependency *beta = (*v)[0].dependency("beta");
  REQUIRE(beta);
  CHECK(beta->constraint->text() == "^2.0");
}

/// Keeps the -vv details, to tell whether a snapshot's signature was
/// checked or its earlier check reused.
struct DetailLog : Reporter {
  std::vector<std::string> details;
  void detail(int, const std::string &message) override {
    details.push_back(message);
  }
  /// The signature check was skipped: for the same bytes (hashed), or for
  /// files with the stamps they had when they were verified (not read).
  bool reused() const { return said("verified before") || byStamps(); }
  bool byStamps() const { return said("unchanged since it and its signature"); }
  bool said(std::string_view what) const {
    for (const std::string &d : details)
      if (d.find(what) != std::string::npos)
        return true;
    return false;
  }
};

/// Opens the fixture's registry trusting `keys`, at time `now` (0: now).
inline Expected<std::unique_ptr<RegistryClient>>
openWith(ClientFixture &f, DetailLog &log, std::vector<std::string> keys = {},
         int64_t now = 0) {
  RegistrySpec s;
  s.url = f.reg;
  s.publicKeys =
      keys.empty()
          ? std::vector<std::string>{signing::publicKeyBase64(f.pair.publicKey)}
          : keys;
  ClientOptions o;
  o.cacheRoot = f.cache;
  o.now = now;
  return RegistryClient::open(s, o, log);
}

/// What the transports of one client fetched, and on which thread: the
/// client's own transport and its concurrent copies share one log. A copy
/// may be held at the start of its next fetchMany until released, to put
/// the prefetch thread where a test wants it.
struct FetchLog {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::pair<std::string, std::thread::id>> fetched;
  bool hold = false;
  int holding = 0; ///< copies waiting in fetchMany
  void record(const std::string &rel) {
    std::lock_guard<std::mutex> lock(mutex);
    fetched.emplace_back(rel, std::this_thread::get_id());
    changed.notify_all();
  }
  /// Waits (at most 10 s) until `done` holds.
  template <typename F> bool waitFor(F done) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(10), done);
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    hold = false;
    changed.notify_all();
  }
  /// The threads that fetched `rel`.
  std::vector<std::thread::id> fetchers(const std::string &rel) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::thread::id> out;
    for (const auto &[r, id] : fetched)
      if (r == rel)
        out.push_back(id);
    return out;
  }
};

struct LoggingTransport : Transport {
  LoggingTransport(std::unique_ptr<Transport> inner,
                   std::shared_ptr<FetchLog> log, bool copy = false)
      : inner(std::move(inner)), log(std::move(log)), copy(copy) {}
  std::string describe() const override { return inner->describe(); }
  Expected<net::MetadataResponse> fetch(const std::string &rel,
                                        uint64_t max) override {
    log->record(rel);
    return inner->fetch(rel, max);
  }
  std::vector<Expected<net::MetadataResponse>>
  fetchMany(const std::vector<std::string> &rels, uint64_t max) override {
    if (copy) {
      std::unique_lock<std::mutex> lock(log->mutex);
      ++log->holding;
      log->changed.notify_all();
      log->changed.wait_for(lock, std::chrono::seconds(10),
                            [&] { return !log->hold; });
      --log->holding;
    }
    return Transport::fetchMany(rels, max);
  }
  Status downloadAll(const std::vector<Download> &d, Reporter &r) override {
    return inner->downloadAll(d, r);
  }
  std::optional<fsutil::FileStamp>
  stamp(const std::string &rel) const override {
    return inner->stamp(rel);
  }
  std::unique_ptr<Transport> concurrentCopy() const override {
    auto c = inner->concurrentCopy();
    if (!c)
      return nullptr;
    return std::make_unique<LoggingTransport>(std::move(c), log, true);
  }
  std::unique_ptr<Transport> inner;
  std::shared_ptr<FetchLog> log;
  bool copy;
};

/// Keeps the details and warnings it is given.
struct DetailReporter : Reporter {
  std::vector<std::string> details, warnings;
  void detail(int, const std::string &m) override { details.push_back(m); }
  void warning(const Diagnostic &d) override { warnings.push_back(d.message); }
};

/// A client over the fixture's registry whose fetches go to `log`.
inline std::unique_ptr<RegistryClient>
loggedClient(ClientFixture &f, std::shared_ptr<FetchLog> log, Reporter &to) {
  auto t = openTransport(f.spec(), f.options());
  REQUIRE(t.has_value());
  return f.open(std::make_unique<LoggingTransport>(std::move(*t), log), to);
}

} // namespace ireepkg::test::client

#endif // IREEPKG_TESTS_UNIT_CLIENT_FIXTURE_H
