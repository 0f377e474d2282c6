//===- registry/src/publish/publisher.cpp ---------------------------------===//
//
// registry init, publish, yank, resign.
//
// Writes a registry's files (formats.md §5) into a directory. Every
// operation runs under an exclusive fcntl lock on <dir>/.lock, checks the
// current state before building on it (config.json, the signature of
// snapshot.json against config.json's keys, the hash of every index file it
// rewrites), and writes every file atomically (temp file, fsync, rename,
// fsync of the directory).
//
// Why one file of this size: init, publish, yank and resign share the
// session, the write order of commit() and the recovery from an
// interrupted commit, which are one protocol and are read together.
//
// A publish of several archives is one operation: every archive is checked
// before anything is written, and one snapshot covers them all.
//
// The order of the writes, and why. Readers take no lock: a client reads
// snapshot.json, its signature, then index files, then archives. So:
//
//   1. the archives and their .minisig go into place first (each renamed,
//      then each directory synced once): nothing refers to them yet;
//   2. the new index files are written, complete and synced, as
//      .index-<name>.json.new; then the new snapshot and its signature, as
//      .snapshot.json.new and .snapshot.json.minisig.new: this is the
//      intent, from which an interrupted operation is finished (below);
//   3. the staged index files are renamed over index/<name>.json (a publish
//      of several packages has several), and index/ is synced;
//   4. the signature is renamed over snapshot.json.minisig, and
//   5. .snapshot.json.new is renamed over snapshot.json: the commit point.
//
// Whenever snapshot.json is the new one, every file it names (index files,
// archives, its own signature) is already in place, so a reader never sees
// a snapshot pointing at something missing. Two files cannot be replaced in
// one step, though: between 3 and 5 a reader can meet the new index under
// the old snapshot, and between 4 and 5 the new signature beside the old
// snapshot. Both look exactly like an attack (mix-and-match, a bad
// signature), so the client, before refusing, reads the snapshot and its
// signature once more after a short pause (client.cpp): by then it sees the
// new consistent state.
//
// A publish killed between 4 and 5 (kill -9, a power cut) leaves that pair
// for good, until the next operation recovers. So readers never depend on
// the pause for it: a client whose snapshot.json does not verify against
// snapshot.json.minisig verifies the intent, .snapshot.json.new, against
// it (client.cpp, fetchSnapshot). The intent is complete before step 3 and
// is only ever renamed, and every file it names is in place by step 4, so
// at every instant the pair a reader can verify is the old signed state
// (before 4) or the new one (from 4 on). This needs no change of the
// registry's layout, which static HTTP servers and mirrors copy as it is.
//
// Recovery: every operation starts, under the lock, by finishing what an
// interrupted one left. If .snapshot.json.new is there and its signature
// verifies, each index file it pins that lacks its hash is renamed in from
// its staged copy (the crash came during step 3: every staged file was
// complete before the intent was written), and the intent is renamed into
// place when every index file then has the hash it pins; otherwise the
// crash came before step 3, the index files are still the old ones, and
// the intent is deleted. Staged index files, incoming archives and
// signatures, extraction directories and the temporary files of the intent,
// its signature and config.json (".<file>.tmp.<pid>", of a write killed
// before its rename) left over are removed.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/suggest.h"

#include "ireepkg/base/fault_point.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/package/signature.h"
#include "transport/oci.h"
#include "client/metadata_files.h"
#include "ireepkg/registry/client/registry_cache.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::registry {

using namespace detail;

namespace {

constexpr const char *kConfig = "config.json";
constexpr const char *kSnapshot = "snapshot.json";
constexpr const char *kSnapshotSig = "snapshot.json.minisig";
constexpr const char *kSnapshotNew = kStagedSnapshot;     // the client reads
constexpr const char *kSnapshotSigNew = kStagedSignature; // them too
constexpr const char *kLock = ".lock";
constexpr const char *kIncomingPrefix = ".incoming-";
constexpr const char *kVerifyPrefix = ".verify-";

std::string randomSuffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return std::to_string(::getpid()) + "-" + buf;
}

/// Removes a path (file or tree) when it goes out of scope, unless
/// released.
class Cleanup {
public:
  explicit Cleanup(std::string path) : path_(std::move(path)) {}
  ~Cleanup() {
    if (!path_.empty())
      (void)fsutil::removeTree(path_);
  }
  void release() { path_.clear(); }

private:
  std::string path_;
};

Status checkExpiresDays(int days) {
  if (days < 1 || days > 3650)
    return makeError(ErrorCode::Invalid,
                     "the snapshot's lifetime must be 1 to 3650 days, not " +
                         std::to_string(days),
                     {},
                     "give --expires-days a number of days in that range "
                     "(clients refuse a snapshot once it expires: re-sign "
                     "before then with `ireepkg registry resign`)");
  return ok();
}

Expected<signing::SecretKey> loadKey(const SigningOptions &options) {
  if (options.secretKeyPath.empty())
    return makeError(ErrorCode::Usage, "no signing key given", {},
                     "a registry is signed with a minisign secret key: make "
                     "one with `ireepkg key generate -o registry-signing` "
                     "and pass --key registry-signing.key");
  auto file = signing::readSecretKeyFile(options.secretKeyPath);
  if (!file)
    return Unexpected(file.error());
  if (file->encrypted && !options.password)
    return makeError(
        ErrorCode::Usage, "the secret key is encrypted; its password is needed",
        Location::inFile(options.secretKeyPath), "give it with --password-file FILE");
  std::optional<std::string_view> password;
  if (file->encrypted)
    password = *options.password;
  return signing::unlockSecretKey(*file, password);
}

