//===- client.cpp - The verifying registry client -------------------------===//
//
// Reads a registry through a Transport and checks everything before using
// it (registry.h):
//
//   config.json            read for its name and, when no key is trusted
//                          yet, to show which key the registry claims; never
//                          trusted itself (it is not signed);
//   snapshot.json          signature against a trusted key, version against
//                          the highest this machine saw (rollback), expires
//                          (freeze), unless the registry is a bundle;
//   index/<name>.json      SHA-256 against the snapshot (mix-and-match),
//                          and the package name;
//   archives               size and SHA-256 against the index entry, cut off
//                          at the declared size (the transport does that).
//
// What was verified is kept under <cache>/registries/<id>/: trust.json (the
// highest snapshot version seen, updated only after a snapshot passed every
// check), and each index file that matched a signed snapshot, by its SHA-256
// (content-addressed: an unchanged index is never fetched twice, and an
// index served against a newer snapshot than its own is recognised as
// mix-and-match): what was parsed of it (parsed_cache.h), so that a warm run
// parses no JSON, as a frame of index.pack, one file for all of them,
// appended to as the client goes (a cold run creates one file, not one per
// index file: creating files was most of its time); or, when parsing it
// warned (a warm run must warn again), index/<sha256>.json, the verified
// bytes themselves. snapshot.bin keeps the parsed snapshot the same way.
// Archives go to <cache>/downloads/<aa>/<sha256>.ireepkg.
//
// A publish replaces index files before snapshot.json and the snapshot's
// signature just before the snapshot (publisher.cpp), so a reader can catch
// a registry mid-update. Before refusing a bad signature or an index that
// does not match, the client reads the snapshot (and the index) again after
// short pauses, for as long as the files keep changing (Rereads): an update
// in progress completes, while files that stay wrong are refused after two
// unchanged re-reads.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/fast_index.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/cache_maintenance.h"
#include "ireepkg/registry/registry.h"

#include "ireepkg/pkg/file_util.h"
#include "ireepkg/pkg/hash.h"
#include "ireepkg/pkg/prefix.h"
#include "ireepkg/pkg/signature.h"
#include "ireepkg/registry/parsed_cache.h"
#include "metadata_files.h"
#include "oci.h"
#include "registry_cache.h"
#include "registry_urls.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace ireepkg::registry {

using namespace detail;

namespace {

/// Paces the re-reads of a registry that may be in the middle of an update
/// (see the file comment): pauses of 50, 100, 200, then 400 ms, at most
/// kMaxRereads of them, and gives up as soon as two pauses in a row brought
/// no change (a registry that stays wrong: an attack, or broken files), so
/// a refusal costs 150 ms while a busy registry gets up to 3 s.
class Rereads {
public:
  static constexpr int kMaxRereads = 10;
  /// Pauses before the next read, or returns false to give up. `changed`:
  /// whether the last read differed from the one before.
  bool next(bool changed) {
    if (count_ > 0)
      unchanged_ = changed ? 0 : unchanged_ + 1;
    if (unchanged_ >= 2 || count_ >= kMaxRereads)
      return false;
    static constexpr int kPausesMs[] = {50, 100, 200, 400};
    std::this_thread::sleep_for(
        std::chrono::milliseconds(kPausesMs[std::min(count_, 3)]));
    ++count_;
    return true;
  }

private:
  int count_ = 0;
  int unchanged_ = 0;
};

std::string keyIdList(const std::vector<signing::PublicKey> &keys) {
  std::string out;
  for (const auto &k : keys)
    out += (out.empty() ? "" : ", ") + signing::keyIdHex(k);
  return out;
}

void forwardWarnings(const DiagnosticList &diags, Reporter &reporter) {
  for (const Diagnostic &d : diags.items())
    if (d.severity == Severity::Warning)
      reporter.warning(d);
}

/// A snapshot's map of packages, not built yet: its other fields are known
/// (from snapshot.bin or from snapshot.verified), the map is decoded from
/// snapshot.bin, or parsed again from snapshot.json's verified bytes, when
/// a package is first looked up (RegistryClient::Impl::completeIndex).
struct PendingIndex {
  bool pending = false;
  std::string parsed; ///< snapshot.bin's bytes, when they were read
  std::string body;   ///< snapshot.json's verified bytes, when they were not
};
/// The most of index.pack that is read; a larger one is replaced.
constexpr size_t kMaxPackBytes = 256u << 20;

bool writeAllTo(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// Writes a cache file as a new file in place, without the temporary file
/// and rename of fsutil::writeCacheFile (two more directory updates). That
/// is safe only for files checked whenever they are read, as the ones here
/// are (a verified copy is hashed against the snapshot, a frame of
/// index.pack carries the SHA-256 of its payload): a write torn by a crash,
/// or read while another process writes the same file, is a cache miss,
/// never trusted. A file already there (one that was not usable) is removed
/// first, so that the new one is always this user's with fresh permissions.
/// Failing to write changes nothing (a cache).
void writeCheckedCacheFile(const std::string &path, std::string_view content) {
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0 && errno == EEXIST && ::unlink(path.c_str()) == 0)
    fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0)
    return;
  bool ok = writeAllTo(fd, content);
  ::close(fd);
  if (!ok)
    ::unlink(path.c_str()); // a disk full: not worth keeping
}

/// Opens index.pack to append frames (O_APPEND: concurrent appenders do
/// not overwrite each other; a torn append is skipped by
/// splitParsedIndexPack). A pack that is not this user's own, or that
/// others may write, or one to be replaced, is removed and made anew, as
/// fsutil::readOwnCacheFile would not read it.
fsutil::UniqueFd openPackForAppend(const std::string &path, bool replace) {
  if (!replace) {
    fsutil::UniqueFd fd(
        ::open(path.c_str(),
               O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644));
    struct stat st;
    if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_uid == ::geteuid() && (st.st_mode & 022) == 0)
      return fd;
  }
  ::unlink(path.c_str());
  return fsutil::UniqueFd(::open(
      path.c_str(),
      O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
}

} // namespace

