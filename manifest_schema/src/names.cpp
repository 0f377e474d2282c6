//===- manifest_schema/src/names.cpp - Package, identifier and file names -===//
#include "ireepkg/manifest_schema/names.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

namespace ireepkg {

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
