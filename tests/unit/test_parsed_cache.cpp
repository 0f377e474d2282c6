//===- test_parsed_cache.cpp - Cached parsed registry metadata ------------===//
//
// ireepkg/registry/parsed_cache.h: the binary forms of index files and
// snapshots round-trip exactly; a form that is truncated, corrupt, from
// another format version, of another kind or keyed by another hash is
// refused (nullopt), never trusted, and malformed payloads with a valid
// checksum never crash. Through the client: the cached forms are written,
// used (a warm client reads no JSON), and when damaged ignored and
// rewritten; one that another user owns or may write is not read.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/parsed_cache.h"
#include "ireepkg/registry/registry.h"

#include "ireepkg/manifest_schema/binary_form.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/hash.h"
#include "ireepkg/pkg/package.h"
#include "ireepkg/pkg/prefix.h"
#include "ireepkg/pkg/signature.h"
#include "temp_dir.h"

#include <doctest/doctest.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <filesystem>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace ireepkg;
using namespace ireepkg::registry;
namespace fs = std::filesystem;

namespace {

const std::string kKey(64, 'a');
const std::string kOtherKey(64, 'b');

/// An index with every kind of field: pre-releases, build metadata,
/// unions, pre-release constraints, requires.iree, platforms, yanking.
RegistryIndex sampleIndex() {
  const std::string sha(64, '0');
  const std::string text = R"({
    "schema_version": 1,
    "name": "alpha",
    "versions": [
      {"version": "1.0.0", "platforms": [], "archive":
         "archives/alpha/alpha-1.0.0.ireepkg", "sha256": ")" +
                           sha + R"(",
       "size": 10, "yanked": true},
      {"version": "1.1.0-rc.1+build.5", "summary": "a release candidate",
       "dependencies": {"beta": "^2.1 || >=4.0.0-beta.2, <5",
                        "gamma": "~0.3.1", "delta": "*"},
       "requires": {"iree": ">=3.1.0, <3.5.0"},
       "platforms": ["linux-x86_64", "linux-aarch64"],
       "archive": "archives/alpha/alpha-1.1.0-rc.1.ireepkg",
       "sha256": ")" + sha +
                           R"(", "size": 123456789012}
    ]})";
  auto doc = JsonDocument::parse(text, "alpha.json");
  REQUIRE_MESSAGE(doc.has_value(), doc.error().format());
  DiagnosticList diags;
  RegistryIndex idx = parseRegistryIndex(*doc, ParseOptions{}, diags);
  REQUIRE_FALSE(diags.hasErrors());
  REQUIRE(idx.versions.size() == 2);
  return idx;
}

void checkSameConstraint(const Constraint &a, const Constraint &b) {
  CHECK(a.text() == b.text());
  CHECK(a.set() == b.set());
  CHECK(a.str() == b.str());
  for (const char *v : {"0.3.1", "0.3.9", "0.4.0", "2.1.0", "2.9.9", "3.0.0",
                        "4.0.0-beta.1", "4.0.0-beta.2", "4.0.0-rc.1", "4.5.0",
                        "5.0.0", "3.1.0", "3.4.9", "3.5.0-rc.1"})
    CHECK(a.matches(*Version::parse(v)) == b.matches(*Version::parse(v)));
}

void checkSameIndex(const RegistryIndex &a, const RegistryIndex &b) {
  CHECK(a.schemaVersion == b.schemaVersion);
  CHECK(a.name == b.name);
  REQUIRE(a.versions.size() == b.versions.size());
  for (size_t i = 0; i < a.versions.size(); ++i) {
    const IndexEntry &x = a.versions[i], &y = b.versions[i];
    CHECK(x.version.identical(y.version));
    CHECK(x.summary == y.summary);
    REQUIRE(x.dependencies.size() == y.dependencies.size());
    for (auto it = x.dependencies.begin(), jt = y.dependencies.begin();
         it != x.dependencies.end(); ++it, ++jt) {
      CHECK(it->first == jt->first);
      checkSameConstraint(it->second, jt->second);
    }
    REQUIRE(x.requiresIree.has_value() == y.requiresIree.has_value());
    if (x.requiresIree)
      checkSameConstraint(*x.requiresIree, *y.requiresIree);
    CHECK(x.platforms == y.platforms);
    CHECK(x.archive == y.archive);
    CHECK(x.sha256 == y.sha256);
    CHECK(x.size == y.size);
    CHECK(x.yanked == y.yanked);
  }
}

