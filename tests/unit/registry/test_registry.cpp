//===- test_registry.cpp - Tests for the registry publisher and client ----===//
//
// Unit tests for ireepkg/registry.h on directory registries made in temp
// directories: init, publish, yank and resign (files, signatures, order,
// idempotence, conflicts, recovery of an interrupted commit); the client's
// happy path, its download cache and the resolver over it; and every attack
// the client must refuse, each with its own message and nothing left in the
// download cache: tampered archive, archive larger than declared, tampered
// index, mix-and-match, unsigned snapshot, wrong key, bad signature,
// rollback, freeze, oversized metadata.
//
// Why one file of this size: the publisher's and the client's tests share
// one fixture (a registry with its key) and one archive builder.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"

#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/package/signature.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace ireepkg;
using namespace ireepkg::registry;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ireepkg-reg-XXXXXX");
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

Version V(const std::string &text) {
  auto v = Version::parse(text);
  REQUIRE(v.has_value());
  return *v;
}

/// A valid archive: ireeplugin.json from `manifest` (name and version
/// added), a data file, and RECORD.json.
std::string makeArchive(const std::string &dir, const std::string &name,
                        const std::string &version,
                        nlohmann::json manifest = nlohmann::json::object(),
                        std::map<std::string, std::string> files = {}) {
  manifest["schema_version"] = 1;
  manifest["name"] = name;
  manifest["version"] = version;
  if (!manifest.contains("summary"))
    manifest["summary"] = "test package " + name;
  if (files.empty())
    files["data/readme.txt"] = name + " " + version + "\n";
  files["ireeplugin.json"] = manifest.dump(2) + "\n";
  Record record;
  for (const auto &[p, content] : files)
    record.files.push_back({p, Sha256::hex(content), content.size(), false});
  std::vector<ArchiveMember> members;
  members.push_back({"ireeplugin.json", files["ireeplugin.json"], "", false});
  members.push_back({kRecordName, serializeRecord(record), "", false});
  for (const auto &[p, content] : files)
    if (p != "ireeplugin.json")
      members.push_back({p, content, "", false});
  std::string path = dir + "/" + name + "-" + version + ".ireepkg";
  Status s = writeArchive(path, members);
  REQUIRE(s.has_value());
  return path;
}

/// A registry in a temp directory, its key, and a cache for clients.
struct Fixture {
  TempDir tmp;
  std::string reg, cache, dist;
  signing::KeyPair pair = signing::generateKeyPair();
  std::string keyPath;
  SigningOptions signing;
  Reporter reporter;

  explicit Fixture(bool init = true) {
    reg = tmp.path + "/reg";
    cache = tmp.path + "/cache";
    dist = tmp.path + "/dist";
    fs::create_directories(dist);
    auto paths = signing::writeKeyPair(pair, tmp.path + "/signing", {});
    REQUIRE(paths.has_value());
    keyPath = paths->secretKey;
    signing.secretKeyPath = keyPath;
    if (init) {
      InitOptions o;
      o.signing = signing;
      o.name = "test-registry";
      Status s = initRegistry(reg, o);
      REQUIRE_MESSAGE(s.has_value(), s.error().format());
    }
  }

  PublishResult publish(const std::string &name, const std::string &version,
                        nlohmann::json manifest = nlohmann::json::object()) {
    std::string a = makeArchive(dist, name, version, manifest);
    auto r = publishArchive(reg, a, signing);
    REQUIRE_MESSAGE(r.has_value(), r.error().format());
    return *r;
  }

  RegistrySpec spec() const {
    RegistrySpec s;
    s.url = reg;
    s.publicKeys = {signing::publicKeyBase64(pair.publicKey)};
    return s;
  }

  Expected<std::unique_ptr<RegistryClient>> open(ClientOptions o = {}) {
    o.cacheRoot = cache;
    return RegistryClient::open(spec(), o, reporter);
  }

  std::unique_ptr<RegistryClient> openOk(ClientOptions o = {}) {
    auto c = open(o);
    REQUIRE_MESSAGE(c.has_value(), c.error().format());
    return std::move(*c);
  }

  /// Files in the download cache.
  size_t downloadedFiles() const {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(cache + "/downloads", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file())
        ++n;
    return n;
  }

  nlohmann::json json(const std::string &rel) const {
    return nlohmann::json::parse(readText(reg + "/" + rel));
  }
};

/// The error's message, hints included, for CHECKs on wording.
std::string text(const Error &e) { return e.format() + "\n" + e.hint; }

} // namespace

//===----------------------------------------------------------------------===//
// Publishing
//===----------------------------------------------------------------------===//

