//===- cli/commands/cmd_flags.cpp - `ireepkg flags runtime|compiler` ------===//
//
// `flags runtime` goes through libireepkg_runtime, the discovery library
// applications use (one mapped index, nothing parsed or scanned), so what
// the CLI prints is what embedders get; plugins it does not activate for
// the target are named on stderr with the reason (read from the package's
// manifest and FatELF table, only for those). `flags compiler` builds the
// compiler configuration from the installed manifests and plugins.json.
//
//===----------------------------------------------------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"
#include "commands/shared.h"

#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg::cli {

namespace {

/// Why `p` (skipped by libireepkg_runtime) is not activated for the list's
/// target, e.g. "no build for linux-riscv64 (its FatELF file
/// runtime/k.sos holds x86_64, aarch64)".
std::string skipReason(const ireepkg_runtime_plugin_list_t &list,
                       const ireepkg_runtime_plugin_t &p,
                       std::map<std::string, std::optional<Manifest>> &read) {
  if (p.skip_reason == IREEPKG_RUNTIME_SKIP_UNKNOWN_FORMAT)
    return std::string("its format \"") + p.format +
           "\" is not supported by this ireepkg";
  std::string none = std::string("no build for ") + list.target_platform;
  auto platform = Platform::parse(list.target_platform);
  auto version = Version::parse(p.package_version);
  if (!platform || !version)
    return none;
  InstalledPackage package;
  package.name = p.package;
  package.version = *version;
  auto [it, fresh] =
      read.try_emplace(package.name + " " + p.package_version, std::nullopt);
  if (fresh) {
    CliReporter quiet(true);
    if (auto m = readInstalledManifest(list.prefix, package, quiet))
      it->second = std::move(*m);
  }
  const std::optional<Manifest> &manifest = it->second;
  if (!manifest)
    return none;
  for (const RuntimePlugin &plugin : manifest->runtimePlugins)
    if (plugin.name == p.name) {
      RuntimeLibraryChoice choice = chooseRuntimeLibrary(
          plugin, *platform,
          packageDir(list.prefix, package.name, package.version));
      return choice.rel.empty() ? choice.reason : none;
    }
  return none;
}

int runtimeFlags(const ParsedArgs &args, const PrefixLocation &prefix,
                 const std::string &format) {
  ireepkg_runtime_error_t *error = nullptr;
  ireepkg_runtime_index_t *index = nullptr;
  auto fail = [&](ireepkg_runtime_error_t *e) {
    printError(ireepkg_runtime_error_message(e),
               ireepkg_runtime_error_hint(e) ? ireepkg_runtime_error_hint(e)
                                             : "");
    ireepkg_runtime_free_error(e);
    return kExitFailure;
  };
  if (ireepkg_runtime_open(prefix.path.c_str(), 0, &index, &error) !=
      IREEPKG_RUNTIME_OK)
    return fail(error);
  // The prefix's own platform unless another target is asked for.
  std::string target =
      args.value("platform").value_or(ireepkg_runtime_index_platform(index));
  if (!args.value("platform"))
    noteOtherPlatform(prefix.path, target,
                      "these are its flags for " + target +
                          " (--platform chooses another target)");
  if (auto level = args.value("cpu-level")) {
    auto t = cpuLevelTarget(target, *level);
    if (!t) {
      ireepkg_runtime_close(index);
      printError(t.error().message, t.error().hint);
      return kExitUsage;
    }
    target = *t;
  }
  ireepkg_runtime_plugin_list_t *list = nullptr;
  uint32_t flags = args.flag("check-files") ? IREEPKG_RUNTIME_LIST_CHECK_FILES : 0;
  if (ireepkg_runtime_list_plugins(index, target.c_str(), flags, &list,
                                   &error) != IREEPKG_RUNTIME_OK) {
    ireepkg_runtime_close(index);
    return fail(error);
  }
  int rc = kExitOk;
  if (format == "json") {
    nlohmann::json plugins = nlohmann::json::array(),
                   skipped = nlohmann::json::array();
    auto describe = [](const ireepkg_runtime_plugin_t &p) {
      nlohmann::json j = {{"name", p.name},
                          {"package", p.package},
                          {"version", p.package_version},
                          {"format", p.format}};
      if (p.path) {
        j["library_key"] = p.library_key;
        j["path"] = p.path;
        j["spec"] = p.spec;
      }
      j["imports"] = nlohmann::json::array();
      for (size_t i = 0; i < p.import_count; ++i)
        j["imports"].push_back(p.imports[i]);
      j["parameters"] = nlohmann::json::object();
      for (size_t i = 0; i < p.parameter_count; ++i)
        j["parameters"][p.parameters[i].key] = p.parameters[i].value;
      return j;
    };
    nlohmann::json flagList = nlohmann::json::array();
    for (size_t i = 0; i < list->count; ++i) {
      plugins.push_back(describe(list->plugins[i]));
      flagList.push_back(std::string("--executable_plugin=") +
                         list->plugins[i].spec);
    }
    std::map<std::string, std::optional<Manifest>> manifests;
    for (size_t i = 0; i < list->skipped_count; ++i) {
      skipped.push_back(describe(list->skipped[i]));
      skipped.back()["reason"] = skipReason(*list, list->skipped[i], manifests);
    }
    std::printf("%s\n", nlohmann::json({{"prefix", list->prefix},
                                        {"platform", list->target_platform},
                                        {"flags", flagList},
                                        {"plugins", plugins},
                                        {"skipped", skipped}})
                            .dump(2)
                            .c_str());
  } else {
    std::map<std::string, std::optional<Manifest>> manifests;
    for (size_t i = 0; i < list->skipped_count; ++i) {
      const ireepkg_runtime_plugin_t &p = list->skipped[i];
      std::fprintf(stderr,
                   "ireepkg: note: %s %s: runtime plugin \"%s\" is not "
                   "activated: %s\n",
                   p.package, p.package_version, p.name,
                   skipReason(*list, p, manifests).c_str());
    }
    char *text = nullptr;
    size_t size = 0;
    if (ireepkg_runtime_format_flags(list,
                                     format == "flagfile"
                                         ? IREEPKG_RUNTIME_FLAGS_FLAGFILE
                                         : IREEPKG_RUNTIME_FLAGS_LINES,
                                     &text, &size, &error) != IREEPKG_RUNTIME_OK)
      rc = fail(error);
    else
      std::fwrite(text, 1, size, stdout);
    ireepkg_runtime_free_string(text);
  }
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  return rc;
}

} // namespace

