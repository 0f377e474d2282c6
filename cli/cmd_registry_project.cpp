//===- cmd_registry_project.cpp - `ireepkg registry add|remove|list` -----===//
//
// The registries of a project: entries of plugins.json's "registries",
// edited in place like `add` and `rm` edit its plugins.
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "report.h"
#include "ireepkg/pkg/project/project_file.h"
#include "ireepkg/manifest_schema/names.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/pkg/package/signature.h"

#include <cstdio>

namespace ireepkg::cli {

namespace {

/// The project's text, parsed (for the list and the reports).
Expected<ProjectFile> parsed(const ProjectText &file) {
  auto doc = JsonDocument::parse(file.text, file.path);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ProjectFile p = parseProjectFile(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return p;
}

nlohmann::json registryJson(const RegistryRef &r) {
  nlohmann::json j = {{"name", r.name}, {"url", r.url}};
  if (!r.mirrors.empty())
    j["mirrors"] = r.mirrors;
  j["public_key"] = r.publicKey.empty() ? nlohmann::json()
                                        : nlohmann::json(r.publicKey);
  return j;
}

} // namespace

int runRegistryAdd(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  RegistryRef ref;
  ref.name = args.positional[0];
  ref.url = args.positional[1];
  ref.mirrors = args.all("mirror");
  if (!isValidPackageName(ref.name)) {
    printError("\"" + ref.name + "\" is not a valid registry name",
               kPackageNameRule);
    return kExitUsage;
  }
  if (auto key = args.value("registry-key")) {
    auto pk = signing::loadPublicKey(*key);
    if (!pk) {
      Error e = pk.error();
      e.message = "--registry-key " + *key + ": " + e.message;
      e.where = {};
      if (e.hint.empty())
        e.hint = "give the public key's base64 line (RW...) or its .pub file";
      printError(e);
      return kExitUsage;
    }
    ref.publicKey = signing::publicKeyBase64(*pk);
  }
  auto file = readNearestProject(args.value("project"));
  if (!file)
    return printFailure(file.error(), json);
  verboseLine(1, "project file: " + file->path);
  auto edited = project::addRegistry(file->text, ref, file->path);
  if (!edited) {
    if (edited.error().code == ErrorCode::Usage) {
      printError(edited.error());
      return kExitUsage;
    }
    return printFailure(edited.error(), json);
  }
  if (Status s = writeProjectFile(file->path, *edited); !s)
    return printFailure(s.error(), json);
  if (json) {
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"project", file->path},
                                        {"added", registryJson(ref)}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  printSummary(
      "%s registry %s (%s)%s\nwrote %s\n", paint(Style::Added, "added").c_str(),
      ref.name.c_str(), ref.url.c_str(),
      ref.publicKey.empty() ? ", with no trusted key" : "", file->path.c_str());
  if (ref.publicKey.empty() && !globalOptions().quiet)
    printWarning("registry " + ref.name +
                 " has no public key: ireepkg will refuse it until one is "
                 "given (--registry-key)");
  return kExitOk;
}

int runRegistryRemove(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto file = readNearestProject(args.value("project"));
  if (!file)
    return printFailure(file.error(), json);
  verboseLine(1, "project file: " + file->path);
  std::string text = file->text;
  for (const std::string &name : args.positional) {
    auto edited = project::removeRegistry(text, name, file->path);
    if (!edited)
      return printFailure(edited.error(), json);
    text = std::move(*edited);
  }
  if (Status s = writeProjectFile(file->path, text); !s)
    return printFailure(s.error(), json);
  if (json) {
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"project", file->path},
                                        {"removed", args.positional}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  for (const std::string &name : args.positional)
    printSummary("%s registry %s\n", paint(Style::Removed, "removed").c_str(),
                 name.c_str());
  printSummary("wrote %s\n", file->path.c_str());
  return kExitOk;
}

int runRegistryList(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto file = readNearestProject(args.value("project"));
  if (!file)
    return printFailure(file.error(), json);
  verboseLine(1, "project file: " + file->path);
  auto p = parsed(*file);
  if (!p)
    return printFailure(p.error(), json);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const RegistryRef &r : p->registries)
      list.push_back(registryJson(r));
    std::printf("%s\n", nlohmann::json({{"project", file->path},
                                        {"registries", list}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  if (p->registries.empty()) {
    std::printf("%s lists no registries\n", file->path.c_str());
    return kExitOk;
  }
  for (const RegistryRef &r : p->registries) {
    std::printf("%s %s%s\n", r.name.c_str(), r.url.c_str(),
                r.publicKey.empty() ? " (no public key)" : "");
    for (const std::string &m : r.mirrors)
      std::printf("  mirror %s\n", m.c_str());
  }
  return kExitOk;
}

} // namespace ireepkg::cli
