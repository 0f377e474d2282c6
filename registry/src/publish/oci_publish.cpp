//===- registry/src/publish/oci_publish.cpp -------------------------------===//
//
// Publishing into an OCI registry.
//
// registry init, publish, yank and resign on an oci:// registry do exactly
// what they do on a directory, with every check the directory publisher
// makes, in a staging directory:
//
//   1. pull: config.json, snapshot.json and its signature (one manifest),
//      and every index file the snapshot pins (by digest) into a fresh
//      temporary directory;
//   2. run the directory publisher there (it checks the key against
//      config.json, the snapshot's signature, the hash of every index file
//      it rewrites, and the archive as install would);
//   3. push what changed, in the order that keeps readers consistent:
//      archives (a package artifact per version), then index artifacts,
//      then, last, the snapshot artifact (the snapshot and its signature in
//      one manifest: one PUT replaces both). Before that last PUT the
//      snapshot tag is read again: if another publisher moved it since
//      step 1, nothing is overwritten (Conflict; run the command again).
//
// Blobs are uploaded only when the repository does not have them (HEAD);
// the empty config blob is mounted from the metadata repository.
//
//===----------------------------------------------------------------------===//
#include "transport/oci.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/transport/oci_registry.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"
#include "client/metadata_files.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::registry::oci {

using namespace detail;

