//===- test_archive.cpp - Package archives: writing, reading, refusing ----===//
//
// writeArchive -> readArchiveHead / ArchiveFile / extractArchive round
// trips, the member rules (paths that escape or clash, links, duplicates),
// the limits (ArchiveLimits), and RECORD.json parse errors.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"

#include <doctest/doctest.h>

#include <sys/stat.h>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

nlohmann::ordered_json manifestFor(const std::string &name,
                                   const std::string &version = "1.0.0") {
  nlohmann::ordered_json m;
  m["schema_version"] = 1;
  m["name"] = name;
  m["version"] = version;
  m["summary"] = "archive test package";
  return m;
}

mode_t modeOf(const std::string &path) {
  struct stat st;
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

/// An archive with a correct head (manifest, RECORD listing `listed`)
/// followed by `members` as given, which RECORD may not list.
std::string archiveWithMembers(const std::string &path,
                               const std::map<std::string, std::string> &listed,
                               const std::vector<ArchiveMember> &extra) {
  std::string manifest = manifestFor("crafted").dump(2) + "\n";
  Record record;
  std::map<std::string, std::string> all = listed;
  all[kManifestName] = manifest;
  for (const auto &[p, c] : all)
    record.files.push_back({p, Sha256::hex(c), c.size(), false});
  std::vector<ArchiveMember> members = {
      {kManifestName, manifest, "", false},
      {kRecordName, serializeRecord(record), "", false}};
  for (const auto &[p, c] : listed)
    members.push_back({p, c, "", false});
  members.insert(members.end(), extra.begin(), extra.end());
  Status s = writeArchive(path, members);
  REQUIRE_MESSAGE(s.has_value(), whyNot(s));
  return path;
}

} // namespace

TEST_CASE("archive: write, read the head, extract: contents, modes, sizes") {
  TempDir tmp("archive");
  std::map<std::string, std::string> files = {
      {"bin/tool.sh", "#!/bin/sh\necho hi\n"},
      {"data/a.txt", "alpha\n"},
      {"data/deep/b.bin", std::string("\0\1\2\3binary\xff", 11)},
      {"empty.txt", ""},
  };
  std::string archive = writePackageArchive(
      tmp / "p-1.0.0.ireepkg", manifestFor("p"), files, {"bin/tool.sh"});

  auto head = readArchiveHead(archive);
  REQUIRE_MESSAGE(head.has_value(), whyNot(head));
  CHECK(head->manifest.name == "p");
  CHECK(head->manifest.version.str() == "1.0.0");
  CHECK(head->warnings.empty());
  // RECORD lists the manifest and every file, sorted, with sizes and modes.
  std::vector<std::string> paths;
  for (const RecordEntry &e : head->record.files)
    paths.push_back(e.path);
  CHECK(paths == std::vector<std::string>{"bin/tool.sh", "data/a.txt",
                                          "data/deep/b.bin", "empty.txt",
                                          "ireeplugin.json"});
  REQUIRE(head->record.find("bin/tool.sh") != nullptr);
  CHECK(head->record.find("bin/tool.sh")->executable);
  CHECK_FALSE(head->record.find("data/a.txt")->executable);
  CHECK(head->record.find("data/deep/b.bin")->size == 11);
  uint64_t total = 0;
  for (const auto &[p, c] : files)
    total += c.size();
  total += head->manifestText.size();
  CHECK(head->record.totalSize() == total);

  std::string dest = tmp / "out";
  uint64_t lastProgress = 0;
  auto r = extractArchive(archive, dest, {},
                          [&](uint64_t done) { lastProgress = done; });
  REQUIRE_MESSAGE(r.has_value(), whyNot(r));
  CHECK(r->unpackedSize == total);
  CHECK(r->archiveSize == fs::file_size(archive));
  auto sha = sha256File(archive);
  REQUIRE(sha.has_value());
  CHECK(r->archiveSha256 == *sha);
  CHECK(lastProgress == total);
  for (const auto &[p, c] : files)
    CHECK_MESSAGE(readText(dest + "/" + p) == c, p);
  CHECK(readText(dest + "/ireeplugin.json") == head->manifestText);
  CHECK(readText(dest + "/" + kRecordName) == serializeRecord(head->record));
  CHECK((modeOf(dest + "/bin/tool.sh") & 0111) == 0111);
  CHECK((modeOf(dest + "/data/a.txt") & 0111) == 0);
  CHECK(fs::file_size(dest + "/empty.txt") == 0);
  // RECORD round-trips through its text.
  auto again = parseRecord(serializeRecord(head->record), kRecordName);
  REQUIRE(again.has_value());
  CHECK(serializeRecord(*again) == serializeRecord(head->record));
  // So does tests_skipped (pack --no-test of a package with tests).
  Record skipped = head->record;
  skipped.testsSkipped = true;
  std::string text = serializeRecord(skipped);
  CHECK(text.find("\"tests_skipped\": true") != std::string::npos);
  auto back = parseRecord(text, kRecordName);
  REQUIRE(back.has_value());
  CHECK(back->testsSkipped);
  CHECK(serializeRecord(*back) == text);
  CHECK_FALSE(again->testsSkipped);
}

