//===- pkg/src/checks/native_check.cpp - Native libraries vs. manifest ----===//
//
// The checks of native_check.h, shared by `pack` and `install`, and the
// inspection cache install uses: <cache>/inspect/v<N>/<aa>/<sha256>.json
// holds what ireepkg-inspect said about a file with that content. Entries
// are written (atomically, not durably) only by an install whose checks all
// passed, so a refused archive leaves nothing in the cache; a damaged entry
// is ignored and replaced.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/checks/native_check.h"

#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

namespace ireepkg {

namespace {

inline constexpr const char *kQuerySymbol = "iree_hal_executable_plugin_query";

/// Bumped whenever what ireepkg-inspect reports (or how it is read)
/// changes, so that entries of an older inspector are not used.
inline constexpr int kInspectCacheVersion = 3;

std::string expectedFormat(std::optional<OS> os) {
  if (!os)
    return "elf";
  switch (*os) {
  case OS::MacOS:
    return "macho";
  case OS::Windows:
    return "coff";
  default:
    return "elf";
  }
}

/// "an x86_64 ELF", "an aarch64 big-endian ELF", "an EM_PPC64 ELF".
std::string describe(const BinaryInfo &info) {
  std::string arch = info.arch ? std::string(archName(*info.arch))
                               : (info.machine.empty() ? "unknown-architecture"
                                                       : info.machine);
  if (info.arch && !info.littleEndian)
    arch += " big-endian";
  std::string fmt = info.format == "elf"     ? "ELF"
                    : info.format == "macho" ? "Mach-O"
                    : info.format == "coff"  ? "COFF"
                                             : info.format;
  return "an " + arch + " " + fmt;
}

using Report = std::function<void(const std::string &, const std::string &)>;

/// "a" or "an" before `word` as it is read aloud: "an x86_64", "an i386",
/// "an aarch64", "a riscv64", "a CPU_TYPE_POWERPC".
std::string article(std::string_view word) {
  return !word.empty() && std::string_view("aeiouxAEIOUX").find(word[0]) !=
                              std::string_view::npos
             ? "an"
             : "a";
}

/// The short name of a COFF or Mach-O file's machine: ours by our name,
/// others by the one their toolchains use ("i386", "arm64ec"), else the
/// file's own ("CPU_TYPE_POWERPC").
std::string machineLabel(const BinaryInfo &info) {
  if (info.arch)
    return std::string(archName(*info.arch));
  static const std::pair<std::string_view, std::string_view> kShort[] = {
      {"IMAGE_FILE_MACHINE_I386", "i386"},
      {"IMAGE_FILE_MACHINE_ARM64EC", "arm64ec"},
      {"IMAGE_FILE_MACHINE_ARM64X", "arm64x"},
      {"IMAGE_FILE_MACHINE_IA64", "ia64"},
      {"CPU_TYPE_X86", "i386"},
      {"CPU_TYPE_ARM64_32", "arm64_32"},
      {"CPU_TYPE_POWERPC", "ppc"},
      {"CPU_TYPE_POWERPC64", "ppc64"},
  };
  for (const auto &[machine, label] : kShort)
    if (info.machine == machine)
      return std::string(label);
  return info.machine.empty() ? "unknown-architecture" : info.machine;
}

/// "an i386 DLL (IMAGE_FILE_MACHINE_I386)", "an x86_64 Mach-O library
/// (CPU_TYPE_X86_64)": a COFF or Mach-O file in its platform's terms.
std::string describeNative(const BinaryInfo &info) {
  bool coff = info.format == "coff";
  std::string kind = info.type == "shared" ? (coff ? "DLL" : "Mach-O library")
                     : info.type == "executable"
                         ? (coff ? "Windows executable" : "Mach-O executable")
                     : info.type == "relocatable"
                         ? (coff ? "COFF object file" : "Mach-O object file")
                         : (coff ? "COFF file" : "Mach-O file");
  std::string label = machineLabel(info);
  std::string out = article(label) + " " + label + " " + kind;
  if (!info.machine.empty() && info.machine != label)
    out += " (" + info.machine + ")";
  return out;
}

/// The hint for a COFF or Mach-O file of the wrong architecture.
std::string rebuildHint(OS os, Arch arch) {
  std::string name(archName(arch));
  if (os == OS::Windows) {
    std::string triple = arch == Arch::Arm ? "armv7" : name;
    return "build it for " + name + ", e.g. with clang --target=" + triple +
           "-w64-mingw32 (or " + triple +
           "-pc-windows-msvc), or declare it for the platform it is built for";
  }
  std::string triple = arch == Arch::AArch64 ? "arm64" : name;
  return "build it for " + name + ", e.g. with clang --target=" + triple +
         "-apple-macos11, or declare it for the platform it is built for";
}

/// The names `keep` selects, each once, in order, and the same joined with
/// ", " for a message.
std::pair<std::vector<std::string>, std::string>
distinctNames(const std::vector<std::string> &names,
              const std::function<bool(const std::string &)> &keep) {
  std::vector<std::string> kept;
  std::string list;
  for (const std::string &name : names)
    if (keep(name) && std::find(kept.begin(), kept.end(), name) == kept.end()) {
      list += (kept.empty() ? "" : ", ") + name;
      kept.push_back(name);
    }
  return {kept, list};
}

/// DLLs every Windows system has, in the system directory (or, for the
/// Visual C++ runtime, installed there by the redistributable IREE's own
/// Windows tools need too); compared without case. api-ms-win-* and
/// ext-ms-* API sets are system DLLs as well.
bool isWindowsSystemDll(std::string_view name) {
  static const char *const kSystem[] = {
      "advapi32.dll",
      "authz.dll",
      "bcrypt.dll",
      "cfgmgr32.dll",
      "comctl32.dll",
      "comdlg32.dll",
      "concrt140.dll",
      "crypt32.dll",
      "d3d11.dll",
      "d3d12.dll",
      "dbgcore.dll",
      "dbghelp.dll",
      "dwmapi.dll",
      "dxcore.dll",
      "dxgi.dll",
      "gdi32.dll",
      "imm32.dll",
      "iphlpapi.dll",
      "kernel32.dll",
      "kernelbase.dll",
      "mpr.dll",
      "msvcp140.dll",
      "msvcp140_1.dll",
      "msvcp140_2.dll",
      "msvcp140_atomic_wait.dll",
      "msvcp140_codecvt_ids.dll",
      "msvcrt.dll",
      "mswsock.dll",
      "ncrypt.dll",
      "netapi32.dll",
      "normaliz.dll",
      "ntdll.dll",
      "nvcuda.dll",
      "ole32.dll",
      "oleaut32.dll",
      "opengl32.dll",
      "powrprof.dll",
      "psapi.dll",
      "rpcrt4.dll",
      "secur32.dll",
      "setupapi.dll",
      "shell32.dll",
      "shlwapi.dll",
      "sspicli.dll",
      "ucrtbase.dll",
      "user32.dll",
      "userenv.dll",
      "uxtheme.dll",
      "vcomp140.dll",
      "vcruntime140.dll",
      "vcruntime140_1.dll",
      "version.dll",
      "vulkan-1.dll",
      "winhttp.dll",
      "wininet.dll",
      "winmm.dll",
      "ws2_32.dll",
      "wsock32.dll",
      "wtsapi32.dll",
  };
  const std::string folded = lower(name);
  if (folded.starts_with("api-ms-win-") || folded.starts_with("ext-ms-"))
    return true;
  for (const char *s : kSystem)
    if (folded == s)
      return true;
  return false;
}

/// A DLL's imports that Windows does not find beside it: IREE's runtime
/// opens a plugin with LoadLibraryA(path) (and compiler plugins are loaded
/// by their path too), and Windows then looks for the DLLs the plugin
/// imports by name only (the application's directory, the system
/// directories, PATH), never in the plugin's own directory.
void checkWindowsImports(const std::string &subject, const BinaryInfo &info,
                         const DeclaredLibrary &decl, const Report &warn) {
  auto [foreign, list] = distinctNames(info.needed, [](const std::string &dll) {
    return !isWindowsSystemDll(dll);
  });
  if (foreign.empty())
    return;
  bool one = foreign.size() == 1;
  warn(subject + " imports " + list + ", which Windows will not look for " +
           "beside the plugin: " +
           (decl.mustExport == kQuerySymbol
                ? "IREE loads plugins with LoadLibraryA(path)"
                : "compiler plugins are loaded by their path too") +
           ", and " + (one ? "a DLL" : "DLLs") + " a plugin imports " +
           (one ? "is" : "are") +
           " searched for in the application's directory, the system " +
           "directories and PATH, not in the plugin's own directory",
       "link " + std::string(one ? "it" : "them") +
           " statically into the plugin (MinGW's own runtime DLLs: "
           "-static-libgcc -static-libstdc++, or -static), or ship " +
           (one ? "it" : "them") +
           " next to the application that loads the plugin or in a "
           "directory on PATH");
}

/// What an embedded ELF (a file or a FatELF image) must be beyond its
/// architecture: freestanding, exporting `mustExport`. `subject` names it.
void checkFreestanding(const std::string &subject, const BinaryInfo &info,
                       const DeclaredLibrary &decl, const Report &bad) {
  if (!info.needed.empty())
    bad(subject + " is an embedded ELF but needs shared libraries (" +
            info.needed.front() + (info.needed.size() > 1 ? ", ..." : "") + ")",
        "embedded plugins are freestanding: build with -ffreestanding "
        "-nostdlib and link with ld.lld -static -shared");
  if (!info.interpreter.empty())
    bad(subject + " is an embedded ELF but has a program interpreter (" +
            info.interpreter + ")",
        "embedded plugins are freestanding shared objects");
}

void checkExport(const std::string &subject, const BinaryInfo &info,
                 const DeclaredLibrary &decl, const Report &bad);

/// What a thin Mach-O file (or one slice of a universal file) must be for
/// dlopen on macOS: exporting `mustExport`; signed, for arm64 (the kernel
/// does not run unsigned arm64 code; ad hoc is enough); finding its own
/// dependencies wherever the package is installed (through @rpath or
/// @loader_path, or in the system's /usr/lib and /System). `file` is the
/// package path, for the hints.
void checkMachO(const std::string &subject, const std::string &file,
                const BinaryInfo &info, const DeclaredLibrary &decl,
                const Report &bad, const Report &warn) {
  checkExport(subject, info, decl, bad);
  if (info.arch == Arch::AArch64 && !info.codeSignature)
    bad(subject + " is an arm64 Mach-O file without a code signature; macOS "
                  "does not load unsigned arm64 code",
        "sign it (ad hoc is enough): codesign -s - " + file +
            "; or link it with ld64.lld, which signs arm64 output ad hoc");
  auto [fixed, list] = distinctNames(info.needed, [](const std::string &dep) {
    return !dep.starts_with("@rpath/") && !dep.starts_with("@loader_path/") &&
           !dep.starts_with("/usr/lib/") && !dep.starts_with("/System/");
  });
  if (fixed.empty())
    return;
  bool one = fixed.size() == 1;
  std::string name = fixed.front().substr(fixed.front().rfind('/') + 1);
  warn(subject + " loads " + list + " by a path that is neither the " +
           "system's (/usr/lib, /System) nor the plugin's (@rpath, " +
           "@loader_path): the machine the package is installed on need not " +
           "have it",
       "ship " + std::string(one ? "it" : "them") +
           " in the package and refer to " + (one ? "it" : "them") +
           " through @loader_path or @rpath (e.g. install_name_tool -change " +
           fixed.front() + " @loader_path/" + name + " " + file +
           "), or link " + (one ? "it" : "them") + " statically");
}

/// A universal Mach-O file declared for one architecture: macOS loads that
/// architecture's slice, which gets the checks of a thin file.
void checkUniversal(const std::string &subject, const BinaryInfo &info,
                    const DeclaredLibrary &decl, const Report &bad,
                    const Report &warn) {
  for (const BinaryInfo &slice : info.slices) {
    if (slice.arch != decl.arch)
      continue;
    std::string sliceName =
        subject + " (its " + std::string(archName(*decl.arch)) + " slice)";
    if (!slice.error.empty())
      return bad(sliceName + " is not a readable Mach-O file: " + slice.error,
                 "");
    return checkMachO(sliceName, decl.path, slice, decl, bad, warn);
  }
  std::string held;
  for (const BinaryInfo &slice : info.slices)
    held += (held.empty() ? "" : ", ") + machineLabel(slice);
  bad(subject + " is declared for macos-" + std::string(archName(*decl.arch)) +
          " but it is a universal binary without " +
          article(archName(*decl.arch)) + " " +
          std::string(archName(*decl.arch)) + " slice (it holds " +
          (held.empty() ? std::string("none") : held) + ")",
      "add the slice (lipo -create <one file per architecture> -output " +
          decl.path +
          "), or declare the file only for the architectures it holds");
}

void checkExport(const std::string &subject, const BinaryInfo &info,
                 const DeclaredLibrary &decl, const Report &bad) {
  if (!decl.mustExport.empty() && !info.exportsSymbol(decl.mustExport))
    bad(subject + " does not export " + decl.mustExport + " (required of a " +
            decl.what + ")",
        info.format == "coff"
            ? "export it from the DLL: declare it __declspec(dllexport) (or "
              "list it in a .def file's EXPORTS)"
        : info.format == "macho"
            ? "export it with default visibility, e.g. "
              "__attribute__((visibility(\"default\"))); Mach-O names it "
              "with a leading underscore (_" +
                  decl.mustExport + ")"
            : "export it with default visibility, e.g. "
              "__attribute__((visibility(\"default\")))");
}

/// Every record of a FatELF file, and its image as an embedded ELF.
void checkFatElf(const std::string &subject, const BinaryInfo &info,
                 const DeclaredLibrary &decl, const Report &bad) {
  if (info.fatImages.empty()) {
    bad(subject + " is a FatELF file without images",
        "join the per-architecture files with `ireepkg fatelf join`");
    return;
  }
  std::map<Arch, size_t> seen;
  for (const FatElfImage &f : info.fatImages) {
    std::string image = subject + " image " + std::to_string(f.record);
    if (!f.arch || !f.littleEndian) {
      bad(image + " is for " + f.machine + " (" + (f.is64 ? "64" : "32") +
              "-bit " + (f.littleEndian ? "little" : "big") +
              "-endian), not an architecture embedded plugins are built for",
          "FatELF files for IREE hold images for x86_64, aarch64, riscv64, "
          "riscv32 and arm");
      continue;
    }
    image += " (" + std::string(archName(*f.arch)) + ")";
    if (!fatelf::loadableOsAbi(static_cast<uint8_t>(f.osabi))) {
      bad(image + " has ELF OS ABI " + std::to_string(f.osabi) +
              ", which IREE's loader never selects",
          "link the image with OS ABI NONE (ld.lld's default)");
      continue;
    }
    if (auto [it, fresh] = seen.emplace(*f.arch, f.record); !fresh) {
      bad(image + " is for the same architecture as image " +
              std::to_string(it->second) + "; IREE loads only the first",
          "a FatELF file holds one image per architecture");
      continue;
    }
    const BinaryInfo &img = f.image;
    if (!img.error.empty()) {
      bad(image + " is not a readable ELF image: " + img.error, "");
      continue;
    }
    if (img.format != "elf" || img.arch != f.arch || !img.littleEndian) {
      bad(image + " holds " + describe(img),
          "rebuild the file with `ireepkg fatelf join`, which writes each "
          "record from its image");
      continue;
    }
    checkFreestanding(image, img, decl, bad);
    checkExport(image, img, decl, bad);
  }
}

/// The bit of x86-64 feature `name` (cpu_level.h), 0 if not one.
uint64_t x86FeatureBit(const std::string &name) {
  for (const ireepkg_cpu_feature_t &f : kIreepkgCpuFeatures)
    if (name == f.name && std::string_view(f.arch) == "x86_64")
      return f.bit;
  return 0;
}

/// The x86-64 level (2..4) a feature first belongs to.
int x86Level(uint64_t bit) {
  return (bit & IREEPKG_CPU_X86_64_V2)   ? 2
         : (bit & IREEPKG_CPU_X86_64_V3) ? 3
                                         : 4;
}

/// What a build whose key requires `required` may use: those features,
/// and those every CPU having them has (an AVX-512 CPU is x86-64-v3, an
/// AVX CPU is x86-64-v2).
uint64_t allowedX86Features(uint64_t required) {
  uint64_t avx512 = 0, avx = 0;
  for (const ireepkg_cpu_feature_t &f : kIreepkgCpuFeatures) {
    std::string_view name = f.name;
    if (std::string_view(f.arch) != "x86_64")
      continue;
    if (name.substr(0, 6) == "avx512")
      avx512 |= f.bit;
    else if (name == "avx" || name == "avx2" || name == "fma" ||
             name == "f16c" || name == "avxvnni")
      avx |= f.bit;
  }
  uint64_t allowed = required;
  if (required & avx512)
    allowed |= IREEPKG_CPU_X86_64_V3 | x86FeatureBit("avx512f");
  if (required & (avx512 | avx))
    allowed |= IREEPKG_CPU_X86_64_V2 | x86FeatureBit("avx");
  return allowed;
}

/// The code of an x86-64 build against its key's CPU level: the first
/// instruction of the highest level the key does not allow is reported.
void checkCpuLevel(const std::string &subject, const BinaryInfo &info,
                   const DeclaredLibrary &decl, const std::string &package,
                   const Report &bad) {
  if (decl.cpuKey.empty() || !info.cpuScanned)
    return;
  const std::string &key = decl.cpuKey;
  ireepkg_cpu_key_t parsed =
      ireepkg_cpu_parse_key(key.data(), key.size(), false);
  if (parsed.problem != IREEPKG_CPU_KEY_OK)
    return; // the manifest check says so
  uint64_t allowed = allowedX86Features(parsed.required);
  const CpuUse *worst = nullptr;
  int worstLevel = 0;
  for (const CpuUse &u : info.cpuUses) {
    uint64_t bit = x86FeatureBit(u.feature);
    if (!bit || (bit & allowed))
      continue;
    int level = x86Level(bit);
    if (!worst || level > worstLevel ||
        (level == worstLevel && u.address < worst->address)) {
      worst = &u;
      worstLevel = level;
    }
  }
  if (!worst)
    return;
  std::string base = key.substr(0, parsed.base_size);
  std::string needed = base + "_v" + std::to_string(worstLevel);
  std::string needs =
      worst->feature == "avx512f" ? "is EVEX-encoded: it needs AVX-512 ("
      : worst->feature == "avx"   ? "is VEX-encoded: it needs AVX ("
                                  : "needs " + worst->feature + " (";
  needs += needed + ")";
  std::string where = worst->section.empty() ? "" : worst->section;
  if (!worst->symbol.empty())
    where += (where.empty() ? "in " : ", in ") + worst->symbol;
  std::string hint = parsed.required == 0
                         ? "build it with -march=x86-64 for the plain key \"" +
                               key + "\", or declare it under \"" + needed +
                               "\""
                         : "build it for what \"" + key +
                               "\" declares, or declare it under \"" + needed +
                               "\" (or a key naming +" + worst->feature + ")";
  char offset[20];
  char *offsetEnd =
      std::to_chars(offset, offset + sizeof(offset), worst->offset, 16).ptr;
  // `where` names the package at install; pack's locations do not.
  std::string owner = (package.empty() ? "" : "package '" + package + "', ") +
                      "runtime plugin '" + decl.plugin + "': ";
  bad(owner + subject + " uses instructions above its declared CPU level: " +
          worst->mnemonic + " at offset 0x" + std::string(offset, offsetEnd) +
          (where.empty() ? "" : " (" + where + ")") + " " + needs +
          ", but the build is declared under \"" + key + "\"",
      hint);
}

} // namespace

void checkLibrary(const DeclaredLibrary &decl, const BinaryInfo &info,
                  const Location &where, DiagnosticList &diags) {
  Report bad = [&](const std::string &msg, const std::string &hint) {
    diags.error(where, msg, hint);
  };
  Report warn = [&](const std::string &msg, const std::string &hint) {
    diags.warning(where, msg, hint);
  };
  std::string subject = "\"" + decl.path + "\"";
  if (!info.error.empty()) {
    bad(subject + " is not a native library: " + info.error, "");
    return;
  }
  if (decl.fat) {
    if (info.format != "fatelf") {
      bad(subject + " is declared as a FatELF (\"fat\") file but is " +
              describe(info),
          "");
      return;
    }
    checkFatElf(subject, info, decl, bad);
    return;
  }
  std::string want = expectedFormat(decl.os);
  if (info.format != want) {
    std::string wantName = want == "elf"     ? "ELF"
                           : want == "macho" ? "Mach-O"
                                             : "COFF";
    bad(subject + " is declared for " +
            (decl.os ? std::string(osName(*decl.os)) + "-" : std::string()) +
            std::string(archName(*decl.arch)) + " (a " + wantName +
            " file) but it is " +
            (info.format == "fatelf" ? std::string("a FatELF file")
                                     : describe(info)),
        "");
    return;
  }
  if (decl.os == OS::MacOS && !info.slices.empty())
    return checkUniversal(subject, info, decl, bad, warn);
  bool nativeTerms = decl.os == OS::Windows || decl.os == OS::MacOS;
  if (nativeTerms && info.arch != decl.arch) {
    bad(subject + " is declared for " + Platform{*decl.os, *decl.arch}.str() +
            " but it is " + describeNative(info),
        rebuildHint(*decl.os, *decl.arch));
    return;
  }
  if (info.arch != decl.arch || !info.littleEndian) {
    bad(subject + " is declared for " + std::string(archName(*decl.arch)) +
            " but it is " + describe(info),
        "");
    return;
  }
  if (decl.os == OS::Windows) {
    checkExport(subject, info, decl, bad);
    return checkWindowsImports(subject, info, decl, warn);
  }
  if (decl.os == OS::MacOS)
    return checkMachO(subject, decl.path, info, decl, bad, warn);
  if (!decl.os)
    checkFreestanding(subject, info, decl, bad);
  else if (decl.os == OS::Linux && info.os != "linux" && info.os != "none")
    bad(subject + " is declared for linux but is built for " + info.os, "");
  checkExport(subject, info, decl, bad);
  checkCpuLevel(subject, info, decl,
                where.package.empty() ? decl.package : std::string(), bad);
}

std::vector<DeclaredLibrary> declaredLibraries(const Manifest &m) {
  std::vector<DeclaredLibrary> out;
  for (size_t i = 0; i < m.compilerPlugins.size(); ++i) {
    const CompilerPlugin &p = m.compilerPlugins[i];
    for (const auto &[platform, path] : p.library) {
      auto plat = Platform::parse(platform);
      DeclaredLibrary d;
      d.path = path;
      d.pointer = "/compiler/plugins/" + std::to_string(i) + "/library/" +
                  jsonPointerEscape(platform);
      d.arch = plat->arch;
      d.os = plat->os;
      d.mustExport = p.entryPoint;
      d.what = std::string(compilerPluginKindName(p.kind)) + " plugin";
      out.push_back(d);
    }
  }
  for (size_t i = 0; i < m.runtimePlugins.size(); ++i) {
    const RuntimePlugin &p = m.runtimePlugins[i];
    for (const auto &[key, path] : p.library) {
      DeclaredLibrary d;
      d.path = path;
      d.pointer = "/runtime/plugins/" + std::to_string(i) + "/library/" +
                  jsonPointerEscape(key);
      d.mustExport = kQuerySymbol;
      d.package = m.name;
      d.plugin = p.name;
      // A build for a CPU level ("x86_64_v3") is checked as its base's.
      const std::string base = key.substr(
          0, ireepkg_cpu_parse_key(key.data(), key.size(), false).base_size);
      if (p.format == RuntimeFormat::EmbeddedElf) {
        d.what = "embedded-elf runtime plugin";
        if (key == "fat")
          d.fat = true;
        else
          d.arch = parseArch(base);
      } else {
        auto plat = Platform::parse(base);
        d.what = "system-library runtime plugin";
        d.arch = plat->arch;
        d.os = plat->os;
      }
      if (d.arch == Arch::X86_64)
        d.cpuKey = key;
      out.push_back(d);
    }
  }
  return out;
}

Status checkPackNativeLibraries(
    const Manifest &manifest, const JsonDocument &doc,
    const std::function<std::string(const std::string &)> &fileOf,
    DiagnosticList &diags) {
  std::vector<DeclaredLibrary> libs = declaredLibraries(manifest);
  if (libs.empty())
    return ok();
  std::vector<std::string> paths;
  for (const DeclaredLibrary &d : libs)
    paths.push_back(fileOf(d.path));
  auto infos = inspectBinaries(paths);
  if (!infos)
    return Unexpected(infos.error());
  for (size_t i = 0; i < libs.size(); ++i)
    checkLibrary(libs[i], (*infos)[i], doc.locate(libs[i].pointer), diags);
  return ok();
}

//===----------------------------------------------------------------------===//
// Install, with the inspection cache
//===----------------------------------------------------------------------===//

namespace {

nlohmann::ordered_json toJson(const BinaryInfo &info, bool image) {
  using ojson = nlohmann::ordered_json;
  ojson out = ojson::object();
  if (!image)
    out["path"] = info.path;
  out["format"] = info.format;
  out["arch"] =
      info.arch ? ojson(std::string(archName(*info.arch))) : ojson(nullptr);
  out["machine"] = info.machine;
  out["os"] = info.os;
  out["is64"] = info.is64;
  out["little_endian"] = info.littleEndian;
  out["type"] = info.type;
  out["needed"] = info.needed;
  out["interpreter"] = info.interpreter;
  out["exports"] = info.exports;
  out["code_signature"] = info.codeSignature;
  out["cpu_scanned"] = info.cpuScanned;
  ojson uses = ojson::array();
  for (const CpuUse &u : info.cpuUses)
    uses.push_back({{"feature", u.feature},
                    {"address", u.address},
                    {"offset", u.offset},
                    {"section", u.section},
                    {"symbol", u.symbol},
                    {"mnemonic", u.mnemonic}});
  out["cpu_uses"] = uses;
  if (!image) {
    ojson fat = ojson::array();
    for (Arch a : info.fatArchs)
      fat.push_back(std::string(archName(a)));
    out["fat_archs"] = fat;
    ojson images = ojson::array();
    for (const FatElfImage &f : info.fatImages)
      images.push_back({{"record", f.record},
                        {"arch", f.arch ? ojson(std::string(archName(*f.arch)))
                                        : ojson(nullptr)},
                        {"machine", f.machine},
                        {"osabi", f.osabi},
                        {"is64", f.is64},
                        {"little_endian", f.littleEndian},
                        {"image", toJson(f.image, true)}});
    out["fat_images"] = images;
    ojson slices = ojson::array();
    for (const BinaryInfo &slice : info.slices)
      slices.push_back(toJson(slice, true));
    out["slices"] = slices;
  }
  out["error"] = info.error;
  return out;
}

class InspectCache {
public:
  explicit InspectCache(const std::string &cacheRoot)
      : dir_(cacheRoot.empty() ? std::string()
                               : cacheRoot + "/inspect/v" +
                                     std::to_string(kInspectCacheVersion)) {}

