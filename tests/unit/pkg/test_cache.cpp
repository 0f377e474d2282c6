//===- test_cache.cpp - The package cache and its maintenance -------------===//
//
// PackageCache: where blobs go, archives recognised by identity, files
// materialized from blobs, a changed blob refused and replaced (the cache
// does not trust itself, docs/reliability.md); install through the cache;
// cacheUsage, pruneCache, cleanCache, cleanCachedPackages and abandoned
// partial files.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/pkg/cache/cache_maintenance.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/install.h"

#include <doctest/doctest.h>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

/// An archive with a plain and an executable file, extracted and verified
/// (as install does before it stores a package in the cache).
struct Extracted {
  std::string archive, dir, archiveSha, recordSha;
  Record record;
};

Extracted extracted(const TempDir &tmp, const std::string &name,
                    const std::string &tag = "") {
  Extracted e;
  nlohmann::ordered_json m = {
      {"schema_version", 1}, {"name", name}, {"version", "1.0.0"}};
  e.archive =
      writePackageArchive(tmp / (name + tag + ".ireepkg"), m,
                          {{"bin/run.sh", "#!/bin/sh\necho " + name + "\n"},
                           {"data/a.txt", name + " data\n"}},
                          {"bin/run.sh"});
  e.dir = tmp / ("x-" + name + tag);
  auto r = extractArchive(e.archive, e.dir);
  REQUIRE_MESSAGE(r.has_value(), whyNot(r));
  e.record = r->head.record;
  e.archiveSha = r->archiveSha256;
  e.recordSha = Sha256::hex(serializeRecord(e.record));
  // Install makes a package read-only before it adds it to the cache.
  Status s = fsutil::makeReadOnlyTree(e.dir);
  REQUIRE_MESSAGE(s.has_value(), whyNot(s));
  return e;
}

std::string blobOf(const std::string &root, const RecordEntry &e) {
  return root + "/files/" + e.sha256.substr(0, 2) + "/" + e.sha256 +
         (e.executable ? ".x" : "");
}

/// The verification markers next to a blob.
std::vector<std::string> markersOf(const std::string &blob) {
  std::vector<std::string> out;
  std::string dir = fs::path(blob).parent_path().string();
  std::string base = fs::path(blob).filename().string() + ".ok-";
  for (const std::string &n : listDir(dir))
    if (n.starts_with(base))
      out.push_back(n);
  return out;
}

/// Rewrites a read-only blob with one byte changed, read-only again.
void flipByte(const std::string &path) {
  std::string bytes = readText(path);
  REQUIRE_FALSE(bytes.empty());
  bytes[0] ^= 0x20;
  ::chmod(path.c_str(), 0644);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  ::chmod(path.c_str(), 0444);
}

uint64_t linkCount(const std::string &path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_nlink;
}

std::string partsOf(const CacheRemoval &r) {
  std::string out;
  for (const auto &p : r.parts)
    out += p.kind + ":" + std::to_string(p.files) + ";";
  return out;
}

} // namespace