struct RegistryClient::Impl {
  RegistrySpec spec;
  ClientOptions options;
  std::unique_ptr<Transport> transport;
  Reporter *reporter = nullptr;
  std::string where;    ///< the registry as the user gave it
  std::string stateDir; ///< <cache>/registries/<id>
  std::string cacheRoot;
  bool remote = false;
  int64_t now = 0;
  std::vector<signing::PublicKey> keys;
  RegistryConfig config;
  RegistrySnapshot snapshot;
  std::string snapshotSha; ///< SHA-256 of the verified snapshot.json
  /// The snapshot's map of packages, until first needed: a lock that finds
  /// nothing changed never builds the map of every package (see
  /// fullSnapshot()).
  PendingIndex pendingIndex;
  /// While pendingIndex is pending: its packages in name order, as views
  /// into its parsed bytes, for lookups without the map (pin()).
  std::vector<std::pair<std::string_view, std::string_view>> pendingPins;
  bool pendingPinsTried = false;
  std::string signedBy;
  std::map<std::string, RegistryIndex> indices;
  /// Parsed index files read for the resolver only (versions()): the
  /// file's bytes, so that entry() decodes the one version `lock` chooses
  /// rather than every version in full.
  struct Candidates {
    std::string file;
    std::vector<Version> versions;
    std::vector<uint32_t> offsets;
    std::vector<std::shared_ptr<const Constraint>> constraints;
    std::vector<std::unique_ptr<IndexEntry>> entries;
  };
  std::map<std::string, Candidates> candidates;
  /// Whether <stateDir>/index existed when first looked at (unset: not yet
  /// looked). When it did not, nothing can be cached in it but what this
  /// client writes itself, so a cold run does not look for cached copies of
  /// every index file it reads.
  std::optional<bool> indexCacheExisted;
  bool indexCacheMade = false;
  /// index.pack (see the file comment), looked at on the first index
  /// lookup. Its frames are found then, and each is read again (pread)
  /// when used rather than kept in memory: the pack of a large resolution
  /// is megabytes the run would otherwise hold to its end.
  struct PackFrame {
    uint64_t offset = 0, size = 0;
  };
  bool packLoaded = false;
  fsutil::UniqueFd packFd; ///< the pack as it was when loaded
  uint64_t packSize = 0;
  std::unordered_map<std::string, PackFrame> packed; ///< by key; last wins
  std::vector<PackFrame> packUsed; ///< the frames this run decoded
  /// Frames parsed anew, appended a megabyte at a time and when closing.
  std::string packNew;
  std::set<std::string> packNewKeys;
  uint64_t packNewBytes = 0;
  fsutil::UniqueFd packOut; ///< open for appending, once there is any
  bool packReplace = false; ///< a pack that could not be read is replaced
  bool packSaved = false;   ///< savePack() has considered compacting

  ~Impl() { savePack(); }
  std::string packFile() const { return stateDir + "/index.pack"; }
  void loadPack();
  std::optional<std::string> readPackFrame(const PackFrame &frame) const;
  void keepParsed(const RegistryIndex &index, const std::string &sha);
  void flushPack();
  void savePack();

  std::string shown(const std::string &rel) const {
    return joinUrl(where, rel);
  }
  /// `registry "name" (where)`, or `registry where` when it has no name.
  std::string label() const {
    return spec.name.empty() ? "registry " + where
                             : "registry \"" + spec.name + "\" (" + where + ")";
  }
  std::string trustFile() const { return stateDir + "/trust.json"; }
  /// Whether this client checks everything again (ClientOptions::recheck):
  /// not when offline from a remote registry, where the cache is all
  /// there is to check.
  bool rechecking() const {
    return options.recheck && !(options.offline && remote);
  }

  struct Loaded {
    RegistrySnapshot snapshot;
    std::string keyId;
    std::string sha256;        ///< of snapshot.json's bytes
    PendingIndex pendingIndex; ///< see Impl::pendingIndex
    Impl *impl = nullptr;
    RegistrySnapshot &full() {
      impl->completeIndex(pendingIndex, snapshot, sha256);
      return snapshot;
    }
  };
  RegistrySnapshot &fullSnapshot() {
    completeIndex(pendingIndex, snapshot, snapshotSha);
    dropPins();
    return snapshot;
  }
  void completeIndex(PendingIndex &pending, RegistrySnapshot &s,
                     const std::string &sha);
  void dropPins() {
    pendingPins.clear();
    pendingPinsTried = false;
  }
  /// The "sha256:<hex>" the snapshot pins for `name`'s index file, if it
  /// lists `name`: looked up in the parsed snapshot while the map is not
  /// built.
  std::optional<std::string> pin(const std::string &name) {
    if (pendingIndex.pending) {
      if (!pendingPinsTried) {
        pendingPinsTried = true;
        if (pendingIndex.parsed.empty())
          if (auto bin = fsutil::readOwnCacheFile(parsedSnapshotFile(),
                                                  2 * kMaxSnapshotBytes))
            pendingIndex.parsed = std::move(*bin);
        // Keyed by the verified snapshot's hash, checked whole.
        if (decodeParsedSnapshot(pendingIndex.parsed, snapshotSha, false))
          pendingPins = parsedSnapshotPackages(pendingIndex.parsed);
      }
      if (!pendingPins.empty()) {
        auto it = std::lower_bound(
            pendingPins.begin(), pendingPins.end(), std::string_view(name),
            [](const auto &p, std::string_view n) { return p.first < n; });
        if (it != pendingPins.end() && it->first == name)
          return std::string(it->second);
        return std::nullopt;
      }
    }
    const RegistrySnapshot &s = fullSnapshot();
    auto it = s.index.find(name);
    if (it == s.index.end())
      return std::nullopt;
    return it->second;
  }
  /// A failure, whether reading again may cure it, and what was read (to
  /// tell whether a re-read saw other files).
  struct Failure {
    Failure(Error error, bool retryable = false, std::string fingerprint = {})
        : error(std::move(error)), retryable(retryable),
          fingerprint(std::move(fingerprint)) {}
    Error error;
    bool retryable;
    std::string fingerprint;
  };

