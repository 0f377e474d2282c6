//===- manifest_schema/src/suggest.cpp - "Did you mean" -------------------===//
#include "ireepkg/manifest_schema/suggest.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace ireepkg {

/// Optimal-string-alignment distance over a normalised spelling, so that
/// `x86-64`, `X86_64` and `x8664` all land near `x86_64`.
static size_t typoDistance(std::string_view a, std::string_view b) {
  auto norm = [](std::string_view s) {
    std::string out;
    for (char c : s)
      out += c == '-' ? '_' : static_cast<char>(std::tolower(c));
    return out;
  };
  std::string x = norm(a), y = norm(b);
  std::vector<std::vector<size_t>> d(x.size() + 1,
                                     std::vector<size_t>(y.size() + 1));
  for (size_t i = 0; i <= x.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= y.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= x.size(); ++i)
    for (size_t j = 1; j <= y.size(); ++j) {
      size_t cost = x[i - 1] == y[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  // A spelling that differs only in case or separators is distance 0 after
  // normalisation; count it as 1 so it still ranks below an exact match.
  if (d[x.size()][y.size()] == 0 && a != b)
    return 1;
  return d[x.size()][y.size()];
}

/// Common other spellings of our architecture names.
static std::string unalias(std::string_view word) {
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"amd64", "x86_64"}, {"x64", "x86_64"},     {"x86-64", "x86_64"},
      {"arm64", "aarch64"}, {"armv8", "aarch64"}, {"armv7", "arm"},
      {"armhf", "arm"},    {"rv64", "riscv64"},   {"rv32", "riscv32"},
      {"darwin", "macos"}, {"osx", "macos"},      {"win", "windows"},
      {"win32", "windows"}};
  std::string out(word);
  for (auto [from, to] : kAliases) {
    size_t pos = out.find(from);
    if (pos == std::string::npos)
      continue;
    size_t end = pos + from.size();
    bool atStart = pos == 0 || out[pos - 1] == '-';
    bool atEnd = end == out.size() || out[end] == '-';
    if (atStart && atEnd)
      out.replace(pos, from.size(), to);
  }
  return out;
}

template <typename Str>
static std::string closest(std::string_view word, std::span<const Str> cands) {
  if (word.size() > 128)
    return {};
  std::string unaliased = unalias(word);
  if (unaliased != word)
    for (const auto &c : cands)
      if (std::string_view(c) == unaliased)
        return unaliased;
  std::string best;
  size_t bestDistance = SIZE_MAX;
  for (const auto &c : cands) {
    std::string_view cand(c);
    size_t limit = std::max<size_t>(1, std::max(word.size(), cand.size()) / 3);
    size_t dist = typoDistance(word, cand);
    if (dist <= limit && dist < bestDistance) {
      bestDistance = dist;
      best = std::string(cand);
    }
  }
  return best;
}

std::string suggestClosest(std::string_view word,
                           std::span<const std::string_view> candidates) {
  return closest(word, candidates);
}
std::string suggestClosest(std::string_view word,
                           std::span<const std::string> candidates) {
  return closest(word, candidates);
}

std::string didYouMean(std::string_view word,
                       std::span<const std::string_view> candidates) {
  std::string s = suggestClosest(word, candidates);
  return s.empty() ? std::string() : " (did you mean \"" + s + "\"?)";
}
std::string didYouMean(std::string_view word,
                       std::span<const std::string> candidates) {
  std::string s = suggestClosest(word, candidates);
  return s.empty() ? std::string() : " (did you mean \"" + s + "\"?)";
}

} // namespace ireepkg
