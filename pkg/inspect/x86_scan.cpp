//===- pkg/inspect/x86_scan.cpp - Which CPU features x86-64 code uses -----===//
//
// A linear sweep of an executable section with LLVM's MC disassembler
// (initialised here, in ireepkg-inspect only). Each decoded instruction is
// classed by its encoding first, then by its mnemonic:
//
//  - EVEX (0x62 after the legacy prefixes; BOUND, its meaning outside
//    64-bit mode, does not exist in 64-bit mode): AVX-512, "avx512f"
//    (x86_64_v4);
//  - VEX (0xC4 / 0xC5; LES / LDS outside 64-bit mode): AVX, "avx"
//    (x86_64_v3), except the VEX-encoded BMI1 / BMI2 integer instructions
//    ("bmi", "bmi2", also x86_64_v3);
//  - the legacy-encoded instructions of the features x86_64_v2 and v3 add
//    to the baseline: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B,
//    LAHF/SAHF (v2), LZCNT, TZCNT, MOVBE (v3), by a short list of
//    mnemonics.
//
// This is approximate, and only where it can tell:
//  - a linear sweep may decode data placed between functions, or lose the
//    instruction boundaries after it (a byte that does not decode is
//    skipped), so that an instruction is found that never runs, or one is
//    missed;
//  - code reached only after a run-time CPU check (ifunc, cpuid dispatch,
//    function multi-versioning) is counted like any other: such a library
//    needs a key naming what its dispatched code uses;
//  - the mnemonic lists name the common instructions of each feature, not
//    all of them, and nothing beyond x86_64_v4's EVEX / VEX split (which
//    AVX-512 subset, AVX2 against AVX, FMA, F16C) is told apart.
//
//===----------------------------------------------------------------------===//
#include "x86_scan.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <memory>

namespace ireepkg::inspect {

namespace {

/// Legacy-encoded instructions of the features above the baseline, by
/// their Intel-syntax mnemonic. A name ending in '*' is a prefix.
struct MnemonicFeature {
  const char *mnemonic;
  const char *feature;
};
const MnemonicFeature kMnemonics[] = {
    // SSE3
    {"addsubpd", "sse3"},
    {"addsubps", "sse3"},
    {"haddpd", "sse3"},
    {"haddps", "sse3"},
    {"hsubpd", "sse3"},
    {"hsubps", "sse3"},
    {"lddqu", "sse3"},
    {"movddup", "sse3"},
    {"movshdup", "sse3"},
    {"movsldup", "sse3"},
    {"fisttp", "sse3"},
    // SSSE3
    {"pabs*", "ssse3"},
    {"palignr", "ssse3"},
    {"phadd*", "ssse3"},
    {"phsub*", "ssse3"},
    {"pmaddubsw", "ssse3"},
    {"pmulhrsw", "ssse3"},
    {"pshufb", "ssse3"},
    {"psign*", "ssse3"},
    // SSE4.1
    {"blendpd", "sse4.1"},
    {"blendps", "sse4.1"},
    {"blendvpd", "sse4.1"},
    {"blendvps", "sse4.1"},
    {"dppd", "sse4.1"},
    {"dpps", "sse4.1"},
    {"extractps", "sse4.1"},
    {"insertps", "sse4.1"},
    {"movntdqa", "sse4.1"},
    {"mpsadbw", "sse4.1"},
    {"packusdw", "sse4.1"},
    {"pblendvb", "sse4.1"},
    {"pblendw", "sse4.1"},
    {"pcmpeqq", "sse4.1"},
    {"pextrb", "sse4.1"},
    {"pextrd", "sse4.1"},
    {"pextrq", "sse4.1"},
    {"phminposuw", "sse4.1"},
    {"pinsrb", "sse4.1"},
    {"pinsrd", "sse4.1"},
    {"pinsrq", "sse4.1"},
    {"pmaxsb", "sse4.1"},
    {"pmaxsd", "sse4.1"},
    {"pmaxud", "sse4.1"},
    {"pmaxuw", "sse4.1"},
    {"pminsb", "sse4.1"},
    {"pminsd", "sse4.1"},
    {"pminud", "sse4.1"},
    {"pminuw", "sse4.1"},
    {"pmovsx*", "sse4.1"},
    {"pmovzx*", "sse4.1"},
    {"pmuldq", "sse4.1"},
    {"pmulld", "sse4.1"},
    {"ptest", "sse4.1"},
    {"round*", "sse4.1"},
    // SSE4.2
    {"crc32", "sse4.2"},
    {"pcmpestri", "sse4.2"},
    {"pcmpestrm", "sse4.2"},
    {"pcmpistri", "sse4.2"},
    {"pcmpistrm", "sse4.2"},
    {"pcmpgtq", "sse4.2"},
    // The rest of x86_64_v2 and the legacy-encoded part of v3
    {"popcnt", "popcnt"},
    {"cmpxchg16b", "cx16"},
    {"lahf", "sahf"},
    {"sahf", "sahf"},
    {"lzcnt", "lzcnt"},
    {"tzcnt", "bmi"},
    {"movbe", "movbe"},
};

/// The VEX-encoded instructions that are BMI1 / BMI2, not AVX.
const MnemonicFeature kVexBmi[] = {
    {"andn", "bmi"},  {"bextr", "bmi"}, {"blsi", "bmi"},  {"blsmsk", "bmi"},
    {"blsr", "bmi"},  {"bzhi", "bmi2"}, {"mulx", "bmi2"}, {"pdep", "bmi2"},
    {"pext", "bmi2"}, {"rorx", "bmi2"}, {"sarx", "bmi2"}, {"shlx", "bmi2"},
    {"shrx", "bmi2"},
};

const char *lookup(const MnemonicFeature *table, size_t n,
                   llvm::StringRef mnemonic) {
  for (size_t i = 0; i < n; ++i) {
    llvm::StringRef m = table[i].mnemonic;
    if (m.ends_with("*") ? mnemonic.starts_with(m.drop_back()) : mnemonic == m)
      return table[i].feature;
  }
  return nullptr;
}

bool isLegacyPrefix(uint8_t b) {
  switch (b) {
  case 0x66: // operand size
  case 0x67: // address size
  case 0xF0: // LOCK
  case 0xF2: // REPNE
  case 0xF3: // REP
  case 0x2E: // segment overrides
  case 0x36:
  case 0x3E:
  case 0x26:
  case 0x64:
  case 0x65:
    return true;
  default:
    return false;
  }
}

/// The MC objects for x86-64, made once per process.
struct Disassembler {
  std::unique_ptr<llvm::MCRegisterInfo> mri;
  std::unique_ptr<llvm::MCAsmInfo> mai;
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  std::unique_ptr<llvm::MCInstrInfo> mii;
  std::unique_ptr<llvm::MCContext> ctx;
  std::unique_ptr<llvm::MCDisassembler> disasm;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  std::string error;

