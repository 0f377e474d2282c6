//===- cli/commands/cmd_add.cpp - `ireepkg add` ---------------------------===//
//
// Adds plugins to the nearest plugins.json, or changes the version,
// registry or options of plugins it lists, after checking them against the
// project's registries; then locks and syncs as project_change.h says.
//
//===----------------------------------------------------------------------===//
#include "args/global_options.h"
#include "host/interrupt.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/pkg/project/project_file.h"
#include "commands/options.h"
#include "output/output.h"
#include "commands/project_change.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/project/project.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

namespace ireepkg::cli {

namespace {

/// VALUE of --option FLAG=VALUE: JSON when it is a number, a boolean, a
/// quoted string or an array; otherwise the text itself.
nlohmann::json optionValue(const std::string &text) {
  nlohmann::json v = parseJsonOrDiscarded(text);
  if (v.is_discarded())
    return text;
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return text;
  if (v.is_number() || v.is_boolean() || v.is_string() || v.is_array())
    return v;
  return text;
}

bool isFlagName(const std::string &s) {
  auto ok = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (!first && (c == '.' || c == '_' || c == '-'));
  };
  if (s.empty())
    return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (!ok(s[i], i == 0))
      return false;
  return true;
}

std::string describeChange(const project::AddRequest &r) {
  std::string out;
  auto add = [&](const std::string &part) {
    out += (out.empty() ? "" : ", ") + part;
  };
  if (r.constraint)
    add("version " + *r.constraint);
  if (!r.path.empty())
    add("path " + r.path);
  if (!r.registry.empty())
    add("registry " + r.registry);
  for (const auto &[flag, value] : r.options)
    add("option " + flag + "=" + value.dump());
  return out;
}

} // namespace

