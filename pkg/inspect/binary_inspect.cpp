//===- pkg/inspect/binary_inspect.cpp -------------------------------------===//
//
// What a native library is, via LLVM Object.
//
// Reads one file with LLVM's Object library and describes it as a JSON
// object with the fields of ireepkg::BinaryInfo (include/ireepkg/
// binary_info.h): format, architecture, OS, type, DT_NEEDED or imports, the
// interpreter and the exported symbols; for Mach-O whether the file carries
// a code signature. FatELF files are recognized by their magic and described
// by their records' architectures and, image by image, like any ELF file
// ("fat_images"), so that each image can be checked against its record; a
// universal Mach-O file is described slice by slice ("slices").
//
// Mach-O code signatures and slices, and COFF imports, exports and section
// bounds are read through the same checked Object API rather than by a
// reader of our own: LLVM's is the well-kept one Debian ships (llvm-22-dev),
// and it stays in this separate tool, which ireepkg's read-only commands
// (list, flags, env, info) never start.
//
// The input may be hostile: every llvm::Error is taken and reported as text,
// every pointer derived from the file is checked against the buffer, and
// only the checked, Expected-returning parts of the Object API are used.
//
//===----------------------------------------------------------------------===//
#include <llvm/BinaryFormat/COFF.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MachO.h>
#include <llvm/BinaryFormat/Magic.h>
#include <llvm/Object/Binary.h>
#include <llvm/Object/COFF.h>
#include <llvm/Object/ELF.h>
#include <llvm/Object/MachO.h>
#include <llvm/Object/MachOUniversal.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>

#include "ireepkg/pkg/package/fatelf.h"
#include "x86_scan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;
using namespace llvm::object;
using ojson = nlohmann::ordered_json;

namespace ireepkg::inspect {

namespace {

struct Info;

/// One record of a FatELF file and what its image is.
struct FatImage {
  size_t record = 0;
  std::optional<std::string> arch; ///< the record's, if one of ours
  std::string machine;             ///< the record's e_machine, named
  unsigned osabi = 0;
  bool is64 = false;
  bool littleEndian = true;
  std::shared_ptr<Info> image; ///< the image, inspected as an ELF file
};

/// What is learned about one file; turned into JSON at the end.
struct Info {
  std::string path;
  std::string format = "unknown";
  std::optional<std::string> arch;
  std::string machine;
  std::string os;
  bool is64 = false;
  bool littleEndian = true;
  std::string type = "other";
  std::vector<std::string> needed;
  std::string interpreter;
  std::vector<std::string> exports;
  std::vector<std::optional<std::string>> fatArchs;
  std::vector<FatImage> fatImages;
  bool codeSignature = false;
  std::vector<std::shared_ptr<Info>> slices; ///< of a universal Mach-O file
  /// An x86-64 ELF file's executable sections were disassembled
  /// (x86_scan.h); cpuUses is then what they were seen to need.
  bool cpuScanned = false;
  std::vector<inspect::X86Use> cpuUses;
  std::string error;

  /// Keeps the first problem; later ones are usually its consequences.
  void fail(const std::string &message) {
    if (error.empty())
      error = message;
  }
  void fail(llvm::Error e) { fail(toString(std::move(e))); }

  /// The file's object. An image of a FatELF file or a slice of a universal
  /// Mach-O file (`image` true) has no "path", "fat_archs", "fat_images" or
  /// "slices".
  ojson toJson(bool image = false) const {
    std::vector<std::string> sorted = exports;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    ojson out = ojson::object();
    if (!image)
      out["path"] = path;
    out["format"] = format;
    out["arch"] = arch ? ojson(*arch) : ojson(nullptr);
    out["machine"] = machine;
    out["os"] = os;
    out["is64"] = is64;
    out["little_endian"] = littleEndian;
    out["type"] = type;
    out["needed"] = needed;
    out["interpreter"] = interpreter;
    out["exports"] = sorted;
    out["code_signature"] = codeSignature;
    out["cpu_scanned"] = cpuScanned;
    out["cpu_uses"] = inspect::x86UsesJson(cpuUses);
    if (!image) {
      ojson fat = ojson::array();
      for (const auto &a : fatArchs)
        fat.push_back(a ? ojson(*a) : ojson(nullptr));
      out["fat_archs"] = fat;
      ojson images = ojson::array();
      for (const FatImage &f : fatImages)
        images.push_back({{"record", f.record},
                          {"arch", f.arch ? ojson(*f.arch) : ojson(nullptr)},
                          {"machine", f.machine},
                          {"osabi", f.osabi},
                          {"is64", f.is64},
                          {"little_endian", f.littleEndian},
                          {"image", f.image->toJson(true)}});
      out["fat_images"] = images;
      ojson slicesJson = ojson::array();
      for (const auto &slice : slices)
        slicesJson.push_back(slice->toJson(true));
      out["slices"] = slicesJson;
    }
    out["error"] = error;
    return out;
  }
};

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx",
                static_cast<unsigned long long>(value));
  return buf;
}