  Expected<void> loadKeys();
  Expected<void> loadConfig();
  Error noKeyError() const;
  std::expected<Loaded, Failure> fetchSnapshotOnce();
  Expected<Loaded> fetchSnapshot();
  Expected<void> checkAndRecord(const Loaded &loaded);
  Expected<const RegistryIndex *> index(const std::string &name);
  /// The SHA-256 the snapshot pins for `name`'s index file; NotFound with
  /// "did you mean" when the registry has no such package.
  Expected<std::string> pinnedIndexSha(const std::string &name);
  /// Every version of `name` from its parsed form in the cache, kept in
  /// `candidates`; nullopt when there is no usable parsed form.
  Expected<std::optional<std::vector<CandidateVersion>>>
  cachedCandidates(const std::string &name);
  /// The entry of `version` from `candidates`; null when not there.
  const IndexEntry *candidateEntry(const std::string &name,
                                   const Version &version);
  /// `clean`, when given, is set to whether parsing warned of nothing
  /// (only such a parse is cached: a warm run then warns the same).
  Expected<RegistryIndex> parseIndex(const std::string &name,
                                     const std::string &body,
                                     bool *clean = nullptr);
  std::string parsedSnapshotFile() const { return stateDir + "/snapshot.bin"; }
  std::string verifiedSnapshotFile() const {
    return stateDir + "/snapshot.verified";
  }
};

//===----------------------------------------------------------------------===//
// Keys and config.json
//===----------------------------------------------------------------------===//

Expected<void> RegistryClient::Impl::loadKeys() {
  for (size_t i = 0; i < spec.publicKeys.size(); ++i) {
    auto key = signing::loadPublicKey(spec.publicKeys[i]);
    if (!key) {
      Error e = key.error();
      e.message = label() + ": trusted key \"" + spec.publicKeys[i] +
                  "\": " + e.message;
      if (e.hint.empty())
        e.hint = "a trusted key is a minisign public key (the RW... line of "
                 "its .pub file) or the path of the .pub file";
      return Unexpected(e);
    }
    keys.push_back(*key);
  }
  return {};
}

Expected<void> RegistryClient::Impl::loadConfig() {
  auto r = transport->fetch("config.json", kMaxConfigBytes);
  if (!r) {
    // Offline, "not found" means "not in the cache": say that as it is.
    if (r.error().code == ErrorCode::NotFound && !options.offline)
      return makeError(ErrorCode::NotFound,
                       where + " is not a registry: it has no config.json",
                       Location::inFile(shown("config.json")),
                       "check the registry's URL; a registry holds "
                       "config.json, snapshot.json and index/");
    return Unexpected(r.error());
  }
  auto doc = JsonDocument::parse(r->body, shown("config.json"));
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  config = parseRegistryConfig(*doc, ParseOptions{false}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Parse, diags);
  forwardWarnings(diags, *reporter);
  return {};
}

Error RegistryClient::Impl::noKeyError() const {
  std::string listed;
  std::string example = "RW...";
  for (const std::string &k : config.keys) {
    auto key = signing::parsePublicKey(k);
    listed += std::string(listed.empty() ? "" : ", ") + k +
              (key ? " (key id " + signing::keyIdHex(*key) + ")" : "");
    if (example == "RW...")
      example = k;
  }
  std::string message = "no trusted key is configured for " + label() +
                        ", so its snapshot cannot be checked; ";
  message += listed.empty() ? "its config.json lists no key"
                            : "its config.json lists " + listed;
  return Error(ErrorCode::Invalid, message,
               Location::inFile(shown("config.json")),
               "config.json is not signed, so its keys are never trusted by "
               "themselves: confirm the key with the registry's maintainer "
               "through a channel you trust, then trust it: with "
               "\"public_key\": \"" +
                   example +
                   "\" in the registry's entry in plugins.json (for a "
                   "project's registries), or, where the registry is named "
                   "by its URL on the command line (install, search, "
                   "registry verify), with `--registry-key " +
                   example + "`");
}

//===----------------------------------------------------------------------===//
// The snapshot
//===----------------------------------------------------------------------===//

