//===- ireepkg/registry.h - Registries -------------------------*- C++ -*-===//
//
// A registry is static files (formats.md §5), served by any HTTP server or
// read from a directory:
//
//   config.json                   name, trusted public keys, mirrors
//   snapshot.json (+ .minisig)    version, expires, index/<name>.json hashes
//   index/<name>.json             every version of one package
//   archives/<name>/<name>-<version>.ireepkg (+ .minisig)
//
// The publisher (initRegistry, publishArchives, yankVersion) writes that
// layout into a directory, every file atomically, under a lock, and re-signs
// the snapshot after each change.
//
// The client (RegistryClient) reads it through a Transport (a directory, or
// HTTP(S) through net::HttpClient) and trusts nothing it has not checked:
//
//   1. snapshot.json's signature must verify against a configured key;
//   2. its version must not be lower than the last one this machine saw
//      from that registry (rollback), and `expires` must be in the future
//      (freeze);
//   3. every index/<name>.json must hash to what the snapshot says
//      (mix-and-match);
//   4. every archive must have the size and SHA-256 of its index entry; a
//      download is cut off at the declared size (endless data).
//
// Each refusal has its own message. What a client has verified is kept in
// the cache (<cache>/registries/<id>/), including the highest snapshot
// version seen.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_H
#define IREEPKG_REGISTRY_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/resolve/resolver.h"
#include "ireepkg/registry/fetch.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {
class Reporter;
}

