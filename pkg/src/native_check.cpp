//===- native_check.cpp - Native libraries against their manifest --------===//
//
// The checks of native_check.h, shared by `pack` and `install`, and the
// inspection cache install uses: <cache>/inspect/v<N>/<aa>/<sha256>.json
// holds what ireepkg-inspect said about a file with that content. Entries
// are written (atomically, not durably) only by an install whose checks all
// passed, so a refused archive leaves nothing in the cache; a damaged entry
// is ignored and replaced.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/native_check.h"

#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/pkg/fatelf.h"
#include "ireepkg/pkg/file_util.h"

#include <nlohmann/json.hpp>

#include <map>

namespace ireepkg {

namespace {

inline constexpr const char *kQuerySymbol = "iree_hal_executable_plugin_query";

/// Bumped whenever what ireepkg-inspect reports (or how it is read)
/// changes, so that entries of an older inspector are not used.
inline constexpr int kInspectCacheVersion = 1;

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

} // namespace

void checkLibrary(const DeclaredLibrary &decl, const BinaryInfo &info,
                  const Location &where, DiagnosticList &diags) {
  Report bad = [&](const std::string &msg, const std::string &hint) {
    diags.error(where, msg, hint);
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
  if (info.arch != decl.arch || !info.littleEndian) {
    bad(subject + " is declared for " + std::string(archName(*decl.arch)) +
            " but it is " + describe(info),
        "");
    return;
  }
  if (!decl.os)
    checkFreestanding(subject, info, decl, bad);
  else if (decl.os == OS::Linux && info.os != "linux" && info.os != "none")
    bad(subject + " is declared for linux but is built for " + info.os, "");
  checkExport(subject, info, decl, bad);
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
                           const std::string &cacheRoot) {
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
      checkLibrary(c.decl, *c.info, c.where, diags);
    // Cached once everything passed: a refused install leaves nothing
    // behind, not even in the cache.
    if (!diags.hasErrors())
      for (size_t i = 0; i < paths.size(); ++i)
        cache.put(shas[i], (*infos)[i]);
  } else {
    for (const Check &c : checks)
      checkLibrary(c.decl, *c.info, c.where, diags);
  }
  if (!diags.hasErrors())
    return ok();
  Error e = makeError(ErrorCode::Invalid, diags).error();
  e.hint = "nothing was installed: the package's native libraries are not "
           "what its manifest declares";
  return Unexpected(std::move(e));
}

} // namespace ireepkg
