//===- registry/src/publish/mirror.cpp - A static copy of a registry ------===//
//
// `registry mirror SRC DIR`: the registry at SRC (oci://, https://, a
// directory) copied into the directory DIR as a directory registry, its
// signed files byte for byte, so that the copy verifies with the same key
// and any web server can serve it (or it can be a mirror of SRC).
//
// Nothing is written that was not checked: SRC is read through the
// verifying client (signature, rollback, expiry); its metadata files are
// staged beside DIR and read back through a second client with the same
// keys (the staged snapshot must be the version the first one verified,
// every index must match it); archives come through the first client's
// download cache (size and SHA-256 checked as they arrive) and are hashed
// again once copied. Only then do the files move into DIR, in the order a
// publisher writes them (archives, index files, config.json, the
// snapshot's signature, the snapshot), so that DIR, when it is already a
// copy being served, is consistent for a reader at every moment but the
// last two renames (which the client's re-reads cover, client.cpp).
//
// Running it again updates the copy: archives it holds with the right hash
// are kept, the others copied; a copy newer than SRC is not overwritten.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/mirror.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "client/registry_urls.h"

#include <filesystem>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::registry {

using namespace detail;

namespace {

/// Removes the staging directories however the function returns.
struct TreeGuard {
  std::vector<std::string> paths;
  ~TreeGuard() {
    for (const std::string &p : paths)
      (void)fsutil::removeTree(p);
  }
};

bool emptyDirectory(const std::string &dir) {
  std::error_code ec;
  return fs::is_empty(dir, ec) && !ec;
}

/// The snapshot version a copy holds now (0: none readable). Not verified:
/// it only keeps an older source from replacing a newer copy.
int64_t copyVersion(const std::string &dir) {
  auto doc = JsonDocument::load(dir + "/snapshot.json");
  if (!doc)
    return 0;
  DiagnosticList diags;
  return parseRegistrySnapshot(*doc, ParseOptions{false}, diags).version;
}

} // namespace