RegistrySnapshot sampleSnapshot() {
  RegistrySnapshot s;
  s.version = 42;
  s.expires = "2031-01-31T00:00:00Z";
  s.expiresUnix = 1927584000;
  s.index = {{"alpha", "sha256:" + std::string(64, '1')},
             {"beta", "sha256:" + std::string(64, '2')}};
  return s;
}

/// A cache file around `payload` with a valid header and checksum, as
/// parsed_cache.h lays it out.
std::string frame(uint32_t kind, const std::string &payload) {
  std::string out = "IREEPKGP";
  ByteWriter w(out);
  w.u32(kParsedCacheFormat);
  w.u32(kind);
  out += kKey;
  w.u64(payload.size());
  XXH128_hash_t h = XXH3_128bits(payload.data(), payload.size());
  char sum[33];
  std::snprintf(sum, sizeof sum, "%016llx%016llx",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  out += std::string(sum, 32) + payload;
  return out;
}
constexpr size_t kHeaderSize = 8 + 4 + 4 + 64 + 8 + 32;

using test::readText;
using test::writeText;

} // namespace

TEST_CASE("parsed cache: an index and a snapshot round-trip exactly") {
  RegistryIndex idx = sampleIndex();
  std::string file = encodeParsedIndex(idx, kKey);
  auto back = decodeParsedIndex(file, kKey);
  REQUIRE(back.has_value());
  checkSameIndex(idx, *back);

  RegistrySnapshot s = sampleSnapshot();
  auto snap = decodeParsedSnapshot(encodeParsedSnapshot(s, kKey), kKey);
  REQUIRE(snap.has_value());
  CHECK(snap->schemaVersion == s.schemaVersion);
  CHECK(snap->version == s.version);
  CHECK(snap->expires == s.expires);
  CHECK(snap->expiresUnix == s.expiresUnix);
  CHECK(snap->index == s.index);
  // The same packages as views, for lookups without the map.
  std::string snapFile = encodeParsedSnapshot(s, kKey);
  auto views = parsedSnapshotPackages(snapFile);
  REQUIRE(views.size() == s.index.size());
  size_t at = 0;
  for (const auto &[name, hash] : s.index) {
    CHECK(views[at].first == name);
    CHECK(views[at].second == hash);
    ++at;
  }
  for (size_t n = 0; n < snapFile.size(); n += 3)
    CHECK(parsedSnapshotPackages(snapFile.substr(0, n)).empty());

  RegistryIndex empty;
  empty.name = "nothing";
  auto e = decodeParsedIndex(encodeParsedIndex(empty, kKey), kKey);
  REQUIRE(e.has_value());
  CHECK(e->name == "nothing");
  CHECK(e->versions.empty());
}

