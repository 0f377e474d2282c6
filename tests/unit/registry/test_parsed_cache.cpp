//===- test_parsed_cache.cpp - Cached parsed registry metadata ------------===//
//
// ireepkg/registry/client/parsed_cache.h: the binary forms of index files and
// snapshots round-trip exactly; a form that is truncated, corrupt, from
// another format version, of another kind or keyed by another hash is
// refused (nullopt), never trusted, and malformed payloads with a valid
// checksum never crash; the resolver's view of an index agrees with the
// full decoding. Through the client: test_parsed_cache_client.cpp.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/client/parsed_cache.h"
#include "ireepkg/registry/client/client.h"

#include "ireepkg/manifest_schema/binary_form.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/package/signature.h"
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
  // The frames are views into the pack: it must outlive them.
  const std::string ab = a + b;
  auto frames = splitParsedIndexPack(ab);
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
    const std::string pack = torn + b;
    auto f = splitParsedIndexPack(pack);
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
  const std::string flippedPack = flipped + b;
  frames = splitParsedIndexPack(flippedPack);
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
