//===- pack.cpp - Checking a package directory and writing its archive ---===//
//
// `ireepkg pack`: the manifest (strict), the files it names, the native
// libraries (inspected in a child process by ireepkg-inspect), optionally a
// FatELF of each embedded-elf plugin, then a reproducible archive.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/package.h"

#include "file_util.h"
#include "import_check.h"
#include "ireepkg/binary_info.h"
#include "ireepkg/fatelf.h"
#include "ireepkg/hash.h"
#include "pipeline_check.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

namespace {

inline constexpr const char *kQuerySymbol = "iree_hal_executable_plugin_query";

/// A native library the manifest declares, and what it must be.
struct DeclaredLibrary {
  std::string path;    ///< relative to the package
  std::string pointer; ///< where the manifest declares it
  std::optional<Arch> arch;
  std::optional<OS> os;   ///< empty: freestanding (embedded ELF)
  bool fat = false;       ///< a FatELF file
  std::string mustExport; ///< symbol that must be exported
  std::string what;       ///< "embedded-elf runtime plugin", ...
};

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

std::string describe(const BinaryInfo &info) {
  std::string arch = info.arch ? std::string(archName(*info.arch))
                               : (info.machine.empty() ? "unknown-architecture"
                                                       : info.machine);
  std::string fmt = info.format == "elf"     ? "ELF"
                    : info.format == "macho" ? "Mach-O"
                    : info.format == "coff"  ? "COFF"
                                             : info.format;
  return "an " + arch + " " + fmt;
}

/// Checks one inspected library against its declaration.
void checkLibrary(const DeclaredLibrary &decl, const BinaryInfo &info,
                  const JsonDocument &doc, DiagnosticList &diags) {
  Location where = doc.locate(decl.pointer);
  auto bad = [&](const std::string &msg, const std::string &hint = {}) {
    diags.error(where, "\"" + decl.path + "\" " + msg, hint);
  };
  if (!info.error.empty()) {
    bad("is not a native library: " + info.error);
    return;
  }
  if (decl.fat) {
    if (info.format != "fatelf")
      bad("is declared as a FatELF (\"fat\") file but is " + describe(info));
    return;
  }
  std::string want = expectedFormat(decl.os);
  if (info.format != want) {
    std::string wantName = want == "elf"     ? "ELF"
                           : want == "macho" ? "Mach-O"
                                             : "COFF";
    bad("is declared for " +
        (decl.os ? std::string(osName(*decl.os)) + "-" : std::string()) +
        std::string(archName(*decl.arch)) + " (a " + wantName +
        " file) but it is " +
        (info.format == "fatelf" ? std::string("a FatELF file")
                                 : describe(info)));
    return;
  }
  if (info.arch != decl.arch) {
    bad("is declared for " + std::string(archName(*decl.arch)) +
        " but it is " + describe(info));
    return;
  }
  if (!decl.os) {
    if (!info.needed.empty())
      bad("is an embedded ELF but needs shared libraries (" +
              info.needed.front() +
              (info.needed.size() > 1 ? ", ..." : "") + ")",
          "embedded plugins are freestanding: build with -ffreestanding "
          "-nostdlib and link with ld.lld -static -shared");
    if (!info.interpreter.empty())
      bad("is an embedded ELF but has a program interpreter (" +
              info.interpreter + ")",
          "embedded plugins are freestanding shared objects");
  } else if (decl.os == OS::Linux && info.os != "linux" && info.os != "none") {
    bad("is declared for linux but is built for " + info.os);
  }
  if (!decl.mustExport.empty() && !info.exportsSymbol(decl.mustExport))
    bad("does not export " + decl.mustExport + " (required of a " + decl.what +
            ")",
        "export it with default visibility, e.g. "
        "__attribute__((visibility(\"default\")))");
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
      if (p.format == RuntimeFormat::EmbeddedElf) {
        d.what = "embedded-elf runtime plugin";
        if (key == "fat")
          d.fat = true;
        else
          d.arch = parseArch(key);
      } else {
        auto plat = Platform::parse(key);
        d.what = "system-library runtime plugin";
        d.arch = plat->arch;
        d.os = plat->os;
      }
      out.push_back(d);
    }
  }
  return out;
}

/// Every regular file under `dir` (relative paths, sorted), refusing links
/// and special files.
Status collectFiles(const std::string &dir, std::vector<std::string> &out,
                    DiagnosticList &diags) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec)
    return Unexpected(fsutil::ioError("cannot read directory", dir,
                                      ec.value()));
  for (; it != end; it.increment(ec)) {
    if (ec)
      return Unexpected(fsutil::ioError("cannot read directory", dir,
                                        ec.value()));
    // Lexical: fs::relative would follow a symlink out of the package.
    std::string rel = it->path().lexically_relative(dir).generic_string();
    std::string top = rel.substr(0, rel.find('/'));
    if (top == ".git" || top == ".ireepkg" || top == ".iree-plugins") {
      it.disable_recursion_pending();
      continue;
    }
    auto st = it->symlink_status(ec);
    if (fs::is_symlink(st)) {
      diags.error(Location{(fs::path(dir) / rel).string(), 0, 0, "", "", ""},
                  "is a symbolic link; packages hold only regular files",
                  "replace the link with the file it points to");
      continue;
    }
    if (fs::is_directory(st))
      continue;
    if (!fs::is_regular_file(st)) {
      diags.error(Location{(fs::path(dir) / rel).string(), 0, 0, "", "", ""},
                  "is not a regular file; packages hold only regular files");
      continue;
    }
    if (rel.find('/') == std::string::npos && rel.size() > 8 &&
        rel.compare(rel.size() - 8, 8, ".ireepkg") == 0)
      continue; // an earlier pack output
    std::string problem = packagePathProblem(rel);
    if (!problem.empty()) {
      diags.error(Location{(fs::path(dir) / rel).string(), 0, 0, "", "", ""},
                  "cannot be packed: it is " + problem);
      continue;
    }
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return ok();
}