int runAdd(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto followUp = followUpFrom(args);
  if (!followUp)
    return kExitUsage;
  std::string registry = args.value("registry").value_or("");
  if (!registry.empty() && !isValidPackageName(registry)) {
    printError("--registry: \"" + registry + "\" is not a registry name",
               "give the name of one of the registries in plugins.json");
    return kExitUsage;
  }

  std::map<std::string, nlohmann::json> options;
  for (const std::string &o : args.all("option")) {
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0) {
      printError("--option takes FLAG=VALUE, not '" + o + "'",
                 "e.g. --option iree-simple-mul-tile=16");
      return kExitUsage;
    }
    std::string flag = o.substr(0, eq);
    if (flag.starts_with("-")) {
      printError("--option: write the flag without its leading dashes: " +
                 flag.substr(flag.find_first_not_of('-') == std::string::npos
                                 ? flag.size()
                                 : flag.find_first_not_of('-')));
      return kExitUsage;
    }
    if (!isFlagName(flag)) {
      printError("--option: \"" + flag + "\" is not an option flag name",
                 "flag names are lower-case letters, digits, '.', '_' and "
                 "'-', starting with a letter or digit");
      return kExitUsage;
    }
    options[flag] = optionValue(o.substr(eq + 1));
  }
  if (!options.empty() && args.positional.size() > 1) {
    printError("--option applies to one plugin; add the plugins one at a "
               "time to give each its options");
    return kExitUsage;
  }

  std::vector<project::AddRequest> requests;
  std::set<std::string> seen;
  for (const std::string &arg : args.positional) {
    project::AddRequest r;
    size_t at = arg.find('@');
    r.name = arg.substr(0, at);
    if (at != std::string::npos) {
      r.constraint = arg.substr(at + 1);
      if (r.constraint->empty()) {
        printError("'" + arg + "' has an empty version constraint",
                   "e.g. " + r.name + "@^1.2, or leave out the '@'");
        return kExitUsage;
      }
      if (auto c = Constraint::parse(*r.constraint); !c) {
        printError("'" + arg + "': " + c.error().message, c.error().hint);
        return kExitUsage;
      }
    }
    if (!isValidPackageName(r.name)) {
      printError("\"" + r.name + "\" is not a valid package name",
                 kPackageNameRule);
      return kExitUsage;
    }
    if (!seen.insert(r.name).second) {
      printError(r.name + " is named more than once");
      return kExitUsage;
    }
    r.registry = registry;
    r.options = options;
    requests.push_back(std::move(r));
  }

  auto pathArg = args.value("path");
  if (!pathArg && args.positional.empty()) {
    printError("'add' needs <name>[@<constraint>]... or --path DIR",
               "see `ireepkg add --help`");
    return kExitUsage;
  }
  if (pathArg && (args.positional.size() > 1 || !registry.empty() ||
                  (!requests.empty() && requests[0].constraint))) {
    printError("--path adds one local package, with no version and no "
               "registry",
               "e.g. ireepkg add --path ./plugins/my-plugin");
    return kExitUsage;
  }

  auto file = readNearestProject(args.value("project"));
  if (!file)
    return printFailure(file.error(), json);
  verboseLine(1, "project file: " + file->path);
  if (pathArg) {
    // The package's name is its manifest's; the path is written relative
    // to plugins.json, as formats.md's example shows.
    namespace fs = std::filesystem;
    fs::path dir = fs::absolute(*pathArg).lexically_normal();
    auto doc = JsonDocument::load((dir / "ireeplugin.json").string());
    if (!doc)
      return printFailure(doc.error(), json);
    DiagnosticList diags;
    ParseOptions po;
    po.strict = false;
    Manifest m = parseManifest(*doc, po, diags);
    if (diags.hasErrors())
      return printFailure(makeError(ErrorCode::Invalid, diags).error(), json);
    if (!requests.empty() && requests[0].name != m.name) {
      printError("the package in " + *pathArg + " is \"" + m.name +
                     "\", not \"" + requests[0].name + "\"",
                 "leave out the name: --path reads it from ireeplugin.json");
      return kExitUsage;
    }
    fs::path rel =
        dir.lexically_relative(fs::path(file->path).parent_path());
    std::string relText = rel.string();
    if (relText.empty() || relText == ".")
      relText = ".";
    else if (!relText.starts_with(".."))
      relText = "./" + relText;
    project::AddRequest r;
    r.name = m.name;
    r.path = relText;
    r.options = options;
    requests = {r};
  }
  // Read once up front: for the error messages of a broken file, to tell
  // additions from updates, and for the version lookup.
  ProjectFile before;
  {
    auto doc = JsonDocument::parse(file->text, file->path);
    if (!doc)
      return printFailure(doc.error(), json);
    DiagnosticList diags;
    before = parseProjectFile(*doc, ParseOptions{}, diags);
    if (diags.hasErrors())
      return printFailure(makeError(ErrorCode::Invalid, diags).error(), json);
  }

  auto ctx = projectContext(args);
  if (!ctx)
    return setupFailure();
  auto &[project, env] = *ctx;

  // What is added is checked against the registries (unless --frozen): the
  // package exists, a version not yanked matches the constraint; the
  // options are checked against the package's schema when it is locked
  // below. Without a constraint, the newest version's caret constraint is
  // written.
  // What the file alone can refuse (a registry it does not list) is said
  // before any registry is asked.
  for (const project::AddRequest &r : requests)
    if (!r.registry.empty())
      if (auto edited = project::addPlugin(file->text, r, file->path); !edited)
        return printFailure(edited.error(), json);
  CliReporter reporter(json || globalOptions().quiet);
  catchInterrupts();
  for (project::AddRequest &r : requests) {
    if (!r.path.empty())
      continue;
    const ProjectPlugin *listed = nullptr;
    for (const ProjectPlugin &p : before.plugins)
      if (p.name == r.name)
        listed = &p;
    if (listed && !listed->path.empty() && r.registry.empty())
      continue; // a local package keeps its path
    if (r.constraint && *followUp == FollowUp::Frozen)
      continue;
    std::string registryName = !r.registry.empty() ? r.registry
                               : listed            ? listed->registry
                                                   : "";
    std::optional<Constraint> within;
    if (r.constraint)
      within = *Constraint::parse(*r.constraint);
    auto newest =
        workflow::newestVersion(project, r.name, registryName, env, reporter,
                                within ? &*within : nullptr);
    reporter.clearProgress();
    if (!newest &&
        (newest.error().code == ErrorCode::Interrupted || interruptRequested()))
      return printInterrupted(newest.error(), project.dir, json);
    if (!newest)
      return printFailure(newest.error(), json);
    if (!r.constraint)
      r.constraint = "^" + newest->str();
  }

  bool dryRun = args.flag("dry-run");
  std::string text = file->text;
  nlohmann::json report = nlohmann::json::array();
  std::vector<std::string> lines;
  for (const project::AddRequest &r : requests) {
    auto edited = project::addPlugin(text, r, file->path);
    if (!edited)
      return printFailure(edited.error(), json);
    bool listed = false;
    for (const ProjectPlugin &p : before.plugins)
      listed = listed || p.name == r.name;
    bool changed = *edited != text;
    text = std::move(*edited);
    std::string action = !listed ? "added" : changed ? "updated" : "unchanged";
    report.push_back({{"name", r.name},
                      {"action", action},
                      {"version", r.constraint ? nlohmann::json(*r.constraint)
                                               : nlohmann::json(nullptr)},
                      {"options", r.options}});
    if (!r.registry.empty())
      report.back()["registry"] = r.registry;
    std::string verb = !dryRun               ? action
                       : action == "added"   ? "would add"
                       : action == "updated" ? "would update"
                                             : action;
    lines.push_back(
        verb + " " + r.name +
        (describeChange(r).empty() ? "" : ": " + describeChange(r)));
  }

  ProjectEdit edit{std::move(project), file->path,           file->text, text,
                   std::move(lines),    {{"plugins", report}}};
  return applyProjectEdit(args, edit, *followUp, env);
}