TEST_CASE("archive: writing is reproducible and long names survive") {
  TempDir tmp("archive");
  std::string longName = "data/" + std::string(150, 'n') + ".txt";
  std::map<std::string, std::string> files = {{longName, "long\n"},
                                              {"x.txt", "x\n"}};
  std::string a =
      writePackageArchive(tmp / "a.ireepkg", manifestFor("p"), files);
  std::string b =
      writePackageArchive(tmp / "b.ireepkg", manifestFor("p"), files);
  CHECK(readText(a) == readText(b));
  auto r = extractArchive(a, tmp / "out");
  REQUIRE_MESSAGE(r.has_value(), whyNot(r));
  CHECK(readText(tmp / ("out/" + longName)) == "long\n");
}

TEST_CASE("archive: one open file is read for the head and the files") {
  TempDir tmp("archive");
  std::string path = writePackageArchive(tmp / "p.ireepkg", manifestFor("p"),
                                         {{"data/v.txt", "first\n"}});
  auto file = ArchiveFile::open(path);
  REQUIRE_MESSAGE(file.has_value(), whyNot(file));
  CHECK(file->path() == path);
  auto head = readArchiveHead(*file);
  REQUIRE(head.has_value());

  SUBCASE("another archive renamed over the path is not read") {
    std::string other = writePackageArchive(
        tmp / "other.ireepkg", manifestFor("q"), {{"data/v.txt", "second\n"}});
    fs::rename(other, path);
    auto r = extractArchive(*file, tmp / "out", {}, {}, &*head);
    REQUIRE_MESSAGE(r.has_value(), whyNot(r));
    CHECK(r->head.manifest.name == "p");
    CHECK(readText(tmp / "out/data/v.txt") == "first\n");
  }
  SUBCASE("the same file rewritten in place is refused") {
    std::string other = writePackageArchive(
        tmp / "other.ireepkg", manifestFor("q"), {{"data/v.txt", "second\n"}});
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << readText(other);
    }
    auto r = extractArchive(*file, tmp / "out", {}, {}, &*head);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::Integrity);
    CHECK(r.error().message ==
          "the archive changed while it was being installed");
    CHECK(r.error().hint == "do not rewrite an archive while ireepkg installs "
                            "it; run the command again");
    CHECK_FALSE(exists(tmp / "out"));
  }
}