namespace ireepkg::registry {

//===----------------------------------------------------------------------===//
// Publishing
//===----------------------------------------------------------------------===//

struct SigningOptions {
  /// A minisign secret key file. Required to publish into a registry whose
  /// config.json lists keys; its public half must be one of them.
  std::string secretKeyPath;
  std::optional<std::string> password; ///< for an encrypted key
  /// The new snapshot's `expires`: this many days after `now`.
  int expiresDays = 30;
  int64_t now = 0; ///< seconds since the epoch; 0: the current time
  /// Told of what the network asks the user to wait for (a Retry-After) in
  /// a registry kept in an OCI registry; nullptr: nobody is told.
  Reporter *reporter = nullptr;
};

struct InitOptions {
  std::string name; ///< default: the directory's name
  SigningOptions signing;
  std::vector<std::string> mirrors;
  std::string description;
};

/// Creates the layout in `dir` (which must be empty or absent): config.json
/// with the key's public half, an empty signed snapshot (version 1),
/// index/ and archives/.
Status initRegistry(const std::string &dir, const InitOptions &options);

struct PublishResult {
  std::string name;
  Version version;
  std::string archivePath; ///< inside the registry
  std::string sha256;
  uint64_t size = 0;
  int64_t snapshotVersion = 0;
  bool alreadyPublished = false; ///< the same bytes were there already
  /// What reading the archive's manifest found but accepted (fields this
  /// version does not know).
  std::vector<Diagnostic> warnings;
};

/// Adds `archive` (checked as `install` would: manifest, RECORD, safety
/// rules) and its signature, rewrites index/<name>.json, and bumps and
/// re-signs snapshot.json. Publishing a name and version that is there with
/// different bytes is refused (Conflict); with the same bytes it changes
/// nothing.
Expected<PublishResult> publishArchive(const std::string &registryDir,
                                       const std::string &archive,
                                       const SigningOptions &options);

/// Publishes several archives in one transaction: every archive is checked
/// first, as publishArchive checks one (and the same name and version given
/// twice must be the same bytes); if any is refused, nothing is written and
/// the error names each refused archive and why. Then the archives, the
/// index files they change and one new snapshot (version + 1, signed once)
/// are written, in the order of publisher.cpp. One result per archive, in
/// order; a version already published (or given earlier) with the same
/// bytes is alreadyPublished. No new snapshot when nothing is new.
/// publishArchive is this with one archive.
Expected<std::vector<PublishResult>>
publishArchives(const std::string &registryDir,
                const std::vector<std::string> &archives,
                const SigningOptions &options);

/// Marks (or with `yanked` false, unmarks) one version as yanked, and
/// re-signs the snapshot. Returns the new snapshot version.
Expected<int64_t> yankVersion(const std::string &registryDir,
                              const std::string &name, const Version &version,
                              bool yanked, const SigningOptions &options);

/// Re-signs the current state with a new version and `expires` (for a
/// snapshot about to expire, or after adding a new key to config.json),
/// after checking that every index file still has the snapshot's hash.
/// Returns the new snapshot version.
Expected<int64_t> resignRegistry(const std::string &registryDir,
                                 const SigningOptions &options);

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Where a registry's files come from. Paths are relative to the registry
/// root ("snapshot.json", "index/simple-mul.json").
class Transport {
public:
  virtual ~Transport();
  /// The registry's location as the user gave it, for messages.
  virtual std::string describe() const = 0;
  /// A metadata file, at most `maxBytes` (more is an Integrity error).
  virtual Expected<net::MetadataResponse> fetch(const std::string &relPath,
                                                uint64_t maxBytes) = 0;
  /// Several metadata files; each result is what fetch() gives for that
  /// file alone (one failing does not stop the others). This default
  /// fetches them one after the other; over HTTP they are fetched in
  /// parallel, up to net::FetchOptions::parallel at once.
  virtual std::vector<Expected<net::MetadataResponse>>
  fetchMany(const std::vector<std::string> &relPaths, uint64_t maxBytes);
  /// Every copy of a file that a registry may hold more than once (the
  /// snapshot's signature, as several OCI referrers), each the bytes or
  /// why they could not be read, never empty: the client takes the first
  /// that verifies. This default: fetch()'s one answer.
  virtual std::vector<Expected<net::MetadataResponse>>
  fetchCandidates(const std::string &relPath, uint64_t maxBytes) {
    std::vector<Expected<net::MetadataResponse>> out;
    out.push_back(fetch(relPath, maxBytes));
    return out;
  }
  /// For a registry in a local directory: the stamp of one of its files
  /// (fsutil::FileStamp), which changes whenever the file does, so that
  /// the client can tell that snapshot.json is the one it verified without
  /// reading it. None elsewhere (HTTP revalidates instead), or when the
  /// file is not there.
  virtual std::optional<fsutil::FileStamp>
  stamp(const std::string &relPath) const {
    (void)relPath;
    return std::nullopt;
  }
  /// How many files fetchMany fetches at once (1: one after the other).
  virtual size_t parallelFetches() const { return 1; }
  /// Another transport to the same place, which another thread may use
  /// while this one is in use (the registry client fetches index files
  /// ahead of the resolver on one); null when the transport has none, and
  /// then nothing is fetched ahead.
  virtual std::unique_ptr<Transport> concurrentCopy() const { return nullptr; }
  struct Download {
    std::string relPath;
    std::string destPath;
    uint64_t size = 0;
    std::string sha256;
    std::string label;
  };
  /// Places each file at its destPath, verified (size, SHA-256), or fails
  /// leaving none of the failed ones behind.
  virtual Status downloadAll(const std::vector<Download> &downloads,
                             Reporter &reporter) = 0;
};

/// A registry as a project or the command line names it.
struct RegistrySpec {
  std::string name = "default";
  /// https://, http://, file:// or a directory path.
  std::string url;
  std::vector<std::string> mirrors;
  /// Trusted keys: minisign public keys (base64 lines) or .pub paths.
  std::vector<std::string> publicKeys;
};

struct ClientOptions {
  /// Metadata cache, trust state and downloaded archives live here; empty:
  /// the package cache's root (PackageCache::openDefault).
  std::string cacheRoot;
  bool offline = false;
  /// Seconds since the epoch, for `expires`; 0: the current time.
  int64_t now = 0;
  /// A bundle's registry: its snapshot is checked for signature and index
  /// hashes, but not against the machine's rollback state nor `expires`
  /// (a vendor bundle is meant to be installed long after it was made).
  bool bundle = false;
  /// Check everything again, trusting no earlier check this machine
  /// remembers: the snapshot's signature (snapshot.verified), and every
  /// index file against the snapshot rather than its parsed or verified
  /// copy in the cache (`registry verify`). Not when offline from a remote
  /// registry, where the cache is all there is to check.
  bool recheck = false;
  net::FetchOptions fetch;
};

/// The normal form of a registry URL, which identifies it in the cache:
/// http(s) with a lower-case scheme and host, a directory or file:// URL as
/// file://<absolute path>; no trailing slash.
std::string normalizeRegistryUrl(const std::string &url);

/// The first 16 hex digits of the SHA-256 of normalizeRegistryUrl(url):
/// the registry's directory in the cache, <cache>/registries/<id>/.
std::string registryId(const std::string &url);

/// Makes the transport for `spec` (a directory for paths and file://, HTTP
/// otherwise).
Expected<std::unique_ptr<Transport>>
openTransport(const RegistrySpec &spec, const ClientOptions &options);

class RegistryClient : public PackageSource {
public:
  /// Fetches config.json and the snapshot and checks the snapshot's
  /// signature, version and expiry (steps 1-2 above).
  static Expected<std::unique_ptr<RegistryClient>>
  open(const RegistrySpec &spec, const ClientOptions &options,
       Reporter &reporter);
  /// The same over a transport made by the caller (tests, bundles).
  static Expected<std::unique_ptr<RegistryClient>>
  open(const RegistrySpec &spec, std::unique_ptr<Transport> transport,
       const ClientOptions &options, Reporter &reporter);
  ~RegistryClient() override;

