//===- registry/src/client/parsed_cache.cpp -------------------------------===//
//
// Parsed registry metadata, cached.
//
// See ireepkg/registry/client/parsed_cache.h. The payloads:
//
//   index:    i64 schema_version, name, u32 count of distinct constraints
//             and each of them, u32 count, then per version: version,
//             summary, u32 count of (name, u32 constraint number)
//             dependencies, u8 has requires.iree (+ u32 constraint number),
//             u32 count of platform names, archive, sha256, u64 size, u8
//             yanked
//   snapshot: i64 schema_version, i64 version, expires, i64 expires (Unix),
//             u32 count of (name, "sha256:<hex>") in name order
//   lock:     i64 lock_version, input_hash, u32 count of platform names,
//             u8 has IREE version (+ version), u32 count of packages (name,
//             version, u8 source kind, source, archive, sha256, u64 size,
//             signed_by, u32 count of (name, version) dependencies, u32
//             count of platform names), u32 count of activation names
//   verified snapshot: the ireepkg version, signature SHA-256, public key,
//             i64 schema_version, i64 version, expires, i64 expires (Unix)
//
// Strings are a u32 length and the bytes; versions and constraints are
// their binary forms (semver.h), so decoding parses no text.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/client/parsed_cache.h"

#include "ireepkg/manifest_schema/binary_form.h"

// XXH3, header-only: nothing to link or load.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>

#include <unordered_map>

