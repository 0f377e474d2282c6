//===- platform.cpp - Names, architectures, platforms --------------------===//
#include "ireepkg/manifest_schema/platform.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <vector>

namespace ireepkg {

static constexpr std::array<std::string_view, 5> kArchNames = {
    "x86_64", "aarch64", "riscv64", "riscv32", "arm"};
static constexpr std::array<std::string_view, 4> kOSNames = {
    "linux", "android", "macos", "windows"};

std::span<const std::string_view> archNames() { return kArchNames; }
std::span<const std::string_view> osNames() { return kOSNames; }

std::optional<Arch> parseArch(std::string_view name) {
  for (size_t i = 0; i < kArchNames.size(); ++i)
    if (kArchNames[i] == name)
      return static_cast<Arch>(i);
  return std::nullopt;
}

std::optional<OS> parseOS(std::string_view name) {
  for (size_t i = 0; i < kOSNames.size(); ++i)
    if (kOSNames[i] == name)
      return static_cast<OS>(i);
  return std::nullopt;
}

std::string_view archName(Arch arch) {
  return kArchNames[static_cast<size_t>(arch)];
}
std::string_view osName(OS os) { return kOSNames[static_cast<size_t>(os)]; }

std::optional<Platform> Platform::parse(std::string_view text) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos)
    return std::nullopt;
  auto os = parseOS(text.substr(0, dash));
  auto arch = parseArch(text.substr(dash + 1));
  if (!os || !arch)
    return std::nullopt;
  return Platform{*os, *arch};
}

std::string Platform::str() const {
  return std::string(osName(os)) + "-" + std::string(archName(arch));
}

std::span<const std::string> platformNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (auto os : kOSNames)
      for (auto arch : kArchNames)
        v.push_back(std::string(os) + "-" + std::string(arch));
    return v;
  }();
  return names;
}

Platform hostPlatform() {
  Platform p;
#if defined(__ANDROID__)
  p.os = OS::Android;
#elif defined(__APPLE__)
  p.os = OS::MacOS;
#elif defined(_WIN32)
  p.os = OS::Windows;
#else
  p.os = OS::Linux;
#endif
#if defined(__x86_64__) || defined(_M_X64)
  p.arch = Arch::X86_64;
#elif defined(__aarch64__) || defined(_M_ARM64)
  p.arch = Arch::AArch64;
#elif defined(__riscv) && __riscv_xlen == 64
  p.arch = Arch::RiscV64;
#elif defined(__riscv)
  p.arch = Arch::RiscV32;
#elif defined(__arm__)
  p.arch = Arch::Arm;
#else
#error "unsupported host architecture"
#endif
  return p;
}

const char *const kPackageNameRule =
    "package names are 1 to 64 characters of lowercase letters, digits, "
    "'.', '_' and '-', starting with a letter or digit";

bool isValidPackageName(std::string_view name) {
  if (name.empty() || name.size() > 64)
    return false;
  auto lowerOrDigit = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (!lowerOrDigit(name[0]))
    return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return lowerOrDigit(c) || c == '.' || c == '_' || c == '-';
  });
}

bool isCIdentifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

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

namespace {

/// CON, PRN, AUX, NUL, COM1-9, LPT1-9, CONIN$ and CONOUT$, in any case, alone
/// or before a dot: names that open a device on Windows.
bool isWindowsDeviceName(std::string_view seg) {
  std::string stem(seg.substr(0, seg.find('.')));
  while (!stem.empty() && stem.back() == ' ')
    stem.pop_back();
  for (char &c : stem)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (stem == "CON" || stem == "PRN" || stem == "AUX" || stem == "NUL" ||
      stem == "CONIN$" || stem == "CONOUT$")
    return true;
  return stem.size() == 4 &&
         (stem.starts_with("COM") || stem.starts_with("LPT")) &&
         stem[3] >= '1' && stem[3] <= '9';
}

} // namespace

std::string packagePathProblem(std::string_view path) {
  if (path.empty())
    return "an empty path";
  if (path.front() == '/')
    return "an absolute path";
  if (path.size() >= 2 && path[1] == ':')
    return "an absolute path";
  // Printable ASCII only: then case folding is complete and no two
  // spellings of a name can be the same file on macOS or Windows (Unicode
  // case folding and normalization never come into it).
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f)
      return "a path with a control character";
    if (c >= 0x80)
      return "a path with a non-ASCII character";
    if (std::strchr("<>:\"|?*", c))
      return std::string("a path with '") + static_cast<char>(c) +
             "', which Windows does not allow";
  }
  if (path.find('\\') != std::string_view::npos)
    return "a path with a backslash (use '/')";
  if (path.back() == '/')
    return "a path ending in '/'";
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view seg = path.substr(
        start, slash == std::string_view::npos ? std::string_view::npos
                                               : slash - start);
    if (seg.empty())
      return "a path with an empty segment";
    if (seg == "..")
      return "a path that leaves the package ('..')";
    if (seg == ".")
      return "a path with a '.' segment";
    // Windows drops trailing dots and spaces ("x." is the file "x") and
    // keeps device names whatever the extension ("nul.txt" is NUL).
    if (seg.back() == '.' || seg.back() == ' ')
      return std::string("a path with a name ending in '") + seg.back() +
             "', which Windows does not keep";
    if (isWindowsDeviceName(seg))
      return "a path with the name \"" + std::string(seg) +
             "\", which Windows reserves for a device";
    if (slash == std::string_view::npos)
      break;
    start = slash + 1;
  }
  return {};
}

} // namespace ireepkg
