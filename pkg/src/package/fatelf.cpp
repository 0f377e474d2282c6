//===- pkg/src/package/fatelf.cpp - FatELF (.sos) files -------------------===//
//
// Reading, writing and selecting from IREE's FatELF v1 files: an 8-byte
// little-endian header, one 24-byte record per ELF image, then the images,
// the first page-aligned after the table and each padded to 4096 bytes.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/package/fatelf.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg::fatelf {

namespace {


// ELF identification (e_ident) and header offsets.
constexpr char kElfMagic[4] = {'\x7F', 'E', 'L', 'F'};
constexpr size_t kElfIdentSize = 16;
constexpr size_t kEiClass = 4;
constexpr size_t kEiData = 5;
constexpr size_t kEiOsAbi = 7;
constexpr size_t kEiAbiVersion = 8;
constexpr size_t kEMachineOffset = 18;
constexpr size_t kElf32HeaderSize = 52;
constexpr size_t kElf64HeaderSize = 64;
constexpr uint8_t kElfClass32 = 1;
constexpr uint8_t kElfClass64 = 2;
constexpr uint8_t kElfDataLsb = 1;
constexpr uint8_t kElfDataMsb = 2;

// FatELF encodings.
constexpr uint8_t kWordSize32 = 1;
constexpr uint8_t kWordSize64 = 2;
constexpr uint8_t kBigEndian = 0;
constexpr uint8_t kLittleEndian = 1;

// ELF OSABI values the runtime accepts.
constexpr uint8_t kOsAbiNone = 0;
constexpr uint8_t kOsAbiLinux = 3;
constexpr uint8_t kOsAbiStandalone = 255;

constexpr size_t kMaxRecords = 255;

uint64_t readLE(std::string_view data, size_t offset, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i)
    value |= uint64_t(static_cast<uint8_t>(data[offset + i])) << (8 * i);
  return value;
}

void writeLE(std::string &out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx",
                static_cast<unsigned long long>(value));
  return buf;
}

/// "x86_64", or "machine 0x15, 64-bit big-endian" for anything not ours.
std::string describe(uint16_t machine, uint8_t wordSize, uint8_t byteOrder) {
  std::optional<Arch> arch = archOf(machine, wordSize);
  if (arch && byteOrder == kLittleEndian)
    return std::string(archName(*arch));
  std::string bits = wordSize == kWordSize32 ? "32-bit"
                     : wordSize == kWordSize64
                         ? "64-bit"
                         : "word size " + std::to_string(wordSize);
  std::string order = byteOrder == kLittleEndian ? "little-endian"
                      : byteOrder == kBigEndian
                          ? "big-endian"
                          : "byte order " + std::to_string(byteOrder);
  return (arch ? std::string(archName(*arch)) : "machine " + hex(machine)) +
         ", " + bits + " " + order;
}

Unexpected invalid(const std::string &name, std::string message,
                   std::string hint = {}) {
  return makeError(ErrorCode::Invalid, std::move(message), Location::inFile(name),
                   std::move(hint));
}

} // namespace

uint16_t elfMachine(Arch arch) {
  switch (arch) {
  case Arch::X86_64:
    return 0x3E;
  case Arch::AArch64:
    return 0xB7;
  case Arch::RiscV64:
  case Arch::RiscV32:
    return 0xF3;
  case Arch::Arm:
    return 0x28;
  }
  return 0;
}

uint8_t wordSize(Arch arch) {
  switch (arch) {
  case Arch::RiscV32:
  case Arch::Arm:
    return kWordSize32;
  case Arch::X86_64:
  case Arch::AArch64:
  case Arch::RiscV64:
    return kWordSize64;
  }
  return 0;
}

std::optional<Arch> archOf(uint16_t machine, uint8_t size) {
  for (Arch arch :
       {Arch::X86_64, Arch::AArch64, Arch::RiscV64, Arch::RiscV32, Arch::Arm})
    if (elfMachine(arch) == machine && wordSize(arch) == size)
      return arch;
  return std::nullopt;
}

