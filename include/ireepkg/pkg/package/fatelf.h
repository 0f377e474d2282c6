//===- ireepkg/pkg/package/fatelf.h - FatELF (.sos) files -------*- C++ -*-===//
//
// Multi-architecture embedded ELF files in IREE's FatELF v1 layout (see
// docs/fatelf.md): an 8-byte header, 24-byte records, then the ELF
// images, the first page-aligned after the table and each padded to 4096.
// IREE's runtime picks the record that matches the host when it loads a
// `.sos`; ireepkg writes, reads, splits and selects them.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_FATELF_H
#define IREEPKG_FATELF_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/platform.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg::fatelf {

inline constexpr uint32_t kMagic = 0x1F0E70FA;
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderSize = 8;
inline constexpr size_t kRecordSize = 24;
inline constexpr size_t kAlignment = 4096;

/// One record of the table. Encodings are FatELF's (word size 1 = 32-bit,
/// 2 = 64-bit; byte order 0 = big, 1 = little), not ELF's.
struct Record {
  uint16_t machine = 0; ///< ELF e_machine
  uint8_t osabi = 0;
  uint8_t osabiVersion = 0;
  uint8_t wordSize = 0;
  uint8_t byteOrder = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// The identity of one ELF image, read from its ELF header.
struct ElfIdentity {
  uint16_t machine = 0;
  uint8_t osabi = 0;
  uint8_t osabiVersion = 0;
  uint8_t wordSize = 0;  ///< FatELF encoding
  uint8_t byteOrder = 0; ///< FatELF encoding
};

/// Reads the identity of an ELF image from its first bytes. Errors name the
/// problem (not ELF, unknown class or data encoding, truncated header).
Expected<ElfIdentity> readElfIdentity(std::string_view image);

/// True if `data` starts with the FatELF magic.
bool isFatElf(std::string_view data);

/// Parses and checks a FatELF header and table: version 1, table inside the
/// file, every record's range inside the file. `name` is used in errors.
Expected<std::vector<Record>> parse(std::string_view data,
                                    const std::string &name);

/// `parse` without the check of the records' ranges, for a reader that
/// reports each record on its own (ireepkg-inspect): a record may point
/// outside `data`.
Expected<std::vector<Record>> parseRecords(std::string_view data,
                                           const std::string &name);

/// `parse` reading only the header and table of the file at `path` (the
/// records' ranges are checked against the file's size).
Expected<std::vector<Record>> readTable(const std::string &path);

/// Whether IREE's loader selects records of this ELF OS ABI (NONE, LINUX,
/// STANDALONE).
bool loadableOsAbi(uint8_t osabi);

/// The architectures `select` finds an image for, in table order, each
/// once: what a FatELF file can be activated for.
std::vector<Arch> loadableArchs(const std::vector<Record> &records);

/// Joins ELF images into one FatELF file (bytes). Refuses duplicates of the
/// same machine/word size/byte order, non-ELF input and more than 255 images.
/// `names` name the inputs in errors.
Expected<std::string> join(const std::vector<std::string_view> &images,
                           const std::vector<std::string> &names);

/// The record IREE's runtime would load on `arch` (first record whose
/// machine matches, osabi NONE/LINUX/STANDALONE, matching word size and
/// byte order), or a NotFound error listing what the file holds.
Expected<Record> select(const std::vector<Record> &records, Arch arch,
                        const std::string &name);

/// ELF e_machine and FatELF word size for an architecture.
uint16_t elfMachine(Arch arch);
uint8_t wordSize(Arch arch);
/// The architecture of an ELF machine/word size, if it is one of ours.
std::optional<Arch> archOf(uint16_t machine, uint8_t wordSize);

} // namespace ireepkg::fatelf

#endif // IREEPKG_FATELF_H
