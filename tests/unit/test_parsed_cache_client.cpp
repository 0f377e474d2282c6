//===- test_parsed_cache_client.cpp - Parsed forms through the client ----===//
//
// The registry client and its cache of parsed metadata: index.pack and
// snapshot.bin are written, used (a warm client reads no JSON), and when
// damaged ignored and rewritten; one that another user owns or may write
// is not read; a snapshot verified before is not verified again, and
// only when that is safe (snapshot.verified). The forms themselves:
// test_parsed_cache.cpp.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/binary_form.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/hash.h"
#include "ireepkg/pkg/package.h"
#include "ireepkg/pkg/prefix.h"
#include "ireepkg/pkg/signature.h"
#include "ireepkg/registry/parsed_cache.h"
#include "ireepkg/registry/registry.h"
#include "temp_dir.h"
#include <condition_variable>
#include <doctest/doctest.h>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <xxhash.h>

using namespace ireepkg;
using namespace ireepkg::registry;
namespace fs = std::filesystem;

namespace {

const std::string kKey(64, 'a');
const std::string kOtherKey(64, 'b');

using test::readText;
using test::writeText;

} // namespace

//===----------------------------------------------------------------------===//
// Through the client
//===----------------------------------------------------------------------===//

namespace {

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

void checkAlpha(RegistryClient &c) {
  auto v = c.versions("alpha");
  REQUIRE_MESSAGE(v.has_value(), v.error().format());
  REQUIRE(v->size() == 1);
  CHECK((*v)[0].version.str() == "1.0.0");
  const Dependency *beta = (*v)[0].dependency("beta");
  REQUIRE(beta);
  CHECK(beta->constraint->text() == "^2.0");
}

} // namespace