Expected<RegistryConfig> readConfig(const std::string &dir) {
  std::string path = dir + "/" + kConfig;
  if (!fsutil::exists(path))
    return makeError(ErrorCode::NotFound,
                     dir + " is not a registry: it has no config.json",
                     Location::inFile(path),
                     "create a registry with `ireepkg registry init " + dir +
                         " --key <secret key>`");
  auto doc = JsonDocument::load(path);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  RegistryConfig config = parseRegistryConfig(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Parse, diags);
  return config;
}

std::vector<signing::PublicKey> configKeys(const RegistryConfig &config,
                                           const std::string &dir) {
  std::vector<signing::PublicKey> keys;
  for (const std::string &k : config.keys)
    if (auto key = signing::parsePublicKey(k, dir + "/" + kConfig))
      keys.push_back(*key);
  return keys;
}

std::string keyIdList(const std::vector<signing::PublicKey> &keys) {
  std::string out;
  for (const auto &k : keys)
    out += (out.empty() ? "" : ", ") + signing::keyIdHex(k);
  return out.empty() ? "none" : out;
}

/// The signing key's public half must be one of config.json's keys.
Status checkKeyListed(const signing::SecretKey &key,
                      const std::vector<signing::PublicKey> &keys,
                      const SigningOptions &options, const std::string &dir) {
  signing::PublicKey pub = key.publicKey();
  for (const auto &k : keys)
    if (k == pub)
      return ok();
  return makeError(
      ErrorCode::Invalid,
      "the signing key " + signing::keyIdHex(pub) +
          " is not one of the registry's keys (config.json lists: " +
          keyIdList(keys) + ")",
      Location::inFile(options.secretKeyPath),
      "sign with the secret key whose public half is in " + dir +
          "/config.json; to change keys, add the new public key (" +
          signing::publicKeyBase64(pub) +
          ") to config.json's \"keys\" first, and remove the old one only "
          "once every client trusts the new one");
}

/// Verifies `snapshotText` against `sigText` with any of `keys`.
Status verifySnapshotSignature(const std::string &snapshotText,
                               const std::string &sigText,
                               const std::vector<signing::PublicKey> &keys,
                               const std::string &snapshotPath,
                               const std::string &sigPath) {
  auto sig = signing::parseSignature(sigText, sigPath);
  if (!sig)
    return Unexpected(sig.error());
  for (const auto &k : keys)
    if (k.keyId == sig->keyId) {
      auto v =
          signing::verifyBuffer(k, snapshotText, *sig, snapshotPath, sigPath);
      if (!v)
        return Unexpected(v.error());
      return ok();
    }
  return makeError(
      ErrorCode::Integrity,
      "snapshot.json is signed by key " + signing::keyIdHex(sig->keyId) +
          ", which config.json does not list (it lists: " + keyIdList(keys) +
          ")",
      Location::inFile(sigPath));
}

Expected<RegistrySnapshot> parseSnapshotText(const std::string &text,
                                             const std::string &path) {
  auto doc = JsonDocument::parse(text, path);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  RegistrySnapshot s = parseRegistrySnapshot(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Parse, diags);
  return s;
}

/// Where commit() stages index/<name>.json's new content until it renames
/// it into place: in the registry's top directory, which recover() reads
/// anyway (index/ may hold thousands of files).
std::string stagedIndexPath(const std::string &dir, const std::string &name) {
  return dir + "/" + stagedIndexName(name);
}

/// Does every index file the snapshot pins have that hash on disk?
bool indexFilesMatch(const std::string &dir, const RegistrySnapshot &s) {
  for (const auto &[name, hash] : s.index) {
    auto h = sha256File(dir + "/index/" + name + ".json");
    if (!h || "sha256:" + *h != hash)
      return false;
  }
  return true;
}

/// Removes index files staged by a commit that did not get as far as its
/// intent (or that recover() has finished).
Status dropStagedIndexFiles(const std::string &dir) {
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(kStagedIndexPrefix, 0) == 0)
      if (::unlink(e.path().c_str()) != 0 && errno != ENOENT)
        return Unexpected(fsutil::ioError("cannot remove", e.path(), errno));
  }
  return ok();
}

/// Whether `name` is the temporary file (fsutil::writeFileAtomic's) of one
/// of the registry's files written that way: the intent, its signature and
/// config.json. Only these are removed by recover().
bool isOwnTemporary(const std::string &name) {
  if (!fsutil::isAtomicTempName(name))
    return false;
  for (const char *f : {kSnapshotNew, kSnapshotSigNew, kConfig})
    if (name.rfind("." + std::string(f) + ".tmp.", 0) == 0)
      return true;
  return false;
}