TEST_CASE("registry: init writes config, an empty signed snapshot, index/ "
          "and archives/") {
  Fixture f;
  nlohmann::json config = f.json("config.json");
  CHECK(config["name"] == "test-registry");
  CHECK(config["schema_version"] == 1);
  CHECK(config["keys"] ==
        nlohmann::json::array({signing::publicKeyBase64(f.pair.publicKey)}));
  nlohmann::json snap = f.json("snapshot.json");
  CHECK(snap["version"] == 1);
  CHECK(snap["index"] == nlohmann::json::object());
  auto expires = parseRfc3339(snap["expires"].get<std::string>());
  REQUIRE(expires);
  int64_t now = std::time(nullptr);
  CHECK(*expires > now + 30 * 86400 - 120);
  CHECK(*expires <= now + 30 * 86400 + 5);
  CHECK(fs::is_directory(f.reg + "/index"));
  CHECK(fs::is_directory(f.reg + "/archives"));
  auto v = signing::verifyFile(f.pair.publicKey, f.reg + "/snapshot.json");
  CHECK_MESSAGE(v.has_value(), v.error().format());
  // Deterministic JSON: sorted keys, two-space indent, final newline.
  std::string t = readText(f.reg + "/snapshot.json");
  CHECK(t == nlohmann::json::parse(t).dump(2) + "\n");
  CHECK(t.find("\n  \"expires\"") < t.find("\n  \"index\""));

  SUBCASE("again in the same directory") {
    InitOptions o;
    o.signing = f.signing;
    auto s = initRegistry(f.reg, o);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == ErrorCode::Conflict);
    CHECK(s.error().message == "is already a registry");
  }
  SUBCASE("in a directory that holds something else") {
    fs::create_directories(f.tmp.path + "/full");
    writeText(f.tmp.path + "/full/notes.txt", "x");
    InitOptions o;
    o.signing = f.signing;
    auto s = initRegistry(f.tmp.path + "/full", o);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().message == "is not empty (it holds notes.txt)");
    CHECK(fs::exists(f.tmp.path + "/full/notes.txt"));
    CHECK_FALSE(fs::exists(f.tmp.path + "/full/config.json"));
    CHECK_FALSE(fs::exists(f.tmp.path + "/full/.lock"));
  }
  SUBCASE("without a key") {
    InitOptions o;
    auto s = initRegistry(f.tmp.path + "/nokey", o);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == ErrorCode::Usage);
    CHECK(s.error().hint.find("ireepkg key generate") != std::string::npos);
    CHECK_FALSE(fs::exists(f.tmp.path + "/nokey"));
  }
  SUBCASE("with a name that is not a package name") {
    InitOptions o;
    o.signing = f.signing;
    auto s = initRegistry(f.tmp.path + "/Bad_Name", o);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().message.find("\"Bad_Name\" is not a valid registry name") !=
          std::string::npos);
    CHECK(s.error().hint.find("--name") != std::string::npos);
  }
}

TEST_CASE("registry: publish adds the archive, its signature, the index "
          "entry and a new signed snapshot") {
  Fixture f;
  nlohmann::json manifest = {
      {"dependencies", {{"base", "^1.0"}}},
      {"requires", {{"iree", ">=3.0.0, <4.0.0"}}},
      {"runtime",
       {{"plugins",
         {{{"name", "p"},
           {"format", "embedded-elf"},
           {"library", {{"aarch64", "runtime/p.aarch64.so"}}}}}}}},
      {"compiler",
       {{"plugins",
         {{{"id", "p_compiler"},
           {"kind", "mlir-pass-plugin"},
           {"library", {{"linux-x86_64", "compiler/libp.so"}}}}}}}}};
  std::string a = makeArchive(
      f.dist, "app", "1.2.0", manifest,
      {{"runtime/p.aarch64.so", "elf"}, {"compiler/libp.so", "so"}});
  auto r = publishArchive(f.reg, a, f.signing);
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  CHECK(r->name == "app");
  CHECK(r->version.str() == "1.2.0");
  CHECK(r->archivePath == "archives/app/app-1.2.0.ireepkg");
  CHECK(r->snapshotVersion == 2);
  CHECK_FALSE(r->alreadyPublished);
  CHECK(r->size == fs::file_size(a));
  CHECK(r->sha256 == *sha256File(a));
  CHECK(readText(f.reg + "/" + r->archivePath) == readText(a));
  auto sig =
      signing::verifyFile(f.pair.publicKey, f.reg + "/" + r->archivePath);
  REQUIRE_MESSAGE(sig.has_value(), sig.error().format());
  CHECK(sig->trustedComment.find("sha256:" + r->sha256) != std::string::npos);

  // base is not in the registry: published, with a warning.
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].severity == Severity::Warning);
  CHECK(r->warnings[0].message ==
        "app 1.2.0 depends on base ^1.0, which this registry does not have");
  CHECK(r->warnings[0].where.file == a);

  nlohmann::json idx = f.json("index/app.json");
  CHECK(idx["name"] == "app");
  REQUIRE(idx["versions"].size() == 1);
  nlohmann::json e = idx["versions"][0];
  CHECK(e["version"] == "1.2.0");
  CHECK(e["archive"] == "archives/app/app-1.2.0.ireepkg");
  CHECK(e["sha256"] == r->sha256);
  CHECK(e["size"] == r->size);
  CHECK(e["yanked"] == false);
  CHECK(e["summary"] == "test package app");
  CHECK(e["dependencies"] == nlohmann::json({{"base", "^1.0"}}));
  CHECK(e["requires"] == nlohmann::json({{"iree", ">=3.0.0, <4.0.0"}}));
  // An embedded-elf aarch64 library runs on every OS; the compiler plugin
  // adds linux-x86_64.
  CHECK(e["platforms"] ==
        nlohmann::json({"android-aarch64", "linux-aarch64", "linux-x86_64",
                        "macos-aarch64", "windows-aarch64"}));

  nlohmann::json snap = f.json("snapshot.json");
  CHECK(snap["version"] == 2);
  CHECK(snap["index"]["app"] ==
        "sha256:" + Sha256::hex(readText(f.reg + "/index/app.json")));
  CHECK(signing::verifyFile(f.pair.publicKey, f.reg + "/snapshot.json"));
  // No intent or temporary file is left.
  for (const auto &entry : fs::directory_iterator(f.reg)) {
    std::string n = entry.path().filename().string();
    CHECK_MESSAGE((n == ".lock" || n[0] != '.'), n);
  }

  SUBCASE("versions are kept in order") {
    f.publish("app", "1.10.0");
    f.publish("app", "1.3.0-rc.1");
    nlohmann::json versions = f.json("index/app.json")["versions"];
    REQUIRE(versions.size() == 3);
    CHECK(versions[0]["version"] == "1.2.0");
    CHECK(versions[1]["version"] == "1.3.0-rc.1");
    CHECK(versions[2]["version"] == "1.10.0");
    CHECK(f.json("snapshot.json")["version"] == 4);
    // A package without native code is platform-independent.
    CHECK(versions[2]["platforms"] == nlohmann::json::array());
  }
}

