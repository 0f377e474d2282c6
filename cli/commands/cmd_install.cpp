//===- cli/commands/cmd_install.cpp - `ireepkg install` -------------------===//
#include "host/interrupt.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "commands/options.h"
#include "output/output.h"
#include "commands/project_change.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/workflow/workflow.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

static bool fsExists(const std::string &p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

namespace ireepkg::cli {

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

const Command &installCommand() {
  static const Command command{
      .name = "install",
      .synopsis = "<archive>... | <name>[@<constraint>]... [--registry URL] "
                  "[--prefix DIR] [--dry-run]",
      .summary = "install packages, from archive files or a registry, in one "
                 "transaction",
      .description =
          "With archive files: verifies each archive (member rules, RECORD "
          "hashes and sizes, the manifest), checks that the package supports "
          "the target platform, resolves dependencies among the given "
          "archives and what is already installed, and checks the incoming "
          "hook pass pipelines with MLIR's own parser and the MLIR pass "
          "plugins of the prefix as it will be.\n\n"
          "With package names (`simple-mul`, `simple-mul@^1.2`): resolves "
          "them and their dependencies against the registry (--registry, "
          "else $IREEPKG_REGISTRY, else the project's registries), keeping "
          "the installed versions where they fit, for the IREE version in "
          "the environment (or --iree-version) and the prefix's platform. "
          "Every snapshot signature, index hash and archive hash is "
          "verified; archives are downloaded in parallel into the download "
          "cache. With --bundle, packages come from an offline bundle "
          "instead, verified the same way. Into a project's own prefix "
          "(no --prefix, inside the project) only packages plugins.json "
          "lists are installed by name: the next `sync` would remove any "
          "other, so `ireepkg add` it instead.\n\n"
          "The IREE in use is the version of the iree-base-compiler / "
          "iree-base-runtime distribution that installed iree-compile (else "
          "iree-run-module) found on PATH or in $VIRTUAL_ENV/bin, else what "
          "the tool's --version prints; --iree-version overrides it. An "
          "archive whose \"requires.iree\" excludes it is refused, and a "
          "version by name is never chosen, unless --ignore-iree-version "
          "(then each such package is installed with a warning); when no "
          "IREE is found, a warning says the requirements were not "
          "checked. When two packages' runtime plugins "
          "declare the same import, the report says which one IREE uses (the "
          "one activated last) and which is shadowed.\n\n"
          "Everything is installed in one transaction: it completes, or the "
          "prefix is left exactly as it was. The prefix's activation index "
          "and IREE flagfiles are rewritten in the same transaction. "
          "Progress, the summary and Ctrl-C (exit status 130) are as for "
          "`ireepkg sync`.\n\n"
          "--dry-run resolves and checks as the install would and prints "
          "what would change, without fetching an archive by name or "
          "changing the prefix.",
      .options =
          {kPrefix,
           {"platform", 0, "OS-ARCH",
            "install for this platform instead of the host's"},
           {"cpu-level", 0, "LEVEL",
            "write state/runtime.flags with the builds for this CPU level "
            "(x86_64_v1 to x86_64_v4, or ARCH+FEATURE...) instead of this "
            "machine's CPU, for a prefix prepared for another machine; kept "
            "by later commands (installed.json's cpu_level); \"host\" "
            "clears it"},
           kOptRegistry,
           kOptRegistryKey,
           {"bundle", 0, "FILE", "install from this offline bundle"},
           kOptOffline,
           kOptIreeVersion,
           kOptIgnoreIreeVersion,
           kLockTimeout,
           {"no-cache", 0, "", "do not use or fill the package cache"},
           kDryRun,
           kQuiet,
           kJson},
      .examples = {"ireepkg install simple-mul-1.2.0.ireepkg",
                   "ireepkg install --prefix /opt/iree-plugins *.ireepkg",
                   "ireepkg install simple-mul@^1.2 --registry "
                   "https://plugins.example.org/iree --registry-key RWQ...",
                   "ireepkg install --bundle vendor.ireebundle --registry-key "
                   "RWQ... simple-mul"},
      .minPositional = 1,
      .run = runInstall,
  };
  return command;
}

} // namespace ireepkg::cli