/// Finishes or undoes what an interrupted operation left (see the file
/// comment). Called with the lock held.
Status recover(const std::string &dir,
               const std::vector<signing::PublicKey> &keys) {
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind(kIncomingPrefix, 0) == 0 || n.rfind(kVerifyPrefix, 0) == 0)
      if (Status s = fsutil::removeTree(e.path().string()); !s)
        return s;
    // A write killed before its rename (the lock is held: no writer is
    // using it now).
    if (isOwnTemporary(n) && e.is_regular_file(ec) && !e.is_symlink(ec) &&
        ::unlink(e.path().c_str()) != 0 && errno != ENOENT)
      return Unexpected(fsutil::ioError("cannot remove", e.path(), errno));
  }
  const std::string intent = dir + "/" + kSnapshotNew;
  const std::string intentSig = dir + "/" + kSnapshotSigNew;
  if (!fsutil::exists(intent)) {
    ::unlink(intentSig.c_str());
    return dropStagedIndexFiles(dir);
  }
  bool sigPending = fsutil::exists(intentSig);
  std::string sigPath = sigPending ? intentSig : dir + "/" + kSnapshotSig;
  auto text = fsutil::readFile(intent);
  auto sigText = fsutil::readFile(sigPath);
  bool complete = false;
  if (text && sigText &&
      verifySnapshotSignature(*text, *sigText, keys, intent, sigPath)) {
    auto s = parseSnapshotText(*text, intent);
    if (s) {
      // The commit stopped while renaming its staged index files: the
      // ones not renamed yet are staged, with the hash the intent pins.
      bool renamed = false;
      for (const auto &[name, hash] : s->index) {
        const std::string dest = dir + "/index/" + name + ".json";
        const std::string staged = stagedIndexPath(dir, name);
        auto have = sha256File(dest);
        if (have && "sha256:" + *have == hash)
          continue;
        auto next = sha256File(staged);
        if (next && "sha256:" + *next == hash &&
            ::rename(staged.c_str(), dest.c_str()) == 0)
          renamed = true;
      }
      if (renamed)
        if (Status st = fsutil::fsyncPath(dir + "/index"); !st)
          return st;
      complete = indexFilesMatch(dir, *s);
    }
  }
  if (Status st = dropStagedIndexFiles(dir); !st)
    return st;
  if (complete) {
    if (sigPending)
      if (Status s = fsutil::renameDurable(intentSig, dir + "/" + kSnapshotSig);
          !s)
        return s;
    return fsutil::renameDurable(intent, dir + "/" + kSnapshot);
  }
  if (::unlink(intent.c_str()) != 0 && errno != ENOENT)
    return Unexpected(fsutil::ioError("cannot remove", intent, errno));
  if (::unlink(intentSig.c_str()) != 0 && errno != ENOENT)
    return Unexpected(fsutil::ioError("cannot remove", intentSig, errno));
  return fsutil::fsyncPath(dir);
}

/// The current snapshot, verified against config.json's keys.
Expected<RegistrySnapshot>
readVerifiedSnapshot(const std::string &dir,
                     const std::vector<signing::PublicKey> &keys) {
  const std::string path = dir + "/" + kSnapshot;
  const std::string sigPath = dir + "/" + kSnapshotSig;
  auto text = fsutil::readFile(path);
  if (!text)
    return Unexpected(text.error());
  if (!fsutil::exists(sigPath))
    return makeError(ErrorCode::Integrity,
                     "the registry's snapshot.json is not signed (" +
                         std::string(kSnapshotSig) + " is missing)",
                     Location::inFile(path),
                     "sign the current state with `ireepkg registry resign " +
                         dir + " --key <secret key>`");
  auto sigText = fsutil::readFile(sigPath);
  if (!sigText)
    return Unexpected(sigText.error());
  if (Status s = verifySnapshotSignature(*text, *sigText, keys, path, sigPath);
      !s) {
    Error e = s.error();
    e.message = "the registry's current snapshot does not verify, so it is "
                "not built upon: " +
                e.message;
    e.hint = "if the registry's files were changed by hand or by someone "
             "else, restore them from a copy you trust; if you replaced the "
             "key in config.json, list the old and the new key together, "
             "then run `ireepkg registry resign` with the new one";
    return Unexpected(e);
  }
  return parseSnapshotText(*text, path);
}

/// index/<name>.json, checked against the hash the snapshot pins.
Expected<RegistryIndex> readVerifiedIndex(const std::string &dir,
                                          const std::string &name,
                                          const std::string &pinned) {
  const std::string path = dir + "/index/" + name + ".json";
  auto text = fsutil::readFile(path);
  if (!text)
    return Unexpected(text.error());
  if ("sha256:" + Sha256::hex(*text) != pinned)
    return makeError(ErrorCode::Integrity,
                     "index/" + name +
                         ".json does not have the hash snapshot.json pins",
                     Location::inFile(path),
                     "the index was changed outside ireepkg; restore it from "
                     "a copy you trust (its SHA-256 must be " +
                         pinned.substr(7) + ")");
  auto doc = JsonDocument::parse(*text, path);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  RegistryIndex idx = parseRegistryIndex(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Parse, diags);
  return idx;
}

nlohmann::json indexToJson(const RegistryIndex &idx) {
  nlohmann::json versions = nlohmann::json::array();
  for (const IndexEntry &e : idx.versions) {
    nlohmann::json v = {{"version", e.version.str()},
                        {"archive", e.archive},
                        {"sha256", e.sha256},
                        {"size", e.size},
                        {"yanked", e.yanked}};
    nlohmann::json plats = nlohmann::json::array();
    for (const Platform &p : e.platforms)
      plats.push_back(p.str());
    v["platforms"] = plats;
    if (!e.summary.empty())
      v["summary"] = e.summary;
    if (!e.dependencies.empty()) {
      nlohmann::json deps = nlohmann::json::object();
      for (const auto &[n, c] : e.dependencies)
        deps[n] = c.text();
      v["dependencies"] = deps;
    }
    if (e.requiresIree)
      v["requires"] = {{"iree", e.requiresIree->text()}};
    versions.push_back(std::move(v));
  }
  return {{"schema_version", kSchemaVersion},
          {"name", idx.name},
          {"versions", versions}};
}