/// A NUL-terminated string at `p`, bounded by `end` (and not trusted to be
/// terminated before it).
std::string boundedString(const char *p, const char *end) {
  if (!p || p >= end)
    return {};
  return std::string(p, strnlen(p, static_cast<size_t>(end - p)));
}

//===----------------------------------------------------------------------===//
// Architectures
//===----------------------------------------------------------------------===//

std::optional<std::string> elfArch(uint16_t machine, bool is64) {
  switch (machine) {
  case ELF::EM_X86_64:
    return is64 ? std::optional<std::string>("x86_64") : std::nullopt;
  case ELF::EM_AARCH64:
    return is64 ? std::optional<std::string>("aarch64") : std::nullopt;
  case ELF::EM_RISCV:
    return std::string(is64 ? "riscv64" : "riscv32");
  case ELF::EM_ARM:
    return is64 ? std::nullopt : std::optional<std::string>("arm");
  default:
    return std::nullopt;
  }
}

std::string elfMachineName(uint16_t machine) {
  static const std::pair<uint16_t, const char *> kNames[] = {
      {ELF::EM_NONE, "EM_NONE"},
      {ELF::EM_SPARC, "EM_SPARC"},
      {ELF::EM_386, "EM_386"},
      {ELF::EM_68K, "EM_68K"},
      {ELF::EM_MIPS, "EM_MIPS"},
      {ELF::EM_PARISC, "EM_PARISC"},
      {ELF::EM_PPC, "EM_PPC"},
      {ELF::EM_PPC64, "EM_PPC64"},
      {ELF::EM_S390, "EM_S390"},
      {ELF::EM_ARM, "EM_ARM"},
      {ELF::EM_SH, "EM_SH"},
      {ELF::EM_SPARCV9, "EM_SPARCV9"},
      {ELF::EM_IA_64, "EM_IA_64"},
      {ELF::EM_X86_64, "EM_X86_64"},
      {ELF::EM_AVR, "EM_AVR"},
      {ELF::EM_XTENSA, "EM_XTENSA"},
      {ELF::EM_MSP430, "EM_MSP430"},
      {ELF::EM_HEXAGON, "EM_HEXAGON"},
      {ELF::EM_AARCH64, "EM_AARCH64"},
      {ELF::EM_CUDA, "EM_CUDA"},
      {ELF::EM_AMDGPU, "EM_AMDGPU"},
      {ELF::EM_RISCV, "EM_RISCV"},
      {ELF::EM_LANAI, "EM_LANAI"},
      {ELF::EM_BPF, "EM_BPF"},
      {ELF::EM_VE, "EM_VE"},
      {ELF::EM_CSKY, "EM_CSKY"},
      {ELF::EM_LOONGARCH, "EM_LOONGARCH"},
  };
  for (const auto &[value, name] : kNames)
    if (value == machine)
      return name;
  return hex(machine);
}

std::optional<std::string> machoArch(uint32_t cpuType) {
  switch (cpuType) {
  case MachO::CPU_TYPE_X86_64:
    return "x86_64";
  case MachO::CPU_TYPE_ARM64:
    return "aarch64";
  case MachO::CPU_TYPE_ARM:
    return "arm";
  default:
    return std::nullopt;
  }
}

std::string machoMachineName(uint32_t cpuType) {
  switch (cpuType) {
  case MachO::CPU_TYPE_X86:
    return "CPU_TYPE_X86";
  case MachO::CPU_TYPE_X86_64:
    return "CPU_TYPE_X86_64";
  case MachO::CPU_TYPE_ARM:
    return "CPU_TYPE_ARM";
  case MachO::CPU_TYPE_ARM64:
    return "CPU_TYPE_ARM64";
  case MachO::CPU_TYPE_ARM64_32:
    return "CPU_TYPE_ARM64_32";
  case MachO::CPU_TYPE_POWERPC:
    return "CPU_TYPE_POWERPC";
  case MachO::CPU_TYPE_POWERPC64:
    return "CPU_TYPE_POWERPC64";
  case MachO::CPU_TYPE_RISCV:
    return "CPU_TYPE_RISCV";
  default:
    return hex(cpuType);
  }
}

std::optional<std::string> coffArch(uint16_t machine) {
  switch (machine) {
  case COFF::IMAGE_FILE_MACHINE_AMD64:
    return "x86_64";
  case COFF::IMAGE_FILE_MACHINE_ARM64:
    return "aarch64";
  case COFF::IMAGE_FILE_MACHINE_ARMNT:
    return "arm";
  case COFF::IMAGE_FILE_MACHINE_RISCV64:
    return "riscv64";
  case COFF::IMAGE_FILE_MACHINE_RISCV32:
    return "riscv32";
  default:
    return std::nullopt;
  }
}

