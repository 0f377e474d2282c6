//===- test_file_stamp.cpp - File stamps, digests kept by them, mappings --===//
//
// fsutil::FileStamp: what changes when a file does (bytes written in place
// with the old mtime put back, another file renamed over it); settled
// stamps; readFileHashed and knownDigest, which take a file's SHA-256 from
// a memo while the file keeps the stamp it had when it was hashed; and
// mapOwnCacheFile, which maps a cache file under readOwnCacheFile's rules.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"

#include <doctest/doctest.h>

#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

int64_t nowNs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// Writes `bytes` over the start of `path` in place (same inode), then puts
/// the mtime it had back, as a careless tool or an attacker might.
void overwriteKeepingMtime(const std::string &path, const std::string &bytes) {
  struct stat before;
  REQUIRE(::stat(path.c_str(), &before) == 0);
  {
    std::ofstream out(path, std::ios::in | std::ios::out | std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

constexpr int64_t kLater = 3'000'000'000; // past kSettledNs

} // namespace

TEST_CASE("file stamps: any change to a file, or a file renamed over it, "
          "changes its stamp") {
  TempDir tmp("stamp");
  const std::string path = tmp.path() + "/lock.json";
  CHECK_FALSE(fsutil::fileStamp(path).has_value());
  CHECK_FALSE(fsutil::fileStamp(tmp.path()).has_value()); // not a file
  writeBytes(path, "{\"a\": 1}\n");
  auto first = fsutil::fileStamp(path);
  REQUIRE(first.has_value());
  CHECK(first->size == 9);
  CHECK(fsutil::fileStamp(path) == first);
  CHECK(first->str() == fsutil::fileStamp(path)->str());

  // Same size, same inode, the old mtime put back: the ctime differs.
  overwriteKeepingMtime(path, "{\"a\": 2}\n");
  auto second = fsutil::fileStamp(path);
  REQUIRE(second.has_value());
  CHECK(second->inode == first->inode);
  CHECK(second->size == first->size);
  CHECK(second->modifiedNs == first->modifiedNs);
  CHECK(second->changedNs != first->changedNs);
  CHECK(second != first);
  CHECK(second->str() != first->str());

  // Another file renamed over it.
  writeBytes(path + ".new", "{\"a\": 2}\n");
  std::filesystem::rename(path + ".new", path);
  auto third = fsutil::fileStamp(path);
  REQUIRE(third.has_value());
  CHECK(third->inode != second->inode);
}

TEST_CASE("file stamps: settled only when both times are 2 s in the past") {
  TempDir tmp("stamp");
  const std::string path = tmp.path() + "/f";
  writeBytes(path, "x");
  auto s = fsutil::fileStamp(path);
  REQUIRE(s.has_value());
  CHECK_FALSE(fsutil::settled(*s)); // just written
  CHECK(fsutil::settled(*s, nowNs() + kLater));
  fsutil::FileStamp future = *s;
  future.changedNs = nowNs() + 10 * kLater; // a clock ahead of ours
  CHECK_FALSE(fsutil::settled(future, nowNs() + kLater));
  CHECK_FALSE(fsutil::settled(fsutil::FileStamp{}, nowNs()));
}

TEST_CASE("readFileHashed: the digest is kept by the file's stamp, only "
          "when settled, and believed only while the file keeps it") {
  TempDir tmp("stamp");
  const std::string path = tmp.path() + "/plugins.lock.json";
  const std::string memo = tmp.path() + "/cache/locks/x.sha256";
  writeBytes(path, "{\"packages\": []}\n");
  const std::string sha = Sha256::hex("{\"packages\": []}\n");

  // No memo asked for: bytes and digest, nothing written.
  auto plain = fsutil::readFileHashed(path, 1 << 20);
  REQUIRE(plain.has_value());
  CHECK(plain->bytes == "{\"packages\": []}\n");
  CHECK(plain->sha256 == sha);

  // Just written: not settled, so no memo.
  auto fresh = fsutil::readFileHashed(path, 1 << 20, memo);
  REQUIRE(fresh.has_value());
  CHECK(fresh->sha256 == sha);
  CHECK_FALSE(fsutil::exists(memo));
  CHECK_FALSE(fsutil::knownDigest(path, memo).has_value());

  // Settled (a later clock): kept, and then known without reading.
  const int64_t later = nowNs() + kLater;
  REQUIRE(fsutil::readFileHashed(path, 1 << 20, memo, later).has_value());
  REQUIRE(fsutil::exists(memo));
  CHECK(fsutil::knownDigest(path, memo) == sha);
  CHECK_FALSE(fsutil::knownDigest(path, "").has_value());

  // The memo is what is believed: a forged digest under the right stamp
  // is returned (a memo is trusted as the rest of the user's cache)...
  const std::string text = readBytes(memo);
  REQUIRE(text.size() > 65);
  const std::string forged =
      text.substr(0, text.size() - 65) + std::string(64, 'f') + "\n";
  writeBytes(memo, forged);
  CHECK(fsutil::knownDigest(path, memo) == std::string(64, 'f'));
  auto viaMemo = fsutil::readFileHashed(path, 1 << 20, memo);
  REQUIRE(viaMemo.has_value());
  CHECK(viaMemo->sha256 == std::string(64, 'f'));
  CHECK(viaMemo->bytes == "{\"packages\": []}\n");
  // ...but not when others may write it,
  REQUIRE(::chmod(memo.c_str(), 0666) == 0);
  CHECK_FALSE(fsutil::knownDigest(path, memo).has_value());
  auto refused = fsutil::readFileHashed(path, 1 << 20, memo);
  REQUIRE(refused.has_value());
  CHECK(refused->sha256 == sha);
  REQUIRE(::chmod(memo.c_str(), 0644) == 0);
  // nor for another path with the same stamp line,
  const std::string other = tmp.path() + "/other.json";
  writeBytes(other, "{}");
  CHECK_FALSE(fsutil::knownDigest(other, memo).has_value());
  // nor once the file changed, however carefully.
  overwriteKeepingMtime(path, "{\"packages\": {}}\n");
  CHECK_FALSE(fsutil::knownDigest(path, memo).has_value());
  auto changed = fsutil::readFileHashed(path, 1 << 20, memo, nowNs() + kLater);
  REQUIRE(changed.has_value());
  CHECK(changed->sha256 == Sha256::hex("{\"packages\": {}}\n"));
  CHECK(fsutil::knownDigest(path, memo) == changed->sha256);

  // A damaged memo is no memo.
  writeBytes(memo, readBytes(memo).substr(0, 40));
  CHECK_FALSE(fsutil::knownDigest(path, memo).has_value());
  auto again = fsutil::readFileHashed(path, 1 << 20, memo);
  REQUIRE(again.has_value());
  CHECK(again->sha256 == changed->sha256);

  // Errors are readFile's.
  auto missing = fsutil::readFileHashed(tmp.path() + "/none", 1 << 20, memo);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("cannot open") != std::string::npos);
}

TEST_CASE("mapOwnCacheFile: the bytes of a cache file of the user's own, "
          "which keep while it is replaced") {
  TempDir tmp("stamp");
  const std::string path = tmp.path() + "/snapshot.bin";
  writeBytes(path, "IREEPKGP parsed bytes");
  auto m = fsutil::mapOwnCacheFile(path, 1 << 20);
  REQUIRE(m.has_value());
  CHECK(m->bytes() == "IREEPKGP parsed bytes");
  // Replaced as writeCacheFile replaces it: the mapping keeps the old bytes.
  REQUIRE(fsutil::writeCacheFile(path, "other bytes, longer than before")
              .has_value());
  CHECK(m->bytes() == "IREEPKGP parsed bytes");
  fsutil::MappedFile copy = *m;
  m = fsutil::MappedFile();
  CHECK(m->empty());
  CHECK(copy.bytes() == "IREEPKGP parsed bytes");

  // readOwnCacheFile's rules.
  auto small = fsutil::mapOwnCacheFile(path, 4);
  REQUIRE_FALSE(small.has_value());
  CHECK(small.error().message.find("larger than 4 bytes") != std::string::npos);
  REQUIRE(::chmod(path.c_str(), 0664) == 0);
  auto shared = fsutil::mapOwnCacheFile(path, 1 << 20);
  REQUIRE_FALSE(shared.has_value());
  CHECK(shared.error().message.find("others may write it") !=
        std::string::npos);
  CHECK_FALSE(fsutil::mapOwnCacheFile(tmp.path() + "/none", 1 << 20));
  CHECK_FALSE(fsutil::mapOwnCacheFile(tmp.path(), 1 << 20));
  writeBytes(tmp.path() + "/empty", "");
  auto empty = fsutil::mapOwnCacheFile(tmp.path() + "/empty", 1 << 20);
  REQUIRE(empty.has_value());
  CHECK(empty->empty());
  CHECK(empty->bytes().empty());
}
