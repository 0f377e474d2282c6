//===- pkg/src/package/pack.cpp - Checking a package, writing its archive -===//
//
// `ireepkg pack`: the manifest (strict), the files it names, the native
// libraries (native_check.h: inspected in a child process by
// ireepkg-inspect), optionally a FatELF of each embedded-elf plugin, then a
// reproducible archive.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/state.h"

#include "ireepkg/pkg/checks/binary_info.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/checks/native_check.h"
#include "checks/pipeline_check.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

namespace {

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
      diags.error(Location::inFile((fs::path(dir) / rel).string()),
                  "is a symbolic link; packages hold only regular files",
                  "replace the link with the file it points to");
      continue;
    }
    if (fs::is_directory(st))
      continue;
    if (!fs::is_regular_file(st)) {
      diags.error(Location::inFile((fs::path(dir) / rel).string()),
                  "is not a regular file; packages hold only regular files");
      continue;
    }
    if (rel.find('/') == std::string::npos && rel.size() > 8 &&
        rel.compare(rel.size() - 8, 8, ".ireepkg") == 0)
      continue; // an earlier pack output
    std::string problem = packagePathProblem(rel);
    if (!problem.empty()) {
      diags.error(Location::inFile((fs::path(dir) / rel).string()),
                  "cannot be packed: it is " + problem);
      continue;
    }
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return ok();
}

/// Whether the manifest still names `rel`: a declared library, a hook's
/// file or tool, or a file under a hook's object directory.
bool stillNamed(const Manifest &m, const std::string &rel) {
  for (const DeclaredLibrary &d : declaredLibraries(m))
    if (d.path == rel)
      return true;
  for (const Hook &h : m.hooks) {
    if (h.file == rel || h.tool == rel)
      return true;
    for (const auto &[key, path] : h.paths)
      if (path == rel || rel.starts_with(path + "/"))
        return true;
  }
  return false;
}