TEST_CASE("archive: what is not an ireepkg archive") {
  TempDir tmp("archive");
  SUBCASE("text") {
    writeText(tmp / "t.ireepkg", "hello, not an archive\n");
    auto h = readArchiveHead(tmp / "t.ireepkg");
    REQUIRE_FALSE(h.has_value());
    CHECK(h.error().message.starts_with(
        "not an ireepkg archive (a zstd-compressed tar): "));
  }
  SUBCASE("a directory") {
    fs::create_directories(tmp / "d.ireepkg");
    auto h = readArchiveHead(tmp / "d.ireepkg");
    REQUIRE_FALSE(h.has_value());
    CHECK(h.error().message == "cannot read: Is a directory");
  }
  SUBCASE("the manifest is not first") {
    std::string manifest = manifestFor("p").dump() + "\n";
    REQUIRE(
        writeArchive(tmp / "o.ireepkg", {{"data/x", "x", "", false},
                                         {kManifestName, manifest, "", false}})
            .has_value());
    auto h = readArchiveHead(tmp / "o.ireepkg");
    REQUIRE_FALSE(h.has_value());
    CHECK(h.error().message ==
          "the first member must be ireeplugin.json, not \"data/x\"");
    CHECK(h.error().where.member == "data/x");
  }
  SUBCASE("no RECORD") {
    REQUIRE(writeArchive(tmp / "n.ireepkg",
                         {{kManifestName, manifestFor("p").dump(), "", false}})
                .has_value());
    auto h = readArchiveHead(tmp / "n.ireepkg");
    REQUIRE_FALSE(h.has_value());
    CHECK(h.error().message == "the archive ends before .ireepkg/RECORD.json");
  }
  SUBCASE("a manifest RECORD does not vouch for") {
    std::string manifest = manifestFor("p").dump() + "\n";
    Record record;
    record.files.push_back({kManifestName, Sha256::hex(manifest + " "),
                            manifest.size() + 1, false});
    REQUIRE(writeArchive(tmp / "m.ireepkg",
                         {{kManifestName, manifest, "", false},
                          {kRecordName, serializeRecord(record), "", false}})
                .has_value());
    auto h = readArchiveHead(tmp / "m.ireepkg");
    REQUIRE_FALSE(h.has_value());
    CHECK(h.error().message == "SHA-256 does not match .ireepkg/RECORD.json");
    CHECK(h.error().where.member == "ireeplugin.json");
  }
}

TEST_CASE("archive: package paths that are refused, and why") {
  struct Case {
    const char *path;
    const char *problem;
  };
  const Case cases[] = {
      {"../x", "a path that leaves the package ('..')"},
      {"data/../../x", "a path that leaves the package ('..')"},
      {"/etc/passwd", "an absolute path"},
      {"C:/x", "an absolute path"},
      {"a\\b", "a path with a backslash (use '/')"},
      {"data//x", "a path with an empty segment"},
      {"./x", "a path with a '.' segment"},
      {"data/nul.txt",
       "a path with the name \"nul.txt\", which Windows reserves for a device"},
      {"CON", "a path with the name \"CON\", which Windows reserves for a "
              "device"},
      {"com1.so", "a path with the name \"com1.so\", which Windows reserves "
                  "for a device"},
      {"x.", "a path with a name ending in '.', which Windows does not keep"},
      {"a?b", "a path with '?', which Windows does not allow"},
      {"caf\xc3\xa9", "a path with a non-ASCII character"},
      {"tab\there", "a path with a control character"},
  };
  for (const Case &c : cases)
    CHECK_MESSAGE(packagePathProblem(c.path) == c.problem, c.path);
  CHECK(packagePathProblem("runtime/linux-x86_64/libk.so") == "");
  CHECK(packagePathProblem("console.txt") == ""); // only exact device names
}

