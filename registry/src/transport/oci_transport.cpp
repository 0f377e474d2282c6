//===- registry/src/transport/oci_transport.cpp ---------------------------===//
//
// A registry kept in an OCI registry.
//
// registry::Transport over oci:// URLs (docs/registries.md, "Registries in
// OCI registries"). The transport only moves bytes: it maps each file the
// client asks for onto the artifact that holds it, and the client checks
// signatures, versions, expiry and hashes exactly as for any registry.
//
//   config.json             NAMESPACE:config    its one layer
//   snapshot.json           NAMESPACE:snapshot  the snapshot layer
//   snapshot.json.minisig   NAMESPACE:snapshot  the signature layer of the
//                           same manifest as the snapshot just read, so the
//                           two always belong together; without one, the
//                           signature referrer of that manifest (OCI 1.1:
//                           the referrers API, or the sha256-<hex> tag)
//   index/<name>.json       NAMESPACE/<name> blob by the digest the last
//                           snapshot read pins (else NAMESPACE/<name>:index)
//   archives/<name>/...     NAMESPACE/<name> blob by the SHA-256 the index
//                           entry declares, streamed through
//                           HttpClient::downloadAll (size and SHA-256
//                           checked as it arrives, in parallel)
//   archives/<name>/<name>-<version>.ireepkg.minisig
//                           the vnd.ireepkg.archive.minisig annotation of
//                           NAMESPACE/<name>:<version> (optional, as in a
//                           directory registry: nothing trusts it alone)
//
// Blobs read as metadata are kept by digest under
// <cache>/registries/<id>/oci/blobs/, and the last manifest of each tag
// under oci/tags/, so that --offline works as for an HTTP registry.
//
//===----------------------------------------------------------------------===//
#include "oci.h"

#include "ireepkg/base/hash.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "client/registry_urls.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace ireepkg::registry {

using namespace detail;

namespace {

Location at(const std::string &file) {
  Location l;
  l.file = file;
  return l;
}

class OciTransport : public Transport {
public:
  OciTransport(std::string url, std::vector<std::unique_ptr<oci::Client>> c,
               std::string cacheDir, bool offline)
      : url_(std::move(url)), clients_(std::move(c)),
        cacheDir_(std::move(cacheDir)), offline_(offline) {}

  std::string describe() const override { return url_; }

  Expected<net::MetadataResponse> fetch(const std::string &relPath,
                                        uint64_t maxBytes) override {
    std::optional<Error> first;
    for (size_t n = 0; n < clients_.size(); ++n) {
      size_t i = (preferred_ + n) % clients_.size();
      auto r = fetchFrom(i, relPath, maxBytes);
      if (r) {
        preferred_ = i;
        return r;
      }
      if (!first)
        first = r.error();
      if (offline_)
        break;
    }
    return Unexpected(*first);
  }

  std::vector<Expected<net::MetadataResponse>>
  fetchCandidates(const std::string &relPath, uint64_t maxBytes) override {
    std::vector<Expected<net::MetadataResponse>> out;
    // The snapshot's signature as referrers (no layer of its own): each.
    if (relPath != "snapshot.json.minisig" || offline_ || !snapshotManifest_ ||
        snapshotManifest_->layer(oci::kSignatureLayer)) {
      out.push_back(fetch(relPath, maxBytes));
      return out;
    }
    oci::Client &c = *clients_[snapshotFrom_];
    auto all =
        c.snapshotSignatures(c.location().ns, *snapshotManifest_, maxBytes);
    if (!all) {
      out.push_back(Unexpected(all.error()));
      return out;
    }
    for (auto &sig : *all) {
      if (!sig) {
        out.push_back(Unexpected(sig.error()));
        continue;
      }
      net::MetadataResponse r;
      r.url = joinUrl(c.location().url, relPath);
      r.body = std::move(*sig);
      out.push_back(std::move(r));
    }
    return out;
  }