/// Writes `<plugin>.sos` beside each embedded-elf plugin's per-arch files and
/// adds it to the manifest text as library key "fat".
Status joinFatElfs(const std::string &dir, const std::string &workDir,
                   Manifest &manifest, std::string &manifestText,
                   std::vector<std::string> &files,
                   std::map<std::string, std::string> &generated) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(manifestText);
  for (size_t i = 0; i < manifest.runtimePlugins.size(); ++i) {
    RuntimePlugin &p = manifest.runtimePlugins[i];
    if (p.format != RuntimeFormat::EmbeddedElf || p.library.count("fat"))
      continue;
    std::vector<std::string> images, names;
    for (const auto &[arch, path] : p.library) {
      auto data = fsutil::readFile((fs::path(dir) / path).string(), 1u << 30);
      if (!data)
        return Unexpected(data.error());
      images.push_back(std::move(*data));
      names.push_back(path);
    }
    if (images.empty())
      continue;
    std::vector<std::string_view> views(images.begin(), images.end());
    auto fat = fatelf::join(views, names);
    if (!fat)
      return Unexpected(fat.error());
    std::string first = p.library.begin()->second;
    size_t slash = first.rfind('/');
    std::string rel = (slash == std::string::npos ? "" : first.substr(0, slash + 1)) +
                      p.name + ".sos";
    std::string full = (fs::path(workDir) / (p.name + ".sos")).string();
    if (Status s = fsutil::writeFileAtomic(full, *fat, 0644); !s)
      return s;
    generated[rel] = full;
    p.library["fat"] = rel;
    j["runtime"]["plugins"][i]["library"]["fat"] = rel;
    if (std::find(files.begin(), files.end(), rel) == files.end())
      files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  manifestText = j.dump(2) + "\n";
  return ok();
}

} // namespace

