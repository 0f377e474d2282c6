//===- registry/src/transport/oci.h - The OCI distribution API (private) --===//
//
// A registry kept in an OCI registry (oci://HOST[:PORT]/NAMESPACE, or
// oci+http:// for a plain-HTTP one) is stored as OCI artifacts; the layout
// is in docs/registries.md ("Registries in OCI registries"). This file is
// the protocol under it: manifests and blobs over the OCI distribution API,
// through net::HttpClient::request, with the registry's authentication
// (anonymous or with credentials, Bearer tokens or Basic).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_OCI_H
#define IREEPKG_REGISTRY_OCI_H

#include "ireepkg/base/error.h"
#include "ireepkg/registry/transport/fetch.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg::registry::oci {

// Media types (docs/registries.md).
inline constexpr const char *kManifestMediaType =
    "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char *kIndexMediaType =
    "application/vnd.oci.image.index.v1+json";
inline constexpr const char *kEmptyMediaType =
    "application/vnd.oci.empty.v1+json";
inline constexpr const char *kEmptyDigest =
    "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
inline constexpr const char *kPackageArtifact =
    "application/vnd.ireepkg.package.v1";
inline constexpr const char *kArchiveLayer =
    "application/vnd.ireepkg.archive.v1";
inline constexpr const char *kPluginManifestConfig =
    "application/vnd.ireepkg.plugin-manifest.v1+json";
inline constexpr const char *kConfigArtifact =
    "application/vnd.ireepkg.registry.config.v1+json";
inline constexpr const char *kSnapshotArtifact =
    "application/vnd.ireepkg.registry.snapshot.v1+json";
inline constexpr const char *kSignatureLayer =
    "application/vnd.ireepkg.minisign.v1";
/// The snapshot's signature as an OCI 1.1 referrer of the snapshot
/// manifest (its one layer: kSignatureLayer).
inline constexpr const char *kSnapshotSignatureArtifact =
    "application/vnd.ireepkg.snapshot.signature.v1";
inline constexpr const char *kIndexArtifact =
    "application/vnd.ireepkg.registry.index.v1+json";
inline constexpr const char *kTitleAnnotation =
    "org.opencontainers.image.title";
inline constexpr const char *kVersionAnnotation =
    "org.opencontainers.image.version";
inline constexpr const char *kArchiveSignatureAnnotation =
    "vnd.ireepkg.archive.minisig";

/// The tags of the metadata repository and of a package's repository.
inline constexpr const char *kConfigTag = "config";
inline constexpr const char *kSnapshotTag = "snapshot";
inline constexpr const char *kIndexTag = "index";

/// True for oci:// and oci+http:// URLs.
bool isOciUrl(const std::string &url);

struct OciLocation {
  std::string url;    ///< as given
  std::string scheme; ///< "https" or "http"
  std::string host;   ///< host[:port], lower case
  std::string ns;     ///< the namespace: the metadata repository
  /// Where the distribution API is. Docker Hub is named docker.io (as
  /// images name it) but serves the API at registry-1.docker.io, as
  /// docker and oras know.
  std::string base() const {
    return scheme + "://" +
           (host == "docker.io" ? std::string("registry-1.docker.io") : host);
  }
  /// The repository of one package.
  std::string packageRepo(const std::string &name) const {
    return ns + "/" + name;
  }
};

Expected<OciLocation> parseOciUrl(const std::string &url);

/// A version as a tag: OCI tags have no '+', so build metadata is joined
/// with '_' (1.0.0+build.5 -> 1.0.0_build.5).
std::string versionTag(const std::string &version);

struct Credentials {
  std::string username;
  std::string password;
  /// An OAuth2 refresh token (`identitytoken` in auths, as `docker login`
  /// stores it for registries that use OAuth2): exchanged at the token
  /// realm with a POST (grant_type=refresh_token) instead of Basic.
  std::string identityToken;
  /// Where they came from, for messages ("~/.docker/config.json auths").
  std::string source;
};

/// Credentials for `host` (host[:port]) the way other OCI tools find them:
/// $REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json,
/// $DOCKER_CONFIG/config.json (else ~/.docker/config.json); in each, a
/// `credHelpers` entry for the host, then `auths`, then `credsStore`. A
/// helper is `docker-credential-<name> get` on $PATH. None: anonymous.
Expected<std::optional<Credentials>> findCredentials(const std::string &host);

struct Descriptor {
  std::string mediaType;
  std::string digest;
  uint64_t size = 0;
  std::string artifactType; ///< in an index of referrers
  std::map<std::string, std::string> annotations;
  nlohmann::json toJson() const;
};

struct Manifest {
  std::string digest; ///< of `text`
  std::string text;
  std::string artifactType;
  Descriptor config;
  std::vector<Descriptor> layers;
  std::map<std::string, std::string> annotations;
  /// The layer with this media type (and title, when given).
  const Descriptor *layer(const std::string &mediaType,
                          const std::string &title = "") const;
};

/// An image manifest (v1.1) with `artifactType`, canonical JSON; with a
/// `subject` when given (a referrer of that manifest).
std::string makeManifest(const std::string &artifactType,
                         const Descriptor &config,
                         const std::vector<Descriptor> &layers,
                         const std::map<std::string, std::string> &annotations,
                         const Descriptor *subject = nullptr);