  Disassembler() {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
    llvm::Triple triple("x86_64-unknown-linux-gnu");
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return;
    mri.reset(target->createMCRegInfo(triple));
    llvm::MCTargetOptions options;
    if (mri)
      mai.reset(target->createMCAsmInfo(*mri, triple, options));
    // Every feature, so that everything the code may use decodes.
    sti.reset(target->createMCSubtargetInfo(triple, "", "+avx512f"));
    mii.reset(target->createMCInstrInfo());
    if (!mri || !mai || !sti || !mii) {
      error = "cannot set up LLVM's x86-64 disassembler";
      return;
    }
    ctx = std::make_unique<llvm::MCContext>(triple, mai.get(), mri.get(),
                                            sti.get());
    disasm.reset(target->createMCDisassembler(*sti, *ctx));
    printer.reset(
        target->createMCInstPrinter(triple, /*Intel=*/1, *mai, *mii, *mri));
    if (!disasm || !printer)
      error = "cannot set up LLVM's x86-64 disassembler";
  }
};

} // namespace

std::string scanX86Code(std::string_view code, uint64_t address,
                        uint64_t fileOffset,
                        std::map<std::string, X86Use> &first) {
  static Disassembler d;
  if (!d.error.empty())
    return d.error;
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(code.data()),
                                code.size());
  auto note = [&](const char *feature, uint64_t at, llvm::StringRef mnemonic) {
    X86Use use;
    use.feature = feature;
    use.address = address + at;
    use.offset = fileOffset + at;
    use.mnemonic = mnemonic.str();
    first.try_emplace(feature, std::move(use));
  };
  uint64_t at = 0;
  while (at < bytes.size()) {
    llvm::MCInst inst;
    uint64_t size = 0;
    llvm::MCDisassembler::DecodeStatus status = d.disasm->getInstruction(
        inst, size, bytes.slice(at), address + at, llvm::nulls());
    if (status == llvm::MCDisassembler::Fail || size == 0) {
      ++at; // not an instruction: data, padding, or a lost boundary
      continue;
    }
    auto [text, unused] = d.printer->getMnemonic(inst);
    (void)unused;
    llvm::StringRef mnemonic = text ? llvm::StringRef(text).trim() : "";
    mnemonic = mnemonic.take_until([](char c) { return c == ' '; });
    uint64_t p = at;
    while (p < at + size && isLegacyPrefix(bytes[p]))
      ++p;
    uint8_t opcode = p < at + size ? bytes[p] : 0;
    if (opcode == 0x62) {
      note("avx512f", at, mnemonic);
    } else if (opcode == 0xC4 || opcode == 0xC5) {
      const char *bmi =
          lookup(kVexBmi, sizeof(kVexBmi) / sizeof(kVexBmi[0]), mnemonic);
      note(bmi ? bmi : "avx", at, mnemonic);
    } else if (const char *feature = lookup(
                   kMnemonics, sizeof(kMnemonics) / sizeof(kMnemonics[0]),
                   mnemonic)) {
      note(feature, at, mnemonic);
    }
    at += size;
  }
  return "";
}

