//===- ireepkg/pkg/checks/native_check.h - Native libraries vs. manifest --===//
//
// The checks every native library a manifest declares must pass, run by
// `pack` on the package directory and by `install` (and `sync`, which
// installs through the same path) on each extracted package before the
// transaction commits: an archive can be made by hand or by another tool, so
// install is where they are enforced. See docs/manifest-reference.md
// ("Native library checks").
//
//  - the file is a native library of the declared kind: ELF for embedded-elf
//    and Linux/Android, Mach-O for macOS, COFF for Windows, FatELF for "fat";
//  - its architecture is the declared one (a platform's, or the key's);
//  - an embedded ELF is freestanding: no DT_NEEDED, no program interpreter;
//  - a system library for Linux is not built for another OS;
//  - it exports the entry point its kind requires (the IREE query function
//    for runtime plugins, the manifest's entry_point for compiler plugins);
//  - a Windows DLL imports only DLLs Windows finds (system DLLs): IREE
//    opens plugins with LoadLibraryA(path), which does not search the
//    plugin's own directory (a warning);
//  - a macOS library: a universal file has a slice for the declared
//    architecture, which gets the checks below; an arm64 file carries a
//    code signature (ad hoc is enough); dependencies outside /usr/lib and
//    /System go through @rpath or @loader_path (a warning);
//  - the code of an x86-64 ELF runtime build uses no instruction above the
//    CPU level or features its key declares, as far as a disassembly can
//    tell (pkg/inspect/x86_scan.cpp): AVX (VEX) code under the plain
//    `x86_64` key dies with SIGILL on an older CPU;
//  - a FatELF file holds at least one image, every record is for an
//    architecture IREE can load (ours, little-endian, OS ABI NONE, LINUX or
//    STANDALONE), no two records are for the same one, and every image gets
//    the checks of an embedded ELF against its record.
//
// Files are read by ireepkg-inspect (binary_info.h). At install, results are
// cached by the file's SHA-256 (from RECORD) under the package cache, so that
// installing a version again does not start ireepkg-inspect.
//
// The MLIR load checks of compiler plugins are not here: they run after
// these (pipeline_check.h), on packages whose native libraries passed.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_NATIVE_CHECK_H
#define IREEPKG_PKG_NATIVE_CHECK_H

#include "ireepkg/pkg/checks/binary_info.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/package/package.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {

/// A native library the manifest declares, and what it must be.
struct DeclaredLibrary {
  std::string path;    ///< relative to the package
  std::string pointer; ///< where the manifest declares it
  std::optional<Arch> arch;
  std::optional<OS> os;   ///< empty: freestanding (embedded ELF)
  bool fat = false;       ///< a FatELF file
  std::string mustExport; ///< symbol that must be exported
  std::string what;       ///< "embedded-elf runtime plugin", ...
  std::string package;    ///< the manifest's name
  std::string plugin;     ///< the runtime plugin's name, "" for compiler
  /// A runtime build for x86-64: its library key ("x86_64", "x86_64_v3",
  /// "linux-x86_64+avx512f"), whose CPU level its code must not exceed
  /// where the disassembly can tell; "" when not checked.
  std::string cpuKey;
};

/// Every native library `m` declares, compiler plugins first, in manifest
/// order.
std::vector<DeclaredLibrary> declaredLibraries(const Manifest &m);

/// Checks one inspected library against its declaration; problems are
/// added to `diags` at `where`.
void checkLibrary(const DeclaredLibrary &decl, const BinaryInfo &info,
                  const Location &where, DiagnosticList &diags);

/// Pack: inspects and checks every library `manifest` declares, the file
/// for each package path being `fileOf(path)`. Problems are located in
/// `doc`. The Error is for when ireepkg-inspect itself fails.
Status checkPackNativeLibraries(
    const Manifest &manifest, const JsonDocument &doc,
    const std::function<std::string(const std::string &)> &fileOf,
    DiagnosticList &diags);

/// A package the install in progress has extracted.
struct NativeCheckPackage {
  const Manifest *manifest = nullptr;
  const std::string *manifestText = nullptr; ///< for line:column
  const Record *record = nullptr;            ///< its files' SHA-256
  std::string dir;                           ///< where it was extracted
  std::string archive;                       ///< where it came from
};

/// Install: checks the native libraries of every package in `packages` (one
/// ireepkg-inspect run for every content not in the cache). `cacheRoot` is
/// the package cache's directory ("" for none); new inspection results are
/// added to it when every check passed. Problems name the archive's
/// manifest (line:column), the package, the member and the manifest
/// pointer; they come back as one Invalid Error. Warnings about the
/// libraries `platform` loads (a DLL's imports, a Mach-O file's fixed
/// dependency paths) are added to `warnings`; those of other platforms'
/// libraries are left to `pack`.
Status
checkStagedNativeLibraries(const std::vector<NativeCheckPackage> &packages,
                           const std::string &cacheRoot,
                           const Platform &platform, DiagnosticList &warnings);

/// The JSON object ireepkg-inspect prints for `info` (without the path for
/// a FatELF image): what the inspection cache stores. parseInspectOutput
/// reads it back.
std::string serializeBinaryInfo(const BinaryInfo &info);

} // namespace ireepkg

#endif // IREEPKG_PKG_NATIVE_CHECK_H