/// Joins the per-architecture files of each embedded-elf plugin that has no
/// "fat" file into `<plugin>.sos` (beside the first of them), which becomes
/// the plugin's library: {"fat": "<dir>/<plugin>.sos"}, beside the builds
/// for CPU levels ("x86_64_v3"), which stay separate files (a FatELF holds
/// one image per architecture). The joined
/// files leave the archive (the .sos holds them byte for byte; `ireepkg
/// fatelf split` gives them back) unless the manifest names them elsewhere.
/// The manifest text is rewritten only when something was joined.
Status joinFatElfs(const std::string &dir, const std::string &workDir,
                   Manifest &manifest, std::string &manifestText,
                   std::vector<std::string> &files,
                   std::map<std::string, std::string> &generated) {
  nlohmann::ordered_json j;
  std::vector<std::string> joined;
  for (size_t i = 0; i < manifest.runtimePlugins.size(); ++i) {
    RuntimePlugin &p = manifest.runtimePlugins[i];
    if (p.format != RuntimeFormat::EmbeddedElf || p.library.count("fat") ||
        p.library.empty())
      continue;
    std::vector<std::string> images, names;
    std::map<std::string, std::string> levels; // x86_64_v3: not joined
    for (const auto &[arch, path] : p.library) {
      if (ireepkg_cpu_parse_key(arch.data(), arch.size(), false).base_size !=
          arch.size()) {
        levels.emplace(arch, path);
        continue;
      }
      auto data = fsutil::readFile((fs::path(dir) / path).string(), 1u << 30);
      if (!data)
        return Unexpected(data.error());
      images.push_back(std::move(*data));
      names.push_back(path);
    }
    if (names.empty())
      continue;
    std::vector<std::string_view> views(images.begin(), images.end());
    auto fat = fatelf::join(views, names);
    if (!fat)
      return Unexpected(fat.error());
    std::string first = names.front();
    size_t slash = first.rfind('/');
    std::string rel =
        (slash == std::string::npos ? "" : first.substr(0, slash + 1)) +
        p.name + ".sos";
    std::string full = (fs::path(workDir) / (p.name + ".sos")).string();
    if (Status s = fsutil::writeFileAtomic(full, *fat, 0644); !s)
      return s;
    generated[rel] = full;
    joined.insert(joined.end(), names.begin(), names.end());
    p.library = levels;
    p.library.emplace("fat", rel);
    if (j.is_null())
      j = nlohmann::ordered_json::parse(manifestText);
    nlohmann::ordered_json library = {{"fat", rel}};
    for (const auto &[key, path] : levels)
      library[key] = path;
    j["runtime"]["plugins"][i]["library"] = library;
    if (std::find(files.begin(), files.end(), rel) == files.end())
      files.push_back(rel);
  }
  if (j.is_null())
    return ok(); // nothing joined: the manifest stays as written
  std::erase_if(files, [&](const std::string &f) {
    return std::find(joined.begin(), joined.end(), f) != joined.end() &&
           !stillNamed(manifest, f);
  });
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
                     Location::inFile(dir),
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
    for (const auto &[key, p] : m.hooks[i].paths)
      named.emplace_back(p, base +
                                (m.hooks[i].point == HookPoint::TuningSpec
                                     ? "/targets/"
                                     : "/path/") +
                                jsonPointerEscape(key));
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
  // The native libraries as the manifest declares them (before any join,
  // so that problems point at what the author wrote).
  if (!options.skipBinaryChecks) {
    if (Status s = checkPackNativeLibraries(m, *doc, sourceOf, diags); !s)
      return Unexpected(s.error());
    if (diags.hasErrors())
      return makeError(ErrorCode::Invalid, diags);
  }

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
    // The joined files as install will see them (each record comes from its
    // image's own header, which the checks above did not all look at).
    if (!generated.empty() && !options.skipBinaryChecks) {
      DiagnosticList again; // its warnings were given by the first run
      if (Status s = checkPackNativeLibraries(m, *doc, sourceOf, again); !s) {
        cleanup();
        return Unexpected(s.error());
      }
      for (const Diagnostic &d : again.items())
        if (d.severity == Severity::Error)
          diags.add(d);
      if (diags.hasErrors()) {
        cleanup();
        return makeError(ErrorCode::Invalid, diags);
      }
    }
  }

  // Declared runtime imports, where this host can load the plugin.
  if (!options.skipBinaryChecks) {
    // Dynamic compiler plugins: their id and ABI hash, from the library.
    checkPackPlugins(m, *doc, sourceOf, diags);
    if (diags.hasErrors()) {
      cleanup();
      return makeError(ErrorCode::Invalid, diags);
    }
  }

  // Builds that IREE's runtime cannot call where they would be installed
  // (embedded ELF on Windows), with nothing else of the package there.
  for (const UncalledPlugin &u : uncalledPlugins(m, dir)) {
    std::string platforms;
    for (const Platform &p : u.platforms)
      platforms += (platforms.empty() ? "" : ", ") + p.str();
    const RuntimePlugin &plugin = m.runtimePlugins[u.plugin];
    diags.warning(
        doc->locate("/runtime/plugins/" + std::to_string(u.plugin) +
                    "/library"),
        "runtime plugin \"" + plugin.name + "\" (" +
            std::string(runtimeFormatName(plugin.format)) +
            ") will not be activated on " + platforms + ": " +
            describePlatformFact(*u.fact) +
            "; the package has no other runtime plugin for " +
            (u.platforms.size() == 1 ? "it" : "them"),
        "add a system-library runtime plugin with a build for " + platforms +
            (std::string_view(u.fact->os) == "windows"
                 ? " (a DLL exporting iree_hal_executable_plugin_query "
                   "with __declspec(dllexport))"
                 : ""));
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
  record.testsSkipped = options.testsSkipped && !m.tests.empty();
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
