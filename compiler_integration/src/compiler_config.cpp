//===- compiler_integration/src/compiler_config.cpp -----------------------===//
//
// Compiler configuration.
//
// See compiler_config.h. No MLIR here: composing flags needs none, and the
// read-only commands that use this must start fast.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/programs.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/compiler_integration/compiler_plugin_info.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/iree/iree_version.h"

#include "ireepkg/base/hash.h"
#include "ireepkg/compiler_integration/compiler_index.h"
#include "ireepkg/pkg/checks/package_test.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fs = std::filesystem;

namespace ireepkg {

using json = nlohmann::json;

std::optional<CompilerTool> parseCompilerTool(std::string_view name) {
  std::string_view base = name.substr(name.rfind('/') + 1);
  if (base.rfind("iree-compile", 0) == 0)
    return CompilerTool::IreeCompile;
  if (base.rfind("iree-opt", 0) == 0)
    return CompilerTool::IreeOpt;
  if (base.rfind("mlir-opt", 0) == 0)
    return CompilerTool::MlirOpt;
  return std::nullopt;
}

std::string_view compilerToolName(CompilerTool tool) {
  switch (tool) {
  case CompilerTool::IreeCompile:
    return "iree-compile";
  case CompilerTool::IreeOpt:
    return "iree-opt";
  case CompilerTool::MlirOpt:
    return "mlir-opt";
  }
  return "iree-compile";
}

bool isGlobalCompilerFlag(std::string_view name) {
  // IREE 3.13's ireeCompilerSessionSetFlags answers "option not found" for
  // --iree-plugin (and the plugin loader reads its flags once, at global
  // initialization), so plugin activation is process-global too.
  return name == "iree-plugin" || name == "iree-load-plugin" ||
         name == "iree-hal-executable-object-search-path" ||
         name == "iree-hal-preprocess-executables-with" ||
         name.rfind("iree-hal-substitute-executable-", 0) == 0 ||
         name == "iree-codegen-transform-dialect-library";
}

//===----------------------------------------------------------------------===//
// Probing a compiler
//===----------------------------------------------------------------------===//

namespace {

/// Runs a command and returns what it wrote to stdout, then to stderr
/// (bounded): the probe only looks for markers in it.
Expected<std::string> capture(const std::vector<std::string> &argv) {
  ChildOptions options;
  options.argv = argv;
  options.maxOut = options.maxErr = 16u << 20;
  auto r = runChild(options);
  if (!r)
    return Unexpected(r.error());
  if (r->spawnError)
    return makeError(ErrorCode::NotFound, "cannot run " + argv[0] + ": " +
                                              std::strerror(r->spawnError));
  return r->out + r->err;
}

/// Where probed compilers are remembered: the package cache's directory.
std::string cachePath() {
  auto cache = PackageCache::openDefault();
  return cache ? cache->root() + "/compilers.json" : std::string();
}

/// libireepkg_compiler_abi_sentinel.so: $IREEPKG_ABI_SENTINEL, else in
/// lib/ or lib/ireepkg/ beside this executable's bin/ ("" if none).
std::string findAbiSentinel() {
  if (const char *env = environmentOverride("IREEPKG_ABI_SENTINEL");
      env && *env)
    return env;
  std::string dir = executableDir();
  if (dir.empty())
    return "";
  for (const char *sub : {"/../lib/", "/../lib/ireepkg/"}) {
    std::string path = dir + sub + "libireepkg_compiler_abi_sentinel.so";
    if (::access(path.c_str(), R_OK) == 0)
      return path;
  }
  return "";
}

/// The plugin API hash `toolPath` accepts. Asked of the compiler itself:
/// the hash is an immediate operand in the loader's machine code, not a
/// string or a symbol of libIREECompiler.so, while the compiler prints it
/// whole when it refuses a library built against other headers. A
/// compiler that does not say (another layout, no sentinel) gets the hash
/// the table knows for its version.
void learnPluginAbiHash(const std::string &toolPath, CompilerCapabilities &c) {
  if (std::string sentinel = findAbiSentinel(); !sentinel.empty()) {
    ChildOptions options;
    options.argv = {toolPath, "--iree-load-plugin=" + sentinel, "--version"};
    options.maxOut = options.maxErr = 1 << 20;
    options.timeoutSeconds = 120;
    auto r = runChild(options);
    const std::string marker = "this compiler has ";
    if (r && !r->spawnError) {
      std::string text = r->out + r->err;
      if (size_t at = text.find(marker); at != std::string::npos) {
        size_t start = at + marker.size();
        size_t end = text.find_first_not_of("0123456789abcdefABCDEF", start);
        if (end == std::string::npos)
          end = text.size();
        if (end > start) {
          c.pluginAbiHash = text.substr(start, end - start);
          c.pluginAbiHashFrom = "its refusal of a plugin built against "
                                "other headers";
          return;
        }
      }
    }
  }
  c.pluginAbiHash = knownCompilerPluginHash(c.version);
  if (!c.pluginAbiHash.empty())
    c.pluginAbiHashFrom = "ireepkg's table of IREE versions";
}

} // namespace

namespace {
Expected<CompilerCapabilities> probeCompilerTool(const std::string &toolPath);
} // namespace

Expected<CompilerCapabilities> probeCompiler(const std::string &toolPath) {
  auto c = probeCompilerTool(toolPath);
  // The IREE version is the one definition of ireepkg/iree_version.h: the
  // installed wheel's version where the tool comes from one (its
  // --version names the release candidate the release was promoted from).
  if (c)
    if (auto dist = ireeDistributionOf(toolPath))
      c->version = dist->version;
  return c;
}

namespace {

Expected<CompilerCapabilities> probeCompilerTool(const std::string &toolPath) {
  struct stat st;
  if (::stat(toolPath.c_str(), &st) != 0)
    return makeError(ErrorCode::NotFound,
                     "cannot find the compiler " + toolPath);
  std::string key = toolPath + ":" + std::to_string(st.st_size) + ":" +
                    std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec);
  std::string cache = cachePath();
  json cached = json::object();
  if (!cache.empty()) {
    // Trusted as it is: only the user's own (readOwnCacheFile).
    auto text = fsutil::readOwnCacheFile(cache, 1 << 20);
    cached = parseJsonOrDiscarded(text ? *text : std::string());
    if (!cached.is_object())
      cached = json::object();
    // Entries written before the plugin ABI hash was probed are probed
    // again.
    if (auto it = cached.find(key); it != cached.end() && it->is_object() &&
                                    (!it->value("loads_plugins", false) ||
                                     it->contains("plugin_abi_hash"))) {
      CompilerCapabilities c;
      c.known = true;
      c.path = toolPath;
      c.version = it->value("version", "");
      c.loadsPlugins = it->value("loads_plugins", false);
      c.pluginIdSpelling = it->value("plugin_id_spelling", false);
      c.pluginAbiHash = it->value("plugin_abi_hash", "");
      c.pluginAbiHashFrom = it->value("plugin_abi_hash_from", "");
      return c;
    }
  }
  auto version = capture({toolPath, "--version"});
  if (!version)
    return Unexpected(version.error());
  auto help = capture({toolPath, "--help-list-hidden"});
  if (!help || help->find("iree-") == std::string::npos)
    help = capture({toolPath, "--help"});
  if (!help)
    return Unexpected(help.error());
  CompilerCapabilities c;
  c.known = true;
  c.path = toolPath;
  const std::string marker = "compiler version ";
  if (size_t at = version->find(marker); at != std::string::npos) {
    size_t end = version->find_first_of(" \n", at + marker.size());
    c.version = version->substr(at + marker.size(), end - at - marker.size());
  }
  size_t flag = help->find("--iree-load-plugin");
  c.loadsPlugins = flag != std::string::npos;
  if (c.loadsPlugins) {
    size_t eol = help->find('\n', flag);
    std::string line = help->substr(flag, eol - flag);
    c.pluginIdSpelling = line.find("<plugin_id>=") != std::string::npos ||
                         line.find("id>=<path") != std::string::npos;
    if (!c.pluginIdSpelling)
      learnPluginAbiHash(toolPath, c);
  }
  if (!cache.empty()) {
    cached[key] = {{"version", c.version},
                   {"loads_plugins", c.loadsPlugins},
                   {"plugin_id_spelling", c.pluginIdSpelling},
                   {"plugin_abi_hash", c.pluginAbiHash},
                   {"plugin_abi_hash_from", c.pluginAbiHashFrom}};
    std::string dir = cache.substr(0, cache.rfind('/'));
    ::mkdir(dir.c_str(), 0755);
    std::string tmp = cache + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      out << cached.dump(1) << "\n";
    }
    if (::rename(tmp.c_str(), cache.c_str()) != 0)
      ::unlink(tmp.c_str());
  }
  return c;
}

} // namespace

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

