//===- cli/commands/cmd_doctor.cpp - `ireepkg doctor` ---------------------===//
//
// Checks what a user of the prefix will run into:
//
//  1. the IREE tools (iree-compile, iree-run-module, iree-benchmark-module)
//     on PATH, then in $VIRTUAL_ENV/bin, with their versions;
//  2. every installed runtime plugin for the host, each loaded in a child
//     process (ireepkg-plugin-probe, runtime_integration/probe/) that
//     drives it through IREE's executable plugin ABI. Crashes, hangs and
//     exit() in a plugin end the child, never doctor; the child reports the
//     stage it
//     was in through a pipe, so a crash is blamed on the right call.
//
// What a plugin resolves is compared with its manifest's `imports`. Extra
// imports can only be found by asking for them by name: each plugin is
// asked for the imports the OTHER plugins of its package declare, and for
// one name no plugin declares (a plugin that resolves anything is wrong).
//
// 3. every installed compiler plugin (see
//    ireepkg/compiler_integration/compiler_doctor.h): MLIR plugins loaded
//    into mlir-opt-22, iree-static ids against `iree-compile
//    --iree-list-plugins`, iree-dynamic libraries loaded by iree-compile.
//
// Environment: IREEPKG_PROBE (the probe binary; default: beside this
// executable), IREEPKG_DOCTOR_TIMEOUT (seconds per plugin, default 30).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/text.h"
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"
#include "commands/shared.h"

#include "ireepkg/compiler_integration/compiler_doctor.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/compiler_integration/mlir_check.h"
#include "ireepkg/pkg/checks/package_test.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/shadowing.h"
#include "ireepkg/runtime_integration/runtime_doctor.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/runtime_integration/runtime_state.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace ireepkg::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