TEST_CASE("parsed cache: the client writes and uses parsed forms, and "
          "ignores damaged ones") {
  ClientFixture f;
  std::string verified, alphaKey;
  {
    auto c = f.open();
    checkAlpha(*c);
    verified = f.verifiedIndex(*c, "alpha");
    alphaKey = f.pinned(*c, "alpha");
  }
  // One file, index.pack, holds the parsed forms of the index files read
  // (only alpha's here); none is kept per index file.
  const std::string pack = f.packFile();
  REQUIRE(fs::exists(pack));
  CHECK(f.packKeys() == std::vector<std::string>{alphaKey});
  CHECK_FALSE(fs::exists(verified));
  REQUIRE(fs::exists(f.stateDir() + "/snapshot.bin"));
  const std::string good = readText(pack);
  const std::string alphaJson = readText(f.reg + "/index/alpha.json");
  // Whether a client answers for alpha with the registry's copy gone.
  auto fromCacheAlone = [&] {
    fs::remove(f.reg + "/index/alpha.json");
    auto c = f.open();
    auto v = c->versions("alpha");
    writeText(f.reg + "/index/alpha.json", alphaJson);
    if (!v) {
      CHECK(v.error().message.find("missing") != std::string::npos);
      return false;
    }
    checkAlpha(*c);
    return true;
  };

  SUBCASE("a warm client reads neither the index nor its verified copy, "
          "and writes nothing") {
    CHECK(fromCacheAlone());
    CHECK(readText(pack) == good);
    // Looked up in snapshot.bin before the map of packages is built, and
    // the version chosen decoded from the pack alone.
    fs::remove(f.reg + "/index/alpha.json");
    auto c = f.open();
    CHECK(c->hasPackage("alpha"));
    CHECK(c->hasPackage("beta"));
    CHECK_FALSE(c->hasPackage("alphb"));
    checkAlpha(*c);
    auto e = c->entry("alpha", *Version::parse("1.0.0"));
    REQUIRE_MESSAGE(e.has_value(), e.error().format());
    CHECK((*e)->version.str() == "1.0.0");
    auto missing = c->entry("alpha", *Version::parse("9.0.0"));
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == ErrorCode::NotFound);
    CHECK(c->packageNames() == std::vector<std::string>{"alpha", "beta"});
    writeText(f.reg + "/index/alpha.json", alphaJson);
  }

  SUBCASE("a damaged pack is not trusted: the index is read and parsed "
          "again, and its parsed form kept again") {
    std::vector<std::string> damaged = {"", good.substr(0, good.size() / 2),
                                        std::string(good.size(), '\0')};
    std::string flipped = good;
    flipped[good.size() - 3] ^= 1;
    damaged.push_back(flipped);
    std::string otherVersion = good;
    otherVersion[8] = static_cast<char>(kParsedCacheFormat + 1);
    damaged.push_back(otherVersion);
    for (const std::string &d : damaged) {
      CAPTURE(d.size());
      writeText(pack, d);
      {
        auto c = f.open();
        checkAlpha(*c);
      }
      // Appended after the damage, and found there.
      CHECK(readText(pack) == d + good);
      CHECK(fromCacheAlone());
    }
    // Bytes after a good frame change nothing.
    writeText(pack, good + "tail");
    CHECK(fromCacheAlone());
    CHECK(readText(pack) == good + "tail");
  }

  SUBCASE("a damaged pack with neither copy left is an error, not a wrong "
          "answer") {
    writeText(pack, good.substr(0, good.size() - 1));
    CHECK_FALSE(fromCacheAlone());
  }

  SUBCASE("a pack that other users may write, or that another user owns, "
          "is not read, and is replaced by one of the user's own") {
    // With neither JSON copy left, a pack that is not read leaves nothing
    // to answer from: the error shows it was passed over.
    REQUIRE(::chmod(pack.c_str(), 0664) == 0);
    CHECK_FALSE(fromCacheAlone());
    REQUIRE(::chmod(pack.c_str(), 0646) == 0);
    CHECK_FALSE(fromCacheAlone());
    REQUIRE(::chmod(pack.c_str(), 0644) == 0);
    if (::geteuid() == 0) {
      REQUIRE(::chown(pack.c_str(), 65534, 65534) == 0);
      CHECK_FALSE(fromCacheAlone());
      REQUIRE(::chown(pack.c_str(), 0, 0) == 0);
    }
    CHECK(fromCacheAlone());
    // A client that parses alpha while the pack is not usable replaces it.
    REQUIRE(::chmod(pack.c_str(), 0666) == 0);
    {
      auto c = f.open();
      checkAlpha(*c);
    }
    struct stat st;
    REQUIRE(::stat(pack.c_str(), &st) == 0);
    CHECK((st.st_mode & 022) == 0);
    CHECK(readText(pack) == good);
    CHECK(fromCacheAlone());
  }

  SUBCASE("the parsed form of another package under this hash is refused") {
    std::string forged;
    {
      auto c = f.open();
      auto beta = c->index("beta");
      REQUIRE(beta.has_value());
      forged = encodeParsedIndex(**beta, alphaKey);
    }
    writeText(pack, forged);
    CHECK(f.packKeys() == std::vector<std::string>{alphaKey});
    {
      auto c = f.open();
      checkAlpha(*c);
    }
    // alpha's own form, appended, wins over the refused one.
    CHECK(f.packKeys() == std::vector<std::string>{alphaKey, alphaKey});
    CHECK(fromCacheAlone());
  }

  SUBCASE("a pack mostly of frames a run did not use is rewritten with the "
          "ones it used") {
    // Frames of other index files (updated since, say): over 8 MiB.
    std::string junk;
    RegistryIndex other;
    other.name = "other";
    other.versions.resize(20);
    for (int i = 0; junk.size() < (9u << 20); ++i)
      junk += encodeParsedIndex(other, Sha256::hex(std::to_string(i)));
    writeText(pack, good + junk);
    std::string betaKey;
    {
      auto c = f.open();
      checkAlpha(*c);
      REQUIRE(c->versions("beta").has_value()); // parsed anew
      betaKey = f.pinned(*c, "beta");
    }
    CHECK(f.packKeys() == std::vector<std::string>{alphaKey, betaKey});
    CHECK(readText(pack).starts_with(good));
    CHECK(fromCacheAlone());
  }

  SUBCASE("an index whose parse warned keeps its verified bytes, not a "
          "parsed form, so that a warm client warns again") {
    nlohmann::json idx =
        nlohmann::json::parse(readText(f.reg + "/index/alpha.json"));
    idx["futurefield"] = true;
    f.replaceIndex("alpha", idx.dump(2) + "\n");
    for (int run = 0; run < 2; ++run) {
      CAPTURE(run);
      CountingReporter counting;
      RegistrySpec s;
      s.url = f.reg;
      s.publicKeys = {signing::publicKeyBase64(f.pair.publicKey)};
      ClientOptions o;
      o.cacheRoot = f.cache;
      auto c = RegistryClient::open(s, o, counting);
      REQUIRE_MESSAGE(c.has_value(), c.error().format());
      checkAlpha(**c);
      REQUIRE(counting.warnings.size() == 1);
      CHECK(counting.warnings[0].find("unknown field \"futurefield\"") !=
            std::string::npos);
      CHECK(fs::exists(f.verifiedIndex(**c, "alpha")));
      const std::string key = f.pinned(**c, "alpha");
      c->reset();
      auto keys = f.packKeys();
      CHECK(std::find(keys.begin(), keys.end(), key) == keys.end());
      // The second client reads the verified copy, not the registry.
      fs::remove(f.reg + "/index/alpha.json");
    }
  }

  SUBCASE("an invalid index gets the checking parser's precise errors") {
    // The fast path refuses it (fast_index.h); the error is the one
    // JsonDocument and parseRegistryIndex give, with line:column.
    nlohmann::json idx =
        nlohmann::json::parse(readText(f.reg + "/index/alpha.json"));
    idx["versions"][0]["dependencies"]["beta"] = "^^2.0";
    idx["versions"][0]["size"] = -3;
    const std::string text = idx.dump(2) + "\n";
    f.replaceIndex("alpha", text);
    auto c = f.open();
    auto v = c->versions("alpha");
    REQUIRE_FALSE(v.has_value());
    const std::string file = f.reg + "/index/alpha.json";
    auto doc = JsonDocument::parse(text, file);
    REQUIRE(doc.has_value());
    DiagnosticList expected;
    (void)parseRegistryIndex(*doc, ParseOptions{false}, expected);
    REQUIRE(expected.items().size() == 2);
    REQUIRE(v.error().diagnostics.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      CHECK(v.error().diagnostics[i].format() == expected.items()[i].format());
      CHECK(v.error().diagnostics[i].where.line > 1);
    }
    CHECK(v.error().format() ==
          makeError(ErrorCode::Parse, expected).error().format());
    const std::string key = f.pinned(*c, "alpha");
    c.reset();
    auto keys = f.packKeys();
    CHECK(std::find(keys.begin(), keys.end(), key) == keys.end());
  }

  SUBCASE("a damaged or stale snapshot.bin is ignored") {
    const std::string snapBin = f.stateDir() + "/snapshot.bin";
    const std::string oldSnap = readText(snapBin);
    writeText(snapBin, oldSnap.substr(0, oldSnap.size() - 5));
    {
      auto c = f.open();
      checkAlpha(*c);
      CHECK(c->packageNames() == std::vector<std::string>{"alpha", "beta"});
    }
    CHECK(readText(snapBin) == oldSnap); // rewritten
    // A new snapshot: the parsed form of the old one is not used for it.
    f.publish("gamma", "1.0.0", nlohmann::json::object());
    auto c = f.open();
    CHECK(c->packageNames() ==
          std::vector<std::string>{"alpha", "beta", "gamma"});
    CHECK(readText(snapBin) != oldSnap);
  }
}