namespace ireepkg::registry {

namespace {

constexpr std::string_view kMagic = "IREEPKGP";
enum : uint32_t {
  kIndexKind = 1,
  kSnapshotKind = 2,
  kLockKind = 3,
  kVerifiedSnapshotKind = 4
};
constexpr size_t kHexSize = 64;
constexpr size_t kChecksumSize = 32;
/// Magic, format version, kind, key, payload size, payload checksum.
constexpr size_t kHeaderSize =
    kMagic.size() + 4 + 4 + kHexSize + 8 + kChecksumSize;

/// The payload's checksum: XXH3-128, as 32 hex digits. It only catches
/// corruption and truncation (a torn write, a bad disk): the files are
/// trusted because the current user owns them and no one else may write
/// them (readOwnCacheFile), and anyone who could write one could as well
/// compute a SHA-256 of what they wrote, so a cryptographic hash here bought
/// nothing but time (half of reading snapshot.bin; the xxhash library says
/// why XXH3 is fast and how well it detects changes).
std::string checksum(std::string_view payload) {
  XXH128_hash_t h = XXH3_128bits(payload.data(), payload.size());
  char buf[kChecksumSize + 1];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return std::string(buf, kChecksumSize);
}

std::string frame(uint32_t kind, std::string_view key,
                  const std::string &payload) {
  std::string out;
  out.reserve(kMagic.size() + 8 + kHexSize + 8 + kChecksumSize +
              payload.size());
  out.append(kMagic);
  ByteWriter w(out);
  w.u32(kParsedCacheFormat);
  w.u32(kind);
  out.append(key);
  w.u64(payload.size());
  out.append(checksum(payload));
  out.append(payload);
  return out;
}

/// The payload of `file` if its header matches and its hash checks out.
std::optional<std::string_view> unframe(std::string_view file, uint32_t kind,
                                        std::string_view key) {
  if (key.size() != kHexSize)
    return std::nullopt;
  ByteReader r(file);
  if (r.bytes(kMagic.size()) != kMagic || r.u32() != kParsedCacheFormat ||
      r.u32() != kind || r.bytes(kHexSize) != key)
    return std::nullopt;
  uint64_t size = r.u64();
  std::string_view sum = r.bytes(kChecksumSize);
  if (!r.ok())
    return std::nullopt;
  if (file.size() - kHeaderSize != size)
    return std::nullopt;
  std::string_view payload = file.substr(kHeaderSize);
  if (checksum(payload) != sum)
    return std::nullopt;
  return payload;
}

} // namespace

std::string encodeParsedIndex(const RegistryIndex &index,
                              std::string_view sourceSha256) {
  std::string p;
  // About what an entry takes with a few dependencies: growing the string
  // byte by byte from empty was most of what encoding cost.
  p.reserve(64 + 512 * index.versions.size());
  ByteWriter w(p);
  w.i64(index.schemaVersion);
  w.str(index.name);
  // The distinct constraints first: versions mostly repeat their
  // predecessors' (54 constraints per index file, 12 of them distinct, on
  // bench/resolve's registry), and a reader decodes each once.
  // Keyed by text: a constraint's text determines it (Constraint::parse).
  std::vector<const Constraint *> table;
  std::unordered_map<std::string_view, uint32_t> numbers;
  auto number = [&](const Constraint &c) {
    auto [it, inserted] =
        numbers.try_emplace(c.text(), static_cast<uint32_t>(table.size()));
    if (inserted)
      table.push_back(&c);
    return it->second;
  };
  std::vector<uint32_t> refs;
  for (const IndexEntry &e : index.versions) {
    for (const auto &[name, c] : e.dependencies)
      refs.push_back(number(c));
    if (e.requiresIree)
      refs.push_back(number(*e.requiresIree));
  }
  w.u32(static_cast<uint32_t>(table.size()));
  for (const Constraint *c : table)
    c->encode(w);
  size_t ref = 0;
  w.u32(static_cast<uint32_t>(index.versions.size()));
  for (const IndexEntry &e : index.versions) {
    encodeVersion(e.version, w);
    w.str(e.summary);
    w.u32(static_cast<uint32_t>(e.dependencies.size()));
    for (const auto &dep : e.dependencies) {
      w.str(dep.first);
      w.u32(refs[ref++]);
    }
    w.u8(e.requiresIree ? 1 : 0);
    if (e.requiresIree)
      w.u32(refs[ref++]);
    w.u32(static_cast<uint32_t>(e.platforms.size()));
    for (const Platform &pl : e.platforms)
      w.str(pl.str());
    w.str(e.archive);
    w.str(e.sha256);
    w.u64(e.size);
    w.u8(e.yanked ? 1 : 0);
  }
  return frame(kIndexKind, sourceSha256, p);
}

namespace {

/// The table of distinct constraints entries refer to by number.
using ConstraintTable = std::vector<std::shared_ptr<const Constraint>>;

bool decodeConstraints(ByteReader &r, ConstraintTable &out) {
  uint32_t n = r.count(9);
  out.reserve(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    auto c = Constraint::decode(r);
    if (!c)
      return false;
    out.push_back(std::make_shared<const Constraint>(std::move(*c)));
  }
  return r.ok();
}

const std::shared_ptr<const Constraint> *
constraintRef(ByteReader &r, const ConstraintTable &table) {
  uint32_t i = r.u32();
  return r.ok() && i < table.size() ? &table[i] : nullptr;
}

/// An entry's dependencies and requires.iree, handing each (name,
/// constraint) to `dep` in the order written (by name, each once), after
/// `count` has been told how many there are (a count the bytes left can
/// hold).
template <typename OnCount, typename OnDep, typename OnIree>
bool decodeRequirements(ByteReader &r, const ConstraintTable &table,
                        OnCount count, OnDep dep, OnIree iree) {
  uint32_t n = r.count(8);
  count(n);
  std::string_view last;
  for (uint32_t k = 0; k < n && r.ok(); ++k) {
    std::string_view name = r.str();
    const auto *c = constraintRef(r, table);
    if (!c || (k > 0 && !(last < name)))
      return false; // a name repeated or out of order
    last = name;
    dep(name, *c);
  }
  if (uint8_t has = r.u8(); has == 1) {
    const auto *c = constraintRef(r, table);
    if (!c)
      return false;
    iree(*c);
  } else if (has != 0) {
    return false;
  }
  return r.ok();
}

bool decodeEntryPlatforms(ByteReader &r, std::vector<Platform> &out) {
  uint32_t n = r.count(4);
  out.reserve(n);
  for (uint32_t k = 0; k < n && r.ok(); ++k) {
    auto pl = Platform::parse(r.str());
    if (!pl)
      return false;
    out.push_back(*pl);
  }
  return r.ok();
}

bool decodeYanked(ByteReader &r, bool &yanked) {
  uint8_t y = r.u8();
  if (y > 1)
    return false;
  yanked = y == 1;
  return r.ok();
}

/// One entry in full.
bool decodeEntry(ByteReader &r, const ConstraintTable &table, IndexEntry &e) {
  auto v = decodeVersion(r);
  if (!v)
    return false;
  e.version = std::move(*v);
  e.summary = std::string(r.str());
  auto dep = [&](std::string_view name,
                 const std::shared_ptr<const Constraint> &c) {
    e.dependencies.emplace_hint(e.dependencies.end(), name, *c);
  };
  auto iree = [&](const std::shared_ptr<const Constraint> &c) {
    e.requiresIree = *c;
  };
  if (!decodeRequirements(
          r, table, [](uint32_t) {}, dep, iree) ||
      !decodeEntryPlatforms(r, e.platforms))
    return false;
  e.archive = std::string(r.str());
  e.sha256 = std::string(r.str());
  e.size = r.u64();
  return decodeYanked(r, e.yanked);
}

/// The same entry, keeping only what the resolver uses: the strings it
/// does not need are read over, never copied.
bool decodeCandidate(ByteReader &r, const ConstraintTable &table,
                     CandidateVersion &cv) {
  auto v = decodeVersion(r);
  if (!v)
    return false;
  cv.version = std::move(*v);
  (void)r.str(); // summary
  auto dep = [&](std::string_view name,
                 const std::shared_ptr<const Constraint> &c) {
    cv.dependencies.push_back(Dependency{std::string(name), c});
  };
  auto iree = [&](const std::shared_ptr<const Constraint> &c) {
    cv.requiresIree = c;
  };
  auto count = [&](uint32_t n) { cv.dependencies.reserve(n); };
  if (!decodeRequirements(r, table, count, dep, iree) ||
      !decodeEntryPlatforms(r, cv.platforms))
    return false;
  (void)r.str(); // archive
  (void)r.str(); // sha256
  (void)r.u64(); // size
  return decodeYanked(r, cv.yanked);
}

} // namespace

std::optional<RegistryIndex> decodeParsedIndex(std::string_view file,
                                               std::string_view sourceSha256) {
  auto payload = unframe(file, kIndexKind, sourceSha256);
  if (!payload)
    return std::nullopt;
  ByteReader r(*payload);
  RegistryIndex idx;
  idx.schemaVersion = static_cast<int>(r.i64());
  idx.name = std::string(r.str());
  ConstraintTable table;
  if (!decodeConstraints(r, table))
    return std::nullopt;
  // An entry is at least 24 bytes of version numbers and a dozen lengths.
  uint32_t n = r.count(64);
  idx.versions.reserve(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    if (!decodeEntry(r, table, idx.versions.emplace_back()))
      return std::nullopt;
  }
  if (!r.ok() || !r.atEnd())
    return std::nullopt;
  return idx;
}

std::optional<ParsedCandidates>
decodeParsedCandidates(std::string_view file, std::string_view sourceSha256,
                       std::string_view name) {
  auto payload = unframe(file, kIndexKind, sourceSha256);
  if (!payload)
    return std::nullopt;
  ByteReader r(*payload);
  (void)r.i64(); // schema_version
  if (r.str() != name)
    return std::nullopt;
  ParsedCandidates out;
  if (!decodeConstraints(r, out.constraints))
    return std::nullopt;
  uint32_t n = r.count(64);
  out.versions.reserve(n);
  out.offsets.reserve(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    out.offsets.push_back(static_cast<uint32_t>(file.size() - r.remaining()));
    if (!decodeCandidate(r, out.constraints, out.versions.emplace_back()))
      return std::nullopt;
  }
  if (!r.ok() || !r.atEnd())
    return std::nullopt;
  return out;
}

std::optional<IndexEntry>
decodeParsedIndexEntry(std::string_view file, uint32_t offset,
                       const ConstraintTable &constraints) {
  if (offset > file.size())
    return std::nullopt;
  ByteReader r(file.substr(offset));
  IndexEntry e;
  if (!decodeEntry(r, constraints, e))
    return std::nullopt;
  return e;
}

std::vector<PackedIndex> splitParsedIndexPack(std::string_view pack) {
  std::vector<PackedIndex> out;
  size_t pos = 0;
  while (pos < pack.size()) {
    std::string_view rest = pack.substr(pos);
    if (rest.size() >= kHeaderSize && rest.starts_with(kMagic)) {
      ByteReader r(rest.substr(kMagic.size()));
      uint32_t format = r.u32();
      uint32_t kind = r.u32();
      std::string_view key = r.bytes(kHexSize);
      uint64_t size = r.u64();
      if (r.ok() && format == kParsedCacheFormat && kind == kIndexKind &&
          size <= rest.size() - kHeaderSize) {
        out.push_back({key, rest.substr(0, kHeaderSize + size)});
        // In a sound pack the next frame starts where this one ends; when
        // it does not, this one's size may be damaged and cover the start
        // of the next one (a torn append followed by another): look for it.
        std::string_view after = rest.substr(kHeaderSize + size);
        if (after.empty() || after.starts_with(kMagic)) {
          pos += kHeaderSize + size;
          continue;
        }
      }
    }
    // Not a whole frame, or not followed by one: resume at the next one.
    size_t next = pack.find(kMagic, pos + 1);
    if (next == std::string_view::npos)
      break;
    pos = next;
  }
  return out;
}

std::string encodeParsedSnapshot(const RegistrySnapshot &snapshot,
                                 std::string_view sourceSha256) {
  std::string p;
  ByteWriter w(p);
  w.i64(snapshot.schemaVersion);
  w.i64(snapshot.version);
  w.str(snapshot.expires);
  w.i64(snapshot.expiresUnix);
  w.u32(static_cast<uint32_t>(snapshot.index.size()));
  for (const auto &[name, hash] : snapshot.index) {
    w.str(name);
    w.str(hash);
  }
  return frame(kSnapshotKind, sourceSha256, p);
}

std::optional<RegistrySnapshot>
decodeParsedSnapshot(std::string_view file, std::string_view sourceSha256,
                     bool withIndex) {
  auto payload = unframe(file, kSnapshotKind, sourceSha256);
  if (!payload)
    return std::nullopt;
  ByteReader r(*payload);
  RegistrySnapshot s;
  s.schemaVersion = static_cast<int>(r.i64());
  s.version = r.i64();
  s.expires = std::string(r.str());
  s.expiresUnix = r.i64();
  uint32_t n = r.count(8);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    std::string_view name = r.str();
    std::string_view hash = r.str();
    if (!r.ok())
      break;
    if (withIndex)
      s.index.emplace_hint(s.index.end(), name, hash);
  }
  if (!r.ok() || !r.atEnd() || (withIndex && s.index.size() != n))
    return std::nullopt;
  return s;
}