std::expected<RegistryClient::Impl::Loaded, RegistryClient::Impl::Failure>
RegistryClient::Impl::fetchSnapshotOnce() {
  using U = std::unexpected<Failure>;
  const std::string snapName = shown("snapshot.json");
  const std::string sigName = shown("snapshot.json.minisig");
  auto snap = transport->fetch("snapshot.json", kMaxSnapshotBytes);
  if (!snap) {
    Error e = snap.error();
    if (e.code == ErrorCode::NotFound)
      e = Error(ErrorCode::NotFound,
                where + " is not a usable registry: it has no snapshot.json",
                Location::inFile(snapName),
                "a registry is made with `ireepkg registry init`; check "
                "its URL");
    return U(Failure{e});
  }
  auto sigText = transport->fetch("snapshot.json.minisig", kMaxSignatureBytes);
  const std::string fingerprint =
      Sha256::hex(snap->body) + (sigText ? Sha256::hex(sigText->body) : "");
  if (!sigText) {
    if (sigText.error().code != ErrorCode::NotFound)
      return U(Failure{sigText.error()});
    return U(Failure{
        Error(
            ErrorCode::Integrity,
            "snapshot.json of " + where +
                " is not signed: snapshot.json.minisig is missing",
            Location::inFile(sigName),
            "ireepkg uses only signed registries. If you maintain this one, "
            "sign it with `ireepkg registry resign <dir> --key <secret key>`; "
            "otherwise tell its maintainer, and do not use it meanwhile"),
        true, fingerprint});
  }
  auto sig = signing::parseSignature(sigText->body, sigName);
  if (!sig) {
    Error e = sig.error();
    e.message = "the signature of snapshot.json is unreadable: " + e.message;
    return U(Failure{e, true, fingerprint});
  }
  const signing::PublicKey *key = nullptr;
  for (const auto &k : keys)
    if (k.keyId == sig->keyId)
      key = &k;
  if (!key)
    return U(Failure{Error(
        ErrorCode::Integrity,
        "snapshot.json of " + where + " is signed by key " +
            signing::keyIdHex(sig->keyId) +
            ", which is not a key you trust for this registry (trusted: " +
            keyIdList(keys) + ")",
        Location::inFile(sigName),
        "if the registry moved to a new key, confirm the new key with its "
        "maintainer through a channel you trust and add it (--registry-key, "
        "or \"public_key\" in plugins.json); otherwise someone other than "
        "the registry signed this snapshot: do not use it")});
  Loaded loaded;
  loaded.impl = this;
  const std::string snapSha = fingerprint.substr(0, 64);
  const std::string sigSha = fingerprint.substr(64);
  const std::string keyText = signing::publicKeyBase64(*key);

  // Checked before? Verifying a signature is a pure function of the
  // snapshot's bytes, the signature file's bytes and the public key, and
  // parsing one of the bytes (and of the ireepkg version): snapshot.verified
  // records its result for snapshot bytes with this SHA-256, signature
  // bytes with that SHA-256 and the key that verified them. When all three
  // are the same now (SHA-256 collisions being out of reach) and that key
  // is still trusted, the check would pass again and the parse would give
  // the same fields, so neither is redone. The record is trusted only as
  // far as the rest of the cache: it is written only here, after a check
  // passed, and read only when the current user owns it and no one else
  // may write it (readOwnCacheFile), since anyone who can write it could
  // make any snapshot pass. Expiry and rollback are not part of it: they
  // depend on the time and on trust.json, and checkAndRecord checks them
  // on every open.
  std::optional<VerifiedSnapshot> memo;
  if (!rechecking())
    if (auto rec = fsutil::readOwnCacheFile(verifiedSnapshotFile(), 1 << 16))
      memo = decodeVerifiedSnapshot(*rec, snapSha);
  if (memo && memo->signatureSha256 == sigSha && memo->publicKey == keyText) {
    loaded.snapshot.schemaVersion = memo->schemaVersion;
    loaded.snapshot.version = memo->version;
    loaded.snapshot.expires = memo->expires;
    loaded.snapshot.expiresUnix = memo->expiresUnix;
    loaded.pendingIndex.pending = true;
    loaded.pendingIndex.body = std::move(snap->body);
    reporter->detail(2, "snapshot.json of " + where +
                            ": these bytes and their signature were "
                            "verified before (" +
                            verifiedSnapshotFile() + ")");
  } else {
    auto verified =
        signing::verifyBuffer(*key, snap->body, *sig, snapName, sigName);
    if (!verified) {
      Error e = verified.error();
      e.message = "snapshot.json of " + where +
                  " fails its signature check (key " + signing::keyIdHex(*key) +
                  "): " + e.message;
      e.hint = "the snapshot was changed after it was signed: the registry, "
               "or the way to it, is being tampered with, or the copy is "
               "corrupt; do not use it";
      return U(Failure{e, true, fingerprint});
    }
    // Parsed before (the cached form is keyed by this snapshot's hash)?
    std::optional<RegistrySnapshot> parsed;
    auto bin =
        fsutil::readOwnCacheFile(parsedSnapshotFile(), 2 * kMaxSnapshotBytes);
    if (bin)
      parsed = decodeParsedSnapshot(*bin, snapSha, false);
    bool clean = true;
    if (parsed) {
      // Only a parse that warned of nothing was kept.
      loaded.snapshot = std::move(*parsed);
      loaded.pendingIndex.pending = true;
      loaded.pendingIndex.parsed = std::move(*bin);
    } else {
      // A clean snapshot the fast way, anything else by the checking
      // parser (fast_index.h).
      if (auto fast = parseCleanRegistrySnapshot(snap->body)) {
        loaded.snapshot = std::move(*fast);
      } else {
        auto doc = JsonDocument::parse(snap->body, snapName);
        if (!doc)
          return U(Failure{doc.error()});
        DiagnosticList diags;
        loaded.snapshot =
            parseRegistrySnapshot(*doc, ParseOptions{false}, diags);
        if (diags.hasErrors())
          return U(Failure{makeError(ErrorCode::Parse, diags).error()});
        forwardWarnings(diags, *reporter);
        clean = diags.items().empty();
      }
      // A cache: failing to write it changes nothing.
      if (clean && fsutil::makeDirs(stateDir))
        (void)fsutil::writeCacheFile(
            parsedSnapshotFile(),
            encodeParsedSnapshot(loaded.snapshot, snapSha));
    }
    // Only a parse that warned of nothing is recorded, so that a snapshot
    // that warns warns on every run.
    if (clean && fsutil::makeDirs(stateDir)) {
      VerifiedSnapshot v;
      v.signatureSha256 = sigSha;
      v.publicKey = keyText;
      v.schemaVersion = loaded.snapshot.schemaVersion;
      v.version = loaded.snapshot.version;
      v.expires = loaded.snapshot.expires;
      v.expiresUnix = loaded.snapshot.expiresUnix;
      (void)fsutil::writeCacheFile(verifiedSnapshotFile(),
                                   encodeVerifiedSnapshot(v, snapSha));
    }
  }
  loaded.keyId = signing::keyIdHex(*key);
  loaded.sha256 = snapSha;
  reporter->detail(1, "snapshot.json of " + where + ": version " +
                          std::to_string(loaded.snapshot.version) +
                          ", signed by key " + loaded.keyId +
                          (snap->fromCache ? " (cached copy)" : "") + " from " +
                          snap->url);
  return loaded;
}

Expected<RegistryClient::Impl::Loaded> RegistryClient::Impl::fetchSnapshot() {
  auto r = fetchSnapshotOnce();
  Rereads rereads;
  bool changed = true;
  while (!r && r.error().retryable && rereads.next(changed)) {
    std::string before = r.error().fingerprint;
    r = fetchSnapshotOnce();
    changed = r || r.error().fingerprint != before;
  }
  if (!r)
    return Unexpected(r.error().error);
  return std::move(*r);
}

void RegistryClient::Impl::completeIndex(PendingIndex &pending,
                                         RegistrySnapshot &s,
                                         const std::string &sha) {
  if (!pending.pending)
    return;
  pending.pending = false;
  std::string parsed = std::move(pending.parsed);
  std::string body = std::move(pending.body);
  if (parsed.empty())
    if (auto bin = fsutil::readOwnCacheFile(parsedSnapshotFile(),
                                            2 * kMaxSnapshotBytes))
      parsed = std::move(*bin);
  // Keyed by the hash of the verified bytes, so it holds their map.
  if (auto d = decodeParsedSnapshot(parsed, sha)) {
    s.index = std::move(d->index);
    return;
  }
  if (body.empty())
    return; // decoded when its frame was checked: cannot fail here
  // snapshot.bin is gone or damaged: parse the verified bytes again. They
  // parsed without a warning when their record was made, by this version.
  auto doc = JsonDocument::parse(body, shown("snapshot.json"));
  if (!doc)
    return;
  DiagnosticList diags;
  RegistrySnapshot again =
      parseRegistrySnapshot(*doc, ParseOptions{false}, diags);
  if (diags.hasErrors())
    return;
  if (diags.items().empty() && fsutil::makeDirs(stateDir))
    (void)fsutil::writeCacheFile(parsedSnapshotFile(),
                                 encodeParsedSnapshot(again, sha));
  s.index = std::move(again.index);
}