Expected<ElfIdentity> readElfIdentity(std::string_view image) {
  auto fail = [](std::string message) {
    return makeError(ErrorCode::Invalid, std::move(message));
  };
  if (!image.starts_with(std::string_view(kElfMagic, 4)))
    return fail("not an ELF file");
  if (image.size() < kElfIdentSize)
    return fail("truncated ELF header (" + std::to_string(image.size()) +
                " bytes)");
  ElfIdentity id;
  uint8_t elfClass = static_cast<uint8_t>(image[kEiClass]);
  uint8_t elfData = static_cast<uint8_t>(image[kEiData]);
  size_t headerSize;
  if (elfClass == kElfClass32) {
    id.wordSize = kWordSize32;
    headerSize = kElf32HeaderSize;
  } else if (elfClass == kElfClass64) {
    id.wordSize = kWordSize64;
    headerSize = kElf64HeaderSize;
  } else {
    return fail("unknown ELF class " + std::to_string(elfClass) +
                " (expected 1 for 32-bit or 2 for 64-bit)");
  }
  if (elfData == kElfDataLsb)
    id.byteOrder = kLittleEndian;
  else if (elfData == kElfDataMsb)
    id.byteOrder = kBigEndian;
  else
    return fail("unknown ELF data encoding " + std::to_string(elfData) +
                " (expected 1 for little-endian or 2 for big-endian)");
  if (image.size() < headerSize)
    return fail("truncated ELF header (" + std::to_string(image.size()) +
                " bytes, a " + (elfClass == kElfClass32 ? "32" : "64") +
                "-bit header needs " + std::to_string(headerSize) + ")");
  id.osabi = static_cast<uint8_t>(image[kEiOsAbi]);
  id.osabiVersion = static_cast<uint8_t>(image[kEiAbiVersion]);
  uint8_t lo = static_cast<uint8_t>(image[kEMachineOffset]);
  uint8_t hi = static_cast<uint8_t>(image[kEMachineOffset + 1]);
  id.machine = id.byteOrder == kLittleEndian ? uint16_t(lo | (hi << 8))
                                             : uint16_t(hi | (lo << 8));
  return id;
}

bool isFatElf(std::string_view data) {
  return data.size() >= 4 && readLE(data, 0, 4) == kMagic;
}

namespace {

/// `parse` of a file of `fileSize` bytes that starts with `data` (at least
/// its header and table, when the file has them); `checkRanges` false leaves
/// the records' ranges to the caller.
Expected<std::vector<Record>> parseTable(std::string_view data,
                                         uint64_t fileSize,
                                         const std::string &name,
                                         bool checkRanges = true) {
  static constexpr char kMagicBytes[4] = {'\xFA', '\x70', '\x0E', '\x1F'};
  size_t prefix = std::min<size_t>(data.size(), 4);
  if (prefix == 0 ||
      data.substr(0, prefix) != std::string_view(kMagicBytes, prefix))
    return invalid(name, "not a FatELF file (bad magic)",
                   "a FatELF file starts with the bytes FA 70 0E 1F");
  if (data.size() < kHeaderSize)
    return invalid(name, "truncated FatELF header (" +
                             std::to_string(fileSize) +
                             " bytes, the header needs " +
                             std::to_string(kHeaderSize) + ")");
  uint16_t version = static_cast<uint16_t>(readLE(data, 4, 2));
  if (version != kVersion)
    return invalid(name, "unsupported FatELF version " +
                             std::to_string(version) +
                             " (ireepkg and IREE read version 1)");
  size_t count = static_cast<uint8_t>(data[6]);
  if (count == 0)
    return invalid(name, "FatELF file has no records");
  size_t tableEnd = kHeaderSize + count * kRecordSize;
  if (data.size() < tableEnd)
    return invalid(
        name, "truncated FatELF record table (" + std::to_string(count) +
                  " records need " + std::to_string(tableEnd) +
                  " bytes, the file has " + std::to_string(fileSize) + ")");
  std::vector<Record> records;
  records.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    size_t at = kHeaderSize + i * kRecordSize;
    Record r;
    r.machine = static_cast<uint16_t>(readLE(data, at, 2));
    r.osabi = static_cast<uint8_t>(data[at + 2]);
    r.osabiVersion = static_cast<uint8_t>(data[at + 3]);
    r.wordSize = static_cast<uint8_t>(data[at + 4]);
    r.byteOrder = static_cast<uint8_t>(data[at + 5]);
    r.offset = readLE(data, at + 8, 8);
    r.size = readLE(data, at + 16, 8);
    if (checkRanges && (r.offset > fileSize || r.size > fileSize - r.offset))
      return invalid(
          name,
          "record " + std::to_string(i) + " (" +
              describe(r.machine, r.wordSize, r.byteOrder) +
              ") points outside the file: offset " + std::to_string(r.offset) +
              ", size " + std::to_string(r.size) + ", but the file has " +
              std::to_string(fileSize) + " bytes",
          "the file is truncated or corrupt; rebuild it with `ireepkg "
          "fatelf join`");
    records.push_back(r);
  }
  return records;
}

} // namespace

Expected<std::vector<Record>> parse(std::string_view data,
                                    const std::string &name) {
  return parseTable(data, data.size(), name);
}

Expected<std::vector<Record>> parseRecords(std::string_view data,
                                           const std::string &name) {
  return parseTable(data, data.size(), name, /*checkRanges=*/false);
}