Expected<MirrorResult> mirrorRegistry(const RegistrySpec &source,
                                      const std::string &dirGiven,
                                      const ClientOptions &options,
                                      Reporter &reporter) {
  if (!isDirectoryUrl(dirGiven))
    return makeError(
        ErrorCode::Usage,
        "a static copy is written into a directory, not " + dirGiven, {},
        "give a directory; serve it with any web server (or "
        "keep it where clients can read it)");
  const std::string out = fsutil::absolutePath(directoryOf(dirGiven));
  if (normalizeRegistryUrl(source.url) == normalizeRegistryUrl(out))
    return makeError(ErrorCode::Usage,
                     "the copy would be the registry itself (" + out + ")", {},
                     "give another directory");

  // The copy's directory: new, empty, or an earlier copy.
  int64_t previous = 0;
  if (fsutil::exists(out)) {
    if (!fsutil::isDirectory(out))
      return makeError(ErrorCode::Conflict, "not a directory",
                       Location::inFile(out),
                       "give a new or empty directory, or an earlier copy");
    if (!emptyDirectory(out)) {
      if (!fsutil::exists(out + "/config.json") ||
          !fsutil::exists(out + "/snapshot.json"))
        return makeError(ErrorCode::Conflict,
                         "the directory is not empty and holds no registry "
                         "(no config.json and snapshot.json)",
                         Location::inFile(out),
                         "give a new or empty directory, or an earlier copy "
                         "of the same registry to update it");
      previous = copyVersion(out);
    }
  }

  // The source, verified as every client verifies it.
  auto client = RegistryClient::open(source, options, reporter);
  if (!client)
    return Unexpected(client.error());
  RegistryClient &src = **client;
  const int64_t version = src.snapshot().version;
  if (previous > version)
    return makeError(ErrorCode::Conflict,
                     "the copy holds snapshot version " +
                         std::to_string(previous) + ", newer than version " +
                         std::to_string(version) + " that " + source.url +
                         " serves now",
                     Location::inFile(out + "/snapshot.json"),
                     "the source is stale (a lagging mirror or cache): copy "
                     "from the registry itself, or try again later");

  // Its signed files, byte for byte, staged beside the copy.
  if (Status s = fsutil::makeDirs(fs::path(out).parent_path().string()); !s)
    return Unexpected(s.error());
  TreeGuard guard;
  const std::string tag = std::to_string(::getpid());
  const std::string stage = out + ".mirror-stage-" + tag;
  const std::string verifyCache = out + ".mirror-verify-" + tag;
  guard.paths = {stage, verifyCache};
  (void)fsutil::removeTree(stage);
  (void)fsutil::removeTree(verifyCache);
  auto transport = openTransport(source, options);
  if (!transport)
    return Unexpected(transport.error());
  std::vector<std::string> files = {"config.json", "snapshot.json",
                                    "snapshot.json.minisig"};
  const std::vector<std::string> names = src.packageNames();
  for (const char *sub : {"/index", "/archives"})
    if (Status s = fsutil::makeDirs(stage + sub); !s)
      return Unexpected(s.error());
  // An index file the copy already holds with the hash the verified
  // snapshot pins is taken from the copy rather than fetched again (an
  // update of a large registry fetches only what changed); the staged
  // files are all checked against the staged snapshot below either way.
  const RegistrySnapshot &pins = src.snapshot();
  for (const std::string &n : names) {
    const std::string rel = "index/" + n + ".json";
    auto pin = pins.index.find(n);
    auto have = sha256File(out + "/" + rel); // an error when it is not there
    if (have && pin != pins.index.end() && pin->second == "sha256:" + *have) {
      std::error_code ec;
      fs::copy_file(out + "/" + rel, stage + "/" + rel,
                    fs::copy_options::overwrite_existing, ec);
      if (!ec)
        continue;
    }
    files.push_back(rel);
  }
  if (Status s = registry::cache::copyMetadataFiles(**transport, files, stage); !s)
    return Unexpected(s.error());

  // Read back with the same keys: the snapshot the source client verified,
  // and every index matching it.
  RegistrySpec staged;
  staged.name = source.name;
  staged.url = stage;
  staged.publicKeys = source.publicKeys;
  ClientOptions co = options;
  co.cacheRoot = verifyCache;
  co.bundle = true; // rollback and expiry were checked on the source
  auto check = RegistryClient::open(staged, co, reporter);
  if (!check)
    return Unexpected(check.error());
  if ((*check)->snapshot().version != version)
    return makeError(ErrorCode::Conflict,
                     source.url +
                         " changed while it was copied (snapshot "
                         "version " +
                         std::to_string(version) + ", then " +
                         std::to_string((*check)->snapshot().version) + ")",
                     {}, "run the command again");

  MirrorResult result;
  result.dir = out;
  result.snapshotVersion = version;
  result.previousVersion = previous;
  result.signedBy = src.signedBy();
  result.packages = names.size();
  std::vector<std::pair<std::string, Version>> fetch;
  std::vector<const IndexEntry *> entries;
  for (const std::string &n : names) {
    auto idx = (*check)->index(n);
    if (!idx)
      return Unexpected(idx.error());
    for (const IndexEntry &e : (*idx)->versions) {
      ++result.versions;
      auto mine = src.entry(n, e.version);
      if (!mine)
        return Unexpected(mine.error());
      if ((*mine)->sha256 != e.sha256 || (*mine)->archive != e.archive)
        return makeError(ErrorCode::Conflict,
                         source.url + " changed while it was copied (" + n +
                             " " + e.version.str() + ")",
                         {}, "run the command again");
      auto have = sha256File(out + "/" + e.archive);
      if (have && *have == e.sha256)
        continue; // already in the copy
      fetch.push_back({n, e.version});
      entries.push_back(&e);
    }
  }

  std::vector<signing::PublicKey> keys;
  for (const std::string &k : source.publicKeys)
    if (auto key = signing::loadPublicKey(k))
      keys.push_back(*key);
  std::vector<std::string> moves; // staged paths, relative, in order
  if (!fetch.empty()) {
    auto paths = src.fetchArchives(fetch, reporter);
    if (!paths)
      return Unexpected(paths.error());
    for (size_t k = 0; k < fetch.size(); ++k) {
      const IndexEntry &e = *entries[k];
      const std::string dst = stage + "/" + e.archive;
      if (Status s = fsutil::makeDirs(fs::path(dst).parent_path()); !s)
        return Unexpected(s.error());
      std::error_code ec;
      fs::copy_file((*paths)[k], dst, fs::copy_options::overwrite_existing, ec);
      if (ec)
        return Unexpected(
            fsutil::ioError("cannot copy", (*paths)[k], ec.value()));
      auto sha = sha256File(dst);
      if (!sha)
        return Unexpected(sha.error());
      if (*sha != e.sha256)
        return makeError(ErrorCode::Integrity,
                         "the copy of " + fetch[k].first + " " +
                             e.version.str() +
                             " has another SHA-256 than "
                             "the index declares",
                         Location::inFile(dst), "check the disk");
      moves.push_back(e.archive);
      result.archivesCopied += 1;
      result.bytesCopied += e.size;
      // The archive's own signature, when the source has one and it is
      // the registry key's (publish writes it; nothing trusts it alone).
      auto sig = (*transport)->fetch(e.archive + ".minisig", 1 << 16);
      if (!sig)
        continue;
      bool good = false;
      if (auto parsed = signing::parseSignature(sig->body))
        for (const signing::PublicKey &key : keys)
          if (auto data = fsutil::readFile(dst);
              data && signing::verifyBuffer(key, *data, *parsed))
            good = true;
      if (!good) {
        reporter.warning(Diagnostic{
            Severity::Warning, Location::inFile(sig->url),
            "the archive's signature does not verify with the registry's "
            "key: left out of the copy",
            "the archive itself is verified by its SHA-256 in the signed "
            "index"});
        continue;
      }
      if (Status s = fsutil::writeFileAtomic(dst + ".minisig", sig->body); !s)
        return Unexpected(s.error());
      moves.push_back(e.archive + ".minisig");
    }
  }

  // Into place, in the publisher's order.
  for (const std::string &n : names)
    moves.push_back("index/" + n + ".json");
  moves.insert(moves.end(),
               {"config.json", "snapshot.json.minisig", "snapshot.json"});
  for (const char *sub : {"/index", "/archives"})
    if (Status s = fsutil::makeDirs(out + sub); !s)
      return Unexpected(s.error());
  for (const std::string &rel : moves) {
    if (Status s = fsutil::makeDirs(fs::path(out + "/" + rel).parent_path());
        !s)
      return Unexpected(s.error());
    if (Status s = fsutil::renameDurable(stage + "/" + rel, out + "/" + rel);
        !s)
      return Unexpected(s.error());
  }
  return result;
}

} // namespace ireepkg::registry
