//===- fuzz_fatelf.cpp - Fuzzes FatELF (.sos) files ===//
//
// The bytes as a FatELF file (fatelf::parse), what IREE's runtime would
// select from it for each architecture, and the ELF identity of each image
// (fatelf::readElfIdentity, also applied to the bytes themselves).
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package/fatelf.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes = fuzz::bytes(data, size);
  (void)fatelf::readElfIdentity(bytes);
  if (!fatelf::isFatElf(bytes))
    return 0;
  auto records = fatelf::parse(bytes, "fuzz.sos");
  if (!records)
    return 0;
  for (const fatelf::Record &r : *records) {
    // parse() promises every record lies inside the file.
    if (r.offset > size || r.size > size - r.offset)
      fuzz::invariantFailed("a FatELF record outside the file", "");
    (void)fatelf::readElfIdentity(bytes.substr(r.offset, r.size));
    (void)fatelf::archOf(r.machine, r.wordSize);
  }
  for (Arch arch : {Arch::X86_64, Arch::AArch64, Arch::RiscV64, Arch::RiscV32,
                    Arch::Arm})
    (void)fatelf::select(*records, arch, "fuzz.sos");
  return 0;
}
