//===- cli/commands/cmd_registry_project.cpp - `registry add|remove|list` -===//
//
// The registries of a project: entries of plugins.json's "registries",
// edited in place like `add` and `rm` edit its plugins.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/pkg/project/project_file.h"
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"

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

const Command &registryAddCommand() {
  static const Command command{
      .name = "registry add",
      .synopsis =
          "<name> <url|dir> [--registry-key KEY] [--mirror URL]... [--json]",
      .summary = "add a registry to the project's plugins.json",
      .description =
          "Appends {\"name\", \"url\", \"public_key\"} (and \"mirrors\") to "
          "\"registries\" of the plugins.json of the current directory or "
          "the nearest one above it (or --project). Every other byte of the "
          "file stays as it was, the plugins included. <url|dir> is an "
          "https:// or file:// URL, or a directory relative to plugins.json. "
          "A name that is there already is refused. Without --registry-key "
          "the registry has no trusted key, and ireepkg refuses to use it "
          "until one is written.",
      .options =
          {{"registry-key", 0, "KEY",
            "the registry's minisign public key (its base64 line or .pub "
            "file)"},
           {"mirror", 0, "URL", "another URL serving the same registry", true},
           kOptProject,
           kJson},
      .examples =
          {"ireepkg registry add default https://plugins.example.org/iree "
           "--registry-key RWQ...",
           "ireepkg registry add local ./registry --registry-key "
           "registry-signing.pub"},
      .minPositional = 2,
      .maxPositional = 2,
      .run = runRegistryAdd,
  };
  return command;
}

const Command &registryRemoveCommand() {
  static const Command command{
      .name = "registry remove",
      .synopsis = "<name>... [--json]",
      .summary = "remove registries from the project's plugins.json",
      .description =
          "Removes each named registry from \"registries\"; every other "
          "byte of the file stays as it was. A registry that a plugin names "
          "in its \"registry\" is not removed (the error names the plugin). "
          "If any name is not there, nothing changes.",
      .options = {kOptProject, kJson},
      .examples = {"ireepkg registry remove staging"},
      .minPositional = 1,
      .run = runRegistryRemove,
  };
  return command;
}

const Command &registryListCommand() {
  static const Command command{
      .name = "registry list",
      .synopsis = "[--json]",
      .summary = "list the registries of the project's plugins.json",
      .description =
          "Prints each registry of the project with its URL, its mirrors "
          "and whether it has a trusted public key.",
      .options = {kOptProject, kJson},
      .examples = {"ireepkg registry list", "ireepkg registry list --json"},
      .maxPositional = 0,
      .run = runRegistryList,
  };
  return command;
}

} // namespace ireepkg::cli
