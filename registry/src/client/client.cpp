//===- registry/src/client/client.cpp - The verifying registry client -----===//
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
#include "client_impl.h"

namespace ireepkg::registry {

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

Expected<net::MetadataResponse> RegistryClient::Impl::fetchSnapshotSignature(
    const std::string &snapshot, const std::string &file,
    const std::string &signatureFile) {
  auto all = transport->fetchCandidates(signatureFile, kMaxSignatureBytes);
  if (all.size() == 1)
    return std::move(all.front());
  // Several (an OCI registry's signature referrers, which anyone who may
  // push there can add): the first that verifies with a trusted key.
  const std::string snapName = shown(file);
  const std::string sigName = shown(signatureFile);
  std::string reasons;
  for (size_t i = 0; i < all.size(); ++i) {
    std::string why;
    if (!all[i]) {
      why = all[i].error().message;
    } else if (auto sig = signing::parseSignature(all[i]->body, sigName);
               !sig) {
      why = sig.error().message;
    } else {
      const signing::PublicKey *key = nullptr;
      for (const auto &k : keys)
        if (k.keyId == sig->keyId)
          key = &k;
      if (!key)
        why = "signed by key " + signing::keyIdHex(sig->keyId) +
              ", which is not a key you trust for this registry";
      else if (auto v = signing::verifyBuffer(*key, snapshot, *sig, snapName,
                                              sigName);
               !v)
        why = v.error().message;
      else
        return std::move(*all[i]);
    }
    reasons += "\n  signature " + std::to_string(i + 1) + ": " + why;
  }
  return makeError(
      ErrorCode::Integrity,
      "none of the " + std::to_string(all.size()) +
          " signatures of snapshot.json of " + where +
          " verifies with a key you trust (" + keyIdList(keys) + "):" + reasons,
      Location::inFile(sigName),
      "the snapshot was changed after it was signed, or someone other "
      "than the registry signed it: do not use the registry; its "
      "maintainer re-signs it with `ireepkg registry resign`");
}

std::expected<RegistryClient::Impl::Loaded, RegistryClient::Impl::Failure>
RegistryClient::Impl::fetchSnapshotOnce(const std::string &file,
                                        const std::string &signatureFile) {
  using U = std::unexpected<Failure>;
  const std::string snapName = shown(file);
  const std::string sigName = shown(signatureFile);
  // In a local directory: the files as verified before, by their stamps?
  // (Only for snapshot.json: snapshot.verified records its stamps.)
  std::optional<fsutil::FileStamp> snapStamp, sigStamp;
  if (!rechecking() && file == "snapshot.json") {
    snapStamp = transport->stamp("snapshot.json");
    sigStamp = transport->stamp("snapshot.json.minisig");
    if (snapStamp && sigStamp)
      if (auto known = loadedByStamps(*snapStamp, *sigStamp))
        return std::move(*known);
  }
  auto snap = transport->fetch(file, kMaxSnapshotBytes);
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
  auto sigText = fetchSnapshotSignature(snap->body, file, signatureFile);
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
  // The stamps the files had before they were read and still have: the
  // bytes read are theirs. Recorded only when settled (FileStamp).
  std::string snapStampText, sigStampText;
  if (snapStamp && sigStamp && transport->stamp("snapshot.json") == snapStamp &&
      transport->stamp("snapshot.json.minisig") == sigStamp &&
      fsutil::settled(*snapStamp) && fsutil::settled(*sigStamp)) {
    snapStampText = snapStamp->str();
    sigStampText = sigStamp->str();
  }
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
    // Settled since: the next run need not read them (a cache; failing to
    // write it changes nothing).
    if (!snapStampText.empty() && (memo->snapshotStamp != snapStampText ||
                                   memo->signatureStamp != sigStampText)) {
      memo->snapshotStamp = snapStampText;
      memo->signatureStamp = sigStampText;
      (void)fsutil::writeCacheFile(verifiedSnapshotFile(),
                                   encodeVerifiedSnapshot(*memo, snapSha));
    }
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
      Failure f{e, true, fingerprint};
      f.signatureMismatch = true;
      return U(std::move(f));
    }
    // Parsed before (the cached form is keyed by this snapshot's hash)?
    std::optional<RegistrySnapshot> parsed;
    auto bin =
        fsutil::mapOwnCacheFile(parsedSnapshotFile(), 2 * kMaxSnapshotBytes);
    if (bin)
      parsed = decodeParsedSnapshot(bin->bytes(), snapSha, false);
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
      v.snapshotStamp = snapStampText;
      v.signatureStamp = sigStampText;
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

std::optional<RegistryClient::Impl::Loaded>
RegistryClient::Impl::loadedByStamps(const fsutil::FileStamp &snapshot,
                                     const fsutil::FileStamp &signature) {
  // snapshot.verified (above) says which bytes were verified, by their
  // SHA-256; with the stamps those files had when they were read, settled
  // then, it also says that the files still hold those bytes while they
  // keep those stamps (fsutil::FileStamp: any change to a file, or a file
  // renamed over it, gives it another). So the check, the parse and the
  // hashing of 900 KB are skipped as a warm run skipped the first two.
  // Expiry and rollback are checked on every open (checkAndRecord).
  auto rec = fsutil::readOwnCacheFile(verifiedSnapshotFile(), 1 << 16);
  if (!rec)
    return std::nullopt;
  const std::string snapSha(parsedCacheKey(*rec));
  auto memo = decodeVerifiedSnapshot(*rec, snapSha);
  if (!memo || memo->snapshotStamp.empty() ||
      memo->snapshotStamp != snapshot.str() ||
      memo->signatureStamp != signature.str())
    return std::nullopt;
  const signing::PublicKey *key = nullptr;
  for (const auto &k : keys)
    if (signing::publicKeyBase64(k) == memo->publicKey)
      key = &k;
  if (!key)
    return std::nullopt; // no longer trusted: checked in full, and refused
  Loaded loaded;
  loaded.impl = this;
  loaded.snapshot.schemaVersion = memo->schemaVersion;
  loaded.snapshot.version = memo->version;
  loaded.snapshot.expires = memo->expires;
  loaded.snapshot.expiresUnix = memo->expiresUnix;
  loaded.pendingIndex.pending = true;
  loaded.pendingIndex.bodyUnread = true;
  loaded.keyId = signing::keyIdHex(*key);
  loaded.sha256 = snapSha;
  reporter->detail(2, "snapshot.json of " + where +
                          ": unchanged since it and its signature were "
                          "verified (" +
                          verifiedSnapshotFile() + ")");
  reporter->detail(1, "snapshot.json of " + where + ": version " +
                          std::to_string(loaded.snapshot.version) +
                          ", signed by key " + loaded.keyId + ", unchanged");
  return loaded;
}

Expected<RegistryClient::Impl::Loaded>
RegistryClient::Impl::fetchSnapshot(bool staged) {
  // A publish to a directory registry stages the new snapshot and its
  // signature (kStagedSnapshot, kStagedSignature), renames the new index
  // files into place (step 3 of publisher.cpp), then the signature over
  // snapshot.json.minisig (4), then the snapshot over snapshot.json (5).
  // One killed in between leaves, until the next publish, new index files
  // under the old snapshot (3-4), or the new signature beside the old
  // snapshot (4-5). Every file the staged snapshot names is in place from
  // step 3 on, so in both cases the staged snapshot is the new state,
  // signed, and a reader uses it (checked for expiry and rollback like any
  // other):
  //  - a signature that does not verify snapshot.json is tried on the
  //    staged snapshot (4-5);
  //  - when an index file does not match (`staged`), a staged snapshot
  //    with its staged signature is taken if it is newer (3-4).
  auto once = [&]() -> std::expected<Loaded, Failure> {
    auto r = fetchSnapshotOnce();
    if (!r && r.error().signatureMismatch)
      if (auto next = fetchSnapshotOnce(kStagedSnapshot))
        return next;
    if (staged)
      if (auto next = fetchSnapshotOnce(kStagedSnapshot, kStagedSignature);
          next && (!r || next->snapshot.version > r->snapshot.version))
        return next;
    return r;
  };
  auto r = once();
  Rereads rereads;
  bool changed = true;
  while (!r && r.error().retryable && rereads.next(changed)) {
    std::string before = r.error().fingerprint;
    r = once();
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
  fsutil::MappedFile parsed = std::move(pending.parsed);
  std::string body = std::move(pending.body);
  if (parsed.empty())
    if (auto bin = fsutil::mapOwnCacheFile(parsedSnapshotFile(),
                                           2 * kMaxSnapshotBytes))
      parsed = std::move(*bin);
  // Keyed by the hash of the verified bytes, so it holds their map.
  if (auto d = decodeParsedSnapshot(parsed.bytes(), sha)) {
    s.index = std::move(d->index);
    return;
  }
  if (body.empty() && pending.bodyUnread) {
    // snapshot.bin is gone or damaged, and snapshot.json was known by its
    // stamp: read it now, and use it only if it is still the bytes that
    // were verified.
    auto snap = transport->fetch("snapshot.json", kMaxSnapshotBytes);
    if (snap && Sha256::hex(snap->body) == sha)
      body = std::move(snap->body);
    else
      reporter->warning(Diagnostic{
          Severity::Warning, Location::inFile(shown("snapshot.json")),
          "snapshot.json of " + where +
              " changed while it was in use, and its parsed copy in the "
              "cache is unreadable: its packages are unknown to this run",
          "run the command again"});
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
  // A record that another user could replace or delete (an older version,
  // or none) would let that user roll the registry back: refused.
  const Error shared(ErrorCode::Integrity,
                     "this machine's record of the registry, or a directory "
                     "it is in, is another user's or others may write it, so "
                     "it cannot protect against rollback",
                     Location::inFile(trustFile()),
                     "use a cache directory of your own (IREEPKG_CACHE_DIR, "
                     "or cache-dir in config.toml)");
  if (!fsutil::trustedCacheDirectory(stateDir))
    return Unexpected(shared);
  auto lock = cache::FileLock::acquire(stateDir + "/trust.lock");
  if (!lock)
    return Unexpected(lock.error());
  int64_t seen = 0;
  struct stat st;
  const bool present = ::stat(trustFile().c_str(), &st) == 0;
  if (present && !fsutil::trustedCacheFile(trustFile(), st))
    return Unexpected(shared);
  if (present) {
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
// RegistryClient
//===----------------------------------------------------------------------===//

RegistryClient::RegistryClient(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
RegistryClient::~RegistryClient() = default;

void RegistryClient::saveCache() {
  if (impl_->prefetcher)
    impl_->prefetcher->stop();
  impl_->savePack();
}

Expected<std::unique_ptr<RegistryClient>>
RegistryClient::open(const RegistrySpec &spec, const ClientOptions &options,
                     Reporter &reporter) {
  // The transport's requests tell of the waits a server asks for.
  ClientOptions withReporter = options;
  if (!withReporter.fetch.reporter)
    withReporter.fetch.reporter = &reporter;
  auto transport = openTransport(spec, withReporter);
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
  auto root = cache::cacheRootFor(options);
  if (!root)
    return Unexpected(root.error());
  impl->cacheRoot = *root;
  impl->stateDir = cache::registryCacheDir(*root, url);

  if (auto st = impl->loadKeys(); !st)
    return Unexpected(st.error());
  if (auto st = impl->loadConfig(); !st)
    return Unexpected(st.error());
  if (impl->keys.empty())
    return Unexpected(impl->noKeyError());
  auto loaded = impl->fetchSnapshot();
  if (!loaded)
    return Unexpected(loaded.error());
  if (auto st = impl->checkAndRecord(*loaded); !st) {
    // Refused (as a rollback) because this machine took the newer snapshot
    // a killed publish staged (fetchSnapshot), which is still there.
    auto staged = impl->fetchSnapshot(/*staged=*/true);
    if (!staged || staged->snapshot.version <= loaded->snapshot.version ||
        !impl->checkAndRecord(*staged))
      return Unexpected(st.error());
    loaded = std::move(staged);
  }
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
  return cache::downloadCachePath(impl_->cacheRoot, sha256);
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
      if (cache::fileHasContent(path, (*e)->size, (*e)->sha256)) {
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
