//===- cmd_install.cpp - `ireepkg install` -------------------------------===//
#include "interrupt.h"
#include "output.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "project_change.h"
#include "registry_args.h"

#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/registry/workflow.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

static bool fsExists(const std::string &p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

namespace ireepkg::cli {

void printSettingsChanged(const InstallReport &report) {
  if (report.settingsChanged)
    std::printf("option values and hook choices updated from plugins.json\n");
}

/// Prints an install/remove report (shared with cmd_remove.cpp).
void printChangeReport(const InstallReport &report, bool json, bool quiet) {
  if (json) {
    nlohmann::json out = {{"ok", true},
                          {"prefix", report.prefix},
                          {"changes", installChangesJson(report)},
                          {"reordered", report.reordered},
                          {"options_changed", report.settingsChanged},
                          {"unchanged", report.unchanged}};
    if (!report.pipelineCheck.pipelines.empty() ||
        !report.pipelineCheck.plugins.empty())
      out["pipeline_check"] = toJson(report.pipelineCheck);
    if (!report.shadowedImports.empty())
      out["shadowed_imports"] = shadowedImportsToJson(report.shadowedImports);
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  if (quiet)
    return;
  printChangeLines(report, false);
  for (const std::string &u : report.unchanged)
    std::printf("%s is already installed\n", u.c_str());
  if (report.reordered)
    std::printf("activation order updated from plugins.json\n");
  printSettingsChanged(report);
  if (report.changes.empty() && report.unchanged.empty())
    std::printf("nothing to do\n");
  else if (!report.changes.empty())
    std::printf("prefix: %s\n", report.prefix.c_str());
  std::fputs(shadowedImportsText(report.shadowedImports).c_str(), stdout);
}

int printDryRun(const InstallReport &plan, bool json, bool quiet) {
  if (json) {
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"dry_run", true},
                                        {"prefix", plan.prefix},
                                        {"changes", installChangesJson(plan)},
                                        {"unchanged", plan.unchanged}})
                            .dump(2)
                            .c_str());
  } else if (!quiet) {
    printSyncPlan(plan);
    printDryRunEnd(false);
  }
  return kExitOk;
}

int printInterrupted(const Error &e, const std::string &prefix, bool json) {
  if (json)
    std::printf("%s\n",
                nlohmann::json({{"ok", false}, {"error", errorToJson(e)}})
                    .dump(2)
                    .c_str());
  return reportInterrupted(prefix);
}

int printFailure(const Error &e, bool json) {
  if (json)
    std::printf("%s\n",
                nlohmann::json({{"ok", false}, {"error", errorToJson(e)}})
                    .dump(2)
                    .c_str());
  printError(e);
  return kExitFailure;
}

namespace {

/// True for arguments that name archive files rather than packages.
bool looksLikeArchive(const std::string &arg) {
  return arg.find('/') != std::string::npos ||
         (arg.size() > 8 && arg.compare(arg.size() - 8, 8, ".ireepkg") == 0) ||
         fsExists(arg);
}

} // namespace