TEST_CASE("registry: publishing the same bytes again changes nothing; other "
          "bytes under the same version are a conflict") {
  Fixture f;
  std::string a = makeArchive(f.dist, "tool", "1.0.0");
  auto first = publishArchive(f.reg, a, f.signing);
  REQUIRE(first.has_value());
  std::string snap = readText(f.reg + "/snapshot.json");
  std::string index = readText(f.reg + "/index/tool.json");

  auto again = publishArchive(f.reg, a, f.signing);
  REQUIRE_MESSAGE(again.has_value(), again.error().format());
  CHECK(again->alreadyPublished);
  CHECK(again->snapshotVersion == 2);
  CHECK(readText(f.reg + "/snapshot.json") == snap);
  CHECK(readText(f.reg + "/index/tool.json") == index);

  // A deleted archive signature comes back; the snapshot does not change.
  fs::remove(f.reg + "/archives/tool/tool-1.0.0.ireepkg.minisig");
  REQUIRE(publishArchive(f.reg, a, f.signing).has_value());
  CHECK(fs::exists(f.reg + "/archives/tool/tool-1.0.0.ireepkg.minisig"));
  CHECK(readText(f.reg + "/snapshot.json") == snap);

  fs::create_directories(f.tmp.path + "/other");
  std::string b = makeArchive(f.tmp.path + "/other", "tool", "1.0.0",
                              {{"summary", "different bytes"}});
  auto conflict = publishArchive(f.reg, b, f.signing);
  REQUIRE_FALSE(conflict.has_value());
  CHECK(conflict.error().code == ErrorCode::Conflict);
  CHECK(conflict.error().message.find("tool 1.0.0 is already published in " +
                                      f.reg + " with other contents") !=
        std::string::npos);
  CHECK(conflict.error().hint.find("raise the version") != std::string::npos);
  CHECK(conflict.error().hint.find("ireepkg yank tool@1.0.0") !=
        std::string::npos);
  CHECK(readText(f.reg + "/snapshot.json") == snap);
  CHECK(readText(f.reg + "/archives/tool/tool-1.0.0.ireepkg") == readText(a));
}

TEST_CASE("registry: several archives go in with one snapshot, or none "
          "does") {
  Fixture f;
  f.publish("tool", "1.0.0");
  std::string snap = readText(f.reg + "/snapshot.json");
  std::string lib = makeArchive(f.dist, "lib", "1.0.0");
  std::string app = makeArchive(f.dist, "app", "1.0.0",
                                {{"dependencies", {{"lib", "^1.0"}}}});
  std::string tool2 = makeArchive(f.dist, "tool", "2.0.0");
  fs::create_directories(f.tmp.path + "/other");
  std::string clash = makeArchive(f.tmp.path + "/other", "tool", "1.0.0",
                                  {{"summary", "different bytes"}});

  SUBCASE("one refused archive: nothing is written") {
    auto r = publishArchives(f.reg, {lib, clash, app}, f.signing);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::Conflict);
    CHECK(r.error().where.file == clash);
    CHECK(readText(f.reg + "/snapshot.json") == snap);
    CHECK_FALSE(fs::exists(f.reg + "/archives/lib"));
    CHECK_FALSE(fs::exists(f.reg + "/index/lib.json"));
    for (const auto &entry : fs::directory_iterator(f.reg)) {
      std::string n = entry.path().filename().string();
      CHECK_MESSAGE((n == ".lock" || n[0] != '.'), n);
    }
  }

  SUBCASE("all good: one new snapshot") {
    auto r = publishArchives(f.reg, {app, lib, tool2, lib}, f.signing);
    REQUIRE_MESSAGE(r.has_value(), r.error().format());
    REQUIRE(r->size() == 4);
    for (const PublishResult &p : *r)
      CHECK(p.snapshotVersion == 3);
    CHECK_FALSE((*r)[0].alreadyPublished);
    CHECK((*r)[0].warnings.empty()); // lib comes in the same publish
    CHECK((*r)[3].alreadyPublished);
    nlohmann::json s = f.json("snapshot.json");
    CHECK(s["version"] == 3);
    for (const char *name : {"app", "lib", "tool"})
      CHECK(s["index"][name] ==
            "sha256:" +
                Sha256::hex(readText(f.reg + "/index/" + name + ".json")));
    CHECK(f.json("index/tool.json")["versions"].size() == 2);
    CHECK(signing::verifyFile(f.pair.publicKey, f.reg + "/snapshot.json"));
  }

  SUBCASE("one name and version twice with other contents") {
    auto r = publishArchives(f.reg, {tool2, tool2, lib}, f.signing);
    REQUIRE(r.has_value());
    std::string tool3 = makeArchive(f.dist, "tool", "3.0.0");
    fs::create_directories(f.tmp.path + "/third");
    std::string tool3b = makeArchive(f.tmp.path + "/third", "tool", "3.0.0",
                                     {{"summary", "other"}});
    snap = readText(f.reg + "/snapshot.json");
    auto twice = publishArchives(f.reg, {tool3, tool3b}, f.signing);
    REQUIRE_FALSE(twice.has_value());
    CHECK(twice.error().where.file == tool3b);
    CHECK(twice.error().message.find("is given twice with other contents") !=
          std::string::npos);
    CHECK(readText(f.reg + "/snapshot.json") == snap);
  }
}