Expected<void> RegistryClient::Impl::checkAndRecord(const Loaded &loaded) {
  const RegistrySnapshot &s = loaded.snapshot;
  if (options.bundle)
    return {}; // a bundle is checked for signature and hashes only
  if (now >= s.expiresUnix)
    return makeError(
        ErrorCode::Integrity,
        "snapshot.json of " + where + " (version " + std::to_string(s.version) +
            ") expired at " + s.expires +
            " (freeze): it no longer vouches for the registry's contents",
        Location::inFile(shown("snapshot.json")),
        "the registry was not re-signed in time, or an old snapshot is being "
        "replayed; its maintainer must run `ireepkg registry resign`");

  // The rollback check and the update of trust.json happen under one lock,
  // so that two clients never lower the version either recorded.
  static std::mutex processLock;
  std::lock_guard<std::mutex> guard(processLock);
  if (Status st = fsutil::makeDirs(stateDir); !st)
    return st;
  auto lock = FileLock::acquire(stateDir + "/trust.lock");
  if (!lock)
    return Unexpected(lock.error());
  int64_t seen = 0;
  if (fsutil::exists(trustFile())) {
    auto text = fsutil::readFile(trustFile(), 1 << 20);
    if (!text)
      return Unexpected(text.error());
    nlohmann::json j = parseJsonOrDiscarded(*text);
    auto v = j.is_object() ? j.find("snapshot_version") : j.end();
    if (j.is_object() && v != j.end() && v->is_number_integer()) {
      seen = v->get<int64_t>();
    } else {
      return makeError(ErrorCode::Parse,
                       "this machine's record of the registry is unreadable",
                       Location::inFile(trustFile()),
                       "delete it: the next snapshot seen is recorded anew");
    }
  }
  if (s.version < seen)
    return makeError(
        ErrorCode::Integrity,
        "rollback: snapshot.json of " + where + " is version " +
            std::to_string(s.version) + ", older than version " +
            std::to_string(seen) +
            " that this machine has already seen from this registry",
        Location::inFile(shown("snapshot.json")),
        "someone is serving an old state of the registry (a stale mirror, a "
        "restored backup, or an attack); try again later. If the registry "
        "was really reset, delete " +
            trustFile() + " to accept it");
  if (s.version == seen)
    return {};
  nlohmann::json record = {
      {"url", normalizeRegistryUrl(spec.url.empty() ? where : spec.url)},
      {"snapshot_version", s.version},
      {"expires", s.expires},
      {"signed_by", loaded.keyId}};
  return fsutil::writeFileAtomic(trustFile(), canonicalJson(record));
}

//===----------------------------------------------------------------------===//
// Index files
//===----------------------------------------------------------------------===//

/// Reads exactly `size` bytes at `offset`.
static bool preadAll(int fd, char *out, uint64_t size, uint64_t offset) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

void RegistryClient::Impl::loadPack() {
  if (packLoaded)
    return;
  packLoaded = true;
  // Read only when it is this user's own and no one else may write it, as
  // fsutil::readOwnCacheFile reads; missing is the normal cold start, and
  // anything else is replaced when this client has frames to keep.
  fsutil::UniqueFd fd(::open(packFile().c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    packReplace = errno != ENOENT;
    return;
  }
  struct stat st;
  std::string bytes;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid() || (st.st_mode & 022) != 0 ||
      static_cast<uint64_t>(st.st_size) > kMaxPackBytes) {
    packReplace = true;
    return;
  }
  bytes.resize(static_cast<size_t>(st.st_size));
  if (!preadAll(fd.get(), bytes.data(), bytes.size(), 0)) {
    packReplace = true;
    return;
  }
  for (const PackedIndex &p : splitParsedIndexPack(bytes))
    packed[std::string(p.key)] = {
        static_cast<uint64_t>(p.file.data() - bytes.data()), p.file.size()};
  packFd = std::move(fd);
  packSize = bytes.size();
}

std::optional<std::string>
RegistryClient::Impl::readPackFrame(const PackFrame &frame) const {
  std::string out(frame.size, '\0');
  if (packFd.get() < 0 ||
      !preadAll(packFd.get(), out.data(), frame.size, frame.offset))
    return std::nullopt;
  return out;
}

void RegistryClient::Impl::keepParsed(const RegistryIndex &index,
                                      const std::string &sha) {
  // Checked again (ClientOptions::recheck), not replaced: the frame the
  // pack has stays.
  if (rechecking() && packed.count(sha))
    return;
  if (!packNewKeys.insert(sha).second)
    return;
  std::string frame = encodeParsedIndex(index, sha);
  packNewBytes += frame.size();
  packNew += frame;
  constexpr size_t kFlushBytes = 1u << 20;
  if (packNew.size() >= kFlushBytes)
    flushPack();
}

void RegistryClient::Impl::flushPack() {
  // A cache: failing to write it, or a crash before this, changes nothing.
  if (packNew.empty())
    return;
  if (packOut.get() < 0 && fsutil::makeDirs(stateDir))
    packOut = openPackForAppend(packFile(), packReplace);
  if (packOut.get() >= 0)
    (void)writeAllTo(packOut.get(), packNew);
  packNew.clear();
}

