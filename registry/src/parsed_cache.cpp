//===- parsed_cache.cpp - Parsed registry metadata, cached ----------------===//
//
// See ireepkg/registry/parsed_cache.h. The payloads:
//
//   index:    i64 schema_version, name, u32 count, then per version:
//             version, summary, u32 count of (name, constraint)
//             dependencies, u8 has requires.iree (+ constraint), u32 count
//             of platform names, archive, sha256, u64 size, u8 yanked
//   snapshot: i64 schema_version, i64 version, expires, i64 expires (Unix),
//             u32 count of (name, "sha256:<hex>") in name order
//   lock:     i64 lock_version, input_hash, u32 count of platform names,
//             u8 has IREE version (+ version), u32 count of packages (name,
//             version, u8 source kind, source, archive, sha256, u64 size,
//             signed_by, u32 count of (name, version) dependencies, u32
//             count of platform names), u32 count of activation names
//
// Strings are a u32 length and the bytes; versions and constraints are
// their binary forms (semver.h), so decoding parses no text.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/parsed_cache.h"

#include "ireepkg/manifest_schema/binary_form.h"
#include "ireepkg/pkg/hash.h"

namespace ireepkg::registry {

namespace {

constexpr std::string_view kMagic = "IREEPKGP";
enum : uint32_t { kIndexKind = 1, kSnapshotKind = 2, kLockKind = 3 };
constexpr size_t kHexSize = 64;

std::string frame(uint32_t kind, std::string_view key,
                  const std::string &payload) {
  std::string out;
  out.reserve(kMagic.size() + 8 + 2 * kHexSize + 8 + payload.size());
  out.append(kMagic);
  ByteWriter w(out);
  w.u32(kParsedCacheFormat);
  w.u32(kind);
  out.append(key);
  w.u64(payload.size());
  out.append(Sha256::hex(payload));
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
  std::string_view sha = r.bytes(kHexSize);
  if (!r.ok())
    return std::nullopt;
  constexpr size_t header = kMagic.size() + 4 + 4 + kHexSize + 8 + kHexSize;
  if (file.size() - header != size)
    return std::nullopt;
  std::string_view payload = file.substr(header);
  if (Sha256::hex(payload) != sha)
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
  w.u32(static_cast<uint32_t>(index.versions.size()));
  for (const IndexEntry &e : index.versions) {
    encodeVersion(e.version, w);
    w.str(e.summary);
    w.u32(static_cast<uint32_t>(e.dependencies.size()));
    for (const auto &[name, c] : e.dependencies) {
      w.str(name);
      c.encode(w);
    }
    w.u8(e.requiresIree ? 1 : 0);
    if (e.requiresIree)
      e.requiresIree->encode(w);
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

std::optional<RegistryIndex> decodeParsedIndex(std::string_view file,
                                               std::string_view sourceSha256) {
  auto payload = unframe(file, kIndexKind, sourceSha256);
  if (!payload)
    return std::nullopt;
  ByteReader r(*payload);
  RegistryIndex idx;
  idx.schemaVersion = static_cast<int>(r.i64());
  idx.name = std::string(r.str());
  // An entry is at least 24 bytes of version numbers and a dozen lengths.
  uint32_t n = r.count(64);
  idx.versions.reserve(n);
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    IndexEntry e;
    auto v = decodeVersion(r);
    if (!v)
      return std::nullopt;
    e.version = std::move(*v);
    e.summary = std::string(r.str());
    uint32_t deps = r.count(8);
    for (uint32_t k = 0; k < deps && r.ok(); ++k) {
      std::string name(r.str());
      auto c = Constraint::decode(r);
      if (!c)
        return std::nullopt;
      e.dependencies.emplace_hint(e.dependencies.end(), std::move(name),
                                  std::move(*c));
    }
    if (e.dependencies.size() != deps)
      return std::nullopt; // a name repeated
    if (uint8_t has = r.u8(); has == 1) {
      auto c = Constraint::decode(r);
      if (!c)
        return std::nullopt;
      e.requiresIree = std::move(*c);
    } else if (has != 0) {
      return std::nullopt;
    }
    uint32_t plats = r.count(4);
    e.platforms.reserve(plats);
    for (uint32_t k = 0; k < plats && r.ok(); ++k) {
      auto pl = Platform::parse(r.str());
      if (!pl)
        return std::nullopt;
      e.platforms.push_back(*pl);
    }
    e.archive = std::string(r.str());
    e.sha256 = std::string(r.str());
    e.size = r.u64();
    uint8_t yanked = r.u8();
    if (yanked > 1)
      return std::nullopt;
    e.yanked = yanked == 1;
    idx.versions.push_back(std::move(e));
  }
  if (!r.ok() || !r.atEnd())
    return std::nullopt;
  return idx;
}

std::vector<PackedIndex> splitParsedIndexPack(std::string_view pack) {
  constexpr size_t header = kMagic.size() + 4 + 4 + kHexSize + 8 + kHexSize;
  std::vector<PackedIndex> out;
  size_t pos = 0;
  while (pos < pack.size()) {
    std::string_view rest = pack.substr(pos);
    if (rest.size() >= header && rest.starts_with(kMagic)) {
      ByteReader r(rest.substr(kMagic.size()));
      uint32_t format = r.u32();
      uint32_t kind = r.u32();
      std::string_view key = r.bytes(kHexSize);
      uint64_t size = r.u64();
      if (r.ok() && format == kParsedCacheFormat && kind == kIndexKind &&
          size <= rest.size() - header) {
        out.push_back({key, rest.substr(0, header + size)});
        // In a sound pack the next frame starts where this one ends; when
        // it does not, this one's size may be damaged and cover the start
        // of the next one (a torn append followed by another): look for it.
        std::string_view after = rest.substr(header + size);
        if (after.empty() || after.starts_with(kMagic)) {
          pos += header + size;
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

} // namespace ireepkg::registry
