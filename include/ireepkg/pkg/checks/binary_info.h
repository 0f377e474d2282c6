//===- ireepkg/pkg/checks/binary_info.h - What a native library is --------===//
//
// Facts about native libraries (ELF, Mach-O, COFF, FatELF) that `pack` and
// `install` check against a manifest (see native_check.h): format,
// architecture, OS, dependencies, exported symbols, and for a FatELF file
// each record and what its image is. They are read by the `ireepkg-inspect`
// tool (LLVM's Object library) in a child process, so that the ireepkg binary
// links no LLVM and a malformed file cannot take ireepkg down.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BINARY_INFO_H
#define IREEPKG_BINARY_INFO_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/platform.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {

struct FatElfImage;

/// The first instruction of an x86-64 file seen to need one CPU feature.
struct CpuUse {
  std::string feature; ///< LLVM's spelling: "avx512f", "avx", "sse4.1", ...
  uint64_t address = 0;
  uint64_t offset = 0;  ///< in the file
  std::string section;  ///< e.g. ".text"
  std::string symbol;   ///< the function it is in, "" if unknown
  std::string mnemonic; ///< Intel syntax
};

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
  /// For "fatelf": the architectures of its records, in table order; for a
  /// universal (fat) Mach-O file, those of its slices.
  std::vector<Arch> fatArchs;
  /// For "fatelf": every record, in table order, with its image.
  std::vector<FatElfImage> fatImages;
  /// Mach-O: the file carries a code signature (LC_CODE_SIGNATURE naming
  /// an embedded signature blob inside the file; ad hoc counts).
  bool codeSignature = false;
  /// A universal (fat) Mach-O file: every slice, in table order, described
  /// as a thin Mach-O file (no path). The file's own fields are then those
  /// of the first slice that reads, except arch and machine (empty).
  std::vector<BinaryInfo> slices;
  /// An x86-64 ELF file's executable sections were disassembled; cpuUses
  /// holds, per CPU feature they were seen to need, its first instruction
  /// (approximate: see pkg/inspect/x86_scan.cpp).
  bool cpuScanned = false;
  std::vector<CpuUse> cpuUses;
  /// Non-empty when the file could not be read as a binary at all.
  std::string error;

  bool exportsSymbol(std::string_view name) const;
};

/// One record of a FatELF file and the ELF image it points at.
struct FatElfImage {
  size_t record = 0;        ///< index in the table
  std::optional<Arch> arch; ///< the record's, empty when not one of ours
  std::string machine;      ///< the record's machine, e.g. "EM_PPC64"
  unsigned osabi = 0;       ///< the record's ELF OS ABI
  bool is64 = false;        ///< the record's word size
  bool littleEndian = true; ///< the record's byte order
  /// The image itself as an ELF file (no path, fatArchs or fatImages).
  BinaryInfo image;
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