void RegistryClient::Impl::savePack() {
  flushPack();
  packOut.reset();
  // Once per client, whether saveCache() or the destructor comes first.
  if (packSaved)
    return;
  packSaved = true;
  // Each update of an index file leaves its old frame behind: when most of
  // the pack is frames this run did not use, it is rewritten with only the
  // ones it used and the ones it added, atomically, as readers may be
  // reading it.
  uint64_t live = packNewBytes;
  for (const PackFrame &f : packUsed)
    live += f.size;
  constexpr uint64_t kCompactFrom = 8u << 20;
  if (packNewKeys.empty() || packSize <= kCompactFrom || packSize <= 4 * live)
    return;
  std::string out;
  out.reserve(live);
  for (const PackFrame &f : packUsed)
    if (auto bytes = readPackFrame(f))
      out.append(*bytes);
  // The frames added are at the end of the pack as it is now.
  auto now = fsutil::readOwnCacheFile(packFile(), kMaxPackBytes);
  if (!now)
    return;
  std::map<std::string_view, std::string_view> added; // the last of each
  for (const PackedIndex &p : splitParsedIndexPack(*now))
    if (packNewKeys.count(std::string(p.key)))
      added[p.key] = p.file;
  for (const auto &[key, frame] : added)
    out.append(frame);
  (void)fsutil::writeCacheFile(packFile(), out);
}

Expected<RegistryIndex>
RegistryClient::Impl::parseIndex(const std::string &name,
                                 const std::string &body, bool *clean) {
  const std::string file = shown("index/" + name + ".json");
  RegistryIndex idx;
  // A clean file the fast way; anything else (and the reason it is not
  // clean, with its place) by the checking parser (fast_index.h).
  if (auto fast = parseCleanRegistryIndex(body)) {
    idx = std::move(*fast);
    if (clean)
      *clean = true;
  } else {
    auto doc = JsonDocument::parse(body, file);
    if (!doc)
      return Unexpected(doc.error());
    DiagnosticList diags;
    idx = parseRegistryIndex(*doc, ParseOptions{false}, diags);
    if (diags.hasErrors())
      return makeError(ErrorCode::Parse, diags);
    forwardWarnings(diags, *reporter);
    if (clean)
      *clean = diags.items().empty();
  }
  if (idx.name != name)
    return makeError(ErrorCode::Integrity,
                     "index/" + name + ".json of " + where +
                         " describes package \"" + idx.name + "\", not \"" +
                         name + "\"",
                     Location::inFile(file),
                     "the registry's files are mixed up; do not use it until "
                     "its maintainer has fixed it");
  return idx;
}

Expected<std::string>
RegistryClient::Impl::pinnedIndexSha(const std::string &name) {
  if (auto pinned = pin(name))
    return pinned->substr(7);
  {
    fullSnapshot();
    std::vector<std::string> names;
    for (const auto &[n, h] : snapshot.index)
      names.push_back(n);
    return makeError(ErrorCode::NotFound,
                     "package \"" + name + "\" is not in " + label() +
                         didYouMean(name, names),
                     Location{"", 0, 0, "", name, ""});
  }
}

Expected<std::optional<std::vector<CandidateVersion>>>
RegistryClient::Impl::cachedCandidates(const std::string &name) {
  using Result = std::optional<std::vector<CandidateVersion>>;
  auto sha = pinnedIndexSha(name);
  if (!sha)
    return Unexpected(sha.error());
  if (rechecking())
    return Result();
  loadPack();
  auto it = packed.find(*sha);
  if (it == packed.end())
    return Result();
  auto frame = readPackFrame(it->second);
  auto got = frame ? decodeParsedCandidates(*frame, *sha, name)
                   : std::optional<ParsedCandidates>();
  if (!got)
    return Result();
  reporter->detail(2, "index/" + name + ".json of " + where +
                          ": parsed copy in the cache");
  packUsed.push_back(it->second);
  Candidates &c = candidates[name];
  c.file = std::move(*frame);
  c.offsets = std::move(got->offsets);
  c.constraints = std::move(got->constraints);
  c.versions.reserve(got->versions.size());
  for (const CandidateVersion &cv : got->versions)
    c.versions.push_back(cv.version);
  c.entries.resize(got->versions.size());
  return Result(std::move(got->versions));
}

const IndexEntry *RegistryClient::Impl::candidateEntry(const std::string &name,
                                                       const Version &version) {
  auto it = candidates.find(name);
  if (it == candidates.end())
    return nullptr;
  Candidates &c = it->second;
  for (size_t i = 0; i < c.versions.size(); ++i) {
    if (!(c.versions[i] == version))
      continue;
    if (!c.entries[i]) {
      // decodeParsedCandidates read this entry through already.
      auto e = decodeParsedIndexEntry(c.file, c.offsets[i], c.constraints);
      if (!e)
        return nullptr;
      c.entries[i] = std::make_unique<IndexEntry>(std::move(*e));
    }
    return c.entries[i].get();
  }
  return nullptr;
}