namespace {

using ELFT = llvm::object::ELF64LE;

/// The function symbol of `section` (a symbol table) around `address`.
std::string functionAt(const llvm::object::ELFFile<ELFT> &elf,
                       const ELFT::Shdr &section, uint64_t address) {
  auto symbols = elf.symbols(&section);
  if (!symbols) {
    llvm::consumeError(symbols.takeError());
    return {};
  }
  auto strtab = elf.getStringTableForSymtab(section);
  if (!strtab) {
    llvm::consumeError(strtab.takeError());
    return {};
  }
  for (const ELFT::Sym &sym : *symbols) {
    if (sym.getType() != llvm::ELF::STT_FUNC ||
        sym.st_shndx == llvm::ELF::SHN_UNDEF)
      continue;
    uint64_t start = sym.st_value, size = sym.st_size;
    if (address < start || address - start >= std::max<uint64_t>(size, 1))
      continue;
    llvm::Expected<llvm::StringRef> name = sym.getName(*strtab);
    if (name)
      return name->str();
    llvm::consumeError(name.takeError());
  }
  return {};
}

} // namespace

std::string scanX86Elf(std::string_view data, std::vector<X86Use> &uses) {
  auto created = llvm::object::ELFFile<ELFT>::create(
      llvm::StringRef(data.data(), data.size()));
  if (!created)
    return llvm::toString(created.takeError());
  const llvm::object::ELFFile<ELFT> &elf = *created;
  auto sections = elf.sections();
  if (!sections)
    return llvm::toString(sections.takeError());
  llvm::StringRef names;
  if (auto shstrtab = elf.getSectionStringTable(*sections))
    names = *shstrtab;
  else
    llvm::consumeError(shstrtab.takeError());
  const ELFT::Shdr *symtab = nullptr, *dynsym = nullptr;
  std::map<std::string, X86Use> first;
  for (const ELFT::Shdr &sec : *sections) {
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB && !symtab)
      symtab = &sec;
    if (sec.sh_type == llvm::ELF::SHT_DYNSYM && !dynsym)
      dynsym = &sec;
    if (sec.sh_type != llvm::ELF::SHT_PROGBITS ||
        !(sec.sh_flags & llvm::ELF::SHF_EXECINSTR))
      continue;
    if (sec.sh_offset > data.size() ||
        sec.sh_size > data.size() - sec.sh_offset)
      return "an executable section lies outside the file";
    std::string name;
    if (auto n = elf.getSectionName(sec, names))
      name = n->str();
    else
      llvm::consumeError(n.takeError());
    std::map<std::string, X86Use> here;
    std::string problem = scanX86Code(data.substr(sec.sh_offset, sec.sh_size),
                                      sec.sh_addr, sec.sh_offset, here);
    if (!problem.empty())
      return problem;
    for (auto &[feature, use] : here) {
      use.section = name;
      first.try_emplace(feature, std::move(use));
    }
  }
  for (auto &[feature, use] : first) {
    if (symtab)
      use.symbol = functionAt(elf, *symtab, use.address);
    if (use.symbol.empty() && dynsym)
      use.symbol = functionAt(elf, *dynsym, use.address);
    uses.push_back(std::move(use));
  }
  return "";
}

nlohmann::ordered_json x86UsesJson(const std::vector<X86Use> &uses) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const X86Use &u : uses)
    out.push_back({{"feature", u.feature},
                   {"address", u.address},
                   {"offset", u.offset},
                   {"section", u.section},
                   {"symbol", u.symbol},
                   {"mnemonic", u.mnemonic}});
  return out;
}

} // namespace ireepkg::inspect