const Command &addCommand() {
  static const Command command{
      .name = "add",
      .synopsis =
          "<name>[@<constraint>]... | --path DIR [--option FLAG=VALUE]... "
          "[--registry NAME] [--no-sync | --frozen] [--dry-run]",
      .summary = "add plugins to the project (plugins.json), lock and sync",
      .description =
          "Edits the plugins.json of the current directory or the nearest "
          "one above it. A plugin it does not list yet is appended to "
          "\"plugins\" (the end of the activation order); a listed one keeps "
          "its place and gets the new version constraint, registry and "
          "options. Without @<constraint>, the caret constraint of the "
          "newest version in the project's registries is written (^1.2.0).\n\n"
          "What is added is checked first, and any problem is an error that "
          "leaves every file as it was: a package no registry of plugins.json "
          "has (with the closest name there is), a constraint no version "
          "matches (with the versions there are), an option the package "
          "does not declare or a value its option schema refuses (with the "
          "options it declares).\n\n"
          "Then, as `uv add` does, the project is locked (plugins.lock.json) "
          "and its prefix synced, so that the plugins are ready to use: "
          "--no-sync stops after the lock and leaves the prefix; --frozen "
          "only edits plugins.json (the registries are then asked only for "
          "the newest version of a plugin given without a constraint, and "
          "the checks above are left to the next `lock`). The lock is "
          "computed before anything is written. --dry-run prints what would "
          "change (plugins.json, the lock, the prefix) and changes "
          "nothing.\n\n"
          "--option sets one value in the plugin's \"options\", replacing a "
          "value of the same flag; VALUE is read as JSON when it is a "
          "number, a boolean, a quoted string or an array, otherwise as "
          "text.\n\n"
          "--path DIR adds the local package in DIR (a package directory "
          "with its ireeplugin.json, which names it) as {\"name\", \"path\"}, "
          "the path written relative to plugins.json; `lock` and `sync` "
          "take it from there, with no version and no registry.\n\n"
          "Every other byte of plugins.json stays as it was (order, "
          "indentation, line endings), and new entries copy the layout of "
          "their neighbours.",
      .options = {{"option", 0, "FLAG=VALUE",
                   "set an option of the plugin (flag without dashes)", true},
                  {"registry", 0, "NAME",
                   "take the plugins from this registry of plugins.json"},
                  {"path", 0, "DIR", "add the local package in DIR"},
                  kNoSync,
                  kFrozenEdit,
                  kDryRun,
                  kOptIreeVersion,
                  kOptIgnoreIreeVersion,
                  kOptOffline,
                  kOptProject,
                  kPrefix,
                  kLockTimeout,
                  kJson},
      .examples = {"ireepkg add simple-mul@^1.2",
                   "ireepkg add mul-pipeline --option "
                   "iree-llvmcpu-distribution-size=64",
                   "ireepkg add 'torch-input@>=2.0.0, <3.0.0' --registry local",
                   "ireepkg add --path ./plugins/local-experiment",
                   "ireepkg add simple-mul --dry-run",
                   "ireepkg add simple-mul@^1.2 --no-sync"},
      .run = runAdd,
  };
  return command;
}

} // namespace ireepkg::cli