TEST_CASE("registry: the publisher refuses what it must not build on") {
  Fixture f;
  f.publish("tool", "1.0.0");
  std::string a = makeArchive(f.dist, "tool", "2.0.0");

  SUBCASE("a key that config.json does not list") {
    auto other = signing::generateKeyPair();
    auto paths = signing::writeKeyPair(other, f.tmp.path + "/other", {});
    REQUIRE(paths);
    SigningOptions o;
    o.secretKeyPath = paths->secretKey;
    auto r = publishArchive(f.reg, a, o);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "the signing key " + signing::keyIdHex(other.publicKey) +
              " is not one of the registry's keys (config.json lists: " +
              signing::keyIdHex(f.pair.publicKey) + ")");
    CHECK(r.error().hint.find(signing::publicKeyBase64(other.publicKey)) !=
          std::string::npos);
  }
  SUBCASE("an index file changed by hand") {
    std::string t = readText(f.reg + "/index/tool.json");
    writeText(f.reg + "/index/tool.json", t + " ");
    auto r = publishArchive(f.reg, a, f.signing);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "index/tool.json does not have the hash snapshot.json pins");
    // resign vouches for every index: it refuses too.
    auto rs = resignRegistry(f.reg, f.signing);
    REQUIRE_FALSE(rs.has_value());
    CHECK(rs.error().message == r.error().message);
  }
  SUBCASE("a snapshot whose signature does not verify") {
    std::string t = readText(f.reg + "/snapshot.json");
    writeText(f.reg + "/snapshot.json", t + "\n");
    auto r = publishArchive(f.reg, a, f.signing);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find("the registry's current snapshot does not "
                                 "verify") == 0);
  }
  SUBCASE("an archive that breaks a rule") {
    writeText(f.dist + "/broken.ireepkg", "not an archive");
    auto r = publishArchive(f.reg, f.dist + "/broken.ireepkg", f.signing);
    REQUIRE_FALSE(r.has_value());
    CHECK(text(r.error()).find("broken.ireepkg") != std::string::npos);
    CHECK(text(r.error()).find(".incoming-") == std::string::npos);
  }
  SUBCASE("a directory that is not a registry") {
    fs::create_directories(f.tmp.path + "/empty");
    auto r = publishArchive(f.tmp.path + "/empty", a, f.signing);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          f.tmp.path + "/empty is not a registry: it has no config.json");
  }
  // Nothing of the refused publish is left behind.
  for (const auto &entry : fs::directory_iterator(f.reg)) {
    std::string n = entry.path().filename().string();
    CHECK_MESSAGE((n == ".lock" || n[0] != '.'), n);
  }
  CHECK_FALSE(fs::exists(f.reg + "/archives/tool/tool-2.0.0.ireepkg"));
}

TEST_CASE("registry: an encrypted signing key needs its password") {
  Fixture f(false);
  signing::WriteKeyPairOptions wo;
  wo.password = "registry secret";
  wo.limits = signing::kInteractiveKdfLimits;
  auto paths = signing::writeKeyPair(f.pair, f.tmp.path + "/encrypted", wo);
  REQUIRE(paths.has_value());
  InitOptions o;
  o.signing.secretKeyPath = paths->secretKey;
  auto s = initRegistry(f.reg, o);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().message ==
        "the secret key is encrypted; its password is needed");
  CHECK(s.error().hint == "give it with --password-file FILE");
  CHECK_FALSE(fs::exists(f.reg));
  o.signing.password = "wrong";
  s = initRegistry(f.reg, o);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == ErrorCode::Integrity);
  CHECK_FALSE(fs::exists(f.reg));
  o.signing.password = "registry secret";
  s = initRegistry(f.reg, o);
  REQUIRE_MESSAGE(s.has_value(), s.error().format());
  f.signing = o.signing;
  CHECK(f.publish("tool", "1.0.0").snapshotVersion == 2);
  CHECK(signing::verifyFile(f.pair.publicKey, f.reg + "/snapshot.json"));
}

TEST_CASE("registry: yank and undo re-sign the snapshot; doing it twice "
          "changes nothing") {
  Fixture f;
  f.publish("tool", "1.0.0");
  f.publish("tool", "1.1.0");
  auto v = yankVersion(f.reg, "tool", V("1.1.0"), true, f.signing);
  REQUIRE_MESSAGE(v.has_value(), v.error().format());
  CHECK(*v == 4);
  CHECK(f.json("index/tool.json")["versions"][1]["yanked"] == true);
  CHECK(f.json("index/tool.json")["versions"][0]["yanked"] == false);
  CHECK(signing::verifyFile(f.pair.publicKey, f.reg + "/snapshot.json"));

  auto again = yankVersion(f.reg, "tool", V("1.1.0"), true, f.signing);
  REQUIRE(again.has_value());
  CHECK(*again == 4);
  CHECK(f.json("snapshot.json")["version"] == 4);

  auto undo = yankVersion(f.reg, "tool", V("1.1.0"), false, f.signing);
  REQUIRE(undo.has_value());
  CHECK(*undo == 5);
  CHECK(f.json("index/tool.json")["versions"][1]["yanked"] == false);

  auto missing = yankVersion(f.reg, "tool", V("3.0.0"), true, f.signing);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::NotFound);
  CHECK(missing.error().message ==
        "tool 3.0.0 is not published (tool has: 1.0.0, 1.1.0)");
  auto typo = yankVersion(f.reg, "tol", V("1.0.0"), true, f.signing);
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().message ==
        "package \"tol\" is not in the registry (did you mean \"tool\"?)");
}

TEST_CASE("registry: resign raises the version and moves the expiry") {
  Fixture f;
  f.publish("tool", "1.0.0");
  SigningOptions o = f.signing;
  o.expiresDays = 90;
  o.now = 2000000000;
  auto v = resignRegistry(f.reg, o);
  REQUIRE_MESSAGE(v.has_value(), v.error().format());
  CHECK(*v == 3);
  nlohmann::json snap = f.json("snapshot.json");
  CHECK(snap["version"] == 3);
  CHECK(snap["expires"] == "2033-08-16T03:33:20Z"); // 2000000000 + 90 days
  CHECK(snap["index"].contains("tool"));
  CHECK(signing::verifyFile(f.pair.publicKey, f.reg + "/snapshot.json"));

  o.expiresDays = 0;
  auto bad = resignRegistry(f.reg, o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message ==
        "the snapshot's lifetime must be 1 to 3650 days, not 0");
}

/// Puts `reg`'s snapshot and signature into the copy `into` under their
/// intent names, as a publish interrupted before renaming them leaves them.
static void stageSnapshotIntent(const std::string &reg,
                                const std::string &into) {
  fs::copy_file(reg + "/snapshot.json", into + "/.snapshot.json.new");
  fs::copy_file(reg + "/snapshot.json.minisig",
                into + "/.snapshot.json.minisig.new");
}

