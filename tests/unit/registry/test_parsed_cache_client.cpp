//===- test_parsed_cache_client.cpp - Parsed forms through the client ----===//
//
// The registry client and its cache of parsed metadata: index.pack and
// snapshot.bin are written, used (a warm client reads no JSON), and when
// damaged ignored and rewritten; one that another user owns or may write
// is not read; a snapshot verified before is not verified again, and
// only when that is safe (snapshot.verified), nor, in a local registry, read
// again while its files keep their stamps. The forms themselves:
// test_parsed_cache.cpp; index files read ahead: test_client_prefetch.cpp.
//
//===----------------------------------------------------------------------===//
#include "client_fixture.h"
#include "ireepkg/manifest_schema/binary_form.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/client/parsed_cache.h"
#include "ireepkg/registry/client/client.h"
#include "temp_dir.h"
#include <condition_variable>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
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
using namespace test::client;

} // namespace

//===----------------------------------------------------------------------===//
// Through the client
//===----------------------------------------------------------------------===//

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

TEST_CASE("verified snapshot record: a local registry's snapshot is not read "
          "again while its files keep the stamps they were verified with") {
  // One sequence rather than subcases: the files must settle first (2 s).
  ClientFixture f;
  const std::string record = f.stateDir() + "/snapshot.verified";
  const std::string snapPath = f.reg + "/snapshot.json";
  auto recorded = [&] {
    auto rec = decodeVerifiedSnapshot(readText(record),
                                      Sha256::hex(readText(snapPath)));
    REQUIRE(rec.has_value());
    return *rec;
  };
  auto fetchedSnapshot = [](FetchLog &log) {
    return !log.fetchers("snapshot.json").empty() ||
           !log.fetchers("snapshot.json.minisig").empty();
  };
  auto saidByStamps = [](const DetailReporter &to) {
    for (const std::string &d : to.details)
      if (d.find("unchanged since it and its signature") != std::string::npos)
        return true;
    return false;
  };
  {
    // Just published: its times are not settled, so no stamps are kept
    // (a change within the clock's tick could keep them).
    DetailLog log;
    REQUIRE(openWith(f, log).has_value());
    CHECK(recorded().snapshotStamp.empty());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  {
    DetailLog log;
    REQUIRE(openWith(f, log).has_value());
    CHECK(log.said("verified before")); // hashed, and now stamped
    CHECK_FALSE(log.byStamps());
    CHECK_FALSE(recorded().snapshotStamp.empty());
    CHECK_FALSE(recorded().signatureStamp.empty());
  }

  // Unchanged: taken from the record without reading either file.
  {
    auto log = std::make_shared<FetchLog>();
    DetailReporter to;
    auto c = loggedClient(f, log, to);
    CHECK(saidByStamps(to));
    CHECK(c->packageNames() == std::vector<std::string>{"alpha", "beta"});
    checkAlpha(*c);
    CHECK(c->snapshotSha256() == Sha256::hex(readText(snapPath)));
    CHECK_FALSE(fetchedSnapshot(*log)); // snapshot.bin had the map
  }

  // The signing key no longer trusted: refused, stamps or not.
  {
    signing::KeyPair other = signing::generateKeyPair();
    DetailLog log;
    auto c = openWith(f, log, {signing::publicKeyBase64(other.publicKey)});
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message.find("not a key you trust") != std::string::npos);
  }

  // snapshot.bin gone: snapshot.json is read when the map is needed, and
  // used because it still has the verified hash.
  {
    fs::remove(f.stateDir() + "/snapshot.bin");
    auto log = std::make_shared<FetchLog>();
    DetailReporter to;
    auto c = loggedClient(f, log, to);
    CHECK(saidByStamps(to));
    CHECK_FALSE(fetchedSnapshot(*log));
    CHECK(c->packageNames() == std::vector<std::string>{"alpha", "beta"});
    CHECK(log->fetchers("snapshot.json").size() == 1);
    CHECK(to.warnings.empty());
    checkAlpha(*c);
  }

  // Other bytes of the same size, written in place with the old mtime put
  // back: the ctime tells. A client that took the snapshot by its stamps
  // and then needs its bytes (snapshot.bin gone again) believes nothing of
  // the new ones, and a new client checks them in full, and refuses them.
  const std::string original = readText(snapPath);
  {
    fs::remove(f.stateDir() + "/snapshot.bin");
    auto log = std::make_shared<FetchLog>();
    DetailReporter to;
    auto c = loggedClient(f, log, to);
    CHECK(saidByStamps(to));

    std::string snap = original;
    auto at = snap.find("\"version\": ");
    REQUIRE(at != std::string::npos);
    at += 11;
    snap[at] = snap[at] == '9' ? '8' : static_cast<char>(snap[at] + 1);
    struct stat before;
    REQUIRE(::stat(snapPath.c_str(), &before) == 0);
    {
      std::ofstream out(snapPath,
                        std::ios::in | std::ios::out | std::ios::binary);
      out.write(snap.data(), static_cast<std::streamsize>(snap.size()));
    }
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(::utimensat(AT_FDCWD, snapPath.c_str(), times, 0) == 0);
    struct stat after;
    REQUIRE(::stat(snapPath.c_str(), &after) == 0);
    REQUIRE(after.st_ino == before.st_ino);
    REQUIRE(after.st_size == before.st_size);

    CHECK(c->packageNames().empty());
    REQUIRE(to.warnings.size() == 1);
    CHECK(to.warnings[0].find("changed while it was in use") !=
          std::string::npos);

    DetailLog log2;
    auto c2 = openWith(f, log2);
    REQUIRE_FALSE(c2.has_value());
    CHECK(c2.error().message.find("fails its signature check") !=
          std::string::npos);
    CHECK_FALSE(log2.reused());
  }

  // A new snapshot renamed over it: read and checked in full.
  writeText(snapPath, original);
  f.publish("gamma", "1.0.0", nlohmann::json::object());
  {
    auto log = std::make_shared<FetchLog>();
    DetailReporter to;
    auto c = loggedClient(f, log, to);
    CHECK_FALSE(saidByStamps(to));
    CHECK(fetchedSnapshot(*log));
    CHECK(c->packageNames() ==
          std::vector<std::string>{"alpha", "beta", "gamma"});
  }
}