namespace {

struct Staging {
  std::string dir;
  ~Staging() {
    if (!dir.empty())
      (void)fsutil::removeTree(dir);
  }
};

Expected<std::string> makeStagingDir() {
  std::string base = fs::temp_directory_path().string() + "/ireepkg-oci-XXXXXX";
  std::vector<char> buf(base.begin(), base.end());
  buf.push_back(0);
  if (!::mkdtemp(buf.data()))
    return Unexpected(
        fsutil::ioError("cannot create a staging directory", base, errno));
  return std::string(buf.data());
}

struct Pulled {
  bool exists = false;
  std::string snapshotDigest;               ///< of the snapshot manifest
  std::map<std::string, std::string> files; ///< relPath -> sha256 hex
};

Status writeFile(const std::string &dir, const std::string &rel,
                 const std::string &text, Pulled &p) {
  const std::string path = dir + "/" + rel;
  if (Status s = fsutil::makeDirs(fs::path(path).parent_path().string()); !s)
    return s;
  if (Status s = fsutil::writeFileAtomic(path, text); !s)
    return s;
  p.files[rel] = Sha256::hex(text);
  return ok();
}

/// The snapshot's signature to build on. Anyone who may push to the
/// repository may add a signature referrer, so a bogus first one must not
/// hide a valid later one: the first that verifies against a key of the
/// pulled config.json is taken; when none does, the first readable one, so
/// that the publisher's own check says why the current state is refused.
Expected<std::string> verifyingSignature(Client &c, const Manifest &snap,
                                         const std::string &dir) {
  const OciLocation &loc = c.location();
  auto all = c.snapshotSignatures(loc.ns, snap, kMaxSignatureBytes);
  if (!all)
    return Unexpected(all.error());
  auto snapshotText = fsutil::readFile(dir + "/snapshot.json");
  auto configDoc = JsonDocument::load(dir + "/config.json");
  std::vector<signing::PublicKey> keys;
  if (configDoc) {
    DiagnosticList diags;
    RegistryConfig config =
        parseRegistryConfig(*configDoc, ParseOptions{}, diags);
    for (const std::string &k : config.keys)
      if (auto key = signing::parsePublicKey(k, dir + "/config.json"))
        keys.push_back(*key);
  }
  if (snapshotText)
    for (const auto &candidate : *all) {
      if (!candidate)
        continue;
      auto parsed =
          signing::parseSignature(*candidate, "snapshot.json.minisig");
      if (!parsed)
        continue;
      for (const auto &k : keys)
        if (k.keyId == parsed->keyId &&
            signing::verifyBuffer(k, *snapshotText, *parsed, "snapshot.json",
                                  "snapshot.json.minisig"))
          return *candidate;
    }
  for (auto &candidate : *all)
    if (candidate)
      return std::move(*candidate);
  return Unexpected(all->front().error());
}

Expected<Pulled> pull(Client &c, const std::string &dir) {
  Pulled p;
  const OciLocation &loc = c.location();
  auto config = c.getManifest(loc.ns, kConfigTag);
  if (!config) {
    if (config.error().code == ErrorCode::NotFound)
      return p;
    return Unexpected(config.error());
  }
  p.exists = true;
  auto fetchLayer = [&](const Manifest &m, const char *mediaType,
                        const std::string &repo, uint64_t limit,
                        const std::string &rel) -> Status {
    const Descriptor *d = m.layer(mediaType);
    if (!d)
      return makeError(ErrorCode::Invalid,
                       loc.host + "/" + repo + " has no layer of media type " +
                           mediaType,
                       Location{loc.url, 0, 0, "", "", ""},
                       "it was not written by ireepkg; see "
                       "docs/registries.md for the layout");
    auto body = c.getBlob(repo, d->digest, limit);
    if (!body)
      return Unexpected(body.error());
    return writeFile(dir, rel, *body, p);
  };
  if (Status s = fetchLayer(*config, kConfigArtifact, loc.ns, kMaxConfigBytes,
                            "config.json");
      !s)
    return Unexpected(s.error());
  auto snap = c.getManifest(loc.ns, kSnapshotTag);
  if (!snap)
    return Unexpected(snap.error());
  p.snapshotDigest = snap->digest;
  if (Status s = fetchLayer(*snap, kSnapshotArtifact, loc.ns, kMaxSnapshotBytes,
                            "snapshot.json");
      !s)
    return Unexpected(s.error());
  // The signature: a layer of the snapshot manifest, or a referrer of it.
  auto sig = verifyingSignature(c, *snap, dir);
  if (!sig)
    return Unexpected(sig.error());
  if (Status s = writeFile(dir, "snapshot.json.minisig", *sig, p); !s)
    return Unexpected(s.error());
  // Every index file the snapshot pins, by that digest: the publisher
  // checks each hash again.
  auto doc = JsonDocument::load(dir + "/snapshot.json");
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  RegistrySnapshot s = parseRegistrySnapshot(*doc, ParseOptions{false}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  for (const auto &[name, digest] : s.index) {
    auto body = c.getBlob(loc.packageRepo(name), digest, kMaxIndexBytes);
    if (!body)
      return Unexpected(body.error());
    if (Status st = writeFile(dir, "index/" + name + ".json", *body, p); !st)
      return Unexpected(st.error());
  }
  if (Status st = fsutil::makeDirs(dir + "/archives"); !st)
    return Unexpected(st.error());
  return p;
}

Descriptor fileDescriptor(const std::string &mediaType, const std::string &text,
                          const std::string &title) {
  Descriptor d;
  d.mediaType = mediaType;
  d.digest = "sha256:" + Sha256::hex(text);
  d.size = text.size();
  if (!title.empty())
    d.annotations[kTitleAnnotation] = title;
  return d;
}

Descriptor emptyConfig() {
  Descriptor d;
  d.mediaType = kEmptyMediaType;
  d.digest = kEmptyDigest;
  d.size = 2;
  return d;
}

Status pushEmpty(Client &c, const std::string &repo) {
  static const std::string empty = "{}";
  return c.pushBlob(repo, kEmptyDigest, 2, &empty, "",
                    repo == c.location().ns ? "" : c.location().ns);
}

/// A metadata artifact: the empty config and the files as layers.
Status pushFiles(Client &c, const std::string &repo, const std::string &tag,
                 const std::string &artifactType,
                 const std::vector<std::pair<Descriptor, std::string>> &files,
                 std::string *manifestText = nullptr) {
  if (Status s = pushEmpty(c, repo); !s)
    return s;
  std::vector<Descriptor> layers;
  for (const auto &[d, text] : files) {
    if (Status s = c.pushBlob(repo, d.digest, d.size, &text, ""); !s)
      return s;
    layers.push_back(d);
  }
  const std::string text =
      makeManifest(artifactType, emptyConfig(), layers, {});
  auto m = c.putManifest(repo, tag, text);
  if (!m)
    return Unexpected(m.error());
  if (manifestText)
    *manifestText = text;
  return ok();
}

/// The package artifact of one published version.
Status pushPackage(Client &c, const std::string &dir, const IndexEntry &e,
                   const std::string &name) {
  const std::string repo = c.location().packageRepo(name);
  const std::string tag = versionTag(e.version.str());
  const std::string digest = "sha256:" + e.sha256;
  // Already there (published before, or pushed by another OCI client and
  // added with `publish`): keep that manifest.
  if (auto m = c.getManifest(repo, tag); m) {
    const Descriptor *d = m->layer(kArchiveLayer);
    if (d && d->digest == digest)
      return ok();
    // Another artifact under the version's tag: OCI clients see that one
    // as this version. Replacing it would change a published version.
    return makeError(
        ErrorCode::Conflict,
        c.location().host + "/" + repo + ":" + tag + " already holds " +
            (d ? "another archive (" + d->digest + ")"
               : "an artifact that is not an ireepkg package") +
            "; this archive's digest is " + digest,
        Location{c.location().url, 0, 0, "", name, ""},
        "a published version never changes: raise the version, or remove "
        "that tag from the OCI registry if it was pushed by mistake");
  } else if (m.error().code != ErrorCode::NotFound) {
    return Unexpected(m.error());
  }
  const std::string path = dir + "/" + e.archive;
  auto head = readArchiveHead(path);
  if (!head)
    return Unexpected(head.error());
  if (Status s = c.pushBlob(repo, digest, e.size, nullptr, path); !s)
    return s;
  Descriptor config = fileDescriptor(kPluginManifestConfig, head->manifestText,
                                     "ireeplugin.json");
  config.annotations.clear();
  if (Status s =
          c.pushBlob(repo, config.digest, config.size, &head->manifestText, "");
      !s)
    return s;
  Descriptor layer;
  layer.mediaType = kArchiveLayer;
  layer.digest = digest;
  layer.size = e.size;
  layer.annotations[kTitleAnnotation] = fs::path(e.archive).filename();
  std::map<std::string, std::string> annotations{
      {kVersionAnnotation, e.version.str()}};
  if (auto sig = fsutil::readFile(path + ".minisig"); sig)
    annotations[kArchiveSignatureAnnotation] = *sig;
  auto m = c.putManifest(
      repo, tag, makeManifest(kPackageArtifact, config, {layer}, annotations));
  if (!m)
    return Unexpected(m.error());
  return ok();
}

Status push(Client &c, const std::string &dir, const Pulled &before) {
  const OciLocation &loc = c.location();
  auto changed = [&](const std::string &rel) -> std::optional<std::string> {
    auto text = fsutil::readFile(dir + "/" + rel);
    if (!text)
      return std::nullopt;
    auto it = before.files.find(rel);
    if (it != before.files.end() && it->second == Sha256::hex(*text))
      return std::nullopt;
    return *text;
  };
  // 1. Archives: the ones the publisher placed in the staging directory.
  std::error_code ec;
  for (const auto &pkgDir : fs::directory_iterator(dir + "/archives", ec)) {
    const std::string name = pkgDir.path().filename();
    auto doc = JsonDocument::load(dir + "/index/" + name + ".json");
    if (!doc)
      return Unexpected(doc.error());
    DiagnosticList diags;
    RegistryIndex idx = parseRegistryIndex(*doc, ParseOptions{false}, diags);
    for (const auto &f : fs::directory_iterator(pkgDir.path(), ec)) {
      const std::string rel =
          "archives/" + name + "/" + f.path().filename().string();
      for (const IndexEntry &e : idx.versions)
        if (e.archive == rel)
          if (Status s = pushPackage(c, dir, e, name); !s)
            return s;
    }
  }
  // 2. Index files that changed.
  for (const auto &f : fs::directory_iterator(dir + "/index", ec)) {
    const std::string file = f.path().filename();
    if (!file.ends_with(".json"))
      continue;
    const std::string rel = "index/" + file;
    if (auto text = changed(rel))
      if (Status s =
              pushFiles(c, loc.packageRepo(file.substr(0, file.size() - 5)),
                        kIndexTag, kIndexArtifact,
                        {{fileDescriptor(kIndexArtifact, *text, file), *text}});
          !s)
        return s;
  }
  // 3. config.json (written by init only).
  if (auto text = changed("config.json"))
    if (Status s = pushFiles(
            c, loc.ns, kConfigTag, kConfigArtifact,
            {{fileDescriptor(kConfigArtifact, *text, "config.json"), *text}});
        !s)
      return s;
  // 4. The snapshot and its signature, in one manifest, last.
  auto snap = changed("snapshot.json");
  auto sig = changed("snapshot.json.minisig");
  if (!snap && !sig)
    return ok();
  auto snapText = fsutil::readFile(dir + "/snapshot.json");
  auto sigText = fsutil::readFile(dir + "/snapshot.json.minisig");
  if (!snapText)
    return Unexpected(snapText.error());
  if (!sigText)
    return Unexpected(sigText.error());
  auto now = c.getManifest(loc.ns, kSnapshotTag);
  std::string nowDigest;
  if (now)
    nowDigest = now->digest;
  else if (now.error().code != ErrorCode::NotFound)
    return Unexpected(now.error());
  if (nowDigest != before.snapshotDigest)
    return makeError(ErrorCode::Conflict,
                     loc.url +
                         " changed while this command ran (its snapshot "
                         "is now " +
                         (nowDigest.empty() ? "gone" : nowDigest) +
                         "): another publisher was at work; nothing of the "
                         "snapshot was overwritten",
                     Location{loc.url, 0, 0, "", "", ""},
                     "run the command again: it starts from the new state");
  std::string snapshotManifest;
  const Descriptor sigLayer =
      fileDescriptor(kSignatureLayer, *sigText, "snapshot.json.minisig");
  if (Status s = pushFiles(
          c, loc.ns, kSnapshotTag, kSnapshotArtifact,
          {{fileDescriptor(kSnapshotArtifact, *snapText, "snapshot.json"),
            *snapText},
           {sigLayer, *sigText}},
          &snapshotManifest);
      !s)
    return s;
  // The signature once more as an OCI 1.1 referrer of the snapshot
  // manifest, for tools that look for signatures there (the snapshot
  // manifest's own layer stays what clients read first).
  Descriptor subject;
  subject.mediaType = kManifestMediaType;
  subject.digest = "sha256:" + Sha256::hex(snapshotManifest);
  subject.size = snapshotManifest.size();
  // Best effort: the snapshot is published once its manifest is, and
  // clients read the signature layer first; a registry that takes neither
  // referrers nor an index under the fallback tag must not turn a publish
  // that happened into an error (the snapshot tag has moved already).
  (void)c.pushReferrer(loc.ns,
                       makeManifest(kSnapshotSignatureArtifact, emptyConfig(),
                                    {sigLayer}, {}, &subject),
                       kSnapshotSignatureArtifact, subject.digest);
  return ok();
}

struct Session {
  std::unique_ptr<Client> client;
  Staging staging;
  std::string dir; ///< the registry's copy, inside staging
  Pulled pulled;
};

Expected<std::unique_ptr<Session>> openSession(const std::string &url,
                                               bool mustExist,
                                               const SigningOptions &options) {
  auto loc = parseOciUrl(url);
  if (!loc)
    return Unexpected(loc.error());
  auto s = std::make_unique<Session>();
  net::FetchOptions fetch;
  fetch.reporter = options.reporter;
  auto c = Client::open(*loc, fetch);
  if (!c)
    return Unexpected(c.error());
  s->client = std::move(*c);
  auto dir = makeStagingDir();
  if (!dir)
    return Unexpected(dir.error());
  s->staging.dir = *dir;
  s->dir = *dir + "/registry";
  if (Status st = fsutil::makeDirs(s->dir); !st)
    return Unexpected(st.error());
  auto p = pull(*s->client, s->dir);
  if (!p)
    return Unexpected(p.error());
  s->pulled = std::move(*p);
  if (mustExist && !s->pulled.exists)
    return makeError(ErrorCode::NotFound,
                     url + " is not a registry: " + loc->host + "/" + loc->ns +
                         ":" + kConfigTag + " does not exist",
                     Location{url, 0, 0, "", "", ""},
                     "create it with `ireepkg registry init " + url +
                         " --key <secret key>`, or check the URL");
  return s;
}

/// Error locations name the staging copy; the user knows the URL.
Error renamed(Error e, const Session &s, const std::string &url) {
  auto fix = [&](std::string &text) {
    for (size_t pos; (pos = text.find(s.dir)) != std::string::npos;)
      text.replace(pos, s.dir.size(), url);
  };
  fix(e.message);
  fix(e.where.file);
  fix(e.hint);
  for (Diagnostic &d : e.diagnostics) {
    fix(d.message);
    fix(d.where.file);
  }
  return e;
}

} // namespace

Status initRegistry(const std::string &url, const InitOptions &options) {
  auto s = openSession(url, false, options.signing);
  if (!s)
    return Unexpected(s.error());
  if ((*s)->pulled.exists)
    return makeError(ErrorCode::Conflict,
                     url + " is already a registry (its config artifact "
                           "exists)",
                     Location{url, 0, 0, "", "", ""},
                     "publish into it, or choose another namespace");
  // The directory publisher wants an absent or empty directory.
  (void)fsutil::removeTree((*s)->dir);
  InitOptions o = options;
  if (o.name.empty()) {
    const std::string &ns = (*s)->client->location().ns;
    o.name = ns.substr(ns.rfind('/') + 1);
  }
  if (Status st = registry::initRegistry((*s)->dir, o); !st)
    return Unexpected(renamed(st.error(), **s, url));
  if (Status st = push(*(*s)->client, (*s)->dir, (*s)->pulled); !st)
    return Unexpected(renamed(st.error(), **s, url));
  return ok();
}

Expected<std::vector<PublishResult>>
publishArchives(const std::string &url,
                const std::vector<std::string> &archives,
                const SigningOptions &options) {
  auto s = openSession(url, true, options);
  if (!s)
    return Unexpected(s.error());
  auto r = registry::publishArchives((*s)->dir, archives, options);
  if (!r)
    return Unexpected(renamed(r.error(), **s, url));
  if (Status st = push(*(*s)->client, (*s)->dir, (*s)->pulled); !st)
    return Unexpected(renamed(st.error(), **s, url));
  return r;
}

Expected<int64_t> yankVersion(const std::string &url, const std::string &name,
                              const Version &version, bool yanked,
                              const SigningOptions &options) {
  auto s = openSession(url, true, options);
  if (!s)
    return Unexpected(s.error());
  auto r = registry::yankVersion((*s)->dir, name, version, yanked, options);
  if (!r)
    return Unexpected(renamed(r.error(), **s, url));
  if (Status st = push(*(*s)->client, (*s)->dir, (*s)->pulled); !st)
    return Unexpected(renamed(st.error(), **s, url));
  return r;
}

Expected<int64_t> resignRegistry(const std::string &url,
                                 const SigningOptions &options) {
  auto s = openSession(url, true, options);
  if (!s)
    return Unexpected(s.error());
  auto r = registry::resignRegistry((*s)->dir, options);
  if (!r)
    return Unexpected(renamed(r.error(), **s, url));
  if (Status st = push(*(*s)->client, (*s)->dir, (*s)->pulled); !st)
    return Unexpected(renamed(st.error(), **s, url));
  return r;
}

Expected<PublishResult> addExisting(const std::string &url,
                                    const std::string &name,
                                    const Version &version,
                                    const SigningOptions &options) {
  auto s = openSession(url, true, options);
  if (!s)
    return Unexpected(s.error());
  Client &c = *(*s)->client;
  const std::string repo = c.location().packageRepo(name);
  const std::string tag = versionTag(version.str());
  const std::string ref = c.location().host + "/" + repo + ":" + tag;
  auto m = c.getManifest(repo, tag);
  if (!m)
    return Unexpected(m.error());
  const Descriptor *layer = m->layer(kArchiveLayer);
  if (!layer)
    return makeError(ErrorCode::Invalid,
                     ref + " has no layer of media type " +
                         std::string(kArchiveLayer),
                     Location{url, 0, 0, "", name, ""},
                     "push the .ireepkg archive as a layer of that media "
                     "type (docs/registries.md)");
  const std::string file =
      (*s)->staging.dir + "/" + name + "-" + version.str() + ".ireepkg";
  net::DownloadRequest d;
  d.urls = {c.location().base() + "/v2/" + repo + "/blobs/" + layer->digest};
  auto headers = c.pullHeaders(repo);
  if (!headers)
    return Unexpected(headers.error());
  d.urlHeaders = {*headers};
  d.destPath = file;
  d.size = layer->size;
  d.sha256 = layer->digest.substr(7);
  d.label = name + " " + version.str();
  Reporter quiet;
  if (Status st = c.http().downloadAll(
          {d}, options.reporter ? *options.reporter : quiet);
      !st)
    return Unexpected(st.error());
  auto head = readArchiveHead(file);
  if (!head)
    return Unexpected(renamed(head.error(), **s, url));
  if (head->manifest.name != name || !(head->manifest.version == version))
    return makeError(ErrorCode::Conflict,
                     ref + " holds " + head->manifest.name + " " +
                         head->manifest.version.str() + ", not " + name + " " +
                         version.str(),
                     Location{url, 0, 0, "", name, ""},
                     "push each version under its own name and version tag");
  auto r = registry::publishArchive((*s)->dir, file, options);
  if (!r) {
    Error e = renamed(r.error(), **s, url);
    for (std::string *t : {&e.message, &e.where.file})
      for (size_t pos; (pos = t->find(file)) != std::string::npos;)
        t->replace(pos, file.size(), ref);
    return Unexpected(e);
  }
  if (Status st = push(c, (*s)->dir, (*s)->pulled); !st)
    return Unexpected(renamed(st.error(), **s, url));
  return r;
}

Status pullMetadata(const std::string &url, const std::string &dir,
                    Reporter *reporter) {
  auto loc = parseOciUrl(url);
  if (!loc)
    return Unexpected(loc.error());
  net::FetchOptions fetch;
  fetch.reporter = reporter;
  auto c = Client::open(*loc, fetch);
  if (!c)
    return Unexpected(c.error());
  auto p = pull(**c, dir);
  if (!p)
    return Unexpected(p.error());
  return ok();
}

} // namespace ireepkg::registry::oci

namespace ireepkg::registry {

bool isOciRegistryUrl(const std::string &url) { return oci::isOciUrl(url); }

Status pullOciRegistryMetadata(const std::string &url, const std::string &dir,
                               Reporter *reporter) {
  return oci::pullMetadata(url, dir, reporter);
}

Expected<PublishResult> addExistingOciArtifact(const std::string &url,
                                               const std::string &name,
                                               const Version &version,
                                               const SigningOptions &options) {
  return oci::addExisting(url, name, version, options);
}

} // namespace ireepkg::registry