TEST_CASE("archive: unsafe members are refused and nothing is left") {
  TempDir tmp("archive");
  std::string dest = tmp / "out";
  auto refused = [&](const std::string &archive) {
    auto r = extractArchive(archive, dest);
    REQUIRE_FALSE(r.has_value());
    CHECK_FALSE(exists(dest));
    return r.error();
  };

  SUBCASE("path traversal") {
    Error e = refused(archiveWithMembers(tmp / "a.ireepkg", {{"ok.txt", "ok"}},
                                         {{"../x", "evil", "", false}}));
    CHECK(e.code == ErrorCode::Integrity);
    CHECK(e.message == "\"..\" components are not allowed");
    CHECK(e.where.member == "../x");
    CHECK(e.hint == "the archive is unsafe or corrupted; it was not installed");
    CHECK_FALSE(exists(tmp / "x"));
  }
  SUBCASE("absolute path") {
    Error e = refused(archiveWithMembers(tmp / "a.ireepkg", {},
                                         {{"/tmp/x", "evil", "", false}}));
    CHECK(e.message == "absolute paths are not allowed");
    CHECK(e.where.member == "/tmp/x");
  }
  SUBCASE("Windows device name") {
    Error e = refused(
        archiveWithMembers(tmp / "a.ireepkg", {}, {{"aux.h", "x", "", false}}));
    CHECK(e.message == "is a path with the name \"aux.h\", which Windows "
                       "reserves for a device");
  }
  SUBCASE("the same member twice") {
    Error e = refused(archiveWithMembers(tmp / "a.ireepkg", {{"d.txt", "one"}},
                                         {{"d.txt", "one", "", false}}));
    CHECK(e.message == "appears more than once");
    CHECK(e.where.member == "d.txt");
  }
  SUBCASE("names that differ only in case") {
    Error e = refused(archiveWithMembers(tmp / "a.ireepkg", {{"d.txt", "one"}},
                                         {{"D.TXT", "one", "", false}}));
    CHECK(e.message == "collides with \"d.txt\" on a case-insensitive file "
                       "system");
  }
  SUBCASE("a member inside a file") {
    Error e = refused(archiveWithMembers(tmp / "a.ireepkg", {{"d", "file"}},
                                         {{"d/x", "inner", "", false}}));
    CHECK(e.message == "is inside \"d\", which is a file");
  }
  SUBCASE("a member RECORD does not list") {
    Error e = refused(archiveWithMembers(tmp / "a.ireepkg", {{"a.txt", "a"}},
                                         {{"b.txt", "b", "", false}}));
    CHECK(e.message == "is not listed in .ireepkg/RECORD.json");
    CHECK(e.where.member == "b.txt");
  }
  SUBCASE("a member whose bytes RECORD does not vouch for") {
    std::string manifest = manifestFor("crafted").dump(2) + "\n";
    Record record;
    record.files = {
        {"a.txt", Sha256::hex("good"), 4, false},
        {kManifestName, Sha256::hex(manifest), manifest.size(), false}};
    REQUIRE(writeArchive(tmp / "a.ireepkg",
                         {{kManifestName, manifest, "", false},
                          {kRecordName, serializeRecord(record), "", false},
                          {"a.txt", "evil", "", false}})
                .has_value());
    Error e = refused(tmp / "a.ireepkg");
    CHECK(e.message == "SHA-256 does not match .ireepkg/RECORD.json");
    CHECK(e.where.member == "a.txt");
  }
  SUBCASE("a file RECORD lists is missing") {
    std::string manifest = manifestFor("crafted").dump(2) + "\n";
    Record record;
    record.files = {
        {"a.txt", Sha256::hex("a"), 1, false},
        {kManifestName, Sha256::hex(manifest), manifest.size(), false}};
    REQUIRE(writeArchive(tmp / "a.ireepkg",
                         {{kManifestName, manifest, "", false},
                          {kRecordName, serializeRecord(record), "", false}})
                .has_value());
    Error e = refused(tmp / "a.ireepkg");
    CHECK(e.message ==
          "is listed in .ireepkg/RECORD.json but missing from the archive");
    CHECK(e.where.member == "a.txt");
  }
  SUBCASE("symbolic and hard links (written by tar, as an attacker would)") {
    // The head is written by writeArchive into a plain tar, the links by
    // GNU tar, then the whole is compressed with zstd.
    std::string work = tmp / "work";
    std::string manifest = manifestFor("crafted").dump(2) + "\n";
    Record record;
    record.files = {
        {kManifestName, Sha256::hex(manifest), manifest.size(), false},
        {"target", Sha256::hex("t"), 1, false}};
    writeText(work + "/" + kManifestName, manifest);
    writeText(work + "/" + kRecordName, serializeRecord(record));
    fs::create_symlink("/etc/passwd", work + "/link");
    writeText(work + "/target", "t");
    fs::create_hard_link(work + "/target", work + "/hard");
    auto tarOf = [&](const std::string &name, const std::string &members) {
      std::string archive = tmp / name;
      std::string cmd = "cd '" + work + "' && tar --format=ustar --zstd -cf '" +
                        archive + "' ireeplugin.json .ireepkg/RECORD.json " +
                        members;
      REQUIRE(std::system(cmd.c_str()) == 0);
      return archive;
    };
    Error e = refused(tarOf("sym.ireepkg", "target link"));
    CHECK(e.message == "symbolic links are not allowed");
    CHECK(e.where.member == "link");
    e = refused(tarOf("hard.ireepkg", "target hard"));
    CHECK(e.message == "hard links are not allowed");
    CHECK(e.where.member == "hard");
    // The same head with the file alone is fine: only the links were wrong.
    auto r = extractArchive(tarOf("plain.ireepkg", "target"), dest);
    CHECK_MESSAGE(r.has_value(), whyNot(r));
  }
}

