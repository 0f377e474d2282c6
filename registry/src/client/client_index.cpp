//===- registry/src/client/client_index.cpp - Index files and index.pack --===//
//
// RegistryClient::Impl's index files: looked up in the snapshot, read from
// the cache (a frame of index.pack, or a verified copy) or fetched and
// checked against the snapshot, parsed, and kept (see client.cpp).
//
//===----------------------------------------------------------------------===//
#include "client_impl.h"

#include <filesystem>

namespace ireepkg::registry {

namespace {

/// The most of index.pack that is read; a larger one is replaced.
constexpr size_t kMaxPackBytes = 256u << 20;

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
  bool ok = fsutil::writeAllToFd(fd, content, path).has_value();
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
        fsutil::trustedCacheFile(path, st))
      return fd;
  }
  ::unlink(path.c_str());
  return fsutil::UniqueFd(::open(
      path.c_str(),
      O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
}

} // namespace

//===----------------------------------------------------------------------===//
// Index files
//===----------------------------------------------------------------------===//

void RegistryClient::Impl::loadPack() {
  if (packLoaded)
    return;
  packLoaded = true;
  // Mapped rather than read, and only when it is this user's own and no
  // one else may write it (fsutil::mapOwnCacheFile). The mapping is of the
  // size it has now, and stays valid: ireepkg only ever appends to a pack
  // (past that size, not read here) or replaces it with a new file
  // (rename, or unlink and create), never truncates one in place. Missing
  // is the normal cold start; anything else that cannot be mapped is
  // replaced when this client has frames to keep.
  auto map = fsutil::mapOwnCacheFile(packFile(), kMaxPackBytes);
  if (!map) {
    std::error_code ec;
    packReplace = std::filesystem::exists(packFile(), ec) || ec;
    return;
  }
  packMap = std::move(*map);
  const std::string_view pack = packMap.bytes();
  for (const PackedIndex &p : splitParsedIndexPack(pack))
    packed[std::string(p.key)] = {
        static_cast<uint64_t>(p.file.data() - pack.data()), p.file.size()};
}

std::optional<std::string_view>
RegistryClient::Impl::readPackFrame(const PackFrame &frame) const {
  const std::string_view pack = packMap.bytes();
  if (frame.offset > pack.size() || frame.size > pack.size() - frame.offset)
    return std::nullopt;
  return pack.substr(frame.offset, frame.size);
}

void RegistryClient::Impl::keepParsed(const RegistryIndex &index,
                                      const std::string &sha) {
  keepFrame({}, sha, &index);
}

void RegistryClient::Impl::keepFrame(std::string_view frame,
                                     const std::string &sha,
                                     const RegistryIndex *index) {
  // Checked again (ClientOptions::recheck), not replaced: the frame the
  // pack has stays.
  if (rechecking() && packed.count(sha))
    return;
  if (!packNewKeys.insert(sha).second)
    return;
  std::string encoded;
  if (index)
    frame = encoded = encodeParsedIndex(*index, sha);
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
    (void)fsutil::writeAllToFd(packOut.get(), packNew, packFile());
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
  const uint64_t packSize = packMap.bytes().size();
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
  std::optional<std::string_view> frame;
  std::optional<ParsedCandidates> got;
  if (auto it = packed.find(*sha); it != packed.end()) {
    frame = readPackFrame(it->second);
    if (frame)
      got = decodeParsedCandidates(*frame, *sha, name);
    if (got) {
      reporter->detail(2, "index/" + name + ".json of " + where +
                              ": parsed copy in the cache");
      packUsed.push_back(it->second);
    }
  } else if (prefetcher) {
    frame = takePrefetched(name, *sha);
    if (frame)
      got = decodeParsedCandidates(*frame, *sha, name);
  }
  if (!got)
    return Result();
  Candidates &c = candidates[name];
  c.file = *frame;
  c.offsets = std::move(got->offsets);
  c.constraints = std::move(got->constraints);
  c.versions.reserve(got->versions.size());
  for (const CandidateVersion &cv : got->versions)
    c.versions.push_back(cv.version);
  c.entries.resize(got->versions.size());
  return Result(std::move(got->versions));
}

std::optional<std::string_view>
RegistryClient::Impl::takePrefetched(const std::string &name,
                                     const std::string &sha) {
  auto got = prefetcher->take(name, sha);
  if (!got)
    return std::nullopt;
  reporter->detail(2, "index/" + name + ".json of " + where + ": " +
                          (got->fromCache ? "cached copy of " : "read from ") +
                          got->url);
  keepFrame(got->frame, sha);
  return prefetchedFrames.emplace_back(std::move(got->frame));
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
  // Read ahead on the prefetch thread, verified and parsed clean there.
  if (prefetcher)
    if (auto frame = takePrefetched(name, expected()))
      if (auto idx = decodeParsedIndex(*frame, expected());
          idx && idx->name == name)
        return &(indices[name] = std::move(*idx));
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
    // Perhaps a publish is in progress, or was killed while it renamed
    // index files: read the snapshot again, or the one it staged.
    int64_t versionBefore = snapshot.version;
    std::string shaBefore = sha;
    bool okBefore = first.has_value();
    auto loaded = fetchSnapshot(/*staged=*/true);
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
  if (first && sha != expected()) {
    // A publish of several packages killed between two of its index
    // renames leaves the others staged beside the staged snapshot, which
    // the loop above took: one of those is read when it is the file the
    // snapshot pins (its hash proves it, wherever it lies).
    auto staged = transport->fetch(stagedIndexName(name), kMaxIndexBytes);
    if (staged && Sha256::hex(staged->body) == expected()) {
      reporter->detail(2, rel + " of " + where + ": read from " +
                              staged->url +
                              ", staged by a publish that was interrupted");
      body = std::move(staged->body);
      sha = expected();
    }
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

} // namespace ireepkg::registry