/// The OCI 1.1 fallback tag of the referrers of `digest`: sha256-<hex>.
std::string referrersTag(const std::string &digest);

class Client {
public:
  Client(OciLocation location, std::unique_ptr<net::HttpClient> http);
  static Expected<std::unique_ptr<Client>>
  open(const OciLocation &location, const net::FetchOptions &options);

  const OciLocation &location() const { return loc_; }
  net::HttpClient &http() { return *http_; }

  /// One request to the registry for `repo`, authenticated: a 401's
  /// challenge (Bearer: a token from its realm; Basic) is answered once.
  Expected<net::HttpResponse> send(net::HttpRequest request,
                                   const std::string &repo, bool push,
                                   const std::string &alsoPull = "");
  /// The headers that authenticate a pull of `repo` (after a first request
  /// has learnt what the registry asks for): for downloads.
  Expected<std::vector<std::string>> pullHeaders(const std::string &repo);
  /// Drops every token kept (they may have expired): the next request
  /// asks for new ones.
  void forgetTokens() { auth_.clear(); }

  /// NotFound when the tag or digest is not there.
  Expected<Manifest> getManifest(const std::string &repo,
                                 const std::string &reference);
  /// A blob of at most maxBytes, checked against its digest.
  Expected<std::string> getBlob(const std::string &repo,
                                const std::string &digest, uint64_t maxBytes);
  Expected<bool> hasBlob(const std::string &repo, const std::string &digest);
  /// Uploads a blob unless the repository has it: first a mount from
  /// `mountFrom` (when given), then a POST and a monolithic PUT.
  Status pushBlob(const std::string &repo, const std::string &digest,
                  uint64_t size, const std::string *bytes,
                  const std::string &file, const std::string &mountFrom = "");
  /// PUTs a manifest (or, with kIndexMediaType, an index) under `tag`
  /// (or its digest); returns its digest.
  Expected<std::string> putManifest(const std::string &repo,
                                    const std::string &tag,
                                    const std::string &text,
                                    const char *mediaType = kManifestMediaType);

  /// The referrers (OCI 1.1) of the manifest `digest` in `repo` that have
  /// this artifactType, as listed: the referrers API (GET
  /// /v2/<repo>/referrers/<digest>), or where the registry has none (404)
  /// the index under the fallback tag sha256-<hex>. None: empty.
  Expected<std::vector<Descriptor>> referrers(const std::string &repo,
                                              const std::string &digest,
                                              const std::string &artifactType);
  /// Pushes `text`, a manifest whose subject is in `repo`, by its digest;
  /// where the registry has no referrers API, also adds it to the index
  /// under the fallback tag (read, appended to, written back).
  Status pushReferrer(const std::string &repo, const std::string &text,
                      const std::string &artifactType,
                      const std::string &subjectDigest);
  /// The snapshot's signatures for the snapshot manifest `m` of `repo`:
  /// its kSignatureLayer, or else the one layer of each of its referrers
  /// of type kSnapshotSignatureArtifact, in the order listed (each the
  /// bytes, or why they could not be read). NotFound when it has neither.
  Expected<std::vector<Expected<std::string>>>
  snapshotSignatures(const std::string &repo, const Manifest &m,
                     uint64_t maxBytes);
  /// The first of snapshotSignatures that could be read (else the first's
  /// error).
  Expected<std::string> snapshotSignature(const std::string &repo,
                                          const Manifest &m, uint64_t maxBytes);

  std::string describe() const { return loc_.url; }

private:
  struct Challenge {
    std::string scheme; ///< "bearer" or "basic"
    std::map<std::string, std::string> params;
  };
  Expected<std::string> authorize(const Challenge &challenge,
                                  const std::vector<std::string> &scopes);
  Expected<std::optional<Credentials>> credentials();
  Error httpError(const std::string &what, const net::HttpResponse &r) const;

  OciLocation loc_;
  std::unique_ptr<net::HttpClient> http_;
  std::optional<std::optional<Credentials>> creds_;
  std::optional<Challenge> challenge_;      ///< the registry's, once seen
  std::map<std::string, std::string> auth_; ///< scope -> Authorization
};

/// The publisher's operations (registry.h) on an oci:// registry, through
/// a staging directory (oci_publish.cpp).
Status initRegistry(const std::string &url, const InitOptions &options);
Expected<std::vector<PublishResult>>
publishArchives(const std::string &url,
                const std::vector<std::string> &archives,
                const SigningOptions &options);
Expected<int64_t> yankVersion(const std::string &url, const std::string &name,
                              const Version &version, bool yanked,
                              const SigningOptions &options);
Expected<int64_t> resignRegistry(const std::string &url,
                                 const SigningOptions &options);
Expected<PublishResult> addExisting(const std::string &url,
                                    const std::string &name,
                                    const Version &version,
                                    const SigningOptions &options);
/// config.json, snapshot.json (+ .minisig) and the index files as they are
/// now, into `dir` (no check: the publisher or client checks).
Status pullMetadata(const std::string &url, const std::string &dir,
                    Reporter *reporter);

/// The Transport for an oci:// registry spec (its mirrors oci:// too).
Expected<std::unique_ptr<Transport>>
openOciTransport(const RegistrySpec &spec, const ClientOptions &options);

} // namespace ireepkg::registry::oci

#endif // IREEPKG_REGISTRY_OCI_H
