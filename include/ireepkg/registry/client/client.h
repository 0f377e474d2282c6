//===- ireepkg/registry/client/client.h - Reading registries ----*- C++ -*-===//
//
// A registry is static files (formats.md §5), served by any HTTP server or
// read from a directory:
//
//   config.json                   name, trusted public keys, mirrors
//   snapshot.json (+ .minisig)    version, expires, index/<name>.json hashes
//   index/<name>.json             every version of one package
//   archives/<name>/<name>-<version>.ireepkg (+ .minisig)
//
// The publisher (ireepkg/registry/publish/publisher.h) writes that layout;
// a static copy of a registry is made by ireepkg/registry/publish/mirror.h.
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
#ifndef IREEPKG_REGISTRY_CLIENT_CLIENT_H
#define IREEPKG_REGISTRY_CLIENT_CLIENT_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/resolve/resolver.h"
#include "ireepkg/registry/transport/fetch.h"
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

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_CLIENT_CLIENT_H