Expected<PackResult> packDirectory(const std::string &dir,
                                   const PackOptions &options) {
  std::string manifestPath = (fs::path(dir) / kManifestName).string();
  if (!fsutil::isDirectory(dir))
    return makeError(ErrorCode::NotFound, "not a directory",
                     Location{dir, 0, 0, "", "", ""},
                     "give the package directory (the one holding "
                     "ireeplugin.json)");
  auto text = fsutil::readFile(manifestPath, 4u << 20);
  if (!text)
    return Unexpected(text.error());
  auto doc = JsonDocument::parse(*text, manifestPath);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ParseOptions strict;
  PackResult result;
  result.manifest = parseManifest(*doc, strict, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  Manifest &m = result.manifest;

  std::vector<std::string> files;
  if (Status s = collectFiles(dir, files, diags); !s)
    return Unexpected(s.error());
  // Every file the manifest names exists (a directory for object paths).
  std::vector<std::pair<std::string, std::string>> named; // path, pointer
  for (const DeclaredLibrary &d : declaredLibraries(m))
    named.emplace_back(d.path, d.pointer);
  for (size_t i = 0; i < m.hooks.size(); ++i) {
    std::string base = "/compiler/hooks/" + std::to_string(i);
    if (!m.hooks[i].file.empty())
      named.emplace_back(m.hooks[i].file, base + "/file");
    if (!m.hooks[i].tool.empty())
      named.emplace_back(m.hooks[i].tool, base + "/tool");
    for (const auto &[arch, p] : m.hooks[i].paths)
      named.emplace_back(p, base + "/path/" + arch);
  }
  for (size_t i = 0; i < m.tests.size(); ++i)
    named.emplace_back(m.tests[i].program,
                       "/tests/" + std::to_string(i) + "/program");
  std::vector<bool> present(named.size());
  for (size_t i = 0; i < named.size(); ++i) {
    const auto &[p, ptr] = named[i];
    std::string full = (fs::path(dir) / p).string();
    std::error_code ec;
    auto st = fs::symlink_status(full, ec);
    bool isHookDir = ptr.find("/path/") != std::string::npos;
    if (isHookDir ? fs::is_directory(st) : fs::is_regular_file(st)) {
      present[i] = true;
      continue;
    }
    diags.error(doc->locate(ptr),
                "\"" + p + "\" does not exist in the package directory" +
                    (isHookDir ? " (it must be a directory)" : ""),
                "build it before packing, or fix the path");
  }
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);

  std::string manifestText = *text;
  // Files pack generates (FatELF) live in a scratch directory, never in the
  // user's package directory.
  std::map<std::string, std::string> generated; // package path -> scratch
  std::string workDir;
  auto cleanup = [&] {
    if (!workDir.empty())
      (void)fsutil::removeTree(workDir);
  };
  auto sourceOf = [&](const std::string &rel) {
    auto it = generated.find(rel);
    return it != generated.end() ? it->second
                                 : (fs::path(dir) / rel).string();
  };
  if (options.fatelf) {
    char tmpl[] = "/tmp/ireepkg-pack-XXXXXX";
    if (!::mkdtemp(tmpl))
      return Unexpected(fsutil::ioError("cannot create", tmpl, errno));
    workDir = tmpl;
    if (Status s = joinFatElfs(dir, workDir, m, manifestText, files, generated);
        !s) {
      cleanup();
      return Unexpected(s.error());
    }
  }

  if (!options.skipBinaryChecks) {
    std::vector<DeclaredLibrary> libs = declaredLibraries(m);
    std::vector<std::string> paths;
    for (const DeclaredLibrary &d : libs)
      paths.push_back(sourceOf(d.path));
    if (!paths.empty()) {
      auto infos = inspectBinaries(paths);
      if (!infos) {
        cleanup();
        return Unexpected(infos.error());
      }
      for (size_t i = 0; i < libs.size(); ++i)
        checkLibrary(libs[i], (*infos)[i], *doc, diags);
    }
    if (diags.hasErrors()) {
      cleanup();
      return makeError(ErrorCode::Invalid, diags);
    }
  }

  // Declared runtime imports, where this host can load the plugin.
  if (!options.skipBinaryChecks) {
    checkDeclaredImports(m, *doc, sourceOf, diags);
    if (diags.hasErrors()) {
      cleanup();
      return makeError(ErrorCode::Invalid, diags);
    }
  }

  // Hook pipelines, with MLIR's own parser where it knows the passes (the
  // package's own pass plugin loaded, once its library was inspected).
  auto pipelineCheck = checkPackPipelines(m, *doc, dir,
                                          !options.skipBinaryChecks, diags);
  if (!pipelineCheck || diags.hasErrors()) {
    cleanup();
    return pipelineCheck ? makeError(ErrorCode::Invalid, diags)
                         : Unexpected(pipelineCheck.error());
  }
  result.pipelineCheck = std::move(*pipelineCheck);

  // RECORD, then the archive: manifest, RECORD, the rest sorted.
  Record record;
  std::vector<ArchiveMember> members;
  members.push_back({kManifestName, manifestText, "", false});
  members.push_back({kRecordName, "", "", false});
  record.files.push_back({kManifestName, Sha256::hex(manifestText),
                          manifestText.size(), false});
  for (const std::string &rel : files) {
    if (rel == kManifestName)
      continue;
    std::string full = sourceOf(rel);
    auto sha = sha256File(full);
    if (!sha) {
      cleanup();
      return Unexpected(sha.error());
    }
    struct stat st;
    if (::stat(full.c_str(), &st) != 0) {
      cleanup();
      return Unexpected(fsutil::ioError("cannot stat", full, errno));
    }
    bool exec = (st.st_mode & 0111) != 0;
    record.files.push_back({rel, *sha, static_cast<uint64_t>(st.st_size), exec});
    members.push_back({rel, "", full, exec});
  }
  std::sort(record.files.begin(), record.files.end(),
            [](const RecordEntry &a, const RecordEntry &b) {
              return a.path < b.path;
            });
  members[1].content = serializeRecord(record);
  // Never make a package that install would refuse.
  if (std::string over = packageLimitProblem(record, members[1].content.size());
      !over.empty()) {
    cleanup();
    return makeError(ErrorCode::Invalid, "cannot pack: " + over,
                     Location{dir, 0, 0, "", m.name, ""},
                     "split the package, or leave files out of it");
  }

  std::string outDir = options.outputDir.empty() ? "." : options.outputDir;
  if (Status s = fsutil::makeDirs(outDir); !s) {
    cleanup();
    return Unexpected(s.error());
  }
  std::string name = m.name + "-" + m.version.str() + ".ireepkg";
  std::string out = (fs::path(outDir) / name).string();
  std::string tmp = (fs::path(outDir) / ("." + name + ".tmp." +
                                         std::to_string(::getpid())))
                        .string();
  Status written = writeArchive(tmp, members);
  cleanup(); // the .sos files live on only inside the archive
  if (!written)
    return Unexpected(written.error());
  if (Status s = fsutil::fsyncPath(tmp); !s)
    return Unexpected(s.error());
  if (Status s = fsutil::renameDurable(tmp, out); !s)
    return Unexpected(s.error());
  auto sha = sha256File(out);
  if (!sha)
    return Unexpected(sha.error());
  result.archivePath = out;
  result.sha256 = *sha;
  result.size = fs::file_size(out);
  result.record = std::move(record);
  for (const Diagnostic &d : diags.items())
    result.warnings.push_back(d);
  return result;
}

} // namespace ireepkg