  Status downloadAll(const std::vector<Download> &downloads,
                     Reporter &reporter) override {
    Status first = downloadOnce(downloads, reporter);
    if (first || offline_ ||
        first.error().message.find("HTTP 401") == std::string::npos)
      return first;
    // A token can expire while a long batch downloads (registries give
    // them minutes): ask for new ones, and fetch once more what is not in
    // place yet (what was verified stays).
    std::vector<Download> rest;
    for (const Download &d : downloads)
      if (!fsutil::exists(d.destPath))
        rest.push_back(d);
    for (auto &c : clients_)
      c->forgetTokens();
    return downloadOnce(rest, reporter);
  }

private:
  Status downloadOnce(const std::vector<Download> &downloads,
                      Reporter &reporter) {
    std::vector<net::DownloadRequest> requests;
    for (const Download &d : downloads) {
      if (Status s = fsutil::makeDirs(fs::path(d.destPath).parent_path()); !s)
        return s;
      // archives/<name>/<file>: the package's repository.
      std::string name;
      if (d.relPath.rfind("archives/", 0) == 0) {
        size_t slash = d.relPath.find('/', 9);
        if (slash != std::string::npos)
          name = d.relPath.substr(9, slash - 9);
      }
      if (name.empty())
        return makeError(ErrorCode::Invalid,
                         d.label + ": the index names the archive \"" +
                             d.relPath +
                             "\", which is not archives/<name>/... as a "
                             "registry in an OCI registry needs",
                         at(url_));
      net::DownloadRequest r;
      r.destPath = d.destPath;
      r.size = d.size;
      r.sha256 = d.sha256;
      r.label = d.label;
      for (size_t n = 0; n < clients_.size(); ++n) {
        oci::Client &c = *clients_[(preferred_ + n) % clients_.size()];
        const std::string repo = c.location().packageRepo(name);
        r.urls.push_back(c.location().base() + "/v2/" + repo +
                         "/blobs/sha256:" + d.sha256);
        auto headers =
            offline_
                ? Expected<std::vector<std::string>>(std::vector<std::string>{})
                : c.pullHeaders(repo);
        if (!headers)
          return Unexpected(headers.error());
        r.urlHeaders.push_back(*headers);
      }
      requests.push_back(std::move(r));
    }
    return clients_.front()->http().downloadAll(requests, reporter);
  }

  std::string blobCachePath(const std::string &digest) const {
    return cacheDir_ + "/blobs/" + digest.substr(7);
  }
  std::string tagCachePath(oci::Client &c, const std::string &repo,
                           const std::string &tag) const {
    return cacheDir_ + "/tags/" +
           Sha256::hex(c.location().host + "/" + repo + ":" + tag);
  }

  Expected<oci::Manifest> manifest(oci::Client &c, const std::string &repo,
                                   const std::string &tag) {
    const std::string cached = tagCachePath(c, repo, tag);
    if (offline_) {
      auto text = fsutil::readFile(cached);
      if (!text)
        return makeError(ErrorCode::NotFound,
                         "offline, and " + c.location().host + "/" + repo +
                             ":" + tag + " is not in the metadata cache (" +
                             cacheDir_ + ")",
                         {}, "run the command once online to fill the cache");
      return parseCached(*text, c, repo, tag);
    }
    auto m = c.getManifest(repo, tag);
    if (m) {
      (void)fsutil::makeDirs(cacheDir_ + "/tags");
      (void)fsutil::writeFileAtomic(cached, m->text);
    }
    return m;
  }

  Expected<oci::Manifest> parseCached(const std::string &text, oci::Client &c,
                                      const std::string &repo,
                                      const std::string &tag) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    oci::Manifest m;
    m.text = text;
    m.digest = "sha256:" + Sha256::hex(text);
    try {
      m.artifactType = j.value("artifactType", std::string());
      if (j.contains("annotations") && j["annotations"].is_object())
        for (const auto &[k, v] : j["annotations"].items())
          if (v.is_string())
            m.annotations[k] = v;
      for (const auto &l : j.at("layers")) {
        oci::Descriptor d;
        d.mediaType = l.at("mediaType");
        d.digest = l.at("digest");
        d.size = l.at("size");
        if (l.contains("annotations"))
          for (const auto &[k, v] : l["annotations"].items())
            if (v.is_string())
              d.annotations[k] = v;
        m.layers.push_back(d);
      }
    } catch (...) {
      return makeError(ErrorCode::Invalid,
                       "the cached manifest of " + c.location().host + "/" +
                           repo + ":" + tag + " is damaged",
                       at(tagCachePath(c, repo, tag)),
                       "run the command once online");
    }
    return m;
  }