TEST_CASE("registry: an interrupted commit is finished or undone by the "
          "next operation") {
  Fixture f;
  f.publish("tool", "1.0.0");
  // A copy of the registry before the next publish...
  std::string before = f.tmp.path + "/before";
  fs::copy(f.reg, before, fs::copy_options::recursive);
  f.publish("tool", "1.1.0");

  SUBCASE("crash after the index was written: rolled forward") {
    // ... with the new archive and index in place, and the new snapshot
    // and signature still under their intent names.
    fs::copy(f.reg + "/archives/tool", before + "/archives/tool",
             fs::copy_options::recursive |
                 fs::copy_options::overwrite_existing);
    fs::copy_file(f.reg + "/index/tool.json", before + "/index/tool.json",
                  fs::copy_options::overwrite_existing);
    stageSnapshotIntent(f.reg, before);
    auto v = resignRegistry(before, f.signing);
    REQUIRE_MESSAGE(v.has_value(), v.error().format());
    CHECK(*v == 4); // 3 was rolled forward, the resign made 4
    CHECK(
        nlohmann::json::parse(readText(before + "/index/tool.json"))["versions"]
            .size() == 2);
  }
  SUBCASE("crash before the index was written: undone") {
    stageSnapshotIntent(f.reg, before);
    auto v = resignRegistry(before, f.signing);
    REQUIRE_MESSAGE(v.has_value(), v.error().format());
    CHECK(*v == 3); // 2 was current; the intent for 3 was dropped
    CHECK(
        nlohmann::json::parse(readText(before + "/index/tool.json"))["versions"]
            .size() == 1);
  }
  CHECK_FALSE(fs::exists(before + "/.snapshot.json.new"));
  CHECK_FALSE(fs::exists(before + "/.snapshot.json.minisig.new"));
  CHECK(signing::verifyFile(f.pair.publicKey, before + "/snapshot.json"));
}

TEST_CASE("registry: a commit of several index files interrupted between "
          "their renames is finished from the staged copies") {
  Fixture f;
  f.publish("tool", "1.0.0");
  f.publish("lib", "1.0.0");
  std::string before = f.tmp.path + "/before";
  fs::copy(f.reg, before, fs::copy_options::recursive);
  auto r = publishArchives(f.reg,
                           {makeArchive(f.dist, "tool", "2.0.0"),
                            makeArchive(f.dist, "lib", "2.0.0")},
                           f.signing);
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  // The state after step 3's first rename: archives in place, the intent
  // complete, index/lib.json renamed, index/tool.json still staged.
  for (const char *name : {"tool", "lib"})
    fs::copy(f.reg + "/archives/" + name, before + "/archives/" + name,
             fs::copy_options::recursive |
                 fs::copy_options::overwrite_existing);
  fs::copy_file(f.reg + "/index/lib.json", before + "/index/lib.json",
                fs::copy_options::overwrite_existing);
  fs::copy_file(f.reg + "/index/tool.json", before + "/.index-tool.json.new");
  stageSnapshotIntent(f.reg, before);
  auto v = resignRegistry(before, f.signing);
  REQUIRE_MESSAGE(v.has_value(), v.error().format());
  CHECK(*v == 5); // 4 was rolled forward, the resign made 5
  for (const char *name : {"tool", "lib"})
    CHECK(readText(before + "/index/" + name + ".json") ==
          readText(f.reg + "/index/" + name + ".json"));
  CHECK_FALSE(fs::exists(before + "/.index-tool.json.new"));
  CHECK_FALSE(fs::exists(before + "/.snapshot.json.new"));

  // Staged files without a complete intent (the crash came before it) are
  // dropped, and the index files stay as they were.
  std::string old = readText(before + "/index/tool.json");
  fs::copy_file(f.reg + "/index/lib.json", before + "/.index-tool.json.new");
  REQUIRE(resignRegistry(before, f.signing).has_value());
  CHECK_FALSE(fs::exists(before + "/.index-tool.json.new"));
  CHECK(readText(before + "/index/tool.json") == old);
}

//===----------------------------------------------------------------------===//
// The client
//===----------------------------------------------------------------------===//