std::string coffMachineName(uint16_t machine) {
  static const std::pair<uint16_t, const char *> kNames[] = {
      {COFF::IMAGE_FILE_MACHINE_UNKNOWN, "IMAGE_FILE_MACHINE_UNKNOWN"},
      {COFF::IMAGE_FILE_MACHINE_AMD64, "IMAGE_FILE_MACHINE_AMD64"},
      {COFF::IMAGE_FILE_MACHINE_ARM, "IMAGE_FILE_MACHINE_ARM"},
      {COFF::IMAGE_FILE_MACHINE_ARMNT, "IMAGE_FILE_MACHINE_ARMNT"},
      {COFF::IMAGE_FILE_MACHINE_ARM64, "IMAGE_FILE_MACHINE_ARM64"},
      {COFF::IMAGE_FILE_MACHINE_ARM64EC, "IMAGE_FILE_MACHINE_ARM64EC"},
      {COFF::IMAGE_FILE_MACHINE_ARM64X, "IMAGE_FILE_MACHINE_ARM64X"},
      {COFF::IMAGE_FILE_MACHINE_I386, "IMAGE_FILE_MACHINE_I386"},
      {COFF::IMAGE_FILE_MACHINE_IA64, "IMAGE_FILE_MACHINE_IA64"},
      {COFF::IMAGE_FILE_MACHINE_THUMB, "IMAGE_FILE_MACHINE_THUMB"},
      {COFF::IMAGE_FILE_MACHINE_RISCV32, "IMAGE_FILE_MACHINE_RISCV32"},
      {COFF::IMAGE_FILE_MACHINE_RISCV64, "IMAGE_FILE_MACHINE_RISCV64"},
  };
  for (const auto &[value, name] : kNames)
    if (value == machine)
      return name;
  return hex(machine);
}

//===----------------------------------------------------------------------===//
// FatELF
//===----------------------------------------------------------------------===//

bool isFatElf(StringRef data) {
  return fatelf::isFatElf(std::string_view(data.data(), data.size()));
}

void inspectElfFile(StringRef data, Info &info);

/// The table, and each image (whose range lies inside the file) inspected
/// as an ELF file of its own.
void inspectFatElf(StringRef data, Info &info) {
  info.format = "fatelf";
  info.type = "other";
  // The one FatELF table reader (pkg/src/package/fatelf.cpp); each record's
  // range is checked here, so that the other images are still inspected.
  auto records =
      fatelf::parseRecords(std::string_view(data.data(), data.size()), "");
  if (!records)
    return info.fail(records.error().message);
  for (size_t i = 0; i < records->size(); ++i) {
    const fatelf::Record &r = (*records)[i];
    uint16_t machine = r.machine;
    uint8_t osabi = r.osabi;
    uint8_t wordSize = r.wordSize;
    uint8_t byteOrder = r.byteOrder;
    uint64_t offset = r.offset;
    uint64_t size = r.size;
    std::optional<std::string> arch;
    if (byteOrder == 1 && (wordSize == 1 || wordSize == 2))
      arch = elfArch(machine, wordSize == 2);
    info.fatArchs.push_back(arch);
    FatImage image;
    image.record = i;
    image.arch = arch;
    image.machine = elfMachineName(machine);
    image.osabi = osabi;
    image.is64 = wordSize == 2;
    image.littleEndian = byteOrder == 1;
    image.image = std::make_shared<Info>();
    if (offset > data.size() || size > data.size() - offset) {
      info.fail("FatELF record " + std::to_string(i) +
                " points outside the file");
      image.image->fail("the record points outside the file");
    } else {
      StringRef bytes = data.substr(offset, size);
      if (isFatElf(bytes))
        image.image->fail("a FatELF file inside a FatELF file");
      else if (!bytes.starts_with("\x7f"
                                  "ELF"))
        image.image->fail("not an ELF image");
      else
        inspectElfFile(bytes, *image.image);
    }
    info.fatImages.push_back(std::move(image));
  }
}

//===----------------------------------------------------------------------===//
// ELF
//===----------------------------------------------------------------------===//

/// DT_NEEDED names that mean "this links against a Linux system".
bool isLinuxSystemLibrary(StringRef name) {
  static const char *const kPrefixes[] = {
      "libc.so",   "libm.so",      "libdl.so",     "libpthread.so",
      "librt.so",  "libutil.so",   "libstdc++.so", "libgcc_s.so",
      "libc++.so", "libc++abi.so", "libunwind.so", "ld-linux",
      "ld-musl",   "libc.musl",    "linux-vdso",   "libatomic.so",
  };
  for (const char *p : kPrefixes)
    if (name.starts_with(p))
      return true;
  return false;
}