  Expected<std::string> blob(oci::Client &c, const std::string &repo,
                             const oci::Descriptor &d, uint64_t maxBytes,
                             const std::string &shown) {
    if (d.size > maxBytes)
      return makeError(ErrorCode::Integrity,
                       "metadata file is larger than the " +
                           std::to_string(maxBytes) + " bytes allowed (" +
                           std::to_string(d.size) + " bytes)",
                       at(shown),
                       "a registry's metadata is small: this one is broken, "
                       "or is feeding endless data; do not use it");
    return blobByDigest(c, repo, d.digest, maxBytes);
  }

  Expected<std::string> blobByDigest(oci::Client &c, const std::string &repo,
                                     const std::string &digest,
                                     uint64_t maxBytes) {
    const std::string cached = blobCachePath(digest);
    if (auto text = fsutil::readFile(cached);
        text && "sha256:" + Sha256::hex(*text) == digest &&
        text->size() <= maxBytes)
      return *text;
    if (offline_)
      return makeError(ErrorCode::NotFound,
                       "offline, and " + c.location().host + "/" + repo + "@" +
                           digest + " is not in the metadata cache (" +
                           cacheDir_ + ")",
                       {}, "run the command once online to fill the cache");
    auto body = c.getBlob(repo, digest, maxBytes);
    if (body) {
      (void)fsutil::makeDirs(cacheDir_ + "/blobs");
      (void)fsutil::writeFileAtomic(cached, *body);
    }
    return body;
  }

  Expected<net::MetadataResponse>
  fetchFrom(size_t i, const std::string &relPath, uint64_t maxBytes) {
    oci::Client &c = *clients_[i];
    const oci::OciLocation &loc = c.location();
    const std::string shown = joinUrl(loc.url, relPath);
    net::MetadataResponse out;
    out.url = shown;
    out.fromCache = offline_;
    auto layerOf =
        [&](const oci::Manifest &m, const char *mediaType,
            const std::string &tagShown) -> Expected<const oci::Descriptor *> {
      const oci::Descriptor *d = m.layer(mediaType);
      if (!d)
        return makeError(ErrorCode::NotFound,
                         tagShown + " has no layer of media type " + mediaType,
                         at(shown));
      return d;
    };
    if (relPath == "config.json" || relPath == "snapshot.json") {
      const bool config = relPath == "config.json";
      const std::string tag = config ? oci::kConfigTag : oci::kSnapshotTag;
      auto m = manifest(c, loc.ns, tag);
      if (!m)
        return Unexpected(m.error());
      auto d =
          layerOf(*m, config ? oci::kConfigArtifact : oci::kSnapshotArtifact,
                  loc.host + "/" + loc.ns + ":" + tag);
      if (!d)
        return Unexpected(d.error());
      auto body = blob(c, loc.ns, **d, maxBytes, shown);
      if (!body)
        return Unexpected(body.error());
      if (!config) {
        snapshotManifest_ = *m;
        snapshotFrom_ = i;
        // Which index blob each package's current index is: the digest
        // the snapshot pins (the client checks it again).
        indexDigests_.clear();
        nlohmann::json j = nlohmann::json::parse(*body, nullptr, false);
        if (j.is_object() && j.contains("index") && j["index"].is_object())
          for (const auto &[name, h] : j["index"].items())
            if (h.is_string())
              indexDigests_[name] = h;
      }
      out.body = std::move(*body);
      return out;
    }
    if (relPath == "snapshot.json.minisig") {
      if (!snapshotManifest_ || snapshotFrom_ != i) {
        auto m = manifest(c, loc.ns, oci::kSnapshotTag);
        if (!m)
          return Unexpected(m.error());
        snapshotManifest_ = *m;
        snapshotFrom_ = i;
      }
      const oci::Descriptor *d = snapshotManifest_->layer(oci::kSignatureLayer);
      if (!d) {
        // No layer: the signature as a referrer of the snapshot manifest
        // (OCI 1.1), which needs the registry.
        if (offline_)
          return makeError(ErrorCode::NotFound,
                           "offline, and " + loc.host + "/" + loc.ns +
                               ":snapshot has its signature only as a "
                               "referrer, which is not cached",
                           at(shown), "run the command online");
        auto body = c.snapshotSignature(loc.ns, *snapshotManifest_, maxBytes);
        if (!body)
          return Unexpected(body.error());
        out.body = std::move(*body);
        return out;
      }
      auto body = blob(c, loc.ns, *d, maxBytes, shown);
      if (!body)
        return Unexpected(body.error());
      out.body = std::move(*body);
      return out;
    }
    if (relPath.rfind("index/", 0) == 0 && relPath.ends_with(".json")) {
      const std::string name = relPath.substr(6, relPath.size() - 11);
      const std::string repo = loc.packageRepo(name);
      Expected<std::string> body = std::string();
      if (auto it = indexDigests_.find(name);
          it != indexDigests_.end() && it->second.size() == 71 &&
          it->second.rfind("sha256:", 0) == 0) {
        body = blobByDigest(c, repo, it->second, maxBytes);
      } else {
        auto m = manifest(c, repo, oci::kIndexTag);
        if (!m)
          return Unexpected(m.error());
        auto d = layerOf(*m, oci::kIndexArtifact,
                         loc.host + "/" + repo + ":" + oci::kIndexTag);
        if (!d)
          return Unexpected(d.error());
        body = blob(c, repo, **d, maxBytes, shown);
      }
      if (!body)
        return Unexpected(body.error());
      out.body = std::move(*body);
      return out;
    }
    if (relPath.rfind("archives/", 0) == 0 &&
        relPath.ends_with(".ireepkg.minisig")) {
      // archives/<name>/<name>-<version>.ireepkg.minisig: the annotation of
      // the version's manifest (publish puts the archive's signature there).
      const size_t slash = relPath.find('/', 9);
      const std::string name =
          slash == std::string::npos ? "" : relPath.substr(9, slash - 9);
      const std::string file =
          slash == std::string::npos ? "" : relPath.substr(slash + 1);
      const std::string suffix = ".ireepkg.minisig";
      if (!name.empty() && file.rfind(name + "-", 0) == 0 &&
          file.size() > name.size() + 1 + suffix.size()) {
        const std::string version = file.substr(
            name.size() + 1, file.size() - name.size() - 1 - suffix.size());
        const std::string repo = loc.packageRepo(name);
        auto m = manifest(c, repo, oci::versionTag(version));
        if (!m)
          return Unexpected(m.error());
        auto it = m->annotations.find(oci::kArchiveSignatureAnnotation);
        if (it == m->annotations.end())
          return makeError(ErrorCode::NotFound,
                           loc.host + "/" + repo + ":" +
                               oci::versionTag(version) +
                               " carries no archive signature",
                           at(shown));
        if (it->second.size() > maxBytes)
          return makeError(ErrorCode::Integrity,
                           "the archive signature is larger than the " +
                               std::to_string(maxBytes) + " bytes allowed",
                           at(shown));
        out.body = it->second;
        return out;
      }
    }
    return makeError(ErrorCode::NotFound,
                     "a registry in an OCI registry has no " + relPath,
                     at(shown));
  }