Expected<const RegistryIndex *>
RegistryClient::Impl::index(const std::string &name) {
  if (auto it = indices.find(name); it != indices.end())
    return &it->second;
  auto pinned = pinnedIndexSha(name);
  if (!pinned)
    return Unexpected(pinned.error());
  const std::string rel = "index/" + name + ".json";
  // Looked up again each time: a re-read below may change the snapshot.
  auto expected = [&] { return pin(name).value_or("sha256:").substr(7); };

  // Verified before, under this or an earlier snapshot: its parsed form
  // (a frame of index.pack) or, when parsing it warned, its bytes
  // (index/<sha256>.json).
  const std::string verifiedDir = stateDir + "/index";
  auto verifiedPath = [&](const std::string &sha) {
    return verifiedDir + "/" + sha + ".json";
  };
  loadPack();
  if (auto it = packed.find(expected()); it != packed.end() && !rechecking()) {
    auto frame = readPackFrame(it->second);
    if (auto idx = frame ? decodeParsedIndex(*frame, expected())
                         : std::optional<RegistryIndex>();
        idx && idx->name == name) {
      reporter->detail(2, rel + " of " + where + ": parsed copy in the cache");
      packUsed.push_back(it->second);
      return &(indices[name] = std::move(*idx));
    }
  }
  // Parses a verified index and keeps it: its parsed form when parsing it
  // was clean (written with the pack when the client closes), else its
  // bytes (a cache, checked when read: failing to write it, or losing it
  // in a crash, changes nothing).
  auto parseAndKeep = [&](const std::string &body,
                          bool keepBytes) -> Expected<RegistryIndex> {
    bool clean = false;
    auto idx = parseIndex(name, body, &clean);
    if (!idx || (!clean && !keepBytes))
      return idx;
    if (clean) {
      keepParsed(*idx, expected());
      return idx;
    }
    if (!indexCacheMade)
      indexCacheMade = fsutil::makeDirs(verifiedDir).has_value();
    if (indexCacheMade)
      writeCheckedCacheFile(verifiedPath(expected()), body);
    return idx;
  };
  if (!indexCacheExisted)
    indexCacheExisted = fsutil::isDirectory(verifiedDir);
  if (*indexCacheExisted && !rechecking()) {
    if (auto cached =
            fsutil::readFile(verifiedPath(expected()), kMaxIndexBytes);
        cached && Sha256::hex(*cached) == expected()) {
      reporter->detail(2,
                       rel + " of " + where + ": verified copy in the cache");
      auto idx = parseAndKeep(*cached, false);
      if (!idx)
        return Unexpected(idx.error());
      return &(indices[name] = std::move(*idx));
    }
  }

  std::string body, sha;
  bool retryable = false; // missing, or not the pinned one
  auto fetchIndex = [&]() -> Expected<void> {
    auto r = transport->fetch(rel, kMaxIndexBytes);
    retryable = !r ? r.error().code == ErrorCode::NotFound : false;
    if (!r) {
      if (r.error().code == ErrorCode::NotFound)
        return makeError(ErrorCode::Integrity,
                         rel + " of " + where +
                             " is missing, though snapshot.json lists " + name,
                         Location::inFile(shown(rel)),
                         "the registry is incomplete or being updated; try "
                         "again later, and tell its maintainer if it stays");
      return Unexpected(r.error());
    }
    reporter->detail(2, rel + " of " + where + ": " +
                            (r->fromCache ? "cached copy of " : "read from ") +
                            r->url);
    body = std::move(r->body);
    sha = Sha256::hex(body);
    retryable = sha != expected();
    return {};
  };
  auto first = fetchIndex();
  Rereads rereads;
  bool changed = true;
  while (retryable && rereads.next(changed)) {
    // Perhaps a publish is in progress: read the snapshot again.
    int64_t versionBefore = snapshot.version;
    std::string shaBefore = sha;
    bool okBefore = first.has_value();
    auto loaded = fetchSnapshot();
    if (loaded && loaded->snapshot.version > snapshot.version &&
        loaded->full().index.count(name) && checkAndRecord(*loaded)) {
      snapshot = loaded->snapshot;
      snapshotSha = loaded->sha256;
      pendingIndex = {};
      dropPins();
      signedBy = loaded->keyId;
    }
    first = fetchIndex();
    changed = snapshot.version != versionBefore || sha != shaBefore ||
              first.has_value() != okBefore;
  }
  if (!first)
    return Unexpected(first.error());
  if (sha != expected()) {
    if (packed.count(sha) || packNewKeys.count(sha) ||
        fsutil::exists(verifiedPath(sha)))
      return makeError(
          ErrorCode::Integrity,
          "mix-and-match: " + rel + " of " + where +
              " is an index this machine verified under an earlier snapshot, "
              "not the one snapshot.json (version " +
              std::to_string(snapshot.version) + ") pins",
          Location::inFile(shown(rel)),
          "someone is combining old and new files of the registry (an "
          "attack, or a mirror caught half-updated); try again later or "
          "through another mirror, and do not use it meanwhile");
    return makeError(
        ErrorCode::Integrity,
        rel + " of " + where +
            " does not match snapshot.json: its SHA-256 "
            "is " +
            sha + ", the signed snapshot (version " +
            std::to_string(snapshot.version) + ") pins " + expected(),
        Location::inFile(shown(rel)),
        "the index was altered, or belongs to another state of the "
        "registry; do not use the registry until it is consistent again");
  }
  auto idx = parseAndKeep(body, true);
  if (!idx)
    return Unexpected(idx.error());
  return &(indices[name] = std::move(*idx));
}

//===----------------------------------------------------------------------===//
// RegistryClient
//===----------------------------------------------------------------------===//