nlohmann::json snapshotToJson(const RegistrySnapshot &s) {
  nlohmann::json index = nlohmann::json::object();
  for (const auto &[n, h] : s.index)
    index[n] = h;
  return {{"schema_version", kSchemaVersion},
          {"version", s.version},
          {"expires", s.expires},
          {"index", index}};
}

/// Everything one operation holds: the lock, the checked config and keys,
/// the signing key and the verified current snapshot.
struct Session {
  std::string dir;
  cache::FileLock lock;
  RegistryConfig config;
  std::vector<signing::PublicKey> keys;
  signing::SecretKey key;
  RegistrySnapshot snapshot;
  int64_t now = 0;
};

Expected<Session> openSession(const std::string &registryDir,
                              const SigningOptions &options) {
  Session s;
  s.dir = registryDir;
  while (s.dir.size() > 1 && s.dir.back() == '/')
    s.dir.pop_back();
  if (Status st = checkExpiresDays(options.expiresDays); !st)
    return Unexpected(st.error());
  if (!fsutil::isDirectory(s.dir))
    return makeError(ErrorCode::NotFound, "no such registry directory",
                     Location::inFile(s.dir),
                     "create a registry with `ireepkg registry init " + s.dir +
                         " --key <secret key>`");
  auto config = readConfig(s.dir);
  if (!config)
    return Unexpected(config.error());
  s.config = std::move(*config);
  s.keys = configKeys(s.config, s.dir);
  auto key = loadKey(options);
  if (!key)
    return Unexpected(key.error());
  s.key = *key;
  if (Status st = checkKeyListed(s.key, s.keys, options, s.dir); !st)
    return Unexpected(st.error());
  auto lock = cache::FileLock::acquire(s.dir + "/" + kLock);
  if (!lock)
    return Unexpected(lock.error());
  s.lock = std::move(*lock);
  if (Status st = recover(s.dir, s.keys); !st)
    return Unexpected(st.error());
  auto snapshot = readVerifiedSnapshot(s.dir, s.keys);
  if (!snapshot)
    return Unexpected(snapshot.error());
  s.snapshot = std::move(*snapshot);
  s.now = currentTime(options.now);
  return s;
}

/// Signs and commits `next` (version and expires already set) with the
/// new index files (package name, content), in the order of the file
/// comment.
Status
commit(const Session &s, const RegistrySnapshot &next,
       const std::vector<std::pair<std::string, std::string>> &indexFiles) {
  const std::string text = canonicalJson(snapshotToJson(next));
  signing::SignOptions so;
  so.trustedComment =
      "timestamp:" + std::to_string(s.now) +
      "\tfile:snapshot.json\tversion:" + std::to_string(next.version) +
      "\texpires:" + next.expires;
  auto sig = signing::signBuffer(s.key, text, so);
  if (!sig)
    return Unexpected(sig.error());
  const std::string indexDir = s.dir + "/index";
  auto dropStaged = [&] {
    for (const auto &[name, content] : indexFiles)
      ::unlink(stagedIndexPath(s.dir, name).c_str());
  };
  // The new index files, in full and synced, under their staged names.
  if (!indexFiles.empty()) {
    if (Status st = fsutil::makeDirs(indexDir); !st)
      return st;
    for (const auto &[name, content] : indexFiles) {
      const std::string staged = stagedIndexPath(s.dir, name);
      ::unlink(staged.c_str());
      if (Status st = fsutil::writeNewFile(staged, content); !st) {
        dropStaged();
        return st;
      }
    }
    if (Status st = fsutil::fsyncPath(s.dir); !st) {
      dropStaged();
      return st;
    }
  }
  const std::string intent = s.dir + "/" + kSnapshotNew;
  const std::string intentSig = s.dir + "/" + kSnapshotSigNew;
  if (Status st = fsutil::writeFileAtomic(intent, text, 0644,
                                          "registry-snapshot-temp-written");
      !st) {
    dropStaged();
    return st;
  }
  if (Status st = signing::writeSignatureFile(*sig, intentSig); !st) {
    ::unlink(intent.c_str());
    dropStaged();
    return st;
  }
  faultPoint("registry-intent-written");
  // From here on, an interrupted commit is finished by the next operation
  // (recover): the intent and every staged index file are in place.
  for (const auto &[name, content] : indexFiles) {
    const std::string dest = indexDir + "/" + name + ".json";
    if (::rename(stagedIndexPath(s.dir, name).c_str(), dest.c_str()) != 0)
      return Unexpected(fsutil::ioError("cannot rename into", dest, errno));
    if (indexFiles.size() > 1 && name == indexFiles.begin()->first)
      faultPoint("registry-first-index-renamed");
  }
  if (!indexFiles.empty())
    if (Status st = fsutil::fsyncPath(indexDir); !st)
      return st;
  faultPoint("registry-index-renamed");
  if (Status st = fsutil::renameDurable(intentSig, s.dir + "/" + kSnapshotSig);
      !st)
    return st;
  faultPoint("registry-signature-renamed");
  return fsutil::renameDurable(intent, s.dir + "/" + kSnapshot);
}

RegistrySnapshot nextSnapshot(const Session &s, int expiresDays) {
  RegistrySnapshot next = s.snapshot;
  next.version = s.snapshot.version + 1;
  next.expiresUnix = s.now + int64_t(expiresDays) * 86400;
  next.expires = formatRfc3339(next.expiresUnix);
  return next;
}