template <class ELFT>
void collectSymbols(const ELFFile<ELFT> &elf,
                    const typename ELFT::Shdr &section, Info &info) {
  auto symbols = elf.symbols(&section);
  if (!symbols)
    return info.fail(symbols.takeError());
  auto strtab = elf.getStringTableForSymtab(section);
  if (!strtab)
    return info.fail(strtab.takeError());
  bool first = true;
  for (const typename ELFT::Sym &sym : *symbols) {
    if (first) { // index 0 is the null symbol
      first = false;
      continue;
    }
    if (sym.st_shndx == ELF::SHN_UNDEF)
      continue;
    unsigned binding = sym.getBinding();
    if (binding != ELF::STB_GLOBAL && binding != ELF::STB_WEAK &&
        binding != ELF::STB_GNU_UNIQUE)
      continue;
    unsigned visibility = sym.getVisibility();
    if (visibility != ELF::STV_DEFAULT && visibility != ELF::STV_PROTECTED)
      continue;
    unsigned type = sym.getType();
    if (type == ELF::STT_SECTION || type == ELF::STT_FILE)
      continue;
    llvm::Expected<StringRef> name = sym.getName(*strtab);
    if (!name) {
      info.fail(name.takeError());
      continue;
    }
    if (!name->empty())
      info.exports.push_back(name->str());
  }
}

template <class ELFT> void inspectElf(StringRef data, Info &info) {
  using Elf_Dyn = typename ELFT::Dyn;
  auto created = ELFFile<ELFT>::create(data);
  if (!created)
    return info.fail(created.takeError());
  const ELFFile<ELFT> &elf = *created;
  const auto &header = elf.getHeader();
  info.is64 = ELFT::Is64Bits;
  info.littleEndian = ELFT::Endianness == llvm::endianness::little;
  info.machine = elfMachineName(header.e_machine);
  info.arch = elfArch(header.e_machine, info.is64);
  uint8_t osabi = header.e_ident[ELF::EI_OSABI];

  const char *begin = data.data();

  auto inFile = [&](uint64_t offset, uint64_t size) {
    return offset <= data.size() && size <= data.size() - offset;
  };

  // PT_INTERP, and the segments used below.
  bool hasInterp = false;
  std::vector<const typename ELFT::Phdr *> loads;
  const typename ELFT::Phdr *dynamicSegment = nullptr;
  if (auto phdrs = elf.program_headers()) {
    for (const auto &ph : *phdrs) {
      if (ph.p_type == ELF::PT_LOAD)
        loads.push_back(&ph);
      if (ph.p_type == ELF::PT_DYNAMIC && !dynamicSegment)
        dynamicSegment = &ph;
      if (ph.p_type != ELF::PT_INTERP)
        continue;
      hasInterp = true;
      if (!inFile(ph.p_offset, ph.p_filesz)) {
        info.fail("PT_INTERP lies outside the file");
        continue;
      }
      info.interpreter =
          boundedString(begin + ph.p_offset, begin + ph.p_offset + ph.p_filesz);
    }
  } else {
    info.fail(phdrs.takeError());
  }

  // Sections: the Android note, the symbol tables, the dynamic section.
  bool android = false;
  const typename ELFT::Shdr *dynsym = nullptr, *symtab = nullptr,
                            *dynamicSection = nullptr;
  auto sections = elf.sections();
  if (sections) {
    auto shstrtab = elf.getSectionStringTable(*sections);
    if (!shstrtab)
      info.fail(shstrtab.takeError());
    for (const auto &sec : *sections) {
      if (sec.sh_type == ELF::SHT_DYNSYM && !dynsym)
        dynsym = &sec;
      if (sec.sh_type == ELF::SHT_SYMTAB && !symtab)
        symtab = &sec;
      if (sec.sh_type == ELF::SHT_DYNAMIC && !dynamicSection)
        dynamicSection = &sec;
      if (!shstrtab)
        continue;
      llvm::Expected<StringRef> name = elf.getSectionName(sec, *shstrtab);
      if (!name) {
        info.fail(name.takeError());
        continue;
      }
      if (*name == ".note.android.ident")
        android = true;
    }
  } else {
    info.fail(sections.takeError());
  }

  // The dynamic table (PT_DYNAMIC, else the SHT_DYNAMIC section), read
  // here rather than with ELFFile::dynamicEntries so that every bound is
  // checked: DT_NEEDED, DT_SONAME, DT_FLAGS_1.
  bool hasSoname = false, pie = false;
  std::optional<std::pair<uint64_t, uint64_t>> dynamicRange;
  if (dynamicSegment)
    dynamicRange = {dynamicSegment->p_offset, dynamicSegment->p_filesz};
  else if (dynamicSection && dynamicSection->sh_type != ELF::SHT_NOBITS)
    dynamicRange = {dynamicSection->sh_offset, dynamicSection->sh_size};
  if (dynamicRange && !inFile(dynamicRange->first, dynamicRange->second)) {
    info.fail("the dynamic section lies outside the file");
    dynamicRange.reset();
  }
  if (dynamicRange) {
    std::optional<uint64_t> strtabAddr, strtabSize;
    std::vector<uint64_t> neededOffsets;
    const Elf_Dyn *entries =
        reinterpret_cast<const Elf_Dyn *>(begin + dynamicRange->first);
    uint64_t count = dynamicRange->second / sizeof(Elf_Dyn);
    for (uint64_t i = 0; i < count; ++i) {
      const Elf_Dyn &d = entries[i];
      if (d.getTag() == ELF::DT_NULL)
        break;
      switch (d.getTag()) {
      case ELF::DT_NEEDED:
        neededOffsets.push_back(d.getVal());
        break;
      case ELF::DT_SONAME:
        hasSoname = true;
        break;
      case ELF::DT_STRTAB:
        strtabAddr = d.getPtr();
        break;
      case ELF::DT_STRSZ:
        strtabSize = d.getVal();
        break;
      case ELF::DT_FLAGS_1:
        pie = (d.getVal() & ELF::DF_1_PIE) != 0;
        break;
      default:
        break;
      }
    }
    if (!neededOffsets.empty()) {
      // The string table: DT_STRTAB mapped through the PT_LOAD segments,
      // else the dynamic section's linked section.
      std::optional<std::pair<uint64_t, uint64_t>> strRange;
      if (strtabAddr) {
        for (const auto *ph : loads) {
          uint64_t addr = *strtabAddr;
          if (addr < ph->p_vaddr || addr - ph->p_vaddr >= ph->p_filesz)
            continue;
          uint64_t offset = ph->p_offset + (addr - ph->p_vaddr);
          if (offset < ph->p_offset || offset >= data.size())
            break;
          uint64_t avail = std::min<uint64_t>(
              data.size() - offset, ph->p_filesz - (addr - ph->p_vaddr));
          strRange = {offset,
                      strtabSize ? std::min(*strtabSize, avail) : avail};
          break;
        }
      }
      if (!strRange && dynamicSection && sections &&
          dynamicSection->sh_link < sections->size()) {
        const auto &link = (*sections)[dynamicSection->sh_link];
        if (link.sh_type == ELF::SHT_STRTAB &&
            inFile(link.sh_offset, link.sh_size))
          strRange = {link.sh_offset, link.sh_size};
      }
      if (!strRange) {
        info.fail("DT_NEEDED entries without a readable string table");
      } else {
        const char *strBegin = begin + strRange->first;
        const char *strEnd = strBegin + strRange->second;
        for (uint64_t off : neededOffsets) {
          if (off >= strRange->second) {
            info.fail("DT_NEEDED offset " + std::to_string(off) +
                      " is past the end of the dynamic string table");
            continue;
          }
          info.needed.push_back(boundedString(strBegin + off, strEnd));
        }
      }
    }
  }

  // What of the CPU an x86-64 file's code needs.
  if (sections && header.e_machine == ELF::EM_X86_64 && info.is64 &&
      info.littleEndian) {
    std::string problem = inspect::scanX86Elf(
        std::string_view(data.data(), data.size()), info.cpuUses);
    if (problem.empty())
      info.cpuScanned = true;
    else
      info.fail(problem);
  }

  // Exported symbols.
  if (dynsym)
    collectSymbols(elf, *dynsym, info);
  else if (symtab)
    collectSymbols(elf, *symtab, info);

  switch (header.e_type) {
  case ELF::ET_REL:
    info.type = "relocatable";
    break;
  case ELF::ET_EXEC:
    info.type = "executable";
    break;
  case ELF::ET_DYN:
    info.type = pie || (hasInterp && !hasSoname) ? "executable" : "shared";
    break;
  default:
    info.type = "other";
    break;
  }

  if (android) {
    info.os = "android";
  } else if (osabi == ELF::ELFOSABI_LINUX) {
    info.os = "linux";
  } else if (osabi == ELF::ELFOSABI_NONE) {
    bool linuxLibs = hasInterp;
    for (const std::string &n : info.needed)
      linuxLibs = linuxLibs || isLinuxSystemLibrary(n);
    info.os = linuxLibs ? "linux" : "none";
  } else if (osabi == ELF::ELFOSABI_STANDALONE) {
    info.os = "none";
  } else {
    info.os = "other";
  }
  // A damaged file: "no interpreter, no DT_NEEDED" may only mean "could not
  // read them", so do not claim it is platform-independent.
  if (!info.error.empty() && info.os == "none")
    info.os.clear();
}