namespace {

struct DeclaredOption {
  const ActivatedPackage *package;
  const CompilerPlugin *plugin;
  const json *schema;
};

std::string describeOption(const std::string &flag, const DeclaredOption &d) {
  return "option --" + flag + " of plugin " + d.plugin->id + " (package " +
         d.package->name + ")";
}

/// A `--set` string converted to the option's type.
std::optional<json> convertValue(const std::string &text, const json &schema,
                                 std::string &problem) {
  std::string type = schema.value("type", "string");
  auto number = [&](bool integer) -> std::optional<json> {
    const char *s = text.c_str();
    char *end = nullptr;
    errno = 0;
    if (integer) {
      long long v = std::strtoll(s, &end, 10);
      if (!text.empty() && *end == '\0' && errno == 0)
        return json(v);
    } else {
      double v = std::strtod(s, &end);
      if (!text.empty() && *end == '\0' && errno == 0 && std::isfinite(v))
        return json(v);
    }
    problem = "\"" + text + "\" is not " + (integer ? "an integer" : "a number");
    return std::nullopt;
  };
  if (type == "integer")
    return number(true);
  if (type == "number")
    return number(false);
  if (type == "boolean") {
    if (text == "true" || text == "1")
      return json(true);
    if (text == "false" || text == "0")
      return json(false);
    problem = "\"" + text + "\" is not a boolean (true or false)";
    return std::nullopt;
  }
  if (type == "array") {
    json arr = json::array();
    json items = schema.value("items", json::object());
    size_t start = 0;
    while (!text.empty() && start <= text.size()) {
      size_t comma = text.find(',', start);
      std::string item = text.substr(start, comma == std::string::npos
                                                ? std::string::npos
                                                : comma - start);
      auto v = convertValue(item, items, problem);
      if (!v)
        return std::nullopt;
      arr.push_back(*v);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    return arr;
  }
  return json(text);
}

std::string valueText(const json &v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  return v.dump();
}

} // namespace

//===----------------------------------------------------------------------===//
// The configuration
//===----------------------------------------------------------------------===//

/// `builtin.module(a,b)` from fragments, unwrapping fragments that are
/// already `builtin.module(...)`; anchored fragments such as
/// `func.func(...)` stay elements.
static std::string composePipelines(const std::vector<std::string> &fragments) {
  std::string inner;
  for (std::string f : fragments) {
    const std::string wrap = "builtin.module(";
    while (!f.empty() && std::isspace(static_cast<unsigned char>(f.back())))
      f.pop_back();
    if (f.compare(0, wrap.size(), wrap) == 0 && f.back() == ')')
      f = f.substr(wrap.size(), f.size() - wrap.size() - 1);
    if (f.empty())
      continue;
    inner += (inner.empty() ? "" : ",") + f;
  }
  return "builtin.module(" + inner + ")";
}

Expected<CompilerConfig>
buildCompilerConfig(const std::vector<ActivatedPackage> &packages,
                    const CompilerConfigRequest &request) {
  CompilerConfig config;
  DiagnosticList errors;
  bool mlirTool = request.tool == CompilerTool::MlirOpt;
  auto add = [&](std::string name, std::string value, const std::string &pkg) {
    bool global = isGlobalCompilerFlag(name);
    config.flags.push_back({std::move(name), std::move(value), pkg, global});
  };
  auto note = [&](const std::string &pkg, const std::string &msg) {
    config.notes.push_back(Diagnostic{Severity::Warning,
                                      Location{"", 0, 0, "", pkg, ""}, msg, ""});
  };

  // Every declared option, by flag.
  std::map<std::string, DeclaredOption> declared;
  std::vector<std::string> allFlags;
  for (const ActivatedPackage &p : packages)
    for (const CompilerPlugin &cp : p.manifest->compilerPlugins)
      for (const auto &[flag, schema] : cp.options) {
        declared.emplace(flag, DeclaredOption{&p, &cp, &schema});
        allFlags.push_back(flag);
      }

  // Chosen values: plugins.json, then --set (later wins).
  std::map<std::string, json> values;
  for (const auto &[pkg, opts] : request.projectValues) {
    for (const auto &[flag, value] : opts) {
      auto it = declared.find(flag);
      if (it == declared.end() || it->second.package->name != pkg) {
        std::vector<std::string> own;
        for (const auto &[f, d] : declared)
          if (d.package->name == pkg)
            own.push_back(f);
        errors.error(Location{"plugins.json", 0, 0, "", pkg, ""},
                     "package \"" + pkg + "\" has no option \"" + flag + "\"" +
                         didYouMean(flag, std::span<const std::string>(own)),
                     own.empty() ? "it declares no options"
                                 : "see `ireepkg info " + pkg + "`");
        continue;
      }
      std::string problem = optionValueProblem(*it->second.schema, value);
      if (!problem.empty()) {
        errors.error(Location{"plugins.json", 0, 0, "", pkg, ""},
                     describeOption(flag, it->second) + ": " + problem);
        continue;
      }
      values[flag] = value;
    }
  }
  for (const auto &[rawFlag, text] : request.sets) {
    std::string flag = rawFlag;
    while (!flag.empty() && flag[0] == '-')
      flag.erase(0, 1);
    auto it = declared.find(flag);
    if (it == declared.end()) {
      errors.error(Location{},
                   "no active plugin has an option \"" + flag + "\"" +
                       didYouMean(flag, std::span<const std::string>(allFlags)),
                   allFlags.empty()
                       ? "no active compiler plugin declares options"
                       : "see `ireepkg info <package>` for each plugin's "
                         "options");
      continue;
    }
    std::string problem;
    auto value = convertValue(text, *it->second.schema, problem);
    if (value)
      problem = optionValueProblem(*it->second.schema, *value);
    if (!problem.empty()) {
      errors.error(Location{"", 0, 0, "", it->second.package->name, ""},
                   describeOption(flag, it->second) + ": " + problem);
      continue;
    }
    values[flag] = *value;
  }

  // Plugins and options, in activation order.
  for (const ActivatedPackage &p : packages) {
    for (const CompilerPlugin &cp : p.manifest->compilerPlugins) {
      switch (cp.kind) {
      case CompilerPluginKind::IreeStatic:
        if (!mlirTool)
          add("iree-plugin", cp.id, p.name);
        break;
      case CompilerPluginKind::IreeDynamic: {
        if (mlirTool)
          break;
        if (request.platform.os == OS::Windows) {
          // IREE's loader: "dynamic plugins are not supported on Windows".
          note(p.name, "iree-dynamic plugin \"" + cp.id +
                           "\" is not activated: IREE's compilers do not "
                           "load dynamic plugins on Windows");
          break;
        }
        auto lib = cp.library.find(request.platform.str());
        if (lib == cp.library.end()) {
          note(p.name, "iree-dynamic plugin \"" + cp.id + "\" has no build for " +
                           request.platform.str());
          break;
        }
        std::string path = p.dir + "/" + lib->second;
        if (!request.compiler.known && request.deferDynamic) {
          note(p.name, "iree-dynamic plugin \"" + cp.id +
                           "\" is activated only when the compiler is known "
                           "(ireepkg exec, ireepkg flags compiler)");
          break;
        }
        if (!request.compiler.loadsPlugins) {
          errors.error(
              Location{"", 0, 0, "", p.name, ""},
              "plugin \"" + cp.id + "\" is a dynamically loaded compiler "
              "plugin (iree-dynamic), but " +
                  (request.compiler.known
                       ? request.compiler.path +
                             (request.compiler.version.empty()
                                  ? std::string()
                                  : " (IREE " + request.compiler.version + ")")
                       : std::string("the compiler")) +
                  " cannot load plugins: it has no --iree-load-plugin flag",
              "use an IREE compiler built with dynamic plugin support, or "
              "remove the package");
          break;
        }
        if (request.platform == hostPlatform() &&
            !request.compiler.pluginIdSpelling) {
          if (std::string problem =
                  dynamicPluginProblem(cp.id, path, request.compiler);
              !problem.empty()) {
            errors.error(Location{"", 0, 0, "", p.name, ""},
                         "plugin \"" + cp.id +
                             "\" is not activated: " + problem,
                         "install a build of " + p.name +
                             " for this compiler, or remove the package");
            break;
          }
        }
        add("iree-load-plugin",
            request.compiler.pluginIdSpelling ? cp.id + "=" + path : path,
            p.name);
        // Loading registers the plugin; --iree-plugin activates it.
        if (!request.compiler.pluginIdSpelling)
          add("iree-plugin", cp.id, p.name);
        break;
      }
      case CompilerPluginKind::MlirPassPlugin:
      case CompilerPluginKind::MlirDialectPlugin: {
        if (!mlirTool)
          break;
        auto lib = cp.library.find(request.platform.str());
        if (lib == cp.library.end()) {
          note(p.name, "MLIR plugin \"" + cp.id + "\" has no build for " +
                           request.platform.str());
          break;
        }
        add(cp.kind == CompilerPluginKind::MlirPassPlugin
                ? "load-pass-plugin"
                : "load-dialect-plugin",
            p.dir + "/" + lib->second, p.name);
        break;
      }
      }
      if (mlirTool)
        continue;
      for (const auto &[flag, schema] : cp.options) {
        auto v = values.find(flag);
        const json *value = v != values.end() ? &v->second
                            : schema.contains("default") ? &schema["default"]
                                                         : nullptr;
        if (!value)
          continue;
        if (value->is_array())
          for (const json &item : *value)
            add(flag, valueText(item), p.name);
        else
          add(flag, valueText(*value), p.name);
      }
    }
  }

  // Hooks.
  std::vector<std::string> preprocessing, mlirPipelines;
  std::map<std::string, std::vector<std::string>> singleSetters;
  for (const ActivatedPackage &p : packages)
    for (const Hook &h : p.manifest->hooks)
      if (isSingleValued(h.point))
        singleSetters[std::string(hookPointName(h.point))].push_back(p.name);
  for (const auto &[point, setters] : singleSetters) {
    if (setters.size() < 2 || mlirTool)
      continue;
    // Tuning specs are linked (addTuningSpecFlags); "choose" may still
    // pick one package's.
    bool linked = point == hookPointName(HookPoint::TuningSpec);
    auto chosen = request.choose.find(point);
    if (chosen != request.choose.end()) {
      if (std::find(setters.begin(), setters.end(), chosen->second) ==
          setters.end())
        errors.error(Location{"plugins.json", 0, 0, "/choose/" + point, "", ""},
                     "\"choose\" picks \"" + chosen->second + "\" for \"" +
                         point + "\", but that package does not set it (" +
                         setters[0] + " and " + setters[1] + " do)");
      continue;
    }
    if (linked)
      continue;
    errors.error(Location{},
                 "packages \"" + setters[0] + "\" and \"" + setters[1] +
                     "\" both set \"" + point + "\", which takes one value",
                 "pick one in plugins.json: \"choose\": {\"" + point +
                     "\": \"" + setters[0] + "\"}");
  }
  for (const ActivatedPackage &p : packages) {
    for (const Hook &h : p.manifest->hooks) {
      std::string point(hookPointName(h.point));
      std::string file = h.file.empty() ? "" : p.dir + "/" + h.file;
      if (h.point == HookPoint::MlirPipeline) {
        if (mlirTool)
          mlirPipelines.push_back(h.pipeline);
        continue;
      }
      if (mlirTool)
        continue;
      if (isSingleValued(h.point)) {
        const auto &setters = singleSetters[point];
        auto chosen = request.choose.find(point);
        if (setters.size() > 1 &&
            (chosen == request.choose.end() || chosen->second != p.name))
          continue;
      }
      switch (h.point) {
      case HookPoint::Preprocessing:
        preprocessing.push_back(h.pipeline);
        break;
      case HookPoint::ExecutablePreprocessing:
        add("iree-hal-preprocess-executables-with",
            h.tool.empty() ? h.pipeline : p.dir + "/" + h.tool, p.name);
        break;
      case HookPoint::ExecutableObjects: {
        auto it = h.paths.find(std::string(archName(request.platform.arch)));
        if (it == h.paths.end()) {
          note(p.name, "no executable objects for " +
                           std::string(archName(request.platform.arch)));
          break;
        }
        add("iree-hal-executable-object-search-path", p.dir + "/" + it->second,
            p.name);
        break;
      }
      case HookPoint::TransformSpec:
        add("iree-preprocessing-transform-spec-filename", file, p.name);
        break;
      case HookPoint::PdlSpec:
        add("iree-preprocessing-pdl-spec-filename", file, p.name);
        break;
      case HookPoint::TuningSpec:
        break; // addTuningSpecFlags

      case HookPoint::TransformLibrary:
        add("iree-codegen-transform-dialect-library",
            file + (h.sequence.empty() ? "" : "@" + h.sequence), p.name);
        break;
      case HookPoint::InputType:
        add("iree-input-type", h.value, p.name);
        break;
      case HookPoint::MlirPipeline:
        break;
      }
    }
  }
  if (!preprocessing.empty())
    add("iree-preprocessing-pass-pipeline", composePipelines(preprocessing),
        "");
  if (!mlirPipelines.empty())
    add("pass-pipeline", composePipelines(mlirPipelines), "");
  if (!errors.hasErrors())
    if (Status s = addTuningSpecFlags(packages, request, config); !s)
      return Unexpected(s.error());
  if (errors.hasErrors())
    return makeError(ErrorCode::Invalid, errors);
  return config;
}

std::string dynamicPluginProblem(const std::string &id, const std::string &path,
                                 const CompilerCapabilities &compiler) {
  const CompilerPluginAbi *abi = compilerPluginAbiFor(compiler.version);
  if (!abi)
    return ""; // a layout ireepkg does not know: the compiler checks
  std::string who = compiler.path + (compiler.version.empty()
                                         ? std::string()
                                         : " (IREE " + compiler.version + ")");
  auto info = readCompilerPluginInfo(path, abi->layout);
  if (!info)
    return info.error().message;
  if (info->pluginId != id)
    return path + " reports the plugin id \"" + info->pluginId + "\", not \"" +
           id + "\" as its manifest says";
  if (!compiler.pluginAbiHash.empty() &&
      info->abiHash != compiler.pluginAbiHash)
    return path + " was built against plugin API headers " + info->abiHash +
           ", but " + who + " has " + compiler.pluginAbiHash +
           " (learned from " + compiler.pluginAbiHashFrom +
           "); that compiler would refuse it";
  return "";
}

namespace {

/// A prefix's installed state and its stored compiler index, the packages'
/// directories where the prefix is now.
struct PrefixCompilerInputs {
  InstalledState state;
  CompilerIndex index;
};

Expected<PrefixCompilerInputs>
readPrefixCompilerInputs(const std::string &prefix, Reporter &reporter) {
  // Recovery first (a read of state/ must never see half a transaction),
  // then the stored compiler index: one small file, nothing re-checked.
  auto state = readInstalledState(prefix, reporter);
  if (!state)
    return Unexpected(state.error());
  PrefixCompilerInputs inputs;
  inputs.state = std::move(*state);
  std::string indexPath = prefix + "/state/compiler.json";
  if (!inputs.state.packages.empty()) {
    std::ifstream in(indexPath, std::ios::binary);
    if (!in)
      return makeError(ErrorCode::NotFound, "the prefix has no compiler index",
                       Location::inFile(indexPath),
                       "reinstall a package to write it");
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    auto decoded = decodeCompilerIndex(text, indexPath);
    if (!decoded)
      return Unexpected(decoded.error());
    inputs.index = std::move(*decoded);
    // The packages where the prefix is now: a prefix moved or copied since
    // the index was written still names the old place.
    for (ActivatedPackage &p : inputs.index.packages)
      p.dir = packageDir(prefix, p.name, p.version);
  }
  return inputs;
}

/// Probes the compiler when a package needs it (iree-dynamic plugins, and
/// tuning specs: its version chooses them, its iree-opt links them).
void probeCompilerIfNeeded(const std::vector<ActivatedPackage> &packages,
                           CompilerConfigRequest &request,
                           const std::function<std::string()> &findCompiler) {
  bool needsCompiler = false;
  for (const ActivatedPackage &p : packages) {
    for (const CompilerPlugin &cp : p.manifest->compilerPlugins)
      needsCompiler |= cp.kind == CompilerPluginKind::IreeDynamic;
    for (const Hook &h : p.manifest->hooks)
      needsCompiler |= h.point == HookPoint::TuningSpec;
  }
  if (needsCompiler && !request.compiler.known &&
      request.tool != CompilerTool::MlirOpt && findCompiler) {
    std::string tool = findCompiler();
    if (!tool.empty())
      if (auto caps = probeCompiler(tool))
        request.compiler = *caps;
  }
}

} // namespace

Expected<CompilerConfig>
buildPrefixCompilerConfig(const std::string &prefix,
                          CompilerConfigRequest request, Reporter &reporter,
                          const std::function<std::string()> &findCompiler) {
  auto inputs = readPrefixCompilerInputs(prefix, reporter);
  if (!inputs)
    return Unexpected(inputs.error());
  const CompilerIndex &index = inputs->index;
  if (!index.platform.empty())
    if (auto p = Platform::parse(index.platform))
      request.platform = *p;
  request.projectValues = index.project.values;
  request.choose = index.project.choose;
  probeCompilerIfNeeded(index.packages, request, findCompiler);
  return buildCompilerConfig(index.packages, request);
}

Expected<CompilerConfig>
buildPackageCompilerConfig(const std::string &prefix, const std::string &dir,
                           const Manifest &manifest,
                           CompilerConfigRequest request, Reporter &reporter,
                           const std::function<std::string()> &findCompiler) {
  PrefixCompilerInputs inputs;
  std::error_code ec;
  bool hasPrefix =
      !prefix.empty() && fs::exists(prefix + "/state/installed.json", ec);
  if (hasPrefix) {
    auto read = readPrefixCompilerInputs(prefix, reporter);
    if (!read)
      return Unexpected(read.error());
    inputs = std::move(*read);
  }
  // Its dependencies, and theirs, as the prefix installed them.
  auto closure = installedDependencyClosure(inputs.state, manifest, dir, prefix);
  if (!closure)
    return Unexpected(closure.error());
  std::set<std::string> wanted(closure->begin(), closure->end());
  std::vector<ActivatedPackage> packages;
  for (const ActivatedPackage &p : inputs.index.packages)
    if (wanted.count(p.name))
      packages.push_back(p);
  ActivatedPackage self;
  self.name = manifest.name;
  self.version = manifest.version;
  self.dir = dir;
  self.manifest = &manifest;
  packages.push_back(self);
  // The project's settings, for the packages taking part.
  wanted.insert(manifest.name);
  for (const auto &[name, values] : inputs.index.project.values)
    if (wanted.count(name))
      request.projectValues[name] = values;
  for (const auto &[point, name] : inputs.index.project.choose)
    if (wanted.count(name))
      request.choose[point] = name;
  probeCompilerIfNeeded(packages, request, findCompiler);
  return buildCompilerConfig(packages, request);
}

} // namespace ireepkg