TEST_CASE("registry client: reads, verifies and downloads") {
  Fixture f;
  auto a = f.publish("alpha", "1.0.0");
  f.publish("alpha", "1.1.0", {{"dependencies", {{"beta", ">=2.0"}}}});
  auto b = f.publish("beta", "2.0.0");
  REQUIRE(yankVersion(f.reg, "alpha", V("1.0.0"), true, f.signing));

  auto c = f.openOk();
  CHECK(c->snapshot().version == 5);
  CHECK(c->signedBy() == signing::keyIdHex(f.pair.publicKey));
  CHECK(c->config().name == "test-registry");
  CHECK(c->packageNames() == std::vector<std::string>{"alpha", "beta"});
  CHECK(c->hasPackage("alpha"));
  CHECK(c->hasPackage("beta"));
  CHECK_FALSE(c->hasPackage("gamma"));
  CHECK_FALSE(c->hasPackage("alph"));

  auto versions = c->versions("alpha");
  REQUIRE(versions.has_value());
  REQUIRE(versions->size() == 2);
  CHECK((*versions)[0].version.str() == "1.0.0");
  CHECK((*versions)[0].yanked);
  const Dependency *beta = (*versions)[1].dependency("beta");
  REQUIRE(beta);
  CHECK(beta->constraint->text() == ">=2.0");
  CHECK_FALSE((*versions)[1].yanked);

  auto unknown = c->versions("gamma");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == ErrorCode::NotFound);
  auto notPublished = c->entry("alpha", V("9.0.0"));
  REQUIRE_FALSE(notPublished.has_value());
  CHECK(notPublished.error().message.find("published: 1.0.0, 1.1.0") !=
        std::string::npos);

  // trust.json records the snapshot version.
  std::string trust =
      f.cache + "/registries/" + registryId(f.reg) + "/trust.json";
  CHECK(nlohmann::json::parse(readText(trust))["snapshot_version"] == 5);

  auto paths = c->fetchArchives({{"alpha", V("1.0.0")}, {"beta", V("2.0.0")}},
                                f.reporter);
  REQUIRE_MESSAGE(paths.has_value(), paths.error().format());
  REQUIRE(paths->size() == 2);
  CHECK((*paths)[0] == f.cache + "/downloads/" + a.sha256.substr(0, 2) + "/" +
                           a.sha256 + ".ireepkg");
  CHECK((*paths)[0] == c->cachedArchivePath(a.sha256));
  CHECK(*sha256File((*paths)[0]) == a.sha256);
  CHECK(*sha256File((*paths)[1]) == b.sha256);

  SUBCASE("a cached archive is used without the registry") {
    fs::remove(f.reg + "/" + a.archivePath);
    auto again = c->fetchArchives({{"alpha", V("1.0.0")}}, f.reporter);
    REQUIRE_MESSAGE(again.has_value(), again.error().format());
    CHECK(*sha256File((*again)[0]) == a.sha256);
  }
  SUBCASE("a corrupt cached archive is deleted and fetched again") {
    fs::permissions((*paths)[0], fs::perms::owner_write, fs::perm_options::add);
    writeText((*paths)[0], "garbage");
    auto again = c->fetchArchives({{"alpha", V("1.0.0")}}, f.reporter);
    REQUIRE_MESSAGE(again.has_value(), again.error().format());
    CHECK(*sha256File((*again)[0]) == a.sha256);
  }
  SUBCASE("a second client reads index files from the verified cache") {
    REQUIRE(c->index("beta").has_value());
    c.reset(); // what a client parsed is kept when it closes
    fs::remove(f.reg + "/index/beta.json");
    auto c2 = f.openOk();
    auto idx = c2->index("beta");
    REQUIRE_MESSAGE(idx.has_value(), idx.error().format());
    CHECK((*idx)->versions.size() == 1);
  }
}

TEST_CASE("registry client: the resolver runs over it") {
  Fixture f;
  f.publish("base", "1.0.0");
  f.publish("base", "2.0.0");
  f.publish("mid", "1.0.0", {{"dependencies", {{"base", "^1.0"}}}});
  f.publish("app", "1.0.0", {{"dependencies", {{"mid", "*"}}}});
  f.publish("app", "1.1.0",
            {{"dependencies", {{"mid", "*"}, {"base", ">=2.0"}}}});
  auto c = f.openOk();
  ResolveRequest req;
  req.roots = {{"app", *Constraint::parse("*")}};
  auto r = resolve(req, *c);
  REQUIRE_MESSAGE(r.has_value(), r.error().format());
  // app 1.1.0 needs base >=2.0 and mid needs base ^1.0: app 1.0.0 it is.
  CHECK(r->versions.at("app").str() == "1.0.0");
  CHECK(r->versions.at("mid").str() == "1.0.0");
  CHECK(r->versions.at("base").str() == "1.0.0");

  req.roots = {{"app", *Constraint::parse(">=1.1.0")}};
  auto fail = resolve(req, *c);
  REQUIRE_FALSE(fail.has_value());
  CHECK(fail.error().code == ErrorCode::Conflict);
  CHECK(fail.error().message.find("version solving failed") !=
        std::string::npos);

  req.roots = {{"nothere", *Constraint::parse("*")}};
  auto missing = resolve(req, *c);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("nothere") != std::string::npos);
}

TEST_CASE("registry client: no trusted key configured") {
  Fixture f;
  RegistrySpec spec;
  spec.url = f.reg;
  ClientOptions o;
  o.cacheRoot = f.cache;
  auto c = RegistryClient::open(spec, o, f.reporter);
  REQUIRE_FALSE(c.has_value());
  std::string pub = signing::publicKeyBase64(f.pair.publicKey);
  CHECK(c.error().message ==
        "no trusted key is configured for registry \"default\" (" + f.reg +
            "), so its snapshot cannot be checked; its config.json lists " +
            pub + " (key id " + signing::keyIdHex(f.pair.publicKey) + ")");
  CHECK(c.error().hint.find("`--registry-key " + pub + "`") !=
        std::string::npos);
  CHECK(c.error().hint.find("\"public_key\": \"" + pub + "\"") !=
        std::string::npos);
  // Nothing is recorded about a registry that was not verified.
  CHECK_FALSE(fs::exists(f.cache + "/registries"));
}