std::vector<std::pair<std::string_view, std::string_view>>
parsedSnapshotPackages(std::string_view file) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  if (file.size() < kHeaderSize)
    return out;
  ByteReader r(file.substr(kHeaderSize));
  (void)r.i64(); // schema_version
  (void)r.i64(); // version
  (void)r.str(); // expires
  (void)r.i64(); // expires (Unix)
  uint32_t n = r.count(8);
  out.reserve(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    std::string_view name = r.str();
    std::string_view hash = r.str();
    if (!out.empty() && !(out.back().first < name))
      r.fail();
    out.emplace_back(name, hash);
  }
  if (!r.ok() || !r.atEnd())
    out.clear();
  return out;
}

namespace {

void encodePlatforms(const std::vector<Platform> &platforms, ByteWriter &w) {
  w.u32(static_cast<uint32_t>(platforms.size()));
  for (const Platform &p : platforms)
    w.str(p.str());
}

bool decodePlatforms(ByteReader &r, std::vector<Platform> &out) {
  uint32_t n = r.count(4);
  out.reserve(n);
  for (uint32_t k = 0; k < n && r.ok(); ++k) {
    auto p = Platform::parse(r.str());
    if (!p) {
      r.fail();
      break;
    }
    out.push_back(*p);
  }
  return r.ok();
}

} // namespace