void inspectElfFile(StringRef data, Info &info) {
  info.format = "elf";
  if (data.size() < ELF::EI_NIDENT)
    return info.fail("truncated ELF header");
  uint8_t elfClass = static_cast<uint8_t>(data[ELF::EI_CLASS]);
  uint8_t elfData = static_cast<uint8_t>(data[ELF::EI_DATA]);
  bool is64 = elfClass == ELF::ELFCLASS64;
  bool le = elfData == ELF::ELFDATA2LSB;
  if (elfClass != ELF::ELFCLASS32 && !is64)
    return info.fail("invalid ELF class " + std::to_string(elfClass));
  if (elfData != ELF::ELFDATA2MSB && !le)
    return info.fail("invalid ELF data encoding " + std::to_string(elfData));
  if (is64 && le)
    inspectElf<ELF64LE>(data, info);
  else if (is64)
    inspectElf<ELF64BE>(data, info);
  else if (le)
    inspectElf<ELF32LE>(data, info);
  else
    inspectElf<ELF32BE>(data, info);
}

//===----------------------------------------------------------------------===//
// Mach-O
//===----------------------------------------------------------------------===//

/// CSMAGIC_EMBEDDED_SIGNATURE: the blob LC_CODE_SIGNATURE points at.
constexpr uint32_t kEmbeddedSignatureMagic = 0xfade0cc0;

