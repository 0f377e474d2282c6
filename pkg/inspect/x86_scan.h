//===- pkg/inspect/x86_scan.h - Which CPU features x86-64 code uses -------===//
//
// The part of ireepkg-inspect that disassembles x86-64 code (LLVM's MC
// disassembler, in x86_scan.cpp; no LLVM header here) and finds, for each
// CPU feature the code is seen to need, its first instruction. What is
// recognised, and why it is approximate, is said in x86_scan.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_INSPECT_X86_SCAN_H
#define IREEPKG_INSPECT_X86_SCAN_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg::inspect {

/// The first instruction seen to need one CPU feature.
struct X86Use {
  std::string feature;  ///< LLVM's spelling: "avx512f", "avx", "sse4.1", ...
  uint64_t address = 0; ///< the instruction's address (the section's + offset)
  uint64_t offset = 0;  ///< its offset in the file
  std::string section;  ///< the section it is in
  std::string symbol;   ///< the function it is in, "" if unknown
  std::string mnemonic; ///< Intel syntax, lower case
};

/// Disassembles `code` (an executable section at `address`, at `fileOffset`
/// in its file) and adds to `first`, keyed by the feature's name in LLVM's
/// spelling (as in a library key: "avx512f", "avx", "sse4.1", ...), the
/// first instruction needing each feature not already in `first`. Returns
/// "" or why the disassembler could not be set up.
std::string scanX86Code(std::string_view code, uint64_t address,
                        uint64_t fileOffset,
                        std::map<std::string, X86Use> &first);

/// Disassembles the executable sections of a 64-bit little-endian x86-64
/// ELF file `elf` and adds to `uses` the first instruction needing each CPU
/// feature, ordered by feature name, with its section and function (from
/// .symtab, else .dynsym). Returns "" or what could not be read.
std::string scanX86Elf(std::string_view elf, std::vector<X86Use> &uses);

/// `uses` as ireepkg-inspect's "cpu_uses" array.
nlohmann::ordered_json x86UsesJson(const std::vector<X86Use> &uses);

} // namespace ireepkg::inspect

#endif // IREEPKG_INSPECT_X86_SCAN_H