TEST_CASE("registry client: every attack is refused with its own message, "
          "and nothing reaches the download cache") {
  Fixture f;
  auto a = f.publish("alpha", "1.0.0");
  const std::string archive = f.reg + "/" + a.archivePath;
  std::string message;
  std::string expectFile;

  SUBCASE("tampered archive") {
    std::string bytes = readText(archive);
    bytes[bytes.size() / 2] ^= 0x01;
    writeText(archive, bytes);
    auto c = f.openOk();
    auto r = c->fetchArchives({{"alpha", V("1.0.0")}}, f.reporter);
    REQUIRE_FALSE(r.has_value());
    message = r.error().message;
    CHECK(message.find("alpha 1.0.0: the archive's SHA-256 is ") == 0);
    CHECK(message.find("but its index entry declares " + a.sha256) !=
          std::string::npos);
    CHECK(r.error().code == ErrorCode::Integrity);
  }
  SUBCASE("archive larger than declared") {
    writeText(archive, readText(archive) + std::string(100000, 'x'));
    auto c = f.openOk();
    auto r = c->fetchArchives({{"alpha", V("1.0.0")}}, f.reporter);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "alpha 1.0.0: the archive is larger than the " +
              std::to_string(a.size) +
              " bytes its index entry declares; the download was cut off "
              "there");
  }
  SUBCASE("archive shorter than declared") {
    std::string bytes = readText(archive);
    writeText(archive, bytes.substr(0, bytes.size() - 1));
    auto c = f.openOk();
    auto r = c->fetchArchives({{"alpha", V("1.0.0")}}, f.reporter);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "alpha 1.0.0: the archive is " + std::to_string(a.size - 1) +
              " bytes, but its index entry declares " + std::to_string(a.size));
  }
  SUBCASE("tampered index") {
    nlohmann::json idx = f.json("index/alpha.json");
    idx["versions"][0]["sha256"] = std::string(64, 'a');
    writeText(f.reg + "/index/alpha.json", idx.dump(2) + "\n");
    auto c = f.openOk();
    auto r = c->index("alpha");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find("index/alpha.json of " + f.reg +
                                 " does not match snapshot.json: its "
                                 "SHA-256 is ") == 0);
    CHECK(r.error().message.find("the signed snapshot (version 2) pins") !=
          std::string::npos);
    CHECK(r.error().code == ErrorCode::Integrity);
    // versions() must not turn it into "no such package".
    CHECK(c->versions("alpha").error().code == ErrorCode::Integrity);
  }
  SUBCASE("mix-and-match of index files from two snapshots") {
    {
      auto c = f.openOk();
      REQUIRE(c->index("alpha").has_value()); // verified under snapshot 2
    }
    std::string old = readText(f.reg + "/index/alpha.json");
    f.publish("alpha", "1.1.0");
    writeText(f.reg + "/index/alpha.json", old);
    auto c = f.openOk();
    CHECK(c->snapshot().version == 3);
    auto r = c->index("alpha");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "mix-and-match: index/alpha.json of " + f.reg +
              " is an index this machine verified under an earlier "
              "snapshot, not the one snapshot.json (version 3) pins");
  }
  SUBCASE("index describing another package") {
    f.publish("beta", "1.0.0");
    // A snapshot that pins beta's index under alpha's name.
    nlohmann::json snap = f.json("snapshot.json");
    snap["index"]["alpha"] = snap["index"]["beta"];
    std::string t = snap.dump(2) + "\n";
    writeText(f.reg + "/snapshot.json", t);
    fs::copy_file(f.reg + "/index/beta.json", f.reg + "/index/alpha.json",
                  fs::copy_options::overwrite_existing);
    auto sig = signing::signBuffer(f.pair.secretKey, t, {});
    REQUIRE(
        signing::writeSignatureFile(*sig, f.reg + "/snapshot.json.minisig"));
    auto c = f.openOk();
    auto r = c->index("alpha");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message == "index/alpha.json of " + f.reg +
                                   " describes package \"beta\", not "
                                   "\"alpha\"");
  }
  SUBCASE("unsigned snapshot") {
    fs::remove(f.reg + "/snapshot.json.minisig");
    auto c = f.open();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message ==
          "snapshot.json of " + f.reg +
              " is not signed: snapshot.json.minisig is missing");
    CHECK(c.error().where.file == f.reg + "/snapshot.json.minisig");
  }
  SUBCASE("snapshot signed by a wrong key") {
    auto other = signing::generateKeyPair();
    auto sig = signing::signBuffer(other.secretKey,
                                   readText(f.reg + "/snapshot.json"), {});
    REQUIRE(
        signing::writeSignatureFile(*sig, f.reg + "/snapshot.json.minisig"));
    auto c = f.open();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message ==
          "snapshot.json of " + f.reg + " is signed by key " +
              signing::keyIdHex(other.publicKey) +
              ", which is not a key you trust for this registry (trusted: " +
              signing::keyIdHex(f.pair.publicKey) + ")");
  }
  SUBCASE("snapshot changed after signing") {
    nlohmann::json snap = f.json("snapshot.json");
    snap["expires"] = "2099-01-01T00:00:00Z";
    writeText(f.reg + "/snapshot.json", snap.dump(2) + "\n");
    auto c = f.open();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message.find("snapshot.json of " + f.reg +
                                 " fails its signature check (key " +
                                 signing::keyIdHex(f.pair.publicKey) +
                                 "): signature does not match the file") == 0);
  }
  SUBCASE("rollback") {
    std::string oldSnap = readText(f.reg + "/snapshot.json");
    std::string oldSig = readText(f.reg + "/snapshot.json.minisig");
    f.publish("alpha", "1.1.0");
    f.openOk(); // sees version 3
    writeText(f.reg + "/snapshot.json", oldSnap);
    writeText(f.reg + "/snapshot.json.minisig", oldSig);
    auto c = f.open();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message ==
          "rollback: snapshot.json of " + f.reg +
              " is version 2, older than version 3 that this machine has "
              "already seen from this registry");
    CHECK(c.error().hint.find("trust.json") != std::string::npos);
    // The record is not lowered by the refused snapshot.
    std::string trust =
        f.cache + "/registries/" + registryId(f.reg) + "/trust.json";
    CHECK(nlohmann::json::parse(readText(trust))["snapshot_version"] == 3);
    // A bundle is not held to this machine's history.
    ClientOptions bundle;
    bundle.bundle = true;
    auto b = f.open(bundle);
    REQUIRE_MESSAGE(b.has_value(), b.error().format());
    CHECK((*b)->snapshot().version == 2);
  }
  SUBCASE("expired snapshot (freeze)") {
    ClientOptions o;
    o.now = std::time(nullptr) + 31 * 86400;
    auto c = f.open(o);
    REQUIRE_FALSE(c.has_value());
    std::string expires = f.json("snapshot.json")["expires"];
    CHECK(c.error().message ==
          "snapshot.json of " + f.reg + " (version 2) expired at " + expires +
              " (freeze): it no longer vouches for the registry's contents");
    CHECK(c.error().hint.find("ireepkg registry resign") != std::string::npos);
    // A bundle is meant to be installed long after it was made.
    o.bundle = true;
    CHECK(f.open(o).has_value());
  }
  SUBCASE("oversized snapshot") {
    // A sparse file: no disk space, but far over the cap.
    fs::resize_file(f.reg + "/snapshot.json", 64ull << 20);
    auto c = f.open();
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message ==
          "metadata file is larger than the 33554432 bytes allowed (67108864 "
          "bytes)");
    CHECK(c.error().where.file == f.reg + "/snapshot.json");
  }
  SUBCASE("oversized index") {
    auto c = f.openOk();
    fs::resize_file(f.reg + "/index/alpha.json", 17ull << 20);
    auto r = c->index("alpha");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message ==
          "metadata file is larger than the 16777216 bytes allowed (17825792 "
          "bytes)");
    CHECK(r.error().where.file == f.reg + "/index/alpha.json");
  }
  CHECK(f.downloadedFiles() == 0);
}

