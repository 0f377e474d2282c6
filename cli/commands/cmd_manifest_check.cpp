//===- cli/commands/cmd_manifest_check.cpp - `ireepkg manifest check` -----===//
//
// Validates ireepkg files and prints every diagnostic: text on stderr, or a
// JSON report on stdout with --json.
//
//===----------------------------------------------------------------------===//
#include "commands/command.h"
#include "commands/options.h"
#include "output/hints.h"

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/package/package.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace ireepkg::cli {

namespace {

struct Target {
  std::string path;
  FileKind kind;
  bool archive = false; ///< a package archive: its ireeplugin.json
};

bool isPackageArchive(const std::string &path) {
  return path.size() > 8 && path.compare(path.size() - 8, 8, ".ireepkg") == 0;
}

/// A package archive: everything install checks of its head (members,
/// RECORD, limits), then its manifest strictly, as `pack` would.
void checkArchive(const std::string &path, const ParseOptions &options,
                  DiagnosticList &diags) {
  auto head = readArchiveHead(path);
  if (!head) {
    const Error &e = head.error();
    if (e.diagnostics.empty())
      diags.error(e.where, e.message, e.hint);
    else
      for (const Diagnostic &d : e.diagnostics)
        diags.add(d);
    return;
  }
  checkText(head->manifestText, path + ":" + kManifestName,
            FileKind::Manifest, options, diags);
}

/// Expands a directory into the ireepkg files it holds.
std::vector<Target> expandDirectory(const std::string &dir) {
  std::vector<Target> out;
  auto add = [&](const std::string &name, FileKind kind) {
    fs::path p = fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec))
      out.push_back({p.string(), kind});
  };
  add("ireeplugin.json", FileKind::Manifest);
  add("plugins.json", FileKind::Project);
  add("plugins.lock.json", FileKind::Lock);
  add("config.json", FileKind::RegistryConfig);
  add("snapshot.json", FileKind::Snapshot);
  std::error_code ec;
  fs::path index = fs::path(dir) / "index";
  if (fs::is_directory(index, ec)) {
    std::vector<std::string> files;
    for (const auto &e : fs::directory_iterator(index, ec))
      if (e.path().extension() == ".json")
        files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto &f : files)
      out.push_back({f, FileKind::Index});
  }
  return out;
}

nlohmann::json diagnosticJson(const Diagnostic &d) {
  nlohmann::json j = {
      {"severity", d.severity == Severity::Error ? "error" : "warning"},
      {"file", d.where.file},
      {"message", d.message}};
  if (d.where.line) {
    j["line"] = d.where.line;
    j["column"] = d.where.column;
  }
  if (!d.where.pointer.empty())
    j["pointer"] = d.where.pointer;
  if (!d.hint.empty())
    j["hint"] = d.hint;
  return j;
}

} // namespace