std::string encodeParsedLock(const Lockfile &lock, std::string_view key) {
  std::string p;
  ByteWriter w(p);
  w.i64(lock.lockVersion);
  w.str(lock.inputHash);
  encodePlatforms(lock.platforms, w);
  w.u8(lock.ireeVersion ? 1 : 0);
  if (lock.ireeVersion)
    encodeVersion(*lock.ireeVersion, w);
  w.u32(static_cast<uint32_t>(lock.packages.size()));
  for (const LockedPackage &lp : lock.packages) {
    w.str(lp.name);
    encodeVersion(lp.version, w);
    w.u8(static_cast<uint8_t>(lp.sourceKind));
    w.str(lp.source);
    w.str(lp.archive);
    w.str(lp.sha256);
    w.u64(lp.size);
    w.str(lp.signedBy);
    w.u32(static_cast<uint32_t>(lp.dependencies.size()));
    for (const auto &[name, version] : lp.dependencies) {
      w.str(name);
      encodeVersion(version, w);
    }
    encodePlatforms(lp.platforms, w);
  }
  w.u32(static_cast<uint32_t>(lock.activation.size()));
  for (const std::string &n : lock.activation)
    w.str(n);
  return frame(kLockKind, key, p);
}

std::optional<Lockfile> decodeParsedLock(std::string_view file,
                                         std::string_view key) {
  auto payload = unframe(file, kLockKind, key);
  if (!payload)
    return std::nullopt;
  ByteReader r(*payload);
  Lockfile lock;
  lock.lockVersion = static_cast<int>(r.i64());
  lock.inputHash = std::string(r.str());
  if (!decodePlatforms(r, lock.platforms))
    return std::nullopt;
  if (uint8_t has = r.u8(); has == 1) {
    auto v = decodeVersion(r);
    if (!v)
      return std::nullopt;
    lock.ireeVersion = std::move(*v);
  } else if (has != 0) {
    return std::nullopt;
  }
  uint32_t n = r.count(32);
  lock.packages.reserve(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    LockedPackage lp;
    lp.name = std::string(r.str());
    auto v = decodeVersion(r);
    if (!v)
      return std::nullopt;
    lp.version = std::move(*v);
    uint8_t kind = r.u8();
    if (kind > static_cast<uint8_t>(LockedPackage::SourceKind::Bundle))
      return std::nullopt;
    lp.sourceKind = static_cast<LockedPackage::SourceKind>(kind);
    lp.source = std::string(r.str());
    lp.archive = std::string(r.str());
    lp.sha256 = std::string(r.str());
    lp.size = r.u64();
    lp.signedBy = std::string(r.str());
    uint32_t deps = r.count(28);
    lp.dependencies.reserve(deps);
    for (uint32_t k = 0; k < deps && r.ok(); ++k) {
      std::string name(r.str());
      auto dv = decodeVersion(r);
      if (!dv)
        return std::nullopt;
      lp.dependencies.emplace_back(std::move(name), std::move(*dv));
    }
    if (!decodePlatforms(r, lp.platforms))
      return std::nullopt;
    lock.packages.push_back(std::move(lp));
  }
  uint32_t act = r.count(4);
  lock.activation.reserve(act);
  for (uint32_t i = 0; i < act && r.ok(); ++i)
    lock.activation.emplace_back(r.str());
  if (!r.ok() || !r.atEnd())
    return std::nullopt;
  return lock;
}