std::string stripUnderscore(StringRef name) {
  return (name.starts_with("_") ? name.drop_front() : name).str();
}

void inspectMachO(const MachOObjectFile &obj, Info &info) {
  info.format = "macho";
  info.os = "macos";
  const MachO::mach_header &header = obj.getHeader();
  info.is64 = obj.is64Bit();
  info.littleEndian = obj.isLittleEndian();
  info.machine = machoMachineName(header.cputype);
  info.arch = machoArch(header.cputype);
  switch (header.filetype) {
  case MachO::MH_DYLIB:
  case MachO::MH_BUNDLE:
    info.type = "shared";
    break;
  case MachO::MH_EXECUTE:
    info.type = "executable";
    break;
  case MachO::MH_OBJECT:
    info.type = "relocatable";
    break;
  default:
    info.type = "other";
    break;
  }

  for (const MachOObjectFile::LoadCommandInfo &lc : obj.load_commands()) {
    const char *cmdEnd = lc.Ptr + lc.C.cmdsize;
    switch (lc.C.cmd) {
    case MachO::LC_LOAD_DYLIB:
    case MachO::LC_LOAD_WEAK_DYLIB:
    case MachO::LC_REEXPORT_DYLIB:
    case MachO::LC_LAZY_LOAD_DYLIB:
    case MachO::LC_LOAD_UPWARD_DYLIB: {
      if (lc.C.cmdsize < sizeof(MachO::dylib_command))
        break;
      MachO::dylib_command dl = obj.getDylibIDLoadCommand(lc);
      if (dl.dylib.name < lc.C.cmdsize)
        info.needed.push_back(boundedString(lc.Ptr + dl.dylib.name, cmdEnd));
      break;
    }
    case MachO::LC_CODE_SIGNATURE: {
      // Signed: the command names an embedded signature (a SuperBlob with
      // CSMAGIC_EMBEDDED_SIGNATURE, big-endian) that lies inside the file.
      if (lc.C.cmdsize < sizeof(MachO::linkedit_data_command))
        break;
      MachO::linkedit_data_command cs = obj.getLinkeditDataLoadCommand(lc);
      StringRef data = obj.getData();
      if (cs.datasize < 4 || cs.dataoff > data.size() ||
          cs.datasize > data.size() - cs.dataoff)
        break;
      const auto *magic =
          reinterpret_cast<const uint8_t *>(data.data() + cs.dataoff);
      uint32_t value = uint32_t(magic[0]) << 24 | uint32_t(magic[1]) << 16 |
                       uint32_t(magic[2]) << 8 | uint32_t(magic[3]);
      if (value == kEmbeddedSignatureMagic)
        info.codeSignature = true;
      break;
    }
    case MachO::LC_LOAD_DYLINKER: {
      if (lc.C.cmdsize < sizeof(MachO::dylinker_command))
        break;
      MachO::dylinker_command dy = obj.getDylinkerCommand(lc);
      if (dy.name < lc.C.cmdsize)
        info.interpreter = boundedString(lc.Ptr + dy.name, cmdEnd);
      break;
    }
    default:
      break;
    }
  }

  llvm::Error err = llvm::Error::success();
  for (const ExportEntry &entry : obj.exports(err))
    info.exports.push_back(stripUnderscore(entry.name()));
  if (err)
    info.fail(std::move(err));
  if (!info.exports.empty())
    return;
  // No export trie (an object file): the defined external symbols.
  for (const SymbolRef &sym : obj.symbols()) {
    llvm::Expected<uint32_t> flags = sym.getFlags();
    if (!flags) {
      info.fail(flags.takeError());
      continue;
    }
    if (!(*flags & SymbolRef::SF_Global) ||
        (*flags & SymbolRef::SF_Undefined) || (*flags & SymbolRef::SF_Hidden))
      continue;
    llvm::Expected<StringRef> name = sym.getName();
    if (!name) {
      info.fail(name.takeError());
      continue;
    }
    if (!name->empty())
      info.exports.push_back(stripUnderscore(*name));
  }
}

void inspectUniversal(const MachOUniversalBinary &fat, Info &info) {
  // A universal binary: every slice described as a thin file ("slices"),
  // every slice's architecture, the rest from the first slice that reads.
  // A slice that does not read is described by its table entry and its
  // error; the others are still read.
  bool described = false;
  for (const MachOUniversalBinary::ObjectForArch &slice : fat.objects()) {
    info.fatArchs.push_back(machoArch(slice.getCPUType()));
    auto sliceInfo = std::make_shared<Info>();
    sliceInfo->format = "macho";
    sliceInfo->os = "macos";
    sliceInfo->machine = machoMachineName(slice.getCPUType());
    sliceInfo->arch = machoArch(slice.getCPUType());
    llvm::Expected<std::unique_ptr<MachOObjectFile>> obj =
        slice.getAsObjectFile();
    if (!obj) {
      std::string why = toString(obj.takeError());
      sliceInfo->fail(why);
      if (!described)
        info.fail(why);
    } else {
      inspectMachO(**obj, *sliceInfo);
      if (!described) {
        inspectMachO(**obj, info);
        described = true;
      }
    }
    info.slices.push_back(std::move(sliceInfo));
  }
  info.format = "macho";
  info.os = "macos";
  info.arch.reset();
  info.machine.clear();
}