/// The compiler configuration of a prefix (shared with `exec`): the
/// library's, with the compiler found on PATH when one must be probed.
Expected<CompilerConfig> prefixCompilerConfig(const PrefixLocation &prefix,
                                              CompilerConfigRequest request,
                                              Reporter &reporter) {
  CompilerTool tool = request.tool;
  return buildPrefixCompilerConfig(prefix.path, std::move(request), reporter,
                                   [tool] {
                                     return findTool(std::string(
                                                         compilerToolName(tool)))
                                         .path;
                                   });
}

int runFlags(const Command &, const ParsedArgs &args) {
  const std::string &which = args.positional[0];
  std::string format = args.value("format").value_or("args");
  if (args.flag("json")) {
    if (args.value("format") && format != "json") {
      printError("--json and --format " + format + " contradict each other",
                 "give one of them (--json is --format json)");
      return kExitUsage;
    }
    format = "json";
  }
  if (format != "args" && format != "flagfile" && format != "json") {
    printError("unknown format '" + format + "'" +
                   didYouMean(format, std::vector<std::string_view>{
                                          "args", "flagfile", "json"}),
               "formats are args, flagfile and json");
    return kExitUsage;
  }
  if (which != "runtime" && which != "compiler") {
    printError("'flags' takes runtime or compiler, not '" + which + "'" +
                   didYouMean(which, std::vector<std::string_view>{
                                         "runtime", "compiler"}));
    return kExitUsage;
  }
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  if (which == "runtime") {
    if (args.value("tool") || args.value("target")) {
      printError(std::string(args.value("tool") ? "--tool" : "--target") +
                 " applies to 'flags compiler'");
      return kExitUsage;
    }
    return runtimeFlags(args, *prefix, format);
  }
  if (args.value("cpu-level")) {
    printError("--cpu-level applies to 'flags runtime'");
    return kExitUsage;
  }
  CompilerConfigRequest request;
  if (auto tool = args.value("tool")) {
    auto t = parseCompilerTool(*tool);
    if (!t) {
      printError("unknown tool '" + *tool + "'",
                 "tools are iree-compile, iree-opt and mlir-opt");
      return kExitUsage;
    }
    request.tool = *t;
  }
  for (const std::string &set : args.all("set")) {
    size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) {
      printError("--set takes flag=value, not '" + set + "'");
      return kExitUsage;
    }
    request.sets.emplace_back(set.substr(0, eq), set.substr(eq + 1));
  }
  for (const std::string &target : args.all("target")) {
    auto t = parseCompileTarget(target);
    if (!t) {
      printError(t.error());
      return kExitUsage;
    }
    request.targets.push_back(*t);
  }
  CliReporter reporter(format == "json");
  auto config = prefixCompilerConfig(*prefix, request, reporter);
  if (!config)
    return printFailure(config.error(), format == "json");
  for (const Diagnostic &d : config->notes)
    reporter.warning(d);
  if (format == "json") {
    nlohmann::json flags = nlohmann::json::array();
    for (const CompilerFlag &f : config->flags)
      flags.push_back({{"flag", f.text()},
                       {"package", f.package},
                       {"global", f.global}});
    std::printf("%s\n", nlohmann::json({{"prefix", prefix->path},
                                        {"tool", std::string(compilerToolName(
                                                     request.tool))},
                                        {"flags", flags}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  if (format == "flagfile")
    std::printf("# %s flags for the ireepkg prefix %s\n",
                std::string(compilerToolName(request.tool)).c_str(),
                prefix->path.c_str());
  for (const CompilerFlag &f : config->flags)
    std::printf("%s\n", f.text().c_str());
  return kExitOk;
}

const Command &flagsCommand() {
  static const Command command{
      .name = "flags",
      .synopsis =
          "runtime|compiler [--format args|flagfile|json | --json] [--platform "
          "OS-ARCH] [--cpu-level LEVEL] [--target TARGET]",
      .summary = "print the IREE flags that activate the prefix's plugins",
      .description =
          "`flags runtime` prints one --executable_plugin= per runtime plugin "
          "of the prefix, in activation order (IREE checks the last one "
          "first, so later packages override earlier ones), for the "
          "prefix's platform (with a note on stderr when that is not the "
          "host's) or for --platform; plugins not activated for the target "
          "(no build for it, or one IREE's runtime cannot call there, such "
          "as embedded ELF on Windows) are named "
          "on stderr, one line each with the reason (with --format json, in "
          "\"skipped\"). `flags compiler` prints the compiler flags of the "
          "active compiler plugins and hooks; --target chooses the packages' "
          "tuning specs, linked into one file in activation order (the "
          "first package wins where two specs match the same operation). "
          "Read-only and fast: it reads "
          "the prefix's precomputed activation index, and only for skipped "
          "plugins their manifest.",
      .options =
          {{"format", 0, "FORMAT",
            "args (one flag per line, the default), flagfile (with a "
            "comment header, for --flagfile=) or json"},
           {"platform", 0, "OS-ARCH",
            "the target (default: the prefix's platform); runtime only"},
           {"cpu-level", 0, "LEVEL",
            "runtime only: choose builds for this CPU instead of the host's "
            "(x86_64_v1 to x86_64_v4, or ARCH+FEATURE..., e.g. "
            "x86_64+avx512f); without it the host's CPU is read, and other "
            "platforms get their baseline builds"},
           {"tool", 0, "TOOL",
            "compiler only: iree-compile (default), iree-opt or mlir-opt"},
           {"set", 0, "FLAG=VALUE",
            "compiler only: set a plugin option (checked against its "
            "schema)",
            true},
           {"target", 0, "TARGET",
            "compiler only: what the compile is for, choosing tuning specs: "
            "a ROCm architecture (gfx942), llvm-cpu or a CPU name; "
            "repeatable",
            true},
           {"check-files", 0, "",
            "runtime only: fail if a listed file is "
            "missing"},
           {"json", 0, "", "the same as --format json"},
           kPrefix},
      .examples = {"ireepkg flags runtime",
                   "ireepkg flags runtime --format json",
                   "ireepkg flags runtime --platform linux-aarch64",
                   "ireepkg flags runtime --cpu-level x86_64_v3"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runFlags,
  };
  return command;
}

} // namespace ireepkg::cli