//===----------------------------------------------------------------------===//
// Snapshots verified before (snapshot.verified)
//===----------------------------------------------------------------------===//

namespace {

/// Keeps the -vv details, to tell whether a snapshot's signature was
/// checked or its earlier check reused.
struct DetailLog : Reporter {
  std::vector<std::string> details;
  void detail(int, const std::string &message) override {
    details.push_back(message);
  }
  bool reused() const {
    for (const std::string &d : details)
      if (d.find("verified before") != std::string::npos)
        return true;
    return false;
  }
};

/// Opens the fixture's registry trusting `keys`, at time `now` (0: now).
Expected<std::unique_ptr<RegistryClient>>
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

} // namespace

TEST_CASE("verified snapshot record: round trip, and refused when damaged") {
  VerifiedSnapshot v;
  v.signatureSha256 = kOtherKey;
  v.publicKey = "RWQkey";
  v.schemaVersion = 1;
  v.version = 42;
  v.expires = "2030-01-01T00:00:00Z";
  v.expiresUnix = 1893456000;
  const std::string good = encodeVerifiedSnapshot(v, kKey);
  auto back = decodeVerifiedSnapshot(good, kKey);
  REQUIRE(back.has_value());
  CHECK(back->signatureSha256 == v.signatureSha256);
  CHECK(back->publicKey == v.publicKey);
  CHECK(back->schemaVersion == 1);
  CHECK(back->version == 42);
  CHECK(back->expires == v.expires);
  CHECK(back->expiresUnix == v.expiresUnix);
  CHECK_FALSE(decodeVerifiedSnapshot(good, kOtherKey).has_value());
  for (size_t cut = 0; cut < good.size(); cut += 7)
    CHECK_FALSE(decodeVerifiedSnapshot(good.substr(0, cut), kKey).has_value());
  for (size_t i = 0; i < good.size(); i += 5) {
    std::string flipped = good;
    flipped[i] ^= 0x20;
    CAPTURE(i);
    CHECK_FALSE(decodeVerifiedSnapshot(flipped, kKey).has_value());
  }
  // Another kind under the same key is not a record.
  RegistrySnapshot snap;
  CHECK_FALSE(decodeVerifiedSnapshot(encodeParsedSnapshot(snap, kKey), kKey)
                  .has_value());
}