Expected<std::vector<Record>> readTable(const std::string &path) {
  // O_NONBLOCK: a named pipe is refused below instead of waited on (reads of
  // a regular file do not block either way).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return makeError(ErrorCode::Io,
                     std::string("cannot read: ") + std::strerror(errno),
                     Location::inFile(path));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    ::close(fd);
    return makeError(ErrorCode::Io,
                     S_ISREG(st.st_mode)
                         ? std::string("cannot read: ") + std::strerror(e)
                         : "not a regular file",
                     Location::inFile(path));
  }
  std::string head(std::min<uint64_t>(static_cast<uint64_t>(st.st_size),
                                      kHeaderSize + kMaxRecords * kRecordSize),
                   '\0');
  size_t got = 0;
  while (got < head.size()) {
    ssize_t n = ::pread(fd, head.data() + got, head.size() - got,
                        static_cast<off_t>(got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  head.resize(got);
  return parseTable(head, static_cast<uint64_t>(st.st_size), path);
}

bool loadableOsAbi(uint8_t osabi) {
  return osabi == kOsAbiNone || osabi == kOsAbiLinux ||
         osabi == kOsAbiStandalone;
}

std::vector<Arch> loadableArchs(const std::vector<Record> &records) {
  std::vector<Arch> out;
  for (const Record &r : records) {
    std::optional<Arch> arch = archOf(r.machine, r.wordSize);
    if (arch && r.byteOrder == kLittleEndian && loadableOsAbi(r.osabi) &&
        std::find(out.begin(), out.end(), *arch) == out.end())
      out.push_back(*arch);
  }
  return out;
}

Expected<std::string> join(const std::vector<std::string_view> &images,
                           const std::vector<std::string> &names) {
  if (images.size() != names.size())
    return makeError(ErrorCode::Internal,
                     "fatelf::join: " + std::to_string(images.size()) +
                         " images but " + std::to_string(names.size()) +
                         " names");
  if (images.empty())
    return makeError(ErrorCode::Invalid, "no ELF images to join");
  if (images.size() > kMaxRecords)
    return makeError(ErrorCode::Invalid,
                     "cannot join " + std::to_string(images.size()) +
                         " images: a FatELF file holds at most " +
                         std::to_string(kMaxRecords));
  std::vector<ElfIdentity> ids;
  ids.reserve(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    Expected<ElfIdentity> id = readElfIdentity(images[i]);
    if (!id)
      return invalid(names[i], id.error().message);
    for (size_t j = 0; j < ids.size(); ++j)
      if (ids[j].machine == id->machine && ids[j].wordSize == id->wordSize &&
          ids[j].byteOrder == id->byteOrder)
        return invalid(names[i],
                       "same architecture (" +
                           describe(id->machine, id->wordSize, id->byteOrder) +
                           ") as " + names[j],
                       "a FatELF file holds one image per architecture");
    ids.push_back(*id);
  }

  size_t tableEnd = kHeaderSize + images.size() * kRecordSize;
  std::vector<uint64_t> offsets;
  uint64_t offset = alignUp(tableEnd, kAlignment);
  for (std::string_view image : images) {
    offsets.push_back(offset);
    offset = alignUp(offset + image.size(), kAlignment);
  }

  std::string out;
  out.reserve(offset);
  writeLE(out, kMagic, 4);
  writeLE(out, kVersion, 2);
  out.push_back(static_cast<char>(images.size()));
  out.push_back(0); // reserved
  for (size_t i = 0; i < images.size(); ++i) {
    writeLE(out, ids[i].machine, 2);
    out.push_back(static_cast<char>(ids[i].osabi));
    out.push_back(static_cast<char>(ids[i].osabiVersion));
    out.push_back(static_cast<char>(ids[i].wordSize));
    out.push_back(static_cast<char>(ids[i].byteOrder));
    out.push_back(0); // reserved0
    out.push_back(0); // reserved1
    writeLE(out, offsets[i], 8);
    writeLE(out, images[i].size(), 8);
  }
  for (size_t i = 0; i < images.size(); ++i) {
    out.resize(offsets[i], '\0');
    out.append(images[i]);
  }
  out.resize(offset, '\0');
  return out;
}

Expected<Record> select(const std::vector<Record> &records, Arch arch,
                        const std::string &name) {
  for (const Record &r : records) {
    if (r.machine == elfMachine(arch) && loadableOsAbi(r.osabi) &&
        r.wordSize == wordSize(arch) && r.byteOrder == kLittleEndian)
      return r;
  }
  std::string held;
  for (const Record &r : records) {
    held += held.empty() ? "" : "; ";
    held += describe(r.machine, r.wordSize, r.byteOrder);
    if (!loadableOsAbi(r.osabi))
      held += " (osabi " + std::to_string(r.osabi) + ")";
  }
  return makeError(
      ErrorCode::NotFound,
      "no image for " + std::string(archName(arch)) +
          " (the file holds: " + (held.empty() ? "nothing" : held) + ")",
      Location::inFile(name));
}

} // namespace ireepkg::fatelf