TEST_CASE("parsed cache: a pack of index frames is split into its frames, "
          "past damage") {
  const std::string a = encodeParsedIndex(sampleIndex(), kKey);
  RegistryIndex other;
  other.name = "other";
  const std::string b = encodeParsedIndex(other, kOtherKey);
  auto keys = [](const std::string &pack) {
    std::vector<std::string> out;
    for (const PackedIndex &p : splitParsedIndexPack(pack)) {
      out.emplace_back(p.key);
      // Each frame is what decodeParsedIndex takes (or a damaged one).
      CHECK(p.file.starts_with("IREEPKGP"));
    }
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(keys("").empty());
  CHECK(keys(a + b) == V{kKey, kOtherKey});
  auto frames = splitParsedIndexPack(a + b);
  REQUIRE(frames.size() == 2);
  CHECK(decodeParsedIndex(frames[1].file, kOtherKey)->name == "other");
  // Garbage before, between and after frames is skipped.
  CHECK(keys("junk" + a + "junk" + b + "junk") == V{kKey, kOtherKey});
  // A torn append, then another: the second is found, whole (a torn
  // frame whose size reaches into the next one is returned too, for
  // decoding to refuse).
  for (const std::string &torn :
       {a + b.substr(0, b.size() / 2), a.substr(0, kHeaderSize + 3),
        a.substr(0, a.size() - 1)}) {
    auto f = splitParsedIndexPack(torn + b);
    REQUIRE_FALSE(f.empty());
    CHECK(f.back().key == kOtherKey);
    CHECK(decodeParsedIndex(f.back().file, kOtherKey).has_value());
  }
  // Of another format version or kind: skipped.
  std::string old = a;
  old[8] = static_cast<char>(kParsedCacheFormat + 1);
  CHECK(keys(old + b) == V{kOtherKey});
  CHECK(keys(encodeParsedSnapshot(sampleSnapshot(), kKey) + b) == V{kOtherKey});
  // A damaged payload is still a frame (decoding refuses it).
  std::string flipped = a;
  flipped.back() ^= 1;
  frames = splitParsedIndexPack(flipped + b);
  REQUIRE(frames.size() == 2);
  CHECK_FALSE(decodeParsedIndex(frames[0].file, kKey).has_value());
}

TEST_CASE("parsed cache: another key, kind or format version is refused") {
  std::string file = encodeParsedIndex(sampleIndex(), kKey);
  CHECK_FALSE(decodeParsedIndex(file, kOtherKey).has_value());
  CHECK_FALSE(decodeParsedIndex(file, "").has_value());
  CHECK_FALSE(decodeParsedSnapshot(file, kKey).has_value());
  std::string snap = encodeParsedSnapshot(sampleSnapshot(), kKey);
  CHECK_FALSE(decodeParsedIndex(snap, kKey).has_value());

  std::string other = file;
  other[8] = static_cast<char>(kParsedCacheFormat + 1); // format version
  CHECK_FALSE(decodeParsedIndex(other, kKey).has_value());
  other = file;
  other[0] = 'X'; // magic
  CHECK_FALSE(decodeParsedIndex(other, kKey).has_value());
  CHECK_FALSE(decodeParsedIndex("", kKey).has_value());
  CHECK_FALSE(decodeParsedIndex("{\"name\": \"alpha\"}", kKey).has_value());
}

TEST_CASE("parsed cache: every truncation, extension and changed byte is "
          "detected") {
  for (bool snapshot : {false, true}) {
    CAPTURE(snapshot);
    std::string file = snapshot ? encodeParsedSnapshot(sampleSnapshot(), kKey)
                                : encodeParsedIndex(sampleIndex(), kKey);
    auto decodes = [&](const std::string &f) {
      return snapshot ? decodeParsedSnapshot(f, kKey).has_value()
                      : decodeParsedIndex(f, kKey).has_value();
    };
    REQUIRE(decodes(file));
    for (size_t n = 0; n < file.size(); ++n) {
      CAPTURE(n);
      CHECK_FALSE(decodes(file.substr(0, n)));
    }
    CHECK_FALSE(decodes(file + '\0'));
    CHECK_FALSE(decodes(file + file));
    for (size_t i = 0; i < file.size(); ++i) {
      CAPTURE(i);
      std::string f = file;
      f[i] = static_cast<char>(f[i] ^ 0x20);
      CHECK_FALSE(decodes(f));
    }
  }
}

TEST_CASE("parsed cache: a lockfile round-trips, and damage is detected") {
  Lockfile lock;
  lock.inputHash = "sha256:" + std::string(64, 'c');
  lock.platforms = {*Platform::parse("linux-x86_64")};
  lock.ireeVersion = *Version::parse("3.13.0-rc.1");
  LockedPackage a;
  a.name = "alpha";
  a.version = *Version::parse("1.2.3+build.7");
  a.source = "https://example.org/reg";
  a.archive = "archives/alpha/alpha-1.2.3.ireepkg";
  a.sha256 = std::string(64, 'd');
  a.size = 4242;
  a.signedBy = "0123456789ABCDEF";
  a.dependencies = {{"beta", *Version::parse("2.0.0")}};
  a.platforms = {*Platform::parse("linux-aarch64")};
  LockedPackage b;
  b.name = "beta";
  b.version = *Version::parse("2.0.0");
  b.sourceKind = LockedPackage::SourceKind::Path;
  b.source = "../beta";
  lock.packages = {a, b};
  lock.activation = {"beta", "alpha"};

  std::string file = encodeParsedLock(lock, kKey);
  auto back = decodeParsedLock(file, kKey);
  REQUIRE(back.has_value());
  CHECK(back->lockVersion == lock.lockVersion);
  CHECK(back->inputHash == lock.inputHash);
  CHECK(back->platforms == lock.platforms);
  REQUIRE(back->ireeVersion.has_value());
  CHECK(back->ireeVersion->identical(*lock.ireeVersion));
  REQUIRE(back->packages.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const LockedPackage &x = lock.packages[i], &y = back->packages[i];
    CHECK(x.name == y.name);
    CHECK(x.version.identical(y.version));
    CHECK(x.sourceKind == y.sourceKind);
    CHECK(x.source == y.source);
    CHECK(x.archive == y.archive);
    CHECK(x.sha256 == y.sha256);
    CHECK(x.size == y.size);
    CHECK(x.signedBy == y.signedBy);
    REQUIRE(x.dependencies.size() == y.dependencies.size());
    for (size_t k = 0; k < x.dependencies.size(); ++k) {
      CHECK(x.dependencies[k].first == y.dependencies[k].first);
      CHECK(x.dependencies[k].second.identical(y.dependencies[k].second));
    }
    CHECK(x.platforms == y.platforms);
  }
  CHECK(back->activation == lock.activation);

  CHECK_FALSE(decodeParsedLock(file, kOtherKey).has_value());
  CHECK_FALSE(decodeParsedIndex(file, kKey).has_value());
  for (size_t n = 0; n < file.size(); n += 7)
    CHECK_FALSE(decodeParsedLock(file.substr(0, n), kKey).has_value());
  for (size_t i = 0; i < file.size(); i += 3) {
    std::string f = file;
    f[i] = static_cast<char>(f[i] ^ 0x01);
    CHECK_FALSE(decodeParsedLock(f, kKey).has_value());
  }
}

TEST_CASE("parsed cache: malformed payloads with a valid checksum are "
          "refused or decoded, never a crash") {
  // What a writer of another layout (or a deliberate forger with write
  // access to the cache) could leave: the checksum passes, the payload is
  // wrong. Decoding must stay in bounds and allocate within reason.
  std::string file = encodeParsedIndex(sampleIndex(), kKey);
  std::string payload = file.substr(kHeaderSize);
  CHECK(decodeParsedIndex(frame(1, payload), kKey).has_value());
  CHECK_FALSE(decodeParsedIndex(frame(1, payload + "x"), kKey).has_value());
  CHECK_FALSE(
      decodeParsedIndex(frame(1, payload.substr(0, payload.size() - 1)), kKey)
          .has_value());

  // A count of four billion versions in a few bytes.
  std::string huge;
  ByteWriter w(huge);
  w.i64(1);
  w.str("alpha");
  w.u32(0xffffffffu);
  CHECK_FALSE(decodeParsedIndex(frame(1, huge), kKey).has_value());

  std::mt19937 rng(1234);
  size_t decoded = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string p = payload;
    int changes = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < changes; ++k) {
      size_t at = rng() % p.size();
      switch (rng() % 3) {
      case 0:
        p[at] = static_cast<char>(rng());
        break;
      case 1:
        p[at] = static_cast<char>(0xff);
        break;
      default:
        p.erase(at, 1 + rng() % 8);
        break;
      }
      if (p.empty())
        break;
    }
    if (decodeParsedIndex(frame(1, p), kKey))
      ++decoded;
    // The resolver's view of the same bytes: refused or decoded, and each
    // entry it found decodes in full.
    std::string f = frame(1, p);
    if (auto view = decodeParsedCandidates(f, kKey, "alpha"))
      for (uint32_t at : view->offsets)
        CHECK(decodeParsedIndexEntry(f, at, view->constraints).has_value());
  }
  // Most mutations break the layout; whatever decodes is well formed.
  CHECK(decoded < 3000);

  // Constraint intervals out of order are refused, and so are a
  // dependency on a constraint number the table does not have and
  // dependencies out of name order.
  auto indexWith = [](bool reversed, uint32_t ref, bool outOfOrder) {
    std::string bad;
    ByteWriter b(bad);
    b.i64(1);
    b.str("alpha");
    b.u32(1); // the constraint table
    b.str("^2 || ^1");
    b.u32(2);
    const char *los[2] = {"1.0.0", "2.0.0"};
    if (reversed)
      std::swap(los[0], los[1]);
    for (const char *lo : los) {
      b.u8(3);
      encodeVersion(*Version::parse(lo), b);
      Version hi = *Version::parse(lo);
      ++hi.major;
      hi.prerelease = {"0"};
      encodeVersion(hi, b);
    }
    b.u32(0);
    b.u32(1); // one version
    encodeVersion(*Version::parse("1.0.0"), b);
    b.str("");
    b.u32(2);
    b.str(outOfOrder ? "gamma" : "beta");
    b.u32(ref);
    b.str(outOfOrder ? "beta" : "gamma");
    b.u32(0);
    b.u8(0);
    b.u32(0);
    b.str("archives/alpha/alpha-1.0.0.ireepkg");
    b.str(std::string(64, '0'));
    b.u64(1);
    b.u8(0);
    return frame(1, bad);
  };
  CHECK(decodeParsedIndex(indexWith(false, 0, false), kKey).has_value());
  CHECK(decodeParsedCandidates(indexWith(false, 0, false), kKey, "alpha")
            .has_value());
  for (const std::string &f :
       {indexWith(true, 0, false), indexWith(false, 1, false),
        indexWith(false, 0, true)}) {
    CHECK_FALSE(decodeParsedIndex(f, kKey).has_value());
    CHECK_FALSE(decodeParsedCandidates(f, kKey, "alpha").has_value());
  }
}

