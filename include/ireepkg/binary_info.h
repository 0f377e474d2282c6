//===- ireepkg/binary_info.h - What a native library is ---------*- C++ -*-===//
//
// Facts about native libraries (ELF, Mach-O, COFF) that `pack` and `verify`
// check against a manifest: format, architecture, OS, dependencies, exported
// symbols. They are read by the `ireepkg-inspect` tool (LLVM's Object
// library) in a child process, so that the ireepkg binary links no LLVM and
// a malformed file cannot take ireepkg down.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BINARY_INFO_H
#define IREEPKG_BINARY_INFO_H

#include "ireepkg/error.h"
#include "ireepkg/platform.h"

#include <optional>
#include <string>
#include <vector>

namespace ireepkg {

struct BinaryInfo {
  std::string path;
  /// "elf", "macho", "coff", "fatelf" or "unknown".
  std::string format;
  std::optional<Arch> arch; ///< empty when not one of ours (or fatelf)
  std::string machine;      ///< the file's own name for it, e.g. "EM_PPC64"
  /// "linux", "macos", "windows", "android" or "none" (ELF OSABI NONE with
  /// no interpreter: platform-independent).
  std::string os;
  bool is64 = false;
  bool littleEndian = true;
  /// "shared", "executable", "relocatable" or "other".
  std::string type;
  std::vector<std::string> needed; ///< DT_NEEDED / load commands / imports
  std::string interpreter;         ///< PT_INTERP, "" if none
  /// Defined, exported (dynamic, default/protected visibility) symbols,
  /// sorted. For fatelf, the union over images is not computed: empty.
  std::vector<std::string> exports;
  /// For "fatelf": the architectures of its records, in table order.
  std::vector<Arch> fatArchs;
  /// Non-empty when the file could not be read as a binary at all.
  std::string error;

  bool exportsSymbol(std::string_view name) const;
};

/// Inspects every path in one child process running `ireepkg-inspect`.
/// The tool is found beside the running executable, or via the
/// IREEPKG_INSPECT environment variable. Per-file problems land in
/// BinaryInfo::error; the Error is for when the tool itself fails.
Expected<std::vector<BinaryInfo>>
inspectBinaries(const std::vector<std::string> &paths);

/// Parses the tool's JSON output (exposed for tests).
Expected<std::vector<BinaryInfo>> parseInspectOutput(std::string_view json);

} // namespace ireepkg

#endif // IREEPKG_BINARY_INFO_H