TEST_CASE("registry client: offline, missing archives of a remote registry "
          "are named, and nothing is downloaded") {
  Fixture f;
  auto a = f.publish("alpha", "1.0.0");
  f.publish("beta", "1.0.0");

  // The directory's files, presented as a remote registry.
  struct Remote : Transport {
    std::unique_ptr<Transport> inner;
    int downloads = 0;
    std::string describe() const override {
      return "https://plugins.example.org/iree";
    }
    Expected<net::MetadataResponse> fetch(const std::string &rel,
                                          uint64_t max) override {
      return inner->fetch(rel, max);
    }
    Status downloadAll(const std::vector<Download> &d, Reporter &r) override {
      ++downloads;
      return inner->downloadAll(d, r);
    }
  };
  auto remote = std::make_unique<Remote>();
  ClientOptions o;
  o.cacheRoot = f.cache;
  o.offline = true;
  auto inner = openTransport(f.spec(), o);
  REQUIRE(inner.has_value());
  remote->inner = std::move(*inner);
  Remote *seen = remote.get();
  RegistrySpec spec = f.spec();
  spec.url = "https://plugins.example.org/iree";
  auto c = RegistryClient::open(spec, std::move(remote), o, f.reporter);
  REQUIRE_MESSAGE(c.has_value(), c.error().format());
  auto r = (*c)->fetchArchives({{"alpha", V("1.0.0")}, {"beta", V("1.0.0")}},
                               f.reporter);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == ErrorCode::NotFound);
  CHECK(r.error().message ==
        "offline, and not in the download cache: alpha 1.0.0, beta 1.0.0");
  CHECK(seen->downloads == 0);
  CHECK(f.downloadedFiles() == 0);
}

TEST_CASE("registry client: readers never fail while a publisher updates the "
          "registry") {
  Fixture f;
  f.publish("tool", "1.0.0");
  std::vector<std::string> archives;
  for (int i = 1; i <= 12; ++i)
    archives.push_back(
        makeArchive(f.dist, "tool", "1." + std::to_string(i) + ".0"));
  std::atomic<bool> done{false};
  std::string publishFailure;
  std::thread publisher([&] {
    for (const std::string &a : archives)
      if (auto r = publishArchive(f.reg, a, f.signing); !r) {
        publishFailure = r.error().format();
        break;
      }
    done = true;
  });
  int reads = 0;
  std::string failure;
  while (!done && failure.empty()) {
    auto c = f.open();
    if (!c) {
      failure = c.error().format();
      break;
    }
    auto idx = (*c)->index("tool");
    if (!idx)
      failure = idx.error().format();
    ++reads;
  }
  publisher.join();
  REQUIRE_MESSAGE(publishFailure.empty(), publishFailure);
  CHECK_MESSAGE(failure.empty(), failure);
  CHECK(reads > 0);
  auto c = f.openOk();
  CHECK(c->snapshot().version == 14);
}

TEST_CASE("registry: URLs are normalized into one cache id") {
  CHECK(normalizeRegistryUrl("HTTPS://Plugins.Example.org/IREE/") ==
        "https://plugins.example.org/IREE");
  CHECK(registryId("https://plugins.example.org/iree") ==
        registryId("https://PLUGINS.example.org/iree/"));
  CHECK(registryId("https://plugins.example.org/iree").size() == 16);
  CHECK(normalizeRegistryUrl("/srv/reg/") == "file:///srv/reg");
  CHECK(normalizeRegistryUrl("file:///srv/reg") == "file:///srv/reg");
  CHECK(normalizeRegistryUrl("file://localhost/srv/my%20reg") ==
        "file:///srv/my reg");
}

TEST_CASE("registry: transports for directories, file:// URLs and what "
          "neither is") {
  Fixture f;
  ClientOptions o;
  o.cacheRoot = f.cache;
  RegistrySpec spec = f.spec();
  for (std::string url :
       {f.reg, "file://" + f.reg, "file://localhost" + f.reg, f.reg + "/"}) {
    spec.url = url;
    auto t = openTransport(spec, o);
    REQUIRE_MESSAGE(t.has_value(), t.error().format());
    CHECK((*t)->describe() == url);
    auto config = (*t)->fetch("config.json", 1 << 20);
    REQUIRE(config.has_value());
    CHECK(config->body == readText(f.reg + "/config.json"));
    auto missing = (*t)->fetch("index/nothing.json", 1 << 20);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == ErrorCode::NotFound);
    auto small = (*t)->fetch("config.json", 10);
    REQUIRE_FALSE(small.has_value());
    CHECK(small.error().code == ErrorCode::Integrity);
  }
  spec.url = f.tmp.path + "/nowhere";
  auto none = openTransport(spec, o);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message == "registry \"default\": no such directory");
  spec.url = "ftp://plugins.example.org/iree";
  auto ftp = openTransport(spec, o);
  REQUIRE_FALSE(ftp.has_value());
  CHECK(ftp.error().code == ErrorCode::Unsupported);
  CHECK(ftp.error().message == "registry \"default\": unsupported URL "
                               "\"ftp://plugins.example.org/iree\"");
}