//===----------------------------------------------------------------------===//
// COFF
//===----------------------------------------------------------------------===//

/// The NUL-terminated string at an RVA, checked against the file.
std::optional<std::string> rvaString(const COFFObjectFile &obj, uint32_t rva) {
  uintptr_t ptr = 0;
  if (llvm::Error e = obj.getRvaPtr(rva, ptr)) {
    consumeError(std::move(e));
    return std::nullopt;
  }
  StringRef data = obj.getData();
  const char *p = reinterpret_cast<const char *>(ptr);
  if (p < data.begin() || p >= data.end())
    return std::nullopt;
  return boundedString(p, data.end());
}

/// A pointer to `count` objects of `size` bytes at an RVA, or null when
/// they do not all lie inside the file.
const uint8_t *rvaArray(const COFFObjectFile &obj, uint32_t rva, uint64_t count,
                        size_t size) {
  uintptr_t ptr = 0;
  if (llvm::Error e = obj.getRvaPtr(rva, ptr)) {
    consumeError(std::move(e));
    return nullptr;
  }
  StringRef data = obj.getData();
  const char *p = reinterpret_cast<const char *>(ptr);
  if (p < data.begin() || p > data.end() ||
      count > static_cast<uint64_t>(data.end() - p) / size)
    return nullptr;
  return reinterpret_cast<const uint8_t *>(p);
}

uint32_t read32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

/// DLL names from an import directory whose entries are `entrySize` bytes
/// with the name RVA at `nameOffset`, ending at a zeroed entry.
void collectImports(const COFFObjectFile &obj, uint32_t directory,
                    size_t entrySize, size_t nameOffset, Info &info) {
  const data_directory *dir = obj.getDataDirectory(directory);
  if (!dir || dir->RelativeVirtualAddress == 0 || dir->Size == 0)
    return;
  uint64_t count = dir->Size / entrySize;
  uintptr_t ptr = 0;
  if (llvm::Error e = obj.getRvaPtr(dir->RelativeVirtualAddress, ptr)) {
    info.fail(std::move(e));
    return;
  }
  StringRef data = obj.getData();
  const char *p = reinterpret_cast<const char *>(ptr);
  if (p < data.begin() || p > data.end())
    return info.fail("the import table lies outside the file");
  count = std::min<uint64_t>(count,
                             static_cast<uint64_t>(data.end() - p) / entrySize);
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *entry = reinterpret_cast<const uint8_t *>(p) + i * entrySize;
    if (std::all_of(entry, entry + entrySize, [](uint8_t b) { return !b; }))
      break;
    if (std::optional<std::string> name =
            rvaString(obj, read32(entry + nameOffset)))
      info.needed.push_back(*name);
    else
      info.fail("an import names a DLL outside the file");
  }
}

