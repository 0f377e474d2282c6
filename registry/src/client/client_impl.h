//===- registry/src/client/client_impl.h ----------------------------------===//
//
// The verifying registry client's state.
//
// Private to the registry module: RegistryClient::Impl, shared by
// client.cpp (keys, config.json, the snapshot, the public methods) and
// client_index.cpp (index files and index.pack). See client.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_CLIENT_IMPL_H
#define IREEPKG_REGISTRY_CLIENT_IMPL_H

#include "ireepkg/manifest_schema/fast_index.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/cache/cache_maintenance.h"
#include "ireepkg/registry/client/client.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/client/parsed_cache.h"
#include "metadata_files.h"
#include "transport/oci.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "registry_urls.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace ireepkg::registry {

namespace detail {

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

inline std::string keyIdList(const std::vector<signing::PublicKey> &keys) {
  std::string out;
  for (const auto &k : keys)
    out += (out.empty() ? "" : ", ") + signing::keyIdHex(k);
  return out;
}

inline void forwardWarnings(const DiagnosticList &diags, Reporter &reporter) {
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
  fsutil::MappedFile parsed; ///< snapshot.bin's bytes, when they were read
  std::string body;   ///< snapshot.json's verified bytes, when they were not
  /// snapshot.json was known by its stamp and not read: should snapshot.bin
  /// fail to decode, the bytes are read then (and must have the hash).
  bool bodyUnread = false;
};

/// Index files fetched, checked against the snapshot and parsed ahead of
/// the resolver, on a second thread with its own transport
/// (RegistryClient::prefetch, client_prefetch.cpp). The thread reports
/// nothing and decides nothing: a file it could not use is read again by
/// the client itself, which reports it as it always has.
class Prefetcher {
public:
  /// One file the thread fetched, whose bytes had the SHA-256 asked for
  /// and parsed clean with the fast parser as package `name`: its parsed
  /// form, as a frame of index.pack (encodeParsedIndex).
  struct Result {
    std::string url;
    bool fromCache = false;
    std::string frame;
  };

  /// Starts the thread; throws std::system_error when it cannot.
  explicit Prefetcher(std::unique_ptr<Transport> transport);
  ~Prefetcher() { stop(); }
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  /// Queues index/<name>.json, expected to have SHA-256 `sha` (hex).
  /// Returns false when `name` was queued before.
  bool add(const std::string &name, const std::string &sha);
  /// `name`'s result, if it was queued for `sha`: waits while the thread
  /// works on it; nullopt when it was not queued, or the thread has not
  /// started on it (it is taken off the queue: reading it now is sooner
  /// than waiting), or the thread could not use the file.
  std::optional<Result> take(const std::string &name, const std::string &sha);
  /// Ends the thread, after the files it is working on; idempotent.
  void stop();

private:
  enum class State { Queued, Working, Done };
  struct Item {
    State state = State::Queued;
    std::string sha;
    std::optional<Result> result;
  };
  void run();

  std::unique_ptr<Transport> transport_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  std::unordered_map<std::string, Item> items_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace detail

using namespace detail;

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
    std::string_view file; ///< a frame of the mapped pack (packMap)
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
  /// lookup and mapped read-only as it is then (loadPack): frames are read
  /// in place from the page cache, neither copied nor held in the heap (a
  /// large resolution's pack is megabytes, and every page a command
  /// touches for the first time costs it).
  struct PackFrame {
    uint64_t offset = 0, size = 0;
  };
  bool packLoaded = false;
  fsutil::MappedFile packMap; ///< the pack as it was when loaded
  std::unordered_map<std::string, PackFrame> packed; ///< by key; last wins
  std::vector<PackFrame> packUsed; ///< the frames this run decoded
  /// Frames parsed anew, appended a megabyte at a time and when closing.
  std::string packNew;
  std::set<std::string> packNewKeys;
  uint64_t packNewBytes = 0;
  fsutil::UniqueFd packOut; ///< open for appending, once there is any
  bool packReplace = false; ///< a pack that could not be read is replaced
  bool packSaved = false;   ///< savePack() has considered compacting

  /// Reads index files ahead of the resolver (prefetch()); made on the
  /// first file there is to read, when the transport has a copy for it.
  std::unique_ptr<Prefetcher> prefetcher;
  bool prefetchUnavailable = false;
  /// The frames taken from it, which `candidates` read in place.
  std::deque<std::string> prefetchedFrames;
  /// `name`'s frame from the prefetch thread, if it has one for the hash
  /// the snapshot pins now: kept (prefetchedFrames, and for index.pack),
  /// and reported as a file read from the registry.
  std::optional<std::string_view> takePrefetched(const std::string &name,
                                                 const std::string &sha);

  ~Impl() {
    prefetcher.reset();
    savePack();
  }
  void prefetch(const std::vector<std::string> &names);
  std::string packFile() const { return stateDir + "/index.pack"; }
  void loadPack();
  std::optional<std::string_view> readPackFrame(const PackFrame &frame) const;
  void keepParsed(const RegistryIndex &index, const std::string &sha);
  /// Keeps `frame` (encoded already), or `index`'s frame when given.
  void keepFrame(std::string_view frame, const std::string &sha,
                 const RegistryIndex *index = nullptr);
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
        // Bytes read when the snapshot was opened were checked then;
        // read here, they must be keyed by the verified snapshot's hash
        // and whole.
        if (pendingIndex.parsed.empty())
          if (auto bin = fsutil::mapOwnCacheFile(parsedSnapshotFile(),
                                                 2 * kMaxSnapshotBytes);
              bin && decodeParsedSnapshot(bin->bytes(), snapshotSha, false))
            pendingIndex.parsed = std::move(*bin);
        if (!pendingIndex.parsed.empty())
          pendingPins = parsedSnapshotPackages(pendingIndex.parsed.bytes());
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
    /// The signature is by a trusted key but does not verify the snapshot.
    bool signatureMismatch = false;
  };

  Expected<void> loadKeys();
  Expected<void> loadConfig();
  Error noKeyError() const;
  /// `signatureFile`: the transport's one copy, or of several the first
  /// that verifies `snapshot` (the bytes of `file`) with a trusted key
  /// (Integrity, with each one's reason, when none does).
  Expected<net::MetadataResponse>
  fetchSnapshotSignature(const std::string &snapshot, const std::string &file,
                         const std::string &signatureFile);
  /// Reads and checks `file` (snapshot.json, or kStagedSnapshot) against
  /// `signatureFile` (snapshot.json.minisig, or kStagedSignature).
  std::expected<Loaded, Failure>
  fetchSnapshotOnce(const std::string &file = "snapshot.json",
                    const std::string &signatureFile = "snapshot.json.minisig");
  /// The snapshot as snapshot.verified records it, when snapshot.json and
  /// its signature still have the stamps recorded there and the key that
  /// verified them is still trusted; nothing is read from the registry.
  std::optional<Loaded> loadedByStamps(const fsutil::FileStamp &snapshot,
                                       const fsutil::FileStamp &signature);
  /// The current snapshot. With `staged` (an index file did not match), a
  /// newer snapshot staged by a publish with its own signature is
  /// preferred (fetchSnapshot in client.cpp says when that happens).
  Expected<Loaded> fetchSnapshot(bool staged = false);
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

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_CLIENT_IMPL_H