int runInstall(const Command &, const ParsedArgs &args) {
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  InstallOptions options;
  if (!lockOptions(args, options.lock))
    return kExitUsage;
  if (auto p = args.value("platform")) {
    options.platform = Platform::parse(*p);
    if (!options.platform) {
      printError("'" + *p + "' is not a platform" +
                     didYouMean(*p, platformNames()),
                 "platforms are <os>-<arch>, e.g. linux-x86_64");
      return kExitUsage;
    }
  }
  if (auto level = args.value("cpu-level")) {
    auto checked = cpuLevelOption(
        options.platform ? options.platform->str() : "host", *level);
    if (!checked)
      return kExitUsage;
    options.cpuLevel = *checked;
  }
  options.useCache = !args.flag("no-cache");
  options.dryRun = args.flag("dry-run");
  // In a project, plugins.json's order is the activation order.
  std::optional<workflow::Project> project;
  if (!prefix->projectFile.empty()) {
    auto loaded = workflow::loadProject(prefix->projectFile);
    if (!loaded) {
      printError(loaded.error());
      return kExitFailure;
    }
    project = std::move(*loaded);
    ProjectSettings settings;
    for (const ProjectPlugin &p : project->parsed.plugins) {
      options.preferredOrder.push_back(p.name);
      if (!p.options.empty())
        settings.values[p.name] = p.options;
    }
    settings.choose = project->parsed.choose;
    options.project = settings;
  }
  bool json = args.flag("json"), quiet = args.flag("quiet");

  // Archives, or package names to resolve against a registry.
  size_t files = 0;
  for (const std::string &a : args.positional)
    files += looksLikeArchive(a);
  if (files && files != args.positional.size()) {
    printError("give either archive files or package names, not both",
               "install the archives first, then the packages by name");
    return kExitUsage;
  }
  if (files && args.value("bundle")) {
    printError("--bundle installs packages by name, not archive files");
    return kExitUsage;
  }
  CliReporter reporter(quiet || json);
  catchInterrupts();
  Expected<InstallReport> report = InstallReport{};
  auto env = environmentFrom(args);
  if (!env)
    return setupFailure();
  if (files) {
    // Each archive's requires.iree against the IREE in use.
    options.iree = workflow::ireeCheckFor(*env);
    report = installArchives(prefix->path, args.positional, options, reporter);
  } else {
    // By name, the resolver only picks versions made for the IREE in use
    // (--ignore-iree-version: any, with a warning for each that excludes
    // it).
    workflow::InstallByNameRequest request;
    for (const std::string &a : args.positional) {
      auto n = workflow::parseNameRequest(a);
      if (!n) {
        printError(n.error());
        return kExitUsage;
      }
      request.packages.push_back(std::move(*n));
    }
    // The project's own prefix holds what plugins.json asks for: a package
    // installed there by name alone would be taken out again by the next
    // `sync`, so it goes through the project instead.
    if (project && prefix->reason == "project")
      for (const workflow::NameRequest &n : request.packages) {
        bool listed = false;
        for (const ProjectPlugin &p : project->parsed.plugins)
          listed = listed || p.name == n.name;
        if (listed)
          continue;
        Error e(ErrorCode::Conflict,
                "\"" + n.name + "\" is not in " + project->file +
                    ": installed into the project's prefix, the next "
                    "`ireepkg sync` would remove it again",
                Location::inFile(project->file),
                "add it to the project (`ireepkg add " + n.name +
                    "`, which locks and syncs), or install it into another "
                    "prefix (--prefix DIR)");
        return printFailure(e, json);
      }
    request.registries = registriesFrom(args, project ? &*project : nullptr);
    if (request.registries.empty() && !env->bundle.empty()) {
      // The bundle's own registry, trusted through --registry-key.
      registry::RegistrySpec spec;
      spec.name = "bundle";
      spec.publicKeys = args.all("registry-key");
      if (spec.publicKeys.empty())
        if (const char *k = environmentOverride("IREEPKG_REGISTRY_KEY"); k && *k)
          spec.publicKeys.push_back(k);
      request.registries.push_back(spec);
    }
    request.prefix = prefix->path;
    request.install = options;
    report = workflow::installByName(request, *env, reporter);
  }
  reporter.clearProgress();
  if (!report && (report.error().code == ErrorCode::Interrupted ||
                  interruptRequested()))
    return printInterrupted(report.error(), prefix->path, json);
  if (!report)
    return printFailure(report.error(), json);
  if (options.dryRun)
    return printDryRun(*report, json, quiet);
  printChangeReport(*report, json, quiet);
  reporter.printSummary(*report);
  if (interruptRequested()) {
    std::fprintf(stderr, "ireepkg: interrupted, after the change was made\n");
    return kExitInterrupted;
  }
  return kExitOk;
}

} // namespace ireepkg::cli