TEST_CASE("cache: store puts blobs by content; materialize places them") {
  TempDir tmp("cache");
  PackageCache cache(tmp / "cache");
  CHECK(cache.root() == tmp / "cache");
  Extracted e = extracted(tmp, "alpha");

  // Nothing is known before the package is stored.
  CHECK_FALSE(cache.lookup(e.archive, e.recordSha).has_value());
  Status s = cache.store(e.archive, e.archiveSha, e.recordSha, e.record, e.dir);
  REQUIRE_MESSAGE(s.has_value(), whyNot(s));

  for (const RecordEntry &entry : e.record.files) {
    CAPTURE(entry.path);
    std::string blob = blobOf(cache.root(), entry);
    REQUIRE(exists(blob));
    CHECK(readText(blob) == readText(e.dir + "/" + entry.path));
    struct stat st;
    REQUIRE(::stat(blob.c_str(), &st) == 0);
    CHECK((st.st_mode & 0222) == 0);
    CHECK(((st.st_mode & 0111) != 0) == entry.executable);
    // Stored from bytes extraction verified: marked as hashed already.
    CHECK(markersOf(blob).size() == 1);
  }
  CHECK(blobOf(cache.root(), *e.record.find("bin/run.sh")).ends_with(".x"));
  std::vector<std::string> archives = listDir(cache.root() + "/archives");
  REQUIRE(archives.size() == 1);
  auto j = nlohmann::json::parse(
      readText(cache.root() + "/archives/" + archives[0]));
  CHECK(j["archive_sha256"] == e.archiveSha);
  CHECK(j["record_sha256"] == e.recordSha);

  // The same archive file is recognised; anything else is not.
  auto hit = cache.lookup(e.archive, e.recordSha);
  REQUIRE(hit.has_value());
  CHECK(hit->archiveSha256 == e.archiveSha);
  CHECK_FALSE(cache.lookup(e.archive, std::string(64, '0')).has_value());
  fs::copy_file(e.archive, tmp / "copy.ireepkg");
  CHECK_FALSE(cache.lookup(tmp / "copy.ireepkg", e.recordSha).has_value());
  struct utimbuf times {
    1000000000, 1000000000
  };
  REQUIRE(::utime(e.archive.c_str(), &times) == 0); // touched: not the same
  CHECK_FALSE(cache.lookup(e.archive, e.recordSha).has_value());

  // materialize: the files, read-only, executable where RECORD says.
  std::string dest = tmp / "placed";
  std::map<std::string, uint64_t> linksBefore;
  for (const RecordEntry &entry : e.record.files)
    linksBefore[entry.path] = linkCount(blobOf(cache.root(), entry));
  s = cache.materialize(e.record, dest);
  REQUIRE_MESSAGE(s.has_value(), whyNot(s));
  std::string how = PackageCache::lastPlacement();
  CHECK((how == "reflink" || how == "hardlink" || how == "copy"));
  for (const RecordEntry &entry : e.record.files) {
    CAPTURE(entry.path);
    CHECK(readText(dest + "/" + entry.path) ==
          readText(e.dir + "/" + entry.path));
    struct stat st;
    REQUIRE(::stat((dest + "/" + entry.path).c_str(), &st) == 0);
    CHECK((st.st_mode & 0222) == 0);
    CHECK(((st.st_mode & 0111) != 0) == entry.executable);
    if (how == "hardlink")
      CHECK(linkCount(blobOf(cache.root(), entry)) ==
            linksBefore[entry.path] + 1);
  }
  CHECK(readText(dest + "/" + kRecordName) == serializeRecord(e.record));
  // An existing destination is not overwritten.
  CHECK_FALSE(cache.materialize(e.record, dest).has_value());
}

TEST_CASE("cache: a changed or missing blob is refused, then replaced") {
  TempDir tmp("cache");
  PackageCache cache(tmp / "cache");
  Extracted e = extracted(tmp, "alpha");
  REQUIRE(cache.store(e.archive, e.archiveSha, e.recordSha, e.record, e.dir)
              .has_value());
  const RecordEntry &entry = *e.record.find("data/a.txt");
  std::string blob = blobOf(cache.root(), entry);
  std::string dest = tmp / "placed";

  SUBCASE("one byte flipped") {
    flipByte(blob);
    // The marker names the blob as it was; the blob is hashed again.
    Status s = cache.materialize(e.record, dest);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == ErrorCode::Integrity);
    CHECK(s.error().message == "cached file is missing or was changed");
    CHECK(s.error().where.file == blob);
    CHECK(s.error().where.member == "data/a.txt");
  }
  SUBCASE("made writable") {
    ::chmod(blob.c_str(), 0644);
    Status s = cache.materialize(e.record, dest);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().message == "cached file is missing or was changed");
  }
  SUBCASE("removed") {
    fs::remove(blob);
    Status s = cache.materialize(e.record, dest);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().where.member == "data/a.txt");
  }
  CHECK_FALSE(exists(dest)); // nothing half-placed is left

  // Storing the package again (from a fresh, verified extraction) replaces
  // the blob, and the cache works again.
  Extracted again = extracted(tmp, "alpha", "-again");
  REQUIRE(cache
              .store(again.archive, again.archiveSha, again.recordSha,
                     again.record, again.dir)
              .has_value());
  CHECK(readText(blob) == "alpha data\n");
  CHECK(*sha256File(blob) == entry.sha256);
  Status s = cache.materialize(e.record, dest);
  REQUIRE_MESSAGE(s.has_value(), whyNot(s));
  CHECK(readText(dest + "/data/a.txt") == "alpha data\n");
}