TEST_CASE("verified snapshot record: the signature check is skipped only for "
          "the same bytes, signature and key, in a record of the user's own") {
  ClientFixture f;
  const std::string record = f.stateDir() + "/snapshot.verified";
  int64_t version = 0;
  {
    DetailLog log;
    auto c = openWith(f, log);
    REQUIRE_MESSAGE(c.has_value(), c.error().format());
    CHECK_FALSE(log.reused()); // checked, and recorded
    version = (*c)->snapshot().version;
  }
  REQUIRE(fs::exists(record));

  SUBCASE("the same snapshot again: reused, with the same answers") {
    DetailLog log;
    auto c = openWith(f, log);
    REQUIRE(c.has_value());
    CHECK(log.reused());
    CHECK((*c)->snapshot().version == version);
    CHECK((*c)->packageNames() == std::vector<std::string>{"alpha", "beta"});
    checkAlpha(**c);
  }

  SUBCASE("the record is what is reused: a forged one is believed only when "
          "it is the user's own and no one else may write it") {
    // Made as an attacker who could write the cache would: the right key
    // and hashes, another version. Proves the record is read; below, that
    // a record not safe to read is passed over.
    auto rec = decodeVerifiedSnapshot(
        readText(record), Sha256::hex(readText(f.reg + "/snapshot.json")));
    REQUIRE(rec.has_value());
    rec->version = version + 99;
    writeText(record,
              encodeVerifiedSnapshot(
                  *rec, Sha256::hex(readText(f.reg + "/snapshot.json"))));
    auto versionSeen = [&] {
      DetailLog log;
      auto c = openWith(f, log);
      REQUIRE(c.has_value());
      return std::make_pair((*c)->snapshot().version, log.reused());
    };
    REQUIRE(::chmod(record.c_str(), 0664) == 0);
    CHECK(versionSeen() == std::make_pair(version, false));
    // A check that passed rewrote it (owned, 0644): forge it again.
    writeText(record,
              encodeVerifiedSnapshot(
                  *rec, Sha256::hex(readText(f.reg + "/snapshot.json"))));
    REQUIRE(::chmod(record.c_str(), 0646) == 0);
    CHECK(versionSeen() == std::make_pair(version, false));
    if (::geteuid() == 0) {
      writeText(record,
                encodeVerifiedSnapshot(
                    *rec, Sha256::hex(readText(f.reg + "/snapshot.json"))));
      REQUIRE(::chmod(record.c_str(), 0644) == 0);
      REQUIRE(::chown(record.c_str(), 65534, 65534) == 0);
      CHECK(versionSeen() == std::make_pair(version, false));
    }
    writeText(record,
              encodeVerifiedSnapshot(
                  *rec, Sha256::hex(readText(f.reg + "/snapshot.json"))));
    REQUIRE(::chmod(record.c_str(), 0644) == 0);
    CHECK(versionSeen() == std::make_pair(version + 99, true));
  }

  SUBCASE("a new snapshot is checked in full") {
    f.publish("gamma", "1.0.0", nlohmann::json::object());
    DetailLog log;
    auto c = openWith(f, log);
    REQUIRE(c.has_value());
    CHECK_FALSE(log.reused());
    CHECK((*c)->snapshot().version > version);
    CHECK((*c)->packageNames() ==
          std::vector<std::string>{"alpha", "beta", "gamma"});
  }

  SUBCASE("a tampered snapshot is still refused") {
    std::string snap = readText(f.reg + "/snapshot.json");
    auto at = snap.find("\"version\"");
    REQUIRE(at != std::string::npos);
    snap.insert(at, " ");
    writeText(f.reg + "/snapshot.json", snap);
    DetailLog log;
    auto c = openWith(f, log);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message.find("fails its signature check") !=
          std::string::npos);
    CHECK_FALSE(log.reused());
  }

  SUBCASE("another signature file over the same bytes is checked in full") {
    // The same snapshot signed again (another trusted comment, so other
    // signature bytes): valid, but not the signature recorded.
    signing::SignOptions so;
    so.trustedComment = "timestamp:1\tre-signed";
    auto sig = signing::signBuffer(f.pair.secretKey,
                                   readText(f.reg + "/snapshot.json"), so);
    REQUIRE(sig.has_value());
    REQUIRE(signing::writeSignatureFile(*sig, f.reg + "/snapshot.json.minisig")
                .has_value());
    DetailLog log;
    auto c = openWith(f, log);
    REQUIRE_MESSAGE(c.has_value(), c.error().format());
    CHECK_FALSE(log.reused());
    // And a broken signature file is refused, record or not.
    std::string broken = readText(f.reg + "/snapshot.json.minisig");
    broken[broken.size() / 2] ^= 1;
    writeText(f.reg + "/snapshot.json.minisig", broken);
    DetailLog log2;
    CHECK_FALSE(openWith(f, log2).has_value());
    CHECK_FALSE(log2.reused());
  }

  SUBCASE("a changed set of trusted keys") {
    signing::KeyPair other = signing::generateKeyPair();
    // The signing key no longer trusted: refused, whatever was recorded.
    DetailLog log;
    auto c = openWith(f, log, {signing::publicKeyBase64(other.publicKey)});
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message.find("not a key you trust") != std::string::npos);
    // Still trusted beside another one: the record holds (same key).
    DetailLog log2;
    auto c2 = openWith(f, log2,
                       {signing::publicKeyBase64(other.publicKey),
                        signing::publicKeyBase64(f.pair.publicKey)});
    REQUIRE(c2.has_value());
    CHECK(log2.reused());
    // A record made under another key with the same id is not reused.
    auto rec = decodeVerifiedSnapshot(
        readText(record), Sha256::hex(readText(f.reg + "/snapshot.json")));
    REQUIRE(rec.has_value());
    signing::PublicKey sameId = other.publicKey;
    sameId.keyId = f.pair.publicKey.keyId;
    rec->publicKey = signing::publicKeyBase64(sameId);
    writeText(record,
              encodeVerifiedSnapshot(
                  *rec, Sha256::hex(readText(f.reg + "/snapshot.json"))));
    DetailLog log3;
    REQUIRE(openWith(f, log3).has_value());
    CHECK_FALSE(log3.reused());
  }

  SUBCASE("expiry and rollback are checked on every open") {
    DetailLog log;
    auto c = openWith(f, log, {}, int64_t(4102444800)); // 2100
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message.find("expired") != std::string::npos);
    CHECK(log.reused());
    writeText(f.stateDir() + "/trust.json",
              "{\"snapshot_version\": " + std::to_string(version + 1) + "}\n");
    DetailLog log2;
    auto c2 = openWith(f, log2);
    REQUIRE_FALSE(c2.has_value());
    CHECK(c2.error().message.find("rollback") != std::string::npos);
    CHECK(log2.reused());
  }

  SUBCASE("snapshot.bin gone: the map is parsed again from the verified "
          "bytes") {
    fs::remove(f.stateDir() + "/snapshot.bin");
    DetailLog log;
    auto c = openWith(f, log);
    REQUIRE(c.has_value());
    CHECK(log.reused());
    CHECK((*c)->packageNames() == std::vector<std::string>{"alpha", "beta"});
    checkAlpha(**c);
    CHECK(fs::exists(f.stateDir() + "/snapshot.bin"));
  }
}

//===----------------------------------------------------------------------===//
// Index files read ahead of the resolver (RegistryClient::prefetch)
//===----------------------------------------------------------------------===//

namespace {

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
std::unique_ptr<RegistryClient>
loggedClient(ClientFixture &f, std::shared_ptr<FetchLog> log, Reporter &to) {
  auto t = openTransport(f.spec(), f.options());
  REQUIRE(t.has_value());
  return f.open(std::make_unique<LoggingTransport>(std::move(*t), log), to);
}

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
