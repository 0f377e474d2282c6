//===- base/src/base64.cpp - Base64 (RFC 4648) ----------------------------===//
#include "ireepkg/base/base64.h"

namespace ireepkg {

namespace {

constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The six bits a character stands for, or -1. "-" and "_" (the URL-safe
/// alphabet) count only when `urlSafe`.
int sextet(char c, bool urlSafe) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+' || (urlSafe && c == '-'))
    return 62;
  if (c == '/' || (urlSafe && c == '_'))
    return 63;
  return -1;
}

} // namespace

std::string base64Encode(const uint8_t *data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    uint32_t n = uint32_t(data[i]) << 16;
    if (i + 1 < size)
      n |= uint32_t(data[i + 1]) << 8;
    if (i + 2 < size)
      n |= data[i + 2];
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::optional<std::vector<uint8_t>> base64Decode(std::string_view text,
                                                 Base64Syntax syntax) {
  const bool lenient = syntax == Base64Syntax::Lenient;
  if (!lenient && (text.empty() || text.size() % 4 != 0))
    return std::nullopt;
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (lenient && (c == '=' || c == '\n' || c == '\r'))
      continue;
    int v = sextet(c, lenient);
    if (v < 0) {
      if (!lenient && c == '=')
        break; // the padding, checked below
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  if (lenient)
    return out;
  // Canonical: 0 bits left after a full group, 2 before "==", 4 before "=";
  // those bits zero, and the padding all that follows.
  if (bits > 4 || (acc & ((1u << bits) - 1)) != 0 ||
      text.size() - i != size_t(bits / 2) ||
      text.substr(i).find_first_not_of('=') != std::string_view::npos)
    return std::nullopt;
  return out;
}

} // namespace ireepkg