  std::optional<BinaryInfo> get(const std::string &sha256) const {
    if (dir_.empty() || sha256.size() != 64)
      return std::nullopt;
    auto text = fsutil::readOwnCacheFile(file(sha256), 16u << 20);
    if (!text)
      return std::nullopt;
    auto infos = parseInspectOutput(*text);
    if (!infos || infos->size() != 1)
      return std::nullopt; // damaged: inspected again and replaced
    return std::move(infos->front());
  }

  /// Best effort: a cache entry that cannot be written is only missed.
  void put(const std::string &sha256, const BinaryInfo &info) const {
    if (dir_.empty() || sha256.size() != 64)
      return;
    if (!fsutil::makeDirs(dir_ + "/" + sha256.substr(0, 2)))
      return;
    nlohmann::ordered_json doc = {{"files", {toJson(info, false)}}};
    (void)fsutil::writeCacheFile(
        file(sha256),
        doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            "\n");
  }

private:
  std::string file(const std::string &sha256) const {
    return dir_ + "/" + sha256.substr(0, 2) + "/" + sha256 + ".json";
  }
  std::string dir_;
};

} // namespace

std::string serializeBinaryInfo(const BinaryInfo &info) {
  return toJson(info, false)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status
checkStagedNativeLibraries(const std::vector<NativeCheckPackage> &packages,
                           const std::string &cacheRoot,
                           const Platform &platform, DiagnosticList &warnings) {
  InspectCache cache(cacheRoot);
  struct Check {
    const NativeCheckPackage *package;
    DeclaredLibrary decl;
    Location where;
    std::string sha256;
    std::optional<BinaryInfo> info;
  };
  std::vector<Check> checks;
  DiagnosticList diags;
  for (const NativeCheckPackage &p : packages) {
    std::string file = p.archive + ":" + kManifestName;
    std::optional<JsonDocument> doc;
    if (p.manifestText)
      if (auto d = JsonDocument::parse(*p.manifestText, file))
        doc = std::move(*d);
    for (DeclaredLibrary &decl : declaredLibraries(*p.manifest)) {
      Location where = doc ? doc->locate(decl.pointer)
                           : Location{file, 0, 0, decl.pointer, "", ""};
      where.package = p.manifest->name;
      where.member = decl.path;
      const RecordEntry *entry = p.record ? p.record->find(decl.path) : nullptr;
      if (!entry) {
        diags.error(where, "\"" + decl.path + "\" is not in the package",
                    "the archive must hold every file its manifest names");
        continue;
      }
      checks.push_back({&p, std::move(decl), std::move(where), entry->sha256,
                        cache.get(entry->sha256)});
    }
  }
  // Errors for every library; warnings (how a library finds its own
  // dependencies) only for those the prefix's platform loads.
  auto check = [&](const Check &c) {
    DiagnosticList found;
    checkLibrary(c.decl, *c.info, c.where, found);
    bool loaded = c.decl.os && c.decl.arch &&
                  Platform{*c.decl.os, *c.decl.arch} == platform;
    for (const Diagnostic &d : found.items())
      if (d.severity == Severity::Error)
        diags.add(d);
      else if (loaded)
        warnings.add(d);
  };
  // One run of the inspector for every content not in the cache.
  std::map<std::string, size_t> bySha; // content -> index in `paths`
  std::vector<std::string> paths, shas;
  for (const Check &c : checks)
    if (!c.info && bySha.emplace(c.sha256, paths.size()).second) {
      paths.push_back(c.package->dir + "/" + c.decl.path);
      shas.push_back(c.sha256);
    }
  if (!paths.empty()) {
    auto infos = inspectBinaries(paths);
    if (!infos)
      return Unexpected(infos.error());
    for (Check &c : checks)
      if (!c.info)
        c.info = (*infos)[bySha.at(c.sha256)];
    for (const Check &c : checks)
      check(c);
    // Cached once everything passed: a refused install leaves nothing
    // behind, not even in the cache.
    if (!diags.hasErrors())
      for (size_t i = 0; i < paths.size(); ++i)
        cache.put(shas[i], (*infos)[i]);
  } else {
    for (const Check &c : checks)
      check(c);
  }
  if (!diags.hasErrors())
    return ok();
  Error e = makeError(ErrorCode::Invalid, diags).error();
  e.hint = "nothing was installed: the package's native libraries are not "
           "what its manifest declares";
  return Unexpected(std::move(e));
}

} // namespace ireepkg