int runManifestCheck(const Command &, const ParsedArgs &args) {
  std::optional<FileKind> forced;
  if (auto k = args.value("kind")) {
    forced = parseFileKind(*k);
    if (!forced) {
      std::string list;
      for (auto n : fileKindNames())
        list += (list.empty() ? "" : ", ") + std::string(n);
      printError("unknown kind '" + *k + "'" + didYouMean(*k, fileKindNames()),
                 "kinds are: " + list);
      return kExitUsage;
    }
  }
  std::vector<Target> targets;
  for (const std::string &arg : args.positional) {
    std::error_code ec;
    if (fs::is_directory(arg, ec) && !forced) {
      auto found = expandDirectory(arg);
      if (found.empty()) {
        printError("no ireepkg files in directory '" + arg + "'",
                   "expected ireeplugin.json, plugins.json, "
                   "plugins.lock.json, or a registry (config.json, "
                   "snapshot.json, index/)");
        return kExitUsage;
      }
      targets.insert(targets.end(), found.begin(), found.end());
      continue;
    }
    if (!forced && isPackageArchive(arg)) {
      targets.push_back({arg, FileKind::Manifest, true});
      continue;
    }
    std::optional<FileKind> kind = forced ? forced : detectFileKind(arg);
    if (!kind) {
      printError("cannot tell what kind of file '" + arg + "' is",
                 "name it ireepkg-style (ireeplugin.json, plugins.json, "
                 "plugins.lock.json, ...) or pass --kind");
      return kExitUsage;
    }
    targets.push_back({arg, *kind});
  }

  ParseOptions options;
  options.strict = !args.flag("lenient");
  nlohmann::json report = {{"files", nlohmann::json::array()}};
  size_t errors = 0, warnings = 0, badFiles = 0;
  for (const Target &t : targets) {
    DiagnosticList diags;
    if (t.archive)
      checkArchive(t.path, options, diags);
    else
      checkFile(t.path, t.kind, options, diags);
    errors += diags.errorCount();
    warnings += diags.warningCount();
    badFiles += diags.hasErrors();
    if (args.flag("json")) {
      nlohmann::json file = {{"path", t.path},
                             {"kind", std::string(fileKindName(t.kind))},
                             {"valid", !diags.hasErrors()},
                             {"diagnostics", nlohmann::json::array()}};
      for (const Diagnostic &d : diags.items())
        file["diagnostics"].push_back(diagnosticJson(d));
      report["files"].push_back(std::move(file));
      continue;
    }
    for (const Diagnostic &d : diags.items()) {
      std::fprintf(stderr, "%s\n", d.format().c_str());
      if (!d.hint.empty())
        std::fprintf(stderr, "  hint: %s\n", fitHint(d.hint).c_str());
    }
  }
  if (args.flag("json")) {
    report["errors"] = errors;
    report["warnings"] = warnings;
    report["valid"] = errors == 0;
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    std::string files = std::to_string(targets.size()) +
                        (targets.size() == 1 ? " file" : " files");
    if (errors == 0)
      std::fprintf(stderr, "checked %s: valid%s\n", files.c_str(),
                   warnings ? (", " + std::to_string(warnings) +
                               " warning(s)")
                                  .c_str()
                            : "");
    else
      std::fprintf(stderr, "checked %s: %zu invalid, %zu error(s), %zu "
                   "warning(s)\n",
                   files.c_str(), badFiles, errors, warnings);
  }
  return errors ? kExitFailure : kExitOk;
}

const Command &manifestCheckCommand() {
  static const Command command{
      .name = "manifest check",
      .synopsis = "<file|dir>... [--kind KIND] [--json]",
      .summary =
          "validate manifests, project files, lockfiles and registry files",
      .description =
          "Checks each file against every rule of its format: the published "
          "JSON Schema (manifest_schema/) and the rules a schema cannot "
          "express. Every problem is reported, each with file, line:column "
          "and JSON pointer.\n\n"
          "The kind of a file is told by its name: ireeplugin.json, "
          "plugins.json, plugins.lock.json, config.json, snapshot.json, "
          "index/<name>.json. Use --kind for files named otherwise. A "
          "directory stands for the ireepkg files in it (a package, a "
          "project, or a registry). A package archive (<name>-<version>"
          ".ireepkg) gets the checks install makes of its first members "
          "(member rules, RECORD, size limits), then its ireeplugin.json is "
          "checked like any manifest.\n\n"
          "Unknown fields are errors here (strict mode). Exit status: 0 when "
          "every file is valid, 1 when any is not, 2 on usage errors.",
      .options =
          {{"kind", 0, "KIND",
            "read every file as KIND: manifest, project, lock, "
            "registry-config, snapshot or index"},
           {"lenient", 0, "",
            "report unknown fields as warnings, as when reading installed "
            "files"},
           kJson},
      .examples =
          {"ireepkg manifest check ireeplugin.json",
           "ireepkg manifest check examples/simple-mul examples/project",
           "ireepkg manifest check dist/simple-mul-1.2.0.ireepkg",
           "ireepkg manifest check --kind manifest my-manifest.json --json"},
      .minPositional = 1,
      .run = runManifestCheck,
  };
  return command;
}

} // namespace ireepkg::cli
