//===- cli/commands/cmd_init.cpp - `ireepkg init` -------------------------===//
//
// Writes a starter plugins.json in the current directory: schema_version,
// the registry given with --registry (if any), the target platforms and an
// empty plugin list.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/project/project_file.h"
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/pkg/package/signature.h"

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace ireepkg::cli {

int runInit(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  project::StarterOptions options;

  auto registry = args.value("registry");
  auto key = args.value("registry-key");
  if (key && !registry) {
    printError("--registry-key needs --registry NAME=URL",
               "the key is the public key of that registry");
    return kExitUsage;
  }
  if (registry) {
    size_t eq = registry->find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == registry->size()) {
      printError("--registry takes NAME=URL, not '" + *registry + "'",
                 "e.g. --registry default=https://plugins.example.org/iree");
      return kExitUsage;
    }
    RegistryRef ref;
    ref.name = registry->substr(0, eq);
    ref.url = registry->substr(eq + 1);
    if (!isValidPackageName(ref.name)) {
      printError("--registry: \"" + ref.name +
                     "\" is not a valid registry "
                     "name",
                 kPackageNameRule);
      return kExitUsage;
    }
    if (key) {
      auto pk = signing::loadPublicKey(*key);
      if (!pk) {
        Error e = pk.error();
        e.message = "--registry-key " + *key + ": " + e.message;
        e.where = {};
        if (e.hint.empty())
          e.hint = "give the public key's base64 line (RW...) or its .pub "
                   "file";
        printError(e);
        return kExitUsage;
      }
      ref.publicKey = signing::publicKeyBase64(*pk);
    }
    options.registries.push_back(std::move(ref));
  }
  for (const std::string &p : args.all("platform")) {
    auto platform = Platform::parse(p);
    if (!platform) {
      printError("'" + p + "' is not a platform" +
                     didYouMean(p, platformNames()),
                 "platforms are <os>-<arch>, e.g. linux-x86_64");
      return kExitUsage;
    }
    if (std::find(options.platforms.begin(), options.platforms.end(),
                  *platform) == options.platforms.end())
      options.platforms.push_back(*platform);
  }

  auto cwd = currentDirectory();
  if (!cwd)
    return printFailure(cwd.error(), json);
  std::string path = (fs::path(*cwd) / project::kProjectFileName).string();
  std::error_code ec;
  bool exists = fs::exists(fs::symlink_status(path, ec));
  if (exists && !args.flag("force"))
    return printFailure(
        Error(ErrorCode::Conflict,
              std::string(project::kProjectFileName) + " already exists",
              Location::inFile(path),
              "edit it with `ireepkg add` and `ireepkg rm`, or pass --force "
              "to replace it"),
        json);

  std::string text = project::starterProjectFile(options);
  // What init writes must be a valid project file.
  DiagnosticList diags;
  if (auto doc = JsonDocument::parse(text, path); !doc)
    return printFailure(doc.error(), json);
  else
    parseProjectFile(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return printFailure(makeError(ErrorCode::Invalid, diags).error(), json);

  if (Status s = writeProjectFile(path, text); !s)
    return printFailure(s.error(), json);
  if (json) {
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"project", path},
                                        {"replaced", exists},
                                        {"content", text}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  printSummary("wrote %s:\n%s", path.c_str(), text.c_str());
  return kExitOk;
}

const Command &initCommand() {
  static const Command command{
      .name = "init",
      .synopsis =
          "[--registry NAME=URL] [--registry-key KEY] [--platform OS-ARCH]... "
          "[--force]",
      .summary = "write a starter plugins.json in the current directory",
      .description =
          "Writes plugins.json (see docs/guide-users.md) with schema_version, "
          "the registry given with --registry (or an empty list), the "
          "platforms to lock for (default: the host's) and an empty plugin "
          "list, and prints it. An existing plugins.json is kept unless "
          "--force.",
      .options =
          {{"registry", 0, "NAME=URL",
            "list this registry: an https:// or file:// URL, or a directory "
            "relative to plugins.json"},
           {"registry-key", 0, "KEY",
            "the registry's minisign public key (its base64 line or .pub "
            "file)"},
           {"platform", 0, "OS-ARCH",
            "a platform to lock for (default: the host's)", true},
           {"force", 0, "", "replace an existing plugins.json"},
           kJson},
      .examples =
          {"ireepkg init",
           "ireepkg init --registry default=https://plugins.example.org/iree "
           "--registry-key RWQ... --platform linux-x86_64 --platform "
           "linux-aarch64"},
      .maxPositional = 0,
      .run = runInit,
  };
  return command;
}

} // namespace ireepkg::cli
