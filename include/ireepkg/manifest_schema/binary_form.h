//===- ireepkg/manifest_schema/binary_form.h - Bytes in, bytes out --------===//
//
// The primitives of ireepkg's binary caches of parsed metadata (the registry
// client keeps parsed index files and snapshots so that a warm run reads no
// JSON): little-endian integers and length-prefixed strings appended to a
// std::string, and a reader that checks every length against what is left,
// so that a truncated or corrupt cache file makes it fail (ok() false), never
// read out of bounds or allocate without limit.
//
// Written here rather than taken from a serialization library (FlatBuffers,
// Cap'n Proto, MessagePack): the cached forms are a handful of flat records,
// the format is private to this machine's cache and versioned by its
// writer, and none of those libraries would spare the per-field code that
// rebuilds ireepkg's own types.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BINARY_FORM_H
#define IREEPKG_BINARY_FORM_H

#include <cstdint>
#include <string>
#include <string_view>

namespace ireepkg {

/// Appends values to a string.
class ByteWriter {
public:
  explicit ByteWriter(std::string &out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  /// A u32 length, then the bytes.
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }

private:
  std::string &out_;
};

/// Reads what ByteWriter wrote. After the first failure (too few bytes
/// left), ok() is false and every read returns zero or empty.
class ByteReader {
public:
  explicit ByteReader(std::string_view data) : rest_(data) {}

  bool ok() const { return ok_; }
  bool atEnd() const { return rest_.empty(); }
  size_t remaining() const { return rest_.size(); }
  void fail() {
    ok_ = false;
    rest_ = {};
  }

  std::string_view bytes(size_t n) {
    if (n > rest_.size()) {
      fail();
      return {};
    }
    std::string_view out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return out;
  }
  uint8_t u8() {
    std::string_view b = bytes(1);
    return b.empty() ? 0 : static_cast<uint8_t>(b[0]);
  }
  uint32_t u32() { return static_cast<uint32_t>(uint(4)); }
  uint64_t u64() { return uint(8); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  std::string_view str() { return bytes(u32()); }
  /// A count of items, each at least `minItemBytes` long: fails when what
  /// is left cannot hold that many, so a corrupt count never causes a huge
  /// allocation.
  uint32_t count(size_t minItemBytes) {
    uint32_t n = u32();
    if (minItemBytes && n > rest_.size() / minItemBytes) {
      fail();
      return 0;
    }
    return n;
  }

private:
  uint64_t uint(int size) {
    std::string_view b = bytes(static_cast<size_t>(size));
    uint64_t v = 0;
    for (size_t i = 0; i < b.size(); ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(b[i])) << (8 * i);
    return v;
  }

  std::string_view rest_;
  bool ok_ = true;
};

} // namespace ireepkg

#endif // IREEPKG_BINARY_FORM_H