TEST_CASE("archive: limits are checked before anything is written") {
  TempDir tmp("archive");
  std::string dest = tmp / "out";

  SUBCASE("unpacked size") {
    std::string a = writePackageArchive(tmp / "a.ireepkg", manifestFor("p"),
                                        {{"data/x", std::string(100, 'x')}});
    auto head = readArchiveHead(a);
    REQUIRE(head.has_value());
    uint64_t total = head->record.totalSize();
    ArchiveLimits limits;
    limits.maxUnpackedBytes = total - 1;
    auto r = extractArchive(a, dest, limits);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "the archive unpacks to " + std::to_string(total) +
              " bytes, more than the limit of " + std::to_string(total - 1));
    CHECK(r.error().hint == "this may be a decompression bomb");
    CHECK_FALSE(exists(dest));
    limits.maxUnpackedBytes = total;
    CHECK(extractArchive(a, dest, limits).has_value());
  }
  SUBCASE("compression ratio") {
    // 2 MiB of zeros compresses to a few hundred bytes.
    std::string a =
        writePackageArchive(tmp / "a.ireepkg", manifestFor("p"),
                            {{"data/zeros", std::string(2u << 20, '\0')}});
    std::string manifest = manifestFor("p").dump(2) + "\n";
    uint64_t total = (2u << 20) + manifest.size(), size = fs::file_size(a);
    REQUIRE(total / size > 200);
    std::string message =
        "the archive expands " + std::to_string(total / size) + " times (" +
        std::to_string(size) + " bytes to " + std::to_string(total) +
        "), more than the limit of 200";
    // Refused from the head, before any member is extracted.
    auto head = readArchiveHead(a);
    REQUIRE_FALSE(head.has_value());
    CHECK(head.error().message == message);
    auto r = extractArchive(a, dest);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == message);
    CHECK_FALSE(exists(dest));
    ArchiveLimits loose;
    loose.maxCompressionRatio = total / size + 1;
    CHECK(extractArchive(a, dest, loose).has_value());
  }
  SUBCASE("member count") {
    std::string a = writePackageArchive(tmp / "a.ireepkg", manifestFor("p"),
                                        {{"a", "1"}, {"b", "2"}, {"c", "3"}});
    // RECORD lists 4 files (manifest included), the archive has 5 members.
    ArchiveLimits limits;
    limits.maxMembers = 4;
    auto r = extractArchive(a, dest, limits);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == "the archive has more than 4 members");
    CHECK_FALSE(exists(dest));
    limits.maxMembers = 5;
    CHECK(extractArchive(a, dest, limits).has_value());
  }
  SUBCASE("path length") {
    std::string a =
        writePackageArchive(tmp / "a.ireepkg", manifestFor("p"),
                            {{"data/" + std::string(40, 'p'), "x"}});
    ArchiveLimits limits;
    limits.maxComponentBytes = 30;
    auto r = extractArchive(a, dest, limits);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == "a path component is longer than 30 bytes");
    CHECK_FALSE(exists(dest));
  }
  SUBCASE("packageLimitProblem says the same for pack") {
    Record record;
    record.files = {{"a", std::string(64, '0'), 10, false},
                    {"b", std::string(64, '0'), 10, false}};
    ArchiveLimits limits;
    CHECK(packageLimitProblem(record, 100, limits) == "");
    limits.maxMembers = 2;
    CHECK(packageLimitProblem(record, 100, limits) ==
          "it has 3 members, more than the limit of 2");
    limits = {};
    limits.maxUnpackedBytes = 19;
    CHECK(packageLimitProblem(record, 100, limits) ==
          "it unpacks to 20 bytes, more than the limit of 19");
  }
}