  std::string url_;
  std::vector<std::unique_ptr<oci::Client>> clients_;
  std::string cacheDir_;
  bool offline_;
  size_t preferred_ = 0;
  std::optional<oci::Manifest> snapshotManifest_;
  size_t snapshotFrom_ = 0;
  std::map<std::string, std::string> indexDigests_;
};

} // namespace

namespace oci {

Expected<std::unique_ptr<Transport>>
openOciTransport(const RegistrySpec &spec, const ClientOptions &options) {
  auto cacheRoot = cache::cacheRootFor(options);
  if (!cacheRoot)
    return Unexpected(cacheRoot.error());
  net::FetchOptions fetch = options.fetch;
  fetch.offline = fetch.offline || options.offline;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::string> urls{spec.url};
  urls.insert(urls.end(), spec.mirrors.begin(), spec.mirrors.end());
  for (const std::string &u : urls) {
    auto loc = parseOciUrl(u);
    if (!loc) {
      Error e = loc.error();
      if (u != spec.url)
        e.message = "registry \"" + spec.name + "\": mirror: " + e.message;
      return Unexpected(e);
    }
    auto c = Client::open(*loc, fetch);
    if (!c)
      return Unexpected(c.error());
    clients.push_back(std::move(*c));
  }
  return std::unique_ptr<Transport>(std::make_unique<OciTransport>(
      spec.url, std::move(clients),
      cache::registryCacheDir(*cacheRoot, spec.url) + "/oci", fetch.offline));
}

} // namespace oci

} // namespace ireepkg::registry