TEST_CASE("cache: install links from the cache and never links a bad blob") {
  TempDir tmp("cache");
  ScopedEnv cacheDir("IREEPKG_CACHE_DIR", tmp / "cache");
  ScopedEnv mlir("IREEPKG_MLIR_CHECK", "off");
  writeHookPackageDir(tmp / "src", "cached", "1.0.0");
  std::string archive = packOk(tmp / "src", tmp.path());
  InstallOptions options; // useCache: the default
  RecordingReporter reporter;
  auto install = [&](const std::string &prefix) {
    auto r = installArchives(prefix, {archive}, options, reporter);
    REQUIRE_MESSAGE(r.has_value(), whyNot(r));
    auto v = verifyPrefix(prefix, {}, reporter);
    REQUIRE(v.has_value());
    CHECK(v->problems.empty());
  };

  install(tmp / "p1");
  CHECK(reporter.warnings.empty());
  auto head = readArchiveHead(archive);
  REQUIRE(head.has_value());
  const RecordEntry &notes = *head->record.find("data/notes.txt");
  std::string blob = blobOf(tmp / "cache", notes);
  REQUIRE(exists(blob));
  CHECK(listDir(tmp / "cache/archives").size() == 1);

  // A second prefix is filled from the cache.
  install(tmp / "p2");
  CHECK(std::string(PackageCache::lastPlacement()) != "");
  CHECK(readText(tmp / "p2/packages/cached/1.0.0/data/notes.txt") ==
        "cached 1.0.0 notes\n");

  // The blob changed behind the cache's back (after the prefixes that share
  // its inode have let go of it): a third prefix gets the archive's bytes,
  // and the blob is put right.
  RemoveOptions ro;
  REQUIRE(removePackages(tmp / "p1", {"cached"}, ro, reporter).has_value());
  REQUIRE(removePackages(tmp / "p2", {"cached"}, ro, reporter).has_value());
  flipByte(blob);
  install(tmp / "p3");
  CHECK(readText(tmp / "p3/packages/cached/1.0.0/data/notes.txt") ==
        "cached 1.0.0 notes\n");
  CHECK(*sha256File(blob) == notes.sha256);
}