/// The platforms a package has builds for, as `install` decides it
/// (install.cpp, supportsPlatform): a platform key names itself, an
/// architecture key (embedded-elf) every OS on that architecture, and a
/// FatELF file every OS on each architecture it holds. Empty: no native
/// code, platform-independent.
std::vector<Platform> manifestPlatforms(const Manifest &m,
                                        const std::string &extractedDir) {
  std::set<std::string> out;
  auto allOs = [&](Arch arch) {
    for (std::string_view os : osNames())
      out.insert(std::string(os) + "-" + std::string(archName(arch)));
  };
  for (const RuntimePlugin &rp : m.runtimePlugins)
    for (const auto &[key, path] : rp.library) {
      if (auto p = Platform::parse(key)) {
        out.insert(p->str());
      } else if (auto a = parseArch(key)) {
        allOs(*a);
      } else if (key == "fat") {
        bool known = false;
        auto data = fsutil::readFile(extractedDir + "/" + path, 1ull << 31);
        if (data)
          if (auto records = fatelf::parse(*data, path))
            for (const fatelf::Record &r : *records)
              if (auto a = fatelf::archOf(r.machine, r.wordSize)) {
                allOs(*a);
                known = true;
              }
        if (!known) // as install does: a FatELF may hold any architecture
          for (std::string_view a : archNames())
            allOs(*parseArch(a));
      }
    }
  for (const CompilerPlugin &cp : m.compilerPlugins)
    for (const auto &[key, path] : cp.library)
      if (auto p = Platform::parse(key))
        out.insert(p->str());
  std::vector<Platform> plats;
  for (const std::string &s : out)
    plats.push_back(*Platform::parse(s));
  return plats;
}

/// Copies `src` to a new file `dest`, hashing it on the way.
Status copyHashing(const std::string &src, const std::string &dest,
                   std::string &sha256, uint64_t &size) {
  struct stat st;
  auto opened = fsutil::openForReading(src, &st);
  if (!opened) {
    Error e = opened.error();
    if (e.code == ErrorCode::Invalid)
      e.hint = "give the path of a .ireepkg archive";
    return Unexpected(e);
  }
  int in = opened->release();
  int out = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    int e = errno;
    ::close(in);
    return Unexpected(fsutil::ioError("cannot create", dest, e));
  }
  Sha256 h;
  size = 0;
  std::vector<char> buf(1 << 20);
  Status result = ok();
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      result = Unexpected(fsutil::ioError("read failed", src, errno));
      break;
    }
    if (n == 0)
      break;
    h.update(buf.data(), static_cast<size_t>(n));
    size += static_cast<uint64_t>(n);
    for (ssize_t done = 0; done < n;) {
      ssize_t w =
          ::write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0) {
        result = Unexpected(fsutil::ioError("write failed", dest, errno));
        break;
      }
      done += w;
    }
    if (!result)
      break;
  }
  if (result && ::fsync(out) != 0)
    result = Unexpected(fsutil::ioError("fsync failed", dest, errno));
  ::close(in);
  ::close(out);
  sha256 = h.hexDigest();
  return result;
}

/// Signs the archive at `path` and puts the signature beside it: written in
/// full and synced under the incoming prefix (which recover() removes if
/// left over), then renamed. The caller syncs the two directories.
Status signArchive(const Session &s, const std::string &path,
                   const std::string &sha256) {
  signing::SignOptions so;
  so.trustedComment = "timestamp:" + std::to_string(s.now) +
                      "\tfile:" + fs::path(path).filename().string() +
                      "\tsha256:" + sha256;
  auto sig = signing::signFile(s.key, path, so);
  if (!sig)
    return Unexpected(sig.error());
  const std::string tmp =
      s.dir + "/" + kIncomingPrefix + randomSuffix() + ".minisig";
  if (Status st = fsutil::writeNewFile(tmp, signing::serializeSignature(*sig));
      !st) {
    ::unlink(tmp.c_str());
    return st;
  }
  const std::string dest = path + ".minisig";
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return Unexpected(fsutil::ioError("cannot rename into", dest, e));
  }
  return ok();
}