std::string encodeVerifiedSnapshot(const VerifiedSnapshot &v,
                                   std::string_view snapshotSha256) {
  std::string p;
  ByteWriter w(p);
  w.str(IREEPKG_VERSION);
  w.str(v.signatureSha256);
  w.str(v.publicKey);
  w.i64(v.schemaVersion);
  w.i64(v.version);
  w.str(v.expires);
  w.i64(v.expiresUnix);
  w.str(v.snapshotStamp);
  w.str(v.signatureStamp);
  return frame(kVerifiedSnapshotKind, snapshotSha256, p);
}

std::optional<VerifiedSnapshot>
decodeVerifiedSnapshot(std::string_view file, std::string_view snapshotSha256) {
  auto payload = unframe(file, kVerifiedSnapshotKind, snapshotSha256);
  if (!payload)
    return std::nullopt;
  ByteReader r(*payload);
  if (r.str() != IREEPKG_VERSION)
    return std::nullopt;
  VerifiedSnapshot v;
  v.signatureSha256 = std::string(r.str());
  v.publicKey = std::string(r.str());
  v.schemaVersion = static_cast<int>(r.i64());
  v.version = r.i64();
  v.expires = std::string(r.str());
  v.expiresUnix = r.i64();
  v.snapshotStamp = std::string(r.str());
  v.signatureStamp = std::string(r.str());
  if (!r.ok() || !r.atEnd())
    return std::nullopt;
  return v;
}

std::string_view parsedCacheKey(std::string_view file) {
  if (file.size() < kHeaderSize || file.substr(0, kMagic.size()) != kMagic)
    return {};
  return file.substr(kMagic.size() + 8, kHexSize);
}

} // namespace ireepkg::registry