TEST_CASE("archive: RECORD.json parse errors") {
  auto fails = [](const std::string &text) {
    auto r = parseRecord(text, kRecordName);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().where.member == kRecordName);
    return r.error();
  };
  const std::string sha(64, 'a');
  auto entry = [&](const std::string &path, const std::string &size) {
    return "{\"path\":\"" + path + "\",\"sha256\":\"" + sha +
           "\",\"size\":" + size + "}";
  };

  SUBCASE("nesting deeper than RECORD needs") {
    std::string deep =
        "{\"schema_version\":1,\"files\":[],\"x\":" + std::string(20, '[') +
        std::string(20, ']') + "}";
    Error e = fails(deep);
    CHECK(e.code == ErrorCode::Integrity);
    CHECK(e.message.starts_with("is not valid JSON: "));
    CHECK(e.message.find("nest") != std::string::npos);
    CHECK(e.hint ==
          "the archive is corrupted or was not made by `ireepkg pack`");
  }
  SUBCASE("duplicate keys") {
    Error e = fails("{\"schema_version\":1,\"files\":[],\"files\":[]}");
    CHECK(e.message.starts_with("is not valid JSON: "));
    CHECK(e.message.find("duplicate") != std::string::npos);
  }
  SUBCASE("sizes that overflow when added") {
    Error e = fails("{\"schema_version\":1,\"files\":[" +
                    entry("a", "18446744073709551615") + "," + entry("b", "1") +
                    "]}");
    CHECK(e.message == "lists sizes that add up to more than 2^64 bytes");
    CHECK(e.where.pointer == "/files/1/size");
  }
  SUBCASE("a negative size") {
    Error e =
        fails("{\"schema_version\":1,\"files\":[" + entry("a", "-1") + "]}");
    CHECK(e.message == "has an entry without a non-negative integer \"size\"");
    CHECK(e.where.pointer == "/files/0/size");
  }
  SUBCASE("an unsafe path") {
    Error e =
        fails("{\"schema_version\":1,\"files\":[" + entry("../x", "1") + "]}");
    CHECK(e.message == "lists \"../x\", a path that leaves the package ('..')");
    CHECK(e.where.pointer == "/files/0/path");
  }
  SUBCASE("a path listed twice") {
    Error e = fails("{\"schema_version\":1,\"files\":[" + entry("a", "1") +
                    "," + entry("a", "1") + "]}");
    CHECK(e.message == "lists \"a\" twice");
    CHECK(e.where.pointer == "/files/1/path");
  }
  SUBCASE("tests_skipped that is not a boolean") {
    Error e = fails("{\"schema_version\":1,\"files\":[],"
                    "\"tests_skipped\":\"yes\"}");
    CHECK(e.message ==
          "has a \"tests_skipped\" that is a string, not true or false");
    CHECK(e.where.pointer == "/tests_skipped");
  }
  SUBCASE("not sorted") {
    Error e = fails("{\"schema_version\":1,\"files\":[" + entry("b", "1") +
                    "," + entry("a", "1") + "]}");
    CHECK(e.message == "is not sorted by path");
  }
  SUBCASE("a malformed hash") {
    Error e = fails("{\"schema_version\":1,\"files\":[{\"path\":\"a\","
                    "\"sha256\":\"XYZ\",\"size\":1}]}");
    CHECK(e.message == "has a malformed hash for \"a\"");
    CHECK(e.where.pointer == "/files/0/sha256");
  }
  SUBCASE("executable must be a boolean") {
    Error e = fails("{\"schema_version\":1,\"files\":[{\"path\":\"a\","
                    "\"sha256\":\"" +
                    sha + "\",\"size\":1,\"executable\":1}]}");
    CHECK(e.message.starts_with("has an \"executable\" that is "));
    CHECK(e.message.ends_with(", not true or false"));
    CHECK(e.where.pointer == "/files/0/executable");
  }
  SUBCASE("a newer schema") {
    Error e = fails("{\"schema_version\":2,\"files\":[]}");
    CHECK(e.code == ErrorCode::Unsupported);
    CHECK(e.message == "schema_version 2 is newer than this ireepkg "
                       "understands");
    CHECK(e.hint == "upgrade ireepkg to install this package");
  }
  SUBCASE("no files list") {
    Error e = fails("{\"schema_version\":1}");
    CHECK(e.message == "has no files list");
    CHECK(e.where.pointer == "/files");
  }
}