TEST_CASE("cache maintenance: usage, prune, clean") {
  TempDir tmp("cache");
  std::string root = tmp / "cache";

  SUBCASE("a cache that does not exist") {
    auto u = cacheUsage(root);
    REQUIRE(u.has_value());
    CHECK(u->files == 0);
    CHECK(u->bytes == 0);
    auto p = pruneCache(root);
    REQUIRE(p.has_value());
    CHECK(p->files == 0);
  }

  PackageCache cache(root);
  Extracted a = extracted(tmp, "alpha");
  Extracted b = extracted(tmp, "beta");
  REQUIRE(cache.store(a.archive, a.archiveSha, a.recordSha, a.record, a.dir)
              .has_value());
  REQUIRE(cache.store(b.archive, b.archiveSha, b.recordSha, b.record, b.dir)
              .has_value());
  // alpha's files are in use by a prefix (materialized); beta's are not:
  // the directory they were stored from (a package install staged) is gone.
  REQUIRE(cache.materialize(a.record, tmp / "in-use").has_value());
  makeTreeWritable(b.dir);
  fs::remove_all(b.dir);
  bool hardlinked = std::string(PackageCache::lastPlacement()) == "hardlink";
  // A downloaded archive, registry metadata, and partial files: one of a
  // process that is gone, one of this (live) process's parent, one old
  // anonymous one.
  writeText(root + "/downloads/" + a.archiveSha.substr(0, 2) + "/" +
                a.archiveSha + ".ireepkg",
            readText(a.archive));
  writeText(root + "/downloads/" + b.archiveSha.substr(0, 2) + "/" +
                b.archiveSha + ".ireepkg",
            readText(b.archive));
  writeText(root + "/registries/r1/snapshot.json", "{}\n");
  pid_t gone = 4194303;
  REQUIRE((::kill(gone, 0) != 0 && errno == ESRCH));
  std::string deadPartial =
      root + "/downloads/zz/x.ireepkg.part-" + std::to_string(gone) + "-ab12";
  std::string livePartial = root + "/downloads/zz/y.ireepkg.part-" +
                            std::to_string(::getppid()) + "-cd34";
  std::string oldPartial = root + "/registries/r1/http/index.json.part-9f8e7d";
  writeText(deadPartial, "12345");
  writeText(livePartial, "123");
  writeText(oldPartial, "1");
  struct utimbuf old {
    ::time(nullptr) - 7200, ::time(nullptr) - 7200
  };
  REQUIRE(::utime(oldPartial.c_str(), &old) == 0);

  // Usage counts every file, by top-level directory.
  auto usage = cacheUsage(root);
  REQUIRE(usage.has_value());
  uint64_t blobs = a.record.files.size() + b.record.files.size();
  // files/: each blob and its marker; archives/: two entries; downloads/:
  // two archives and two partials; registries/: snapshot and a partial.
  CHECK(usage->files == 2 * blobs + 2 + 4 + 2);
  CHECK(partsOf(*usage) == "archives:2;downloads:4;files:" +
                               std::to_string(2 * blobs) + ";registries:2;");

  SUBCASE("prune removes what nothing uses") {
    auto p = pruneCache(root);
    REQUIRE_MESSAGE(p.has_value(), whyNot(p));
    CHECK_FALSE(exists(deadPartial));
    CHECK_FALSE(exists(oldPartial));
    CHECK(exists(livePartial));
    // beta's blobs (no prefix links them) and their markers are gone.
    for (const RecordEntry &e : b.record.files) {
      CHECK_FALSE(exists(blobOf(root, e)));
      CHECK(markersOf(blobOf(root, e)).empty());
    }
    // alpha's stay while a prefix hard-links them.
    for (const RecordEntry &e : a.record.files)
      CHECK(exists(blobOf(root, e)) == hardlinked);
    uint64_t blobsRemoved =
        b.record.files.size() + (hardlinked ? 0 : a.record.files.size());
    // Archive entries go with any blob: they would promise blobs.
    CHECK(listDir(root + "/archives").empty());
    CHECK(partsOf(*p) == "partial:2;blobs:" + std::to_string(blobsRemoved) +
                             ";markers:" + std::to_string(blobsRemoved) +
                             ";archives:2;");
    CHECK(p->files == 2 + 2 * blobsRemoved + 2);
    // Downloads and registry metadata are kept.
    CHECK(exists(root + "/registries/r1/snapshot.json"));
    CHECK(listDir(root + "/downloads/" + a.archiveSha.substr(0, 2)).size() >=
          1);
    // The prefix's files do not depend on the cache.
    CHECK(readText(tmp / "in-use/data/a.txt") == "alpha data\n");
    // Pruning again finds nothing more.
    auto again = pruneCache(root);
    REQUIRE(again.has_value());
    CHECK(again->files == 0);
  }
  SUBCASE("clean removes everything, and says how much") {
    auto c = cleanCache(root);
    REQUIRE(c.has_value());
    CHECK(c->files == usage->files);
    CHECK(c->bytes == usage->bytes);
    CHECK(partsOf(*c) == partsOf(*usage));
    CHECK(exists(root));
    CHECK(listDir(root).empty());
    CHECK(readText(tmp / "in-use/data/a.txt") == "alpha data\n");
  }
  SUBCASE("clean of named packages removes their downloads only") {
    auto c = cleanCachedPackages(root, {"beta", "nothing"});
    REQUIRE(c.has_value());
    CHECK(c->archives == std::vector<std::string>{"beta 1.0.0"});
    CHECK(c->files == 1);
    CHECK(c->bytes == fs::file_size(b.archive));
    CHECK_FALSE(exists(root + "/downloads/" + b.archiveSha.substr(0, 2) + "/" +
                       b.archiveSha + ".ireepkg"));
    CHECK(exists(root + "/downloads/" + a.archiveSha.substr(0, 2) + "/" +
                 a.archiveSha + ".ireepkg"));
    CHECK(exists(livePartial));
    CHECK(exists(deadPartial));
  }
  SUBCASE("abandoned partials in a directory and the directories in it") {
    auto r = removeAbandonedPartials(root + "/downloads");
    REQUIRE(r.has_value());
    CHECK(partsOf(*r) == "partial:1;");
    CHECK(r->bytes == 5);
    CHECK(exists(livePartial));
    CHECK_FALSE(exists(deadPartial));
    CHECK(exists(oldPartial));
  }
  SUBCASE("partials are looked for only where the cache writes them") {
    std::string elsewhere =
        root + "/registries/r1/index/x.part-" + std::to_string(gone) + "-ab12";
    writeText(elsewhere, "1");
    auto p = pruneCache(root);
    REQUIRE_MESSAGE(p.has_value(), whyNot(p));
    CHECK_FALSE(exists(deadPartial));
    CHECK(exists(elsewhere));
  }
  SUBCASE("a directory that is not a cache is refused, and kept") {
    writeText(root + "/Documents/notes.txt", "mine\n");
    auto c = cleanCache(root);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message ==
          "not an ireepkg cache directory: it holds Documents, which ireepkg "
          "never makes there; nothing was removed");
    CHECK_FALSE(pruneCache(root).has_value());
    CHECK_FALSE(cleanCachedPackages(root, {"beta"}).has_value());
    CHECK(exists(deadPartial));
    CHECK(exists(root + "/Documents/notes.txt"));
  }
}