std::string publishedList(const RegistryIndex &idx) {
  std::string out;
  for (const IndexEntry &e : idx.versions)
    out += (out.empty() ? "" : ", ") + e.version.str() +
           (e.yanked ? " (yanked)" : "");
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// init
//===----------------------------------------------------------------------===//

Status initRegistry(const std::string &registryDir,
                    const InitOptions &options) {
  if (oci::isOciUrl(registryDir))
    return oci::initRegistry(registryDir, options);
  std::string dir = registryDir;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  if (Status st = checkExpiresDays(options.signing.expiresDays); !st)
    return st;
  std::string name = options.name;
  if (name.empty())
    name = fs::path(fsutil::absolutePath(dir)).filename().string();
  if (!isValidPackageName(name))
    return makeError(ErrorCode::Invalid,
                     "\"" + name + "\" is not a valid registry name (" +
                         kPackageNameRule + ")",
                     Location::inFile(dir),
                     options.name.empty()
                         ? "the name defaults to the directory's; give one "
                           "with --name"
                         : "choose a name that follows the rule");
  for (const std::string &m : options.mirrors)
    if (m.empty() || m.find_first_of(" \t\r\n") != std::string::npos)
      return makeError(ErrorCode::Invalid, "\"" + m + "\" is not a mirror URL",
                       Location::inFile(dir),
                       "a mirror is the URL of another copy of the registry, "
                       "such as https://mirror.example.org/iree");
  auto key = loadKey(options.signing);
  if (!key)
    return Unexpected(key.error());

  bool created = false;
  if (fsutil::exists(dir)) {
    if (!fsutil::isDirectory(dir))
      return makeError(ErrorCode::Conflict, "exists and is not a directory",
                       Location::inFile(dir), "choose a new or empty directory");
  } else {
    if (Status st = fsutil::makeDirs(dir); !st)
      return st;
    created = true;
  }
  // What the directory holds (but the lock file): checked before the lock
  // file is made, so that a refused directory is left untouched, and again
  // under the lock.
  std::error_code ec;
  auto contents = [&] {
    std::vector<std::string> present;
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (e.path().filename() != kLock)
        present.push_back(e.path().filename().string());
    std::sort(present.begin(), present.end());
    return present;
  };
  std::vector<std::string> present = contents();
  const bool lockExisted = fsutil::exists(dir + "/" + kLock);
  auto dropLock = [&] {
    if (created)
      (void)fsutil::removeTree(dir);
    else if (!lockExisted)
      ::unlink((dir + "/" + kLock).c_str());
  };
  cache::FileLock lock;
  if (present.empty()) {
    auto acquired = cache::FileLock::acquire(dir + "/" + kLock);
    if (!acquired) {
      dropLock();
      return Unexpected(acquired.error());
    }
    lock = std::move(*acquired);
    present = contents();
    if (!present.empty())
      dropLock();
  }
  if (!present.empty()) {
    bool isRegistry =
        std::find(present.begin(), present.end(), kConfig) != present.end();
    return makeError(ErrorCode::Conflict,
                     isRegistry ? "is already a registry"
                                : "is not empty (it holds " + present[0] +
                                      (present.size() > 1 ? ", ..." : "") + ")",
                     Location::inFile(dir),
                     isRegistry ? "publish into it with `ireepkg publish "
                                  "<archive> --registry " +
                                      dir + " --key <secret key>`"
                                : "a registry is created in a new or empty "
                                  "directory");
  }

  auto fail = [&](Status st) -> Status {
    // The directory was empty: leave it as it was.
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (e.path().filename() != kLock)
        (void)fsutil::removeTree(e.path().string());
    dropLock();
    return st;
  };

  signing::PublicKey pub = key->publicKey();
  nlohmann::json config = {{"schema_version", kSchemaVersion},
                           {"name", name},
                           {"keys", {signing::publicKeyBase64(pub)}}};
  if (!options.mirrors.empty())
    config["mirrors"] = options.mirrors;
  if (!options.description.empty())
    config["description"] = options.description;
  for (const char *sub : {"index", "archives"})
    if (Status st = fsutil::makeDirs(dir + "/" + sub); !st)
      return fail(st);
  if (Status st =
          fsutil::writeFileAtomic(dir + "/" + kConfig, canonicalJson(config));
      !st)
    return fail(st);

  Session s;
  s.dir = dir;
  s.keys = {pub};
  s.key = *key;
  s.now = currentTime(options.signing.now);
  s.snapshot.version = 0;
  RegistrySnapshot first = nextSnapshot(s, options.signing.expiresDays);
  if (Status st = commit(s, first, {}); !st)
    return fail(st);
  return ok();
}

//===----------------------------------------------------------------------===//
// publish
//===----------------------------------------------------------------------===//

namespace {

/// One archive of a publish, checked and copied into the registry
/// directory (as .incoming-*), not yet in place.
struct Candidate {
  std::string archive;  ///< the user's path
  std::string incoming; ///< the checked copy; empty once moved
  PublishResult result;
  Manifest manifest;
  std::vector<Platform> platforms;
  /// Already in the registry, or given earlier in this publish, with the
  /// same bytes: nothing to add.
  bool same = false;
};

/// Copies `archive` into the registry directory and checks the copy as
/// `install` would (what is checked is what is published).
Expected<Candidate> checkArchive(const Session &s, const std::string &archive) {
  Candidate c;
  c.archive = archive;
  const std::string suffix = randomSuffix();
  c.incoming = s.dir + "/" + kIncomingPrefix + suffix;
  Cleanup dropIncoming(c.incoming);
  PublishResult &result = c.result;
  if (Status st = copyHashing(archive, c.incoming, result.sha256, result.size);
      !st)
    return Unexpected(st.error());
  const std::string verifyDir = s.dir + "/" + kVerifyPrefix + suffix;
  Cleanup dropVerify(verifyDir);
  auto extracted = extractArchive(c.incoming, verifyDir);
  // Name the user's file, not the copy that was checked.
  auto rename = [&](std::string &text) {
    for (size_t pos; (pos = text.find(c.incoming)) != std::string::npos;)
      text.replace(pos, c.incoming.size(), archive);
  };
  if (!extracted) {
    Error e = extracted.error();
    rename(e.message);
    rename(e.where.file);
    for (Diagnostic &d : e.diagnostics) {
      rename(d.message);
      rename(d.where.file);
    }
    e.message = "cannot publish " + archive + ": " + e.message;
    return Unexpected(e);
  }
  c.manifest = extracted->head.manifest;
  const Manifest &m = c.manifest;
  result.name = m.name;
  result.version = m.version;
  result.warnings = extracted->head.warnings;
  for (Diagnostic &d : result.warnings) {
    rename(d.message);
    rename(d.where.file);
  }
  c.platforms = manifestPlatforms(m, verifyDir);
  result.archivePath =
      "archives/" + m.name + "/" + m.name + "-" + m.version.str() + ".ireepkg";
  dropIncoming.release();
  return c;
}

/// One Error for several refused archives: each one's problems, in order.
Error refusedArchives(std::vector<Error> errors, size_t total) {
  if (errors.size() == 1)
    return std::move(errors[0]);
  Error all(errors[0].code, std::to_string(errors.size()) + " of the " +
                                std::to_string(total) +
                                " archives cannot be published");
  for (Error &e : errors) {
    if (e.diagnostics.empty())
      all.diagnostics.push_back({Severity::Error, e.where, e.message, e.hint});
    for (Diagnostic &d : e.diagnostics)
      all.diagnostics.push_back(std::move(d));
  }
  all.hint = "nothing was published: fix or leave out those archives and "
             "publish again";
  return all;
}

} // namespace

Expected<PublishResult> publishArchive(const std::string &registryDir,
                                       const std::string &archive,
                                       const SigningOptions &options) {
  auto r = publishArchives(registryDir, {archive}, options);
  if (!r)
    return Unexpected(r.error());
  return std::move(r->front());
}

Expected<std::vector<PublishResult>>
publishArchives(const std::string &registryDir,
                const std::vector<std::string> &archives,
                const SigningOptions &options) {
  if (oci::isOciUrl(registryDir))
    return oci::publishArchives(registryDir, archives, options);
  if (archives.empty())
    return std::vector<PublishResult>{};

  auto session = openSession(registryDir, options);
  if (!session)
    return Unexpected(session.error());
  Session &s = *session;

  // 0. Check every archive; any refusal and nothing is written. The checked
  // copies lie in the registry directory until they are moved into place
  // (rename needs the same file system); the rest go when this returns.
  std::vector<Candidate> candidates;
  candidates.reserve(archives.size());
  struct DropIncoming {
    std::vector<Candidate> &list;
    ~DropIncoming() {
      for (const Candidate &c : list)
        if (!c.incoming.empty())
          ::unlink(c.incoming.c_str());
    }
  } dropIncoming{candidates};
  std::map<std::string, RegistryIndex> indexes; // read once, then updated
  // The candidates to add, by name (versions compare as the index does:
  // 1.0.0+a and 1.0.0+b are one version).
  std::map<std::string, std::vector<size_t>> given;
  std::vector<Error> refused;
  for (const std::string &archive : archives) {
    auto c = checkArchive(s, archive);
    if (!c) {
      refused.push_back(c.error());
      continue;
    }
    Cleanup dropThis(c->incoming); // unless it joins `candidates`
    const Manifest &m = c->manifest;
    auto [it, fresh] = indexes.try_emplace(m.name);
    RegistryIndex &idx = it->second;
    if (fresh) {
      idx.name = m.name;
      if (auto pinned = s.snapshot.index.find(m.name);
          pinned != s.snapshot.index.end()) {
        auto current = readVerifiedIndex(s.dir, m.name, pinned->second);
        if (!current)
          return Unexpected(current.error());
        idx = std::move(*current);
      }
    }
    const Location where{archive, 0, 0, "", m.name, ""};
    const Candidate *earlier = nullptr;
    for (size_t i : given[m.name])
      if (candidates[i].manifest.version == m.version)
        earlier = &candidates[i];
    if (earlier) {
      const Candidate &first = *earlier;
      if (first.result.sha256 != c->result.sha256 ||
          !first.manifest.version.identical(m.version)) {
        refused.push_back(
            Error(ErrorCode::Conflict,
                  m.name + " " + m.version.str() +
                      " is given twice with other contents: " + first.archive +
                      " (sha256 " + first.result.sha256 +
                      ") and this archive (" + c->result.sha256 + ")",
                  where, "publish one of them"));
        continue;
      }
      c->same = true;
      c->result.alreadyPublished = true;
      c->result.archivePath = first.result.archivePath;
      dropThis.release();
      candidates.push_back(std::move(*c));
      continue;
    }
    bool conflict = false;
    for (const IndexEntry &e : idx.versions) {
      if (e.version != m.version)
        continue;
      if (e.sha256 != c->result.sha256 || !e.version.identical(m.version)) {
        refused.push_back(
            Error(ErrorCode::Conflict,
                  m.name + " " + e.version.str() + " is already published in " +
                      s.dir + " with other contents (sha256 " + e.sha256 +
                      "; this archive's is " + c->result.sha256 + ")",
                  where,
                  "a published version never changes: raise the version in "
                  "ireeplugin.json, pack and publish that; to withdraw the "
                  "published one, `ireepkg yank " +
                      m.name + "@" + e.version.str() + "`"));
        conflict = true;
      } else {
        c->same = true;
        c->result.alreadyPublished = true;
        c->result.archivePath = e.archive;
      }
      break;
    }
    if (conflict)
      continue;
    given[m.name].push_back(candidates.size());
    dropThis.release();
    candidates.push_back(std::move(*c));
  }
  if (!refused.empty())
    return Unexpected(refusedArchives(std::move(refused), archives.size()));

  // A dependency neither the registry nor this publish has is allowed (it
  // may come next), but clients cannot install the package until it is
  // there.
  for (Candidate &c : candidates) {
    if (c.same)
      continue;
    const Manifest &m = c.manifest;
    for (const auto &[dep, constraint] : m.dependencies)
      if (!s.snapshot.index.count(dep) && !indexes.count(dep))
        c.result.warnings.push_back(
            {Severity::Warning, Location{c.archive, 0, 0, "", m.name, ""},
             m.name + " " + m.version.str() + " depends on " + dep + " " +
                 constraint.text() + ", which this registry does not have",
             "publish " + dep + " too: until then, installing " + m.name +
                 " from this registry fails"});
  }

  // 1. The archives and their signatures. A version already published with
  // the same bytes changes nothing, but a missing archive or signature is
  // put back (the bytes are the ones the index pins). Each file is renamed
  // into place, and each directory that changed is synced once, before
  // anything refers to them.
  std::set<std::string> changed; // index files to rewrite
  std::set<std::string> toSync;  // directories
  for (Candidate &c : candidates) {
    const std::string dest = s.dir + "/" + c.result.archivePath;
    const std::string parent = fs::path(dest).parent_path().string();
    const bool exists = fsutil::exists(dest);
    const bool signedAlready = fsutil::exists(dest + ".minisig");
    if (c.same && exists && signedAlready)
      continue;
    if (!fsutil::isDirectory(parent)) {
      if (Status st = fsutil::makeDirs(parent); !st)
        return Unexpected(st.error());
      toSync.insert(fs::path(parent).parent_path().string());
    }
    if (!c.same || !exists) {
      if (::rename(c.incoming.c_str(), dest.c_str()) != 0)
        return Unexpected(fsutil::ioError("cannot rename into", dest, errno));
      c.incoming.clear();
    }
    if (!c.same || !signedAlready)
      if (Status st = signArchive(s, dest, c.result.sha256); !st)
        return Unexpected(st.error());
    toSync.insert(s.dir);
    toSync.insert(parent);
    if (c.same)
      continue;
    IndexEntry entry;
    entry.version = c.manifest.version;
    entry.summary = c.manifest.summary;
    entry.dependencies = c.manifest.dependencies;
    entry.requiresIree = c.manifest.requiresIree;
    entry.platforms = c.platforms;
    entry.archive = c.result.archivePath;
    entry.sha256 = c.result.sha256;
    entry.size = c.result.size;
    indexes[c.manifest.name].versions.push_back(std::move(entry));
    changed.insert(c.manifest.name);
  }
  for (const std::string &dir : toSync)
    if (Status st = fsutil::fsyncPath(dir); !st)
      return Unexpected(st.error());

  // 2-5. The index files and one new snapshot for all of them.
  int64_t version = s.snapshot.version;
  if (!changed.empty()) {
    RegistrySnapshot next = nextSnapshot(s, options.expiresDays);
    std::vector<std::pair<std::string, std::string>> indexFiles;
    for (const std::string &name : changed) {
      RegistryIndex &idx = indexes[name];
      std::stable_sort(idx.versions.begin(), idx.versions.end(),
                       [](const IndexEntry &a, const IndexEntry &b) {
                         return a.version < b.version;
                       });
      std::string text = canonicalJson(indexToJson(idx));
      next.index[name] = "sha256:" + Sha256::hex(text);
      indexFiles.emplace_back(name, std::move(text));
    }
    if (Status st = commit(s, next, indexFiles); !st)
      return Unexpected(st.error());
    version = next.version;
  }
  std::vector<PublishResult> results;
  results.reserve(candidates.size());
  for (Candidate &c : candidates) {
    c.result.snapshotVersion = version;
    results.push_back(std::move(c.result));
  }
  return results;
}

//===----------------------------------------------------------------------===//
// yank
//===----------------------------------------------------------------------===//

Expected<int64_t> yankVersion(const std::string &registryDir,
                              const std::string &name, const Version &version,
                              bool yanked, const SigningOptions &options) {
  if (oci::isOciUrl(registryDir))
    return oci::yankVersion(registryDir, name, version, yanked, options);
  auto session = openSession(registryDir, options);
  if (!session)
    return Unexpected(session.error());
  Session &s = *session;
  auto it = s.snapshot.index.find(name);
  if (it == s.snapshot.index.end()) {
    std::vector<std::string> names;
    for (const auto &[n, h] : s.snapshot.index)
      names.push_back(n);
    return makeError(ErrorCode::NotFound,
                     "package \"" + name + "\" is not in the registry" +
                         didYouMean(name, names),
                     Location{s.dir, 0, 0, "", name, ""});
  }
  auto idx = readVerifiedIndex(s.dir, name, it->second);
  if (!idx)
    return Unexpected(idx.error());
  IndexEntry *found = nullptr;
  for (IndexEntry &e : idx->versions)
    if (e.version == version)
      found = &e;
  if (!found)
    return makeError(ErrorCode::NotFound,
                     name + " " + version.str() + " is not published (" + name +
                         " has: " + publishedList(*idx) + ")",
                     Location{s.dir, 0, 0, "", name, ""});
  if (found->yanked == yanked)
    return s.snapshot.version;
  found->yanked = yanked;
  const std::string indexText = canonicalJson(indexToJson(*idx));
  RegistrySnapshot next = nextSnapshot(s, options.expiresDays);
  next.index[name] = "sha256:" + Sha256::hex(indexText);
  if (Status st = commit(s, next, {{name, indexText}}); !st)
    return Unexpected(st.error());
  return next.version;
}

//===----------------------------------------------------------------------===//
// resign
//===----------------------------------------------------------------------===//

Expected<int64_t> resignRegistry(const std::string &registryDir,
                                 const SigningOptions &options) {
  if (oci::isOciUrl(registryDir))
    return oci::resignRegistry(registryDir, options);
  auto session = openSession(registryDir, options);
  if (!session)
    return Unexpected(session.error());
  Session &s = *session;
  // The new signature vouches for the whole state: check all of it.
  for (const auto &[name, hash] : s.snapshot.index)
    if (auto idx = readVerifiedIndex(s.dir, name, hash); !idx)
      return Unexpected(idx.error());
  RegistrySnapshot next = nextSnapshot(s, options.expiresDays);
  if (Status st = commit(s, next, {}); !st)
    return Unexpected(st.error());
  return next.version;
}

} // namespace ireepkg::registry