TEST_CASE("parsed cache: the resolver's view of an index agrees with the "
          "full decoding, and shares repeated constraints") {
  RegistryIndex idx = sampleIndex();
  // A third version with the same constraints as the second.
  idx.versions.push_back(idx.versions[1]);
  idx.versions.back().version = *Version::parse("1.2.0");
  std::string file = encodeParsedIndex(idx, kKey);
  auto all = decodeParsedIndex(file, kKey);
  REQUIRE(all.has_value());
  auto view = decodeParsedCandidates(file, kKey, "alpha");
  REQUIRE(view.has_value());
  CHECK_FALSE(decodeParsedCandidates(file, kKey, "beta").has_value());
  CHECK_FALSE(decodeParsedCandidates(file, kOtherKey, "alpha").has_value());
  REQUIRE(view->versions.size() == 3);
  REQUIRE(view->offsets.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const IndexEntry &e = all->versions[i];
    const CandidateVersion &cv = view->versions[i];
    CHECK(cv.version.identical(e.version));
    CHECK(cv.yanked == e.yanked);
    CHECK(cv.platforms == e.platforms);
    REQUIRE(cv.dependencies.size() == e.dependencies.size());
    size_t k = 0;
    for (const auto &[name, c] : e.dependencies) {
      CHECK(cv.dependencies[k].name == name);
      checkSameConstraint(*cv.dependencies[k].constraint, c);
      REQUIRE(cv.dependency(name) == &cv.dependencies[k]);
      ++k;
    }
    CHECK(cv.dependency("nothing") == nullptr);
    REQUIRE((cv.requiresIree != nullptr) == e.requiresIree.has_value());
    if (cv.requiresIree)
      checkSameConstraint(*cv.requiresIree, *e.requiresIree);
    // One entry on its own, from where the view says it starts.
    auto one =
        decodeParsedIndexEntry(file, view->offsets[i], view->constraints);
    REQUIRE(one.has_value());
    RegistryIndex a, b;
    a.versions = {e};
    b.versions = {*one};
    checkSameIndex(a, b);
  }
  // Versions with the same constraint hold the same object.
  const CandidateVersion &v1 = view->versions[1], &v2 = view->versions[2];
  for (size_t k = 0; k < v1.dependencies.size(); ++k)
    CHECK(v1.dependencies[k].constraint == v2.dependencies[k].constraint);
  CHECK(v1.requiresIree == v2.requiresIree);
  // Each distinct constraint is stored once: 4 in all.
  CHECK(view->constraints.size() == 4);

  // Every truncation and changed byte is refused by the view too.
  for (size_t n = 0; n < file.size(); n += 5)
    CHECK_FALSE(
        decodeParsedCandidates(file.substr(0, n), kKey, "alpha").has_value());
  for (size_t i = 0; i < file.size(); i += 3) {
    std::string f = file;
    f[i] = static_cast<char>(f[i] ^ 0x20);
    CHECK_FALSE(decodeParsedCandidates(f, kKey, "alpha").has_value());
  }
  // An offset that is not an entry's start never reads out of bounds.
  for (uint32_t at : {uint32_t(0), uint32_t(file.size()),
                      uint32_t(file.size() + 100), view->offsets[0] + 1})
    (void)decodeParsedIndexEntry(file, at, view->constraints);
}

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

  std::unique_ptr<RegistryClient> open() {
    RegistrySpec s;
    s.url = reg;
    s.publicKeys = {signing::publicKeyBase64(pair.publicKey)};
    ClientOptions o;
    o.cacheRoot = cache;
    auto c = RegistryClient::open(s, o, reporter);
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