RegistryClient::RegistryClient(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
RegistryClient::~RegistryClient() = default;

void RegistryClient::saveCache() { impl_->savePack(); }

Expected<std::unique_ptr<RegistryClient>>
RegistryClient::open(const RegistrySpec &spec, const ClientOptions &options,
                     Reporter &reporter) {
  auto transport = openTransport(spec, options);
  if (!transport)
    return Unexpected(transport.error());
  return open(spec, std::move(*transport), options, reporter);
}

Expected<std::unique_ptr<RegistryClient>>
RegistryClient::open(const RegistrySpec &spec,
                     std::unique_ptr<Transport> transport,
                     const ClientOptions &options, Reporter &reporter) {
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  impl->options = options;
  impl->transport = std::move(transport);
  impl->reporter = &reporter;
  impl->where = impl->transport->describe();
  const std::string url = spec.url.empty() ? impl->where : spec.url;
  impl->remote = net::isHttpUrl(url) || oci::isOciUrl(url);
  impl->now = currentTime(options.now);
  auto root = cacheRootFor(options);
  if (!root)
    return Unexpected(root.error());
  impl->cacheRoot = *root;
  impl->stateDir = registryCacheDir(*root, url);

  if (auto st = impl->loadKeys(); !st)
    return Unexpected(st.error());
  if (auto st = impl->loadConfig(); !st)
    return Unexpected(st.error());
  if (impl->keys.empty())
    return Unexpected(impl->noKeyError());
  auto loaded = impl->fetchSnapshot();
  if (!loaded)
    return Unexpected(loaded.error());
  if (auto st = impl->checkAndRecord(*loaded); !st)
    return Unexpected(st.error());
  impl->snapshot = std::move(loaded->snapshot);
  impl->snapshotSha = loaded->sha256;
  impl->pendingIndex = std::move(loaded->pendingIndex);
  impl->signedBy = loaded->keyId;
  return std::unique_ptr<RegistryClient>(new RegistryClient(std::move(impl)));
}

const RegistrySpec &RegistryClient::spec() const { return impl_->spec; }
const RegistryConfig &RegistryClient::config() const { return impl_->config; }
const RegistrySnapshot &RegistryClient::snapshot() const {
  return impl_->fullSnapshot();
}
std::string RegistryClient::signedBy() const { return impl_->signedBy; }
std::string RegistryClient::snapshotSha256() const {
  return impl_->snapshotSha;
}

bool RegistryClient::hasPackage(const std::string &name) const {
  return impl_->pin(name).has_value();
}

std::vector<std::string> RegistryClient::packageNames() const {
  std::vector<std::string> names;
  for (const auto &[n, h] : impl_->fullSnapshot().index)
    names.push_back(n); // std::map: sorted
  return names;
}

Expected<const RegistryIndex *> RegistryClient::index(const std::string &name) {
  return impl_->index(name);
}

Expected<std::vector<CandidateVersion>>
RegistryClient::versions(const std::string &name) {
  if (!impl_->indices.count(name)) {
    // The warm path: straight from the parsed form, without the fields
    // only `entry` needs.
    auto cached = impl_->cachedCandidates(name);
    if (!cached)
      return Unexpected(cached.error());
    if (*cached)
      return std::move(**cached);
  }
  auto idx = index(name);
  if (!idx)
    return Unexpected(idx.error());
  std::vector<CandidateVersion> out;
  out.reserve((*idx)->versions.size());
  // Versions mostly repeat their neighbours' constraints: one object each.
  std::map<std::string_view, std::shared_ptr<const Constraint>> shared;
  auto share = [&](const Constraint &c) {
    std::shared_ptr<const Constraint> &p = shared[c.text()];
    if (!p)
      p = std::make_shared<const Constraint>(c);
    return p;
  };
  for (const IndexEntry &e : (*idx)->versions) {
    CandidateVersion cv;
    cv.version = e.version;
    cv.dependencies.reserve(e.dependencies.size());
    for (const auto &[dep, c] : e.dependencies)
      cv.dependencies.push_back(Dependency{dep, share(c)});
    if (e.requiresIree)
      cv.requiresIree = share(*e.requiresIree);
    cv.platforms = e.platforms;
    cv.yanked = e.yanked;
    out.push_back(std::move(cv));
  }
  return out;
}

Expected<const IndexEntry *> RegistryClient::entry(const std::string &name,
                                                   const Version &version) {
  if (!impl_->indices.count(name))
    if (const IndexEntry *e = impl_->candidateEntry(name, version))
      return e;
  auto idx = index(name);
  if (!idx)
    return Unexpected(idx.error());
  std::string published;
  for (const IndexEntry &e : (*idx)->versions) {
    if (e.version == version)
      return &e;
    published += (published.empty() ? "" : ", ") + e.version.str();
  }
  return makeError(
      ErrorCode::NotFound,
      name + " " + version.str() + " is not published in " + impl_->label() +
          " (published: " + (published.empty() ? "none" : published) + ")",
      Location{"", 0, 0, "", name, ""});
}

std::string RegistryClient::cachedArchivePath(const std::string &sha256) const {
  return downloadCachePath(impl_->cacheRoot, sha256);
}

Expected<std::vector<std::string>> RegistryClient::fetchArchives(
    const std::vector<std::pair<std::string, Version>> &which,
    Reporter &reporter) {
  // What interrupted downloads left (their process is gone) never
  // survives a run that downloads.
  (void)removeAbandonedPartials(impl_->cacheRoot + "/downloads");
  std::vector<std::string> paths;
  std::vector<Transport::Download> missing;
  std::vector<const IndexEntry *> missingEntries;
  std::set<std::string> queued;
  std::string missingNames;
  for (const auto &[name, version] : which) {
    auto e = entry(name, version);
    if (!e)
      return Unexpected(e.error());
    const std::string path = cachedArchivePath((*e)->sha256);
    paths.push_back(path);
    if (queued.count((*e)->sha256))
      continue;
    if (fsutil::exists(path)) {
      if (fileHasContent(path, (*e)->size, (*e)->sha256)) {
        reporter.detail(1, name + " " + (*e)->version.str() +
                               ": in the download cache (" + path + ")");
        continue;
      }
      ::unlink(path.c_str()); // corrupt: fetch it again
    }
    queued.insert((*e)->sha256);
    Transport::Download d;
    d.relPath = (*e)->archive;
    d.destPath = path;
    d.size = (*e)->size;
    d.sha256 = (*e)->sha256;
    d.label = name + " " + (*e)->version.str();
    missingNames += (missingNames.empty() ? "" : ", ") + d.label;
    if (!impl_->options.offline || !impl_->remote)
      reporter.detail(1, d.label + ": fetching " + impl_->shown(d.relPath) +
                             " (" + std::to_string(d.size) + " bytes)");
    missing.push_back(std::move(d));
    missingEntries.push_back(*e);
  }
  if (missing.empty())
    return paths;
  if (impl_->options.offline && impl_->remote)
    return makeError(ErrorCode::NotFound,
                     "offline, and not in the download cache: " + missingNames,
                     Location::inFile(impl_->cacheRoot + "/downloads"),
                     "run the command once with network access (without "
                     "--offline) to fetch them, or install from a bundle "
                     "(`ireepkg bundle create` on a connected machine)");
  auto started = std::chrono::steady_clock::now();
  if (Status st = impl_->transport->downloadAll(missing, reporter); !st)
    return Unexpected(st.error());
  {
    uint64_t bytes = 0;
    for (const Transport::Download &d : missing)
      bytes += d.size;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f",
                  std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - started)
                      .count());
    reporter.detail(1, "fetched " + std::to_string(missing.size()) +
                           " archive" + (missing.size() == 1 ? "" : "s") +
                           " (" + std::to_string(bytes) + " bytes) in " +
                           seconds + " s");
  }
  for (size_t i = 0; i < missing.size(); ++i) {
    struct stat st;
    if (::stat(missing[i].destPath.c_str(), &st) != 0 ||
        static_cast<uint64_t>(st.st_size) != missingEntries[i]->size) {
      ::unlink(missing[i].destPath.c_str());
      return makeError(ErrorCode::Integrity,
                       missing[i].label + ": the download did not produce "
                                          "the archive the index declares",
                       Location::inFile(impl_->shown(missing[i].relPath)),
                       "try again; if it persists, tell the registry's "
                       "maintainer");
    }
  }
  return paths;
}

} // namespace ireepkg::registry