void inspectCoff(const COFFObjectFile &obj, Info &info) {
  info.format = "coff";
  info.os = "windows";
  info.littleEndian = true;
  uint16_t machine = obj.getMachine();
  info.machine = coffMachineName(machine);
  info.arch = coffArch(machine);
  bool image = obj.getPE32Header() || obj.getPE32PlusHeader();
  info.is64 = obj.getPE32PlusHeader() != nullptr ||
              (!image && (machine == COFF::IMAGE_FILE_MACHINE_AMD64 ||
                          machine == COFF::IMAGE_FILE_MACHINE_ARM64 ||
                          machine == COFF::IMAGE_FILE_MACHINE_ARM64EC ||
                          machine == COFF::IMAGE_FILE_MACHINE_ARM64X ||
                          machine == COFF::IMAGE_FILE_MACHINE_IA64 ||
                          machine == COFF::IMAGE_FILE_MACHINE_RISCV64));
  if (obj.getCharacteristics() & COFF::IMAGE_FILE_DLL)
    info.type = "shared";
  else if (image)
    info.type = "executable";
  else
    info.type = "relocatable";

  if (image) {
    // Windows maps every section's raw data from the file: a file cut short
    // (LLVM's reader does not look at the data of sections it is not asked
    // for) does not load.
    StringRef data = obj.getData();
    unsigned index = 0;
    for (const SectionRef &section : obj.sections()) {
      const coff_section *s = obj.getCOFFSection(section);
      ++index;
      if (s->SizeOfRawData &&
          (s->PointerToRawData > data.size() ||
           s->SizeOfRawData > data.size() - s->PointerToRawData)) {
        // A long name is in the string table, which may be cut off too.
        llvm::Expected<StringRef> name = obj.getSectionName(s);
        std::string shown =
            name ? name->str() : std::string(s->Name, strnlen(s->Name, 8));
        if (!name)
          consumeError(name.takeError());
        return info.fail("section " + std::to_string(index) + " (" + shown +
                         ") lies outside the file (is the file cut short?)");
      }
    }
    // import directory entry: 20 bytes, Name RVA at 12; delay-load
    // descriptor: 32 bytes, Name RVA at 4.
    collectImports(obj, COFF::IMPORT_TABLE, 20, 12, info);
    collectImports(obj, COFF::DELAY_IMPORT_DESCRIPTOR, 32, 4, info);
    if (const export_directory_table_entry *table = obj.getExportTable()) {
      uint32_t count = table->NumberOfNamePointers;
      const uint8_t *names =
          count ? rvaArray(obj, table->NamePointerRVA, count, 4) : nullptr;
      if (count && !names)
        info.fail("the export name table lies outside the file");
      for (uint32_t i = 0; names && i < count; ++i) {
        if (std::optional<std::string> name =
                rvaString(obj, read32(names + 4 * i)))
          info.exports.push_back(*name);
        else
          info.fail("an export name lies outside the file");
      }
    }
    return;
  }
  // An object file: its defined external symbols.
  for (const SymbolRef &sym : obj.symbols()) {
    llvm::Expected<uint32_t> flags = sym.getFlags();
    if (!flags) {
      info.fail(flags.takeError());
      continue;
    }
    if (!(*flags & SymbolRef::SF_Global) || (*flags & SymbolRef::SF_Undefined))
      continue;
    llvm::Expected<StringRef> name = sym.getName();
    if (!name) {
      info.fail(name.takeError());
      continue;
    }
    if (!name->empty())
      info.exports.push_back(name->str());
  }
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

const char *describeMagic(file_magic magic) {
  switch (magic) {
  case file_magic::archive:
    return "a static archive, not a single binary";
  case file_magic::bitcode:
    return "LLVM bitcode, not a native binary";
  case file_magic::wasm_object:
    return "a WebAssembly module, not a native binary";
  case file_magic::tapi_file:
    return "a text-based library stub (.tbd), not a binary";
  case file_magic::pdb:
    return "a PDB debug-info file, not a binary";
  case file_magic::coff_import_library:
    return "a COFF import library, not a binary";
  default:
    return "an unsupported object format";
  }
}

void inspectBuffer(StringRef data, Info &info) {
  if (data.empty())
    return info.fail("empty file");
  if (isFatElf(data))
    return inspectFatElf(data, info);
  file_magic magic = identify_magic(data);
  switch (magic) {
  case file_magic::unknown:
    return info.fail("not an object file");
  case file_magic::elf:
  case file_magic::elf_relocatable:
  case file_magic::elf_executable:
  case file_magic::elf_shared_object:
  case file_magic::elf_core:
    return inspectElfFile(data, info);
  case file_magic::macho_universal_binary: {
    info.format = "macho";
    info.os = "macos";
    auto fat = MachOUniversalBinary::create(MemoryBufferRef(data, info.path));
    if (!fat)
      return info.fail(fat.takeError());
    return inspectUniversal(**fat, info);
  }
  case file_magic::macho_object:
  case file_magic::macho_executable:
  case file_magic::macho_fixed_virtual_memory_shared_lib:
  case file_magic::macho_core:
  case file_magic::macho_preload_executable:
  case file_magic::macho_dynamically_linked_shared_lib:
  case file_magic::macho_dynamic_linker:
  case file_magic::macho_bundle:
  case file_magic::macho_dynamically_linked_shared_lib_stub:
  case file_magic::macho_dsym_companion:
  case file_magic::macho_kext_bundle:
  case file_magic::macho_file_set: {
    info.format = "macho";
    info.os = "macos";
    auto obj =
        ObjectFile::createMachOObjectFile(MemoryBufferRef(data, info.path));
    if (!obj)
      return info.fail(obj.takeError());
    return inspectMachO(cast<MachOObjectFile>(**obj), info);
  }
  case file_magic::coff_object:
  case file_magic::pecoff_executable: {
    info.format = "coff";
    info.os = "windows";
    auto obj = COFFObjectFile::create(MemoryBufferRef(data, info.path));
    if (!obj)
      return info.fail(obj.takeError());
    return inspectCoff(**obj, info);
  }
  default:
    return info.fail(describeMagic(magic));
  }
}

} // namespace

/// Describes one file as a JSON object; never fails (problems land in the
/// object's "error" field).
ojson inspectFile(const std::string &path) {
  Info info;
  info.path = path;
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status)) {
    info.fail("cannot read: " + ec.message());
    return info.toJson();
  }
  if (status.type() == sys::fs::file_type::directory_file) {
    info.fail("is a directory");
    return info.toJson();
  }
  if (status.type() != sys::fs::file_type::regular_file) {
    info.fail("not a regular file");
    return info.toJson();
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    info.fail("cannot read: " + buffer.getError().message());
    return info.toJson();
  }
  inspectBuffer((*buffer)->getBuffer(), info);
  return info.toJson();
}

} // namespace ireepkg::inspect