  /// Writes what this client parsed to the metadata cache now, as its
  /// destructor does, and stops the thread prefetch() started: for a
  /// client that is discarded rather than destroyed
  /// (ireepkg/base/teardown.h).
  void saveCache();

  const RegistrySpec &spec() const;
  const RegistryConfig &config() const;
  const RegistrySnapshot &snapshot() const;
  /// Key id (minisign hex) of the key that verified the snapshot.
  std::string signedBy() const;
  /// SHA-256 (hex) of the verified snapshot.json's bytes: the registry's
  /// state as this client read it.
  std::string snapshotSha256() const;

  /// Every package name the snapshot lists, sorted.
  std::vector<std::string> packageNames() const;
  /// Whether the snapshot lists `name` (without building the map of every
  /// package, which snapshot() does).
  bool hasPackage(const std::string &name) const;

  /// index/<name>.json, fetched once and checked against the snapshot
  /// (step 3). NotFound when the snapshot does not list `name`.
  Expected<const RegistryIndex *> index(const std::string &name);

  /// PackageSource: the index's versions.
  Expected<std::vector<CandidateVersion>>
  versions(const std::string &name) override;
  /// PackageSource: the index files of `names` that the metadata cache
  /// does not hold parsed are fetched, checked against the snapshot and
  /// parsed on a second thread (over HTTP, several at a time), while the
  /// caller goes on; index() and versions() then take them from there, or
  /// read a file themselves when the thread has not started on it. Only
  /// when the transport has a concurrentCopy(). A file that fails there
  /// (missing, another hash, not clean) is read again by index(), which
  /// reports it exactly as without this.
  void prefetch(const std::vector<std::string> &names) override;

  /// The index entry of one version; NotFound if it is not published.
  Expected<const IndexEntry *> entry(const std::string &name,
                                     const Version &version);

  /// Makes each archive available as a verified local file (step 4),
  /// downloading in parallel what the cache does not hold yet. Returns the
  /// paths in the order asked. Offline, a missing archive is a NotFound
  /// error naming every missing package.
  Expected<std::vector<std::string>>
  fetchArchives(const std::vector<std::pair<std::string, Version>> &which,
                Reporter &reporter);

  /// Where fetchArchives puts (or finds) an archive of this hash.
  std::string cachedArchivePath(const std::string &sha256) const;

private:
  struct Impl;
  explicit RegistryClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

//===----------------------------------------------------------------------===//
// Static copies
//===----------------------------------------------------------------------===//

struct MirrorResult {
  std::string dir;             ///< absolute
  int64_t snapshotVersion = 0; ///< of the source, now the copy's
  int64_t previousVersion = 0; ///< the copy's before; 0: a new copy
  std::string signedBy;        ///< key id that verified the snapshot
  size_t packages = 0;
  size_t versions = 0;
  size_t archivesCopied = 0; ///< archives the copy did not hold yet
  uint64_t bytesCopied = 0;
};

/// Copies the registry `source` (any URL a client reads, oci:// included)
/// into the directory `dir` as a directory registry: config.json, the
/// signed snapshot and its signature, the index files byte for byte, every
/// archive (yanked ones too) and each archive's signature that verifies
/// with a trusted key. Everything is verified before it is written (with
/// the keys of `source`), and moved into `dir` in the publisher's order.
/// `dir` must be new, empty or an earlier copy, which is then brought up
/// to date (a copy newer than the source is refused: Conflict).
Expected<MirrorResult> mirrorRegistry(const RegistrySpec &source,
                                      const std::string &dir,
                                      const ClientOptions &options,
                                      Reporter &reporter);

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_H