/// A string member of a probe report ("" when absent or not a string).
std::string str(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

/// JSON text that never throws on bytes that are not UTF-8 (paths, plugin
/// strings, child output).
std::string dumpJson(const json &j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

json checkToJson(const RuntimePluginCheck &c) {
  json j;
  j["package"] = c.package;
  j["version"] = c.version;
  j["plugin"] = c.plugin.empty() ? json(nullptr) : json(c.plugin);
  j["format"] = c.format.empty() ? json(nullptr) : json(c.format);
  j["path"] = c.path.empty() ? json(nullptr) : json(c.path);
  if (!c.image.empty())
    j["fatelf_image"] = c.image;
  j["ok"] = c.problems.empty();
  j["skipped"] = c.skipped.empty() ? json(nullptr) : json(c.skipped);
  if (!c.build.empty())
    j["build"] = c.build;
  j["problems"] = c.problems;
  j["warnings"] = c.warnings;
  j["imports"] = c.declared;
  j["undeclared_checked"] = c.probed;
  j["probe"] = c.probe;
  j["process"] = c.process;
  return j;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

json compilerCheckToJson(const CompilerPluginCheck &c) {
  auto orNull = [](const std::string &s) {
    return s.empty() ? json(nullptr) : json(s);
  };
  return {
      {"package", c.package},         {"version", c.version},
      {"plugin", c.plugin},           {"kind", c.kind},
      {"path", orNull(c.path)},       {"ok", c.problems.empty()},
      {"skipped", orNull(c.skipped)}, {"checked_with", orNull(c.checkedWith)},
      {"details", orNull(c.details)}, {"problems", c.problems},
      {"warnings", c.warnings}};
}

/// The compiler plugins' section of the text report ("" when there are
/// none).
std::string compilerChecksText(const std::vector<CompilerPluginCheck> &checks,
                               const std::string &prefix,
                               const Platform &platform) {
  if (checks.empty())
    return "";
  std::string text =
      "\nCompiler plugins in " + prefix + " (" + platform.str() + "):\n";
  for (const CompilerPluginCheck &c : checks) {
    std::string who =
        c.package + " " + c.version + " " + c.plugin + " (" + c.kind + ")";
    if (!c.problems.empty())
      for (const std::string &problem : c.problems)
        text += "FAIL  " + who + ": " + problem + "\n";
    else if (!c.skipped.empty())
      text += "skip  " + who + " — " + c.skipped + "\n";
    else
      text += "ok    " + who + " — checked with " + c.checkedWith +
              (c.details.empty() ? "" : ": " + c.details) + "\n";
    for (const std::string &warning : c.warnings)
      text += "warn  " + who + ": " + warning + "\n";
  }
  return text;
}

/// The IREE in use and the packages' requirements on it, as text.
std::string ireeText(const Expected<IreeInstallation> &iree,
                     const json &requirements) {
  std::string text;
  if (iree)
    text = "IREE in use: " + iree->version.str() + " — " +
           iree->describeSource() + "\n";
  else
    text = "IREE in use: unknown — " + iree.error().message + "\n";
  size_t unchecked = 0;
  for (const json &r : requirements) {
    std::string who = str(r, "package") + " " + str(r, "version");
    std::string req = "requires IREE " + str(r, "requires");
    if (r["ok"].is_null())
      ++unchecked;
    else if (r["ok"].get<bool>())
      text += "ok    " + who + " " + req + "\n";
    else
      text += "FAIL  " + who + " " + req + ", but IREE " + iree->version.str() +
              " is in use (change the IREE, or install a version of " +
              str(r, "package") + " whose manifest's requires.iree accepts " +
              "it)\n";
  }
  if (unchecked)
    text += "skip  the IREE requirements of " + std::to_string(unchecked) +
            (unchecked == 1 ? " package" : " packages") +
            " are not checked: no IREE version is known\n";
  return text;
}

/// The installed packages' pipeline hooks, checked against the IREE in use
/// (iree_pipeline_check.h), with their dynamic IREE plugins loaded.
Expected<IreePipelineReport>
checkHookPipelines(const std::vector<DoctorPackage> &packages,
                   const Platform &platform, double timeout) {
  std::vector<PipelineSource> pipelines;
  IreePipelineCheckOptions options;
  options.timeoutSeconds = timeout;
  for (const DoctorPackage &p : packages) {
    for (size_t i = 0; i < p.manifest->hooks.size(); ++i) {
      const Hook &h = p.manifest->hooks[i];
      if (h.pipeline.empty())
        continue;
      Location where{p.dir + "/ireeplugin.json", 0, 0,
                     "/compiler/hooks/" + std::to_string(i) + "/pipeline",
                     p.name, ""};
      pipelines.push_back({h.pipeline, h.point, where});
    }
    for (const CompilerPlugin &cp : p.manifest->compilerPlugins) {
      auto lib = cp.library.find(platform.str());
      if (cp.kind == CompilerPluginKind::IreeDynamic &&
          lib != cp.library.end() && platform == hostPlatform())
        options.dynamicPlugins.push_back(p.dir + "/" + lib->second);
    }
  }
  DiagnosticList ignored; // the report says the same
  return checkPipelinesWithIree(pipelines, options, ignored);
}

/// The hook pipelines' section of the text report ("" when there are none).
std::string hookPipelinesText(const IreePipelineReport &report,
                              const std::vector<DoctorPackage> &packages) {
  if (report.pipelines.empty())
    return "";
  std::string text = "\nHook pipelines, checked against IREE" +
                     (report.ran ? " with " + report.tool : std::string()) +
                     ":\n";
  for (const IreePipelineCheck &c : report.pipelines) {
    std::string who = c.where.package;
    for (const DoctorPackage &p : packages)
      if (p.name == c.where.package)
        who += " " + p.version.str();
    who += " " + std::string(hookPointName(c.point));
    if (c.status == "ok")
      text += "ok    " + who + " — " + c.pipeline + "\n";
    else if (c.status == "invalid")
      text += "FAIL  " + who + ": IREE cannot parse " + c.pipeline + ": " +
              c.message + " (iree-compile would ignore it and exit with 0)\n";
    else if (c.status == "failed")
      text += "warn  " + who + ": " + c.pipeline +
              " fails on an empty module: " + c.message + "\n";
    else
      text += "skip  " + who + " — " + c.message + "\n";
  }
  return text;
}

} // namespace

int runDoctor(const Command &, const ParsedArgs &args) {
  bool jsonOutput = args.flag("json");
  int code = kExitOk;
  auto opened = readPrefixState(args, jsonOutput, code);
  if (!opened)
    return code;
  const PrefixLocation *prefix = &opened->prefix;
  InstalledState *state = &opened->state;
  CliReporter reporter(jsonOutput);

  json tools = json::array();
  for (const char *name : kDoctorToolNames)
    tools.push_back(checkIreeTool(name));

  Platform host = hostPlatform();
  Platform platform = state->platform.empty()
                          ? host
                          : Platform::parse(state->platform).value_or(host);
  std::string probe = findPluginProbe();
  bool probeFound = isExecutableFile(probe);
  std::string timeoutWarning;
  double timeout = pluginTimeoutSeconds(timeoutWarning);
  if (!timeoutWarning.empty())
    printWarning(timeoutWarning);

  // The IREE in use; each installed package's requires.iree against it.
  auto iree = detectIree();
  json requirements = json::array();
  size_t requirementsFailed = 0;

  std::vector<RuntimePluginCheck> checks;
  const auto hostBuilds = hostRuntimeBuilds(prefix->path);
  const std::string hostCpu = hostCpuDescription();
  std::deque<Manifest> manifests; // stable addresses for compilerPackages
  std::vector<DoctorPackage> compilerPackages;
  for (const InstalledPackage &package : state->packages) {
    auto manifest = readInstalledManifest(prefix->path, package, reporter);
    if (manifest && manifest->requiresIree) {
      json r = {{"package", package.name},
                {"version", package.version.str()},
                {"requires", manifest->requiresIree->text()}};
      if (iree) {
        bool fits = manifest->requiresIree->set().contains(iree->version);
        requirementsFailed += !fits;
        r["ok"] = fits;
      } else {
        r["ok"] = nullptr; // not checked
      }
      requirements.push_back(std::move(r));
    }
    if (!manifest) {
      RuntimePluginCheck c;
      c.package = package.name;
      c.version = package.version.str();
      c.problems.push_back("cannot read the installed manifest: " +
                           manifest.error().message);
      checks.push_back(std::move(c));
      continue;
    }
    std::string dir = packageDir(prefix->path, package.name, package.version);
    manifests.push_back(*manifest);
    compilerPackages.push_back(
        {package.name, package.version, dir, &manifests.back()});
    for (const RuntimePlugin &plugin : manifest->runtimePlugins) {
      RuntimePluginCheck c;
      c.package = package.name;
      c.version = package.version.str();
      c.plugin = plugin.name;
      c.format = std::string(runtimeFormatName(plugin.format));
      c.declared = plugin.imports;
      std::sort(c.declared.begin(), c.declared.end());
      std::set<std::string> others = {kDoctorUnknownImport};
      for (const RuntimePlugin &other : manifest->runtimePlugins)
        for (const std::string &name : other.imports)
          others.insert(name);
      for (const std::string &name : others)
        if (!std::binary_search(c.declared.begin(), c.declared.end(), name))
          c.probed.push_back(name);
      RuntimeLibraryChoice choice = chooseRuntimeLibrary(plugin, platform, dir);
      std::string rel = choice.rel;
      if (!rel.empty())
        c.path = dir + "/" + rel;
      // A build for this CPU's level, as libireepkg_runtime chooses it.
      if (auto b = hostBuilds.find({package.name, plugin.name});
          !choice.fact && platform == host && b != hostBuilds.end() &&
          plugin.library.count(b->second.key) &&
          ireepkg_cpu_parse_key(b->second.key.data(), b->second.key.size(),
                                false)
                  .base_size != b->second.key.size()) {
        rel = plugin.library.at(b->second.key);
        c.path = b->second.path;
        c.build = b->second.key + ", chosen for this CPU: " + hostCpu;
      }
      if (choice.fact) {
        c.skipped = stoppedPluginNote(*manifest, plugin, platform, choice, dir);
      } else if (platform != host) {
        c.skipped = "the prefix targets " + platform.str() +
                    "; only plugins for this host (" + host.str() +
                    ") can be loaded";
      } else if (rel.empty()) {
        c.skipped = "no build for " + platform.str();
      } else if (!fs::exists(fs::path(c.path))) {
        c.problems.push_back("the library " + rel +
                             " is missing from the installed package");
      } else if (!probeFound) {
        c.problems.push_back("could not be checked: the plugin probe " + probe +
                             " was not found (set IREEPKG_PROBE)");
      } else {
        probeRuntimePlugin(c, plugin, probe, timeout);
      }
      checks.push_back(std::move(c));
    }
  }

  CompilerDoctorTools compilerTools;
  compilerTools.mlirOpt = findTool("mlir-opt-22").path;
  compilerTools.ireeCompile = findTool("iree-compile").path;
  compilerTools.findTool = [](const std::string &name) {
    return findTool(name).path;
  };
  compilerTools.timeoutSeconds = timeout;
  std::vector<CompilerPluginCheck> compilerChecks =
      checkCompilerPlugins(compilerPackages, platform, compilerTools);

  auto hookPipelines = checkHookPipelines(compilerPackages, platform, timeout);
  if (!hookPipelines)
    return printFailure(hookPipelines.error(), jsonOutput);

  size_t failed = 0, skipped = 0;
  for (const RuntimePluginCheck &c : checks) {
    if (!c.problems.empty())
      ++failed;
    else if (!c.skipped.empty())
      ++skipped;
  }
  bool ok = failed == 0 && requirementsFailed == 0;
  for (const CompilerPluginCheck &c : compilerChecks)
    ok = ok && c.problems.empty();
  for (const IreePipelineCheck &c : hookPipelines->pipelines)
    ok = ok && c.status != "invalid";
  json ireeJson = {
      {"version", iree ? json(iree->version.str()) : json(nullptr)},
      {"source", iree ? json(iree->describeSource()) : json(nullptr)},
      {"problem", iree ? json(nullptr) : json(iree.error().message)},
      {"requirements", requirements}};
  std::vector<ShadowedImport> shadowed = shadowedImports(prefix->path);

  // --run-tests: the installed packages' own tests (package_test.h).
  json testsJson = nullptr;
  std::string testsText;
  if (args.flag("run-tests")) {
    auto results = runInstalledPackageTests(
        prefix->path, {}, packageTestTools(prefix->path), reporter);
    if (!results)
      return printFailure(results.error(), jsonOutput);
    testsJson = json::array();
    testsText = "\nPackage tests:\n";
    if (results->empty())
      testsText += "  none installed\n";
    for (const PackageTestResult &r : *results) {
      ok = ok && r.outcome != PackageTestResult::Outcome::Failed;
      testsJson.push_back(json::parse(packageTestResultToJson(r).dump()));
      testsText += formatPackageTestResult(r);
    }
  }

  if (jsonOutput) {
    json plugins = json::array();
    for (const RuntimePluginCheck &c : checks)
      plugins.push_back(checkToJson(c));
    json compiler = json::array();
    for (const CompilerPluginCheck &c : compilerChecks)
      compiler.push_back(compilerCheckToJson(c));
    json out = {{"prefix", prefix->path},
                {"platform", platform.str()},
                {"host", host.str()},
                {"probe_path", probe},
                {"timeout_seconds", timeout},
                {"tools", tools},
                {"iree", ireeJson},
                {"plugins", plugins},
                {"compiler_plugins", compiler},
                {"hook_pipelines",
                 json::parse(toJson(*hookPipelines).dump())},
                {"shadowed_imports", shadowedImportsToJson(shadowed)},
                {"ok", ok}};
    if (!testsJson.is_null())
      out["tests"] = testsJson;
    std::printf("%s\n", dumpJson(out).c_str());
    return ok ? kExitOk : kExitFailure;
  }

  std::string text = "IREE tools:\n";
  size_t width = 0;
  for (const char *name : kDoctorToolNames)
    width = std::max(width, std::strlen(name));
  for (const json &t : tools) {
    std::string name = str(t, "name");
    std::string line = "  " + name + std::string(width + 2 - name.size(), ' ');
    if (!t.value("found", false)) {
      line += str(t, "problem");
    } else {
      line += str(t, "path") + " — " + str(t, "version");
      if (std::string wheel = str(t, "package"); !wheel.empty())
        line += " (" + wheel + ")";
      if (std::string problem = str(t, "problem"); !problem.empty())
        line += "; " + problem;
    }
    text += line + "\n";
  }
  text += "\n" + ireeText(iree, requirements);
  text +=
      "\nRuntime plugins in " + prefix->path + " (" + platform.str() + "):\n";
  if (checks.empty())
    text += "  none installed\n";
  for (const RuntimePluginCheck &c : checks) {
    std::string who = c.package + " " + c.version;
    if (!c.plugin.empty())
      who += " " + c.plugin + " (" + c.format + ")";
    if (!c.problems.empty()) {
      for (const std::string &problem : c.problems)
        text += "FAIL  " + who + ": " + problem + "\n";
    } else if (!c.skipped.empty()) {
      text += "skip  " + who + " — " + c.skipped + "\n";
    } else {
      text += "ok    " + who + " — " +
              (c.declared.empty() ? std::string("no imports declared")
                                  : "resolves " + joinNames(c.declared)) +
              "\n";
    }
    if (!c.build.empty())
      text += "      build " + c.build + "\n";
    for (const std::string &warning : c.warnings)
      text += "warn  " + who + ": " + warning + "\n";
  }
  if (!checks.empty()) {
    size_t checked = checks.size() - skipped;
    text += "\n" + std::to_string(checked) +
            (checked == 1 ? " plugin" : " plugins") +
            " checked: " + std::to_string(checked - failed) + " ok, " +
            std::to_string(failed) + " with problems";
    if (skipped)
      text += ", " + std::to_string(skipped) + " skipped";
    text += "\n";
    if (checked > 0)
      text += "Undeclared imports are found by name only: each plugin was "
              "asked for the imports the other plugins of its package "
              "declare and for \"" +
              std::string(kDoctorUnknownImport) + "\".\n";
  }
  text += compilerChecksText(compilerChecks, prefix->path, platform);
  text += hookPipelinesText(*hookPipelines, compilerPackages);
  if (!shadowed.empty())
    text += "\nImports that more than one package provides (IREE resolves "
            "imports in reverse registration order):\n" +
            shadowedImportsText(shadowed);
  text += testsText;
  std::fputs(text.c_str(), stdout);
  return ok ? kExitOk : kExitFailure;
}

const Command &doctorCommand() {
  static const Command command{
      .name = "doctor",
      .synopsis = "[--prefix DIR] [--json]",
      .summary =
          "check the IREE tools and load every runtime plugin in isolation",
      .description =
          "Finds the IREE tools (PATH, the active virtual environment) and "
          "reports their versions; then loads every installed runtime plugin "
          "for the host in a separate process through IREE's executable "
          "plugin ABI (query, version check, load with a host allocator, "
          "resolve every declared import, unload) and reports crashes, "
          "version or sanitizer mismatches, and any difference between the "
          "manifest's imports and what the library really resolves. A "
          "crashing plugin cannot crash doctor. Then checks every compiler "
          "plugin: MLIR pass and dialect plugins loaded into mlir-opt-22 "
          "(which only warns about a plugin it cannot load) and into the "
          "other MLIR tools they name (\"tools\"; one not on PATH is a "
          "warning), iree-static ids "
          "against `iree-compile --iree-list-plugins`, iree-dynamic libraries "
          "loaded by iree-compile. Exit status 1 if any plugin has a "
          "problem.\n\n"
          "--run-tests also runs the installed packages' tests, as `ireepkg "
          "test` does; a failing test makes the exit status 1.",
      .options = {kPrefix,
                  kJson,
                  {"run-tests", 0, "",
                   "also run the installed packages' tests"}},
      .examples = {"ireepkg doctor", "ireepkg doctor --json"},
      .maxPositional = 0,
      .run = runDoctor,
  };
  return command;
}

} // namespace ireepkg::cli
