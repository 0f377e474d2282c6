//===- manifest_schema/src/manifest.cpp - ireeplugin.json -----------------===//
//
// Parses and checks the plugin manifest (formats.md §1).
//
//===----------------------------------------------------------------------===//
#include "checker.h"
#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/pipeline.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "option_schema.h"

#include <array>
#include <regex>
#include <set>

namespace ireepkg {

using namespace detail;

static constexpr std::array<std::string_view, 4> kKindNames = {
    "iree-static", "iree-dynamic", "mlir-pass-plugin", "mlir-dialect-plugin"};
static constexpr std::array<std::string_view, 9> kHookNames = {
    "preprocessing",     "executable-preprocessing",
    "executable-objects", "transform-spec",
    "pdl-spec",          "tuning-spec",
    "transform-library", "input-type",
    "mlir-pipeline"};
static constexpr std::array<std::string_view, 2> kFormatNames = {
    "embedded-elf", "system-library"};
static constexpr std::array<std::string_view, 2> kTestToolNames = {
    "iree-run-module", "mlir-opt"};

std::string_view packageTestToolName(PackageTestTool tool) {
  return kTestToolNames[static_cast<size_t>(tool)];
}

std::string_view compilerPluginKindName(CompilerPluginKind kind) {
  return kKindNames[static_cast<size_t>(kind)];
}

std::string_view defaultEntryPoint(CompilerPluginKind kind) {
  switch (kind) {
  case CompilerPluginKind::IreeStatic:
    return "";
  case CompilerPluginKind::IreeDynamic:
    return "iree_get_compiler_plugin_info";
  case CompilerPluginKind::MlirPassPlugin:
    return "mlirGetPassPluginInfo";
  case CompilerPluginKind::MlirDialectPlugin:
    return "mlirGetDialectPluginInfo";
  }
  return "";
}

std::span<const std::string_view> hookPointNames() { return kHookNames; }
std::string_view hookPointName(HookPoint point) {
  return kHookNames[static_cast<size_t>(point)];
}
std::optional<HookPoint> parseHookPoint(std::string_view name) {
  for (size_t i = 0; i < kHookNames.size(); ++i)
    if (kHookNames[i] == name)
      return static_cast<HookPoint>(i);
  return std::nullopt;
}
bool isSingleValued(HookPoint point) {
  switch (point) {
  case HookPoint::TransformSpec:
  case HookPoint::PdlSpec:
  case HookPoint::TuningSpec:
  case HookPoint::TransformLibrary:
  case HookPoint::InputType:
    return true;
  default:
    return false;
  }
}

TuningTargetKind tuningTargetKind(std::string_view t) {
  auto allOf = [&](size_t from, std::string_view chars) {
    return t.size() > from &&
           t.find_first_not_of(chars, from) == std::string_view::npos;
  };
  if (t.starts_with("gfx") && t.size() <= 8 && allOf(3, "0123456789abcdef"))
    return TuningTargetKind::Rocm;
  if (t == "llvm-cpu")
    return TuningTargetKind::AnyCpu;
  // CUDA and the SPIR-V and VMVX back ends accept a spec and ignore it.
  for (std::string_view name :
       {"cuda", "vulkan", "vulkan-spirv", "vmvx", "vmvx-inline", "metal",
        "metal-spirv", "webgpu", "webgpu-spirv"})
    if (t == name)
      return TuningTargetKind::Ignoring;
  if (t.starts_with("sm_") && allOf(3, "0123456789"))
    return TuningTargetKind::Ignoring;
  // Devices, not targets: the architecture or CPU is what a spec is for.
  for (std::string_view name : {"rocm", "hip", "amdgpu", "local", "cpu"})
    if (t == name)
      return TuningTargetKind::Invalid;
  if (!t.empty() && t[0] >= 'a' && t[0] <= 'z' &&
      allOf(0, "abcdefghijklmnopqrstuvwxyz0123456789_.-"))
    return TuningTargetKind::Cpu;
  return TuningTargetKind::Invalid;
}

/// Problem text ("message\nhint") for a key of a tuning-spec's "targets".
static std::string tuningTargetProblem(const std::string &k) {
  const std::string which =
      "\ntargets are ROCm architectures (gfx942, gfx1100), \"llvm-cpu\" for "
      "every CPU compile, or a CPU as --iree-llvmcpu-target-cpu names it "
      "(znver4)";
  switch (tuningTargetKind(k)) {
  case TuningTargetKind::Rocm:
  case TuningTargetKind::AnyCpu:
  case TuningTargetKind::Cpu:
    return {};
  case TuningTargetKind::Ignoring:
    return "\"" + k +
           "\" compiles ignore tuning specs (IREE applies them "
           "to llvm-cpu and ROCm only)" +
           which;
  case TuningTargetKind::Invalid:
    if (k == "rocm" || k == "hip" || k == "amdgpu")
      return "\"" + k +
             "\" is a device, not a target; name the ROCm "
             "architecture the spec is for, e.g. \"gfx942\"" +
             which;
    if (k == "local" || k == "cpu")
      return "\"" + k +
             "\" is a device, not a target; write \"llvm-cpu\" "
             "for every CPU, or a CPU name" +
             which;
    return "\"" + k + "\" is not a tuning-spec target" + which;
  }
  return {};
}

std::string_view runtimeFormatName(RuntimeFormat format) {
  return kFormatNames[static_cast<size_t>(format)];
}

std::vector<std::string> Manifest::referencedPaths() const {
  std::vector<std::string> out;
  for (const CompilerPlugin &p : compilerPlugins)
    for (const auto &[platform, path] : p.library)
      out.push_back(path);
  for (const Hook &h : hooks) {
    if (!h.tool.empty())
      out.push_back(h.tool);
    if (!h.file.empty())
      out.push_back(h.file);
    for (const auto &[key, path] : h.paths)
      out.push_back(path);
  }
  for (const RuntimePlugin &p : runtimePlugins)
    for (const auto &[key, path] : p.library)
      out.push_back(path);
  for (const PackageTest &t : tests)
    if (!t.program.empty())
      out.push_back(t.program);
  return out;
}

template <size_t N>
static std::optional<size_t>
enumField(Checker &checker, ObjectReader &r, const std::string &key,
          const std::array<std::string_view, N> &names, const char *what) {
  auto s = r.string(key, Need::Required);
  if (!s)
    return std::nullopt;
  for (size_t i = 0; i < N; ++i)
    if (names[i] == *s)
      return i;
  std::string list;
  for (size_t i = 0; i < N; ++i)
    list += (i ? ", " : "") + std::string(names[i]);
  checker.error(r.child(key),
                "\"" + *s + "\" is not " + what +
                    didYouMean(*s, std::span<const std::string_view>(names)),
                std::string("use one of: ") + list);
  return std::nullopt;
}

/// Reads `library` (or `path`): keys checked by `keyOk`, values are package
/// paths.
static std::map<std::string, std::string> readPathMap(
    Checker &checker, ObjectReader &r, const std::string &key, Need need,
    const std::function<std::string(const std::string &)> &keyProblem) {
  std::map<std::string, std::string> out;
  auto entries = r.stringMap(key, need);
  if (!entries)
    return out;
  std::string mapPtr = r.child(key);
  if (entries->empty())
    checker.error(mapPtr, "must name at least one file");
  for (auto &[k, path] : *entries) {
    std::string entryPtr = mapPtr + "/" + jsonPointerEscape(k);
    std::string problem = keyProblem(k);
    if (!problem.empty()) {
      checker.errorAtKey(entryPtr, mapPtr, problem.substr(0, problem.find('\n')),
                         problem.find('\n') == std::string::npos
                             ? std::string()
                             : problem.substr(problem.find('\n') + 1));
      continue;
    }
    if (checker.packagePath(path, entryPtr))
      out.emplace(k, path);
  }
  return out;
}

/// Problem text ("message\nhint") for a key that must be a platform.
static std::string platformKeyProblem(const std::string &k) {
  if (Platform::parse(k))
    return {};
  std::string msg = "\"" + k + "\" is not a platform";
  if (k == "fat")
    return msg + "; \"fat\" applies only to embedded-elf runtime plugins"
                 "\nsystem libraries are keyed by platform, e.g. linux-x86_64";
  if (parseArch(k))
    return msg + "; this map is keyed by platform, e.g. \"linux-" + k +
           "\"\nplatforms are <os>-<arch>, e.g. linux-x86_64";
  return msg + didYouMean(k, platformNames()) +
         "\nplatforms are <os>-<arch>: os one of linux, android, macos, "
         "windows; arch one of x86_64, aarch64, riscv64, riscv32, arm";
}

/// Problem text for a key that must be an architecture (or "fat" when
/// `allowFat`).
static std::string archKeyProblem(const std::string &k, bool allowFat) {
  if (parseArch(k) || (allowFat && k == "fat"))
    return {};
  std::string msg = "\"" + k + "\" is not an architecture";
  if (auto p = Platform::parse(k))
    return msg + "; this map is keyed by architecture, e.g. \"" +
           std::string(archName(p->arch)) + "\"" +
           "\nembedded ELF files and object directories are "
           "platform-independent, so they are keyed by architecture";
  std::vector<std::string_view> cands(archNames().begin(), archNames().end());
  if (allowFat)
    cands.push_back("fat");
  return msg + didYouMean(k, std::span<const std::string_view>(cands)) +
         "\narchitectures are x86_64, aarch64, riscv64, riscv32 and arm" +
         (allowFat ? std::string(", or \"fat\" for a FatELF .sos file") : "");
}

/// Problem text for a runtime plugin's library key: a base that
/// `baseProblem` accepts, optionally followed by a CPU level or features
/// (cpu_level.h).
static std::string runtimeKeyProblem(
    const std::string &k,
    const std::function<std::string(const std::string &)> &baseProblem) {
  const ireepkg_cpu_key_t level = ireepkg_cpu_parse_key(k.data(), k.size(),
                                                        /*allow_v1=*/false);
  const std::string base = k.substr(0, level.base_size);
  if (base.size() == k.size() || !baseProblem(base).empty())
    return baseProblem(k.size() == base.size() ? k : base);
  const std::string bad(level.bad ? std::string(level.bad, level.bad_size)
                                  : std::string());
  const std::string arch = base.substr(base.find('-') + 1);
  switch (level.problem) {
  case IREEPKG_CPU_KEY_OK:
    return {};
  case IREEPKG_CPU_KEY_BAD_LEVEL:
    return "\"" + k + "\" names CPU level \"" + bad + "\", which " + base +
           " does not have" +
           "\nCPU levels are x86_64_v2, x86_64_v3 and x86_64_v4 (x86_64 "
           "only); the plain \"" +
           base + "\" is the baseline build";
  case IREEPKG_CPU_KEY_EMPTY_FEATURE:
    return "\"" + k + "\" has an empty CPU feature after '+'" +
           "\nwrite features as " + base + "+<feature>, e.g. " +
           (arch == "aarch64" ? base + "+sve" : base + "+avx512f");
  case IREEPKG_CPU_KEY_BAD_FEATURE: {
    std::vector<std::string_view> known;
    for (const ireepkg_cpu_feature_t &f : kIreepkgCpuFeatures)
      if (arch == f.arch)
        known.push_back(f.name);
    std::string list;
    for (std::string_view n : known)
      list += (list.empty() ? "" : ", ") + std::string(n);
    return "\"" + k + "\" names CPU feature \"" + bad +
           "\", which ireepkg does not know for " + arch +
           didYouMean(bad, std::span<const std::string_view>(known)) +
           (list.empty() ? "\nno CPU features are known for " + arch +
                               "; declare the plain \"" + base + "\" build"
                         : "\nCPU features of " + arch + ": " + list);
  }
  }
  return {};
}

/// Every build for a CPU level needs the plain build of its architecture
/// (or platform) beside it: the one CPUs without the level run.
static void checkBaselineBuilds(Checker &checker, const std::string &mapPtr,
                                const std::map<std::string, std::string> &lib,
                                bool embedded) {
  for (const auto &[k, path] : lib) {
    const ireepkg_cpu_key_t level =
        ireepkg_cpu_parse_key(k.data(), k.size(), false);
    if (level.base_size == k.size())
      continue;
    const std::string base = k.substr(0, level.base_size);
    if (lib.count(base) || (embedded && lib.count("fat")))
      continue;
    checker.errorAtKey(mapPtr + "/" + jsonPointerEscape(k), mapPtr,
                       "\"" + k + "\" has no baseline build: \"" + base +
                           "\" is missing",
                       "add the plain \"" + base +
                           "\" build, which CPUs without the level or "
                           "features of \"" +
                           k + "\" run");
  }
}

/// A program name as found on PATH: 1 to 64 letters, digits, '_', '.', '+'
/// and '-', starting with a letter or digit (no directory).
static bool isMlirToolName(const std::string &name) {
  return !name.empty() && name.size() <= 64 &&
         std::isalnum(static_cast<unsigned char>(name[0])) &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789_.+-") == std::string::npos;
}

static void parseCompilerPlugin(Checker &checker, const json &value,
                                const std::string &ptr, CompilerPlugin &out,
                                std::set<std::string> &flagsSeen) {
  ObjectReader r(checker, value, ptr);
  if (!r.valid())
    return;
  if (auto id = r.string("id", Need::Required)) {
    out.id = *id;
    if (!isCIdentifier(*id))
      checker.error(r.child("id"),
                    "\"" + *id + "\" is not a valid plugin id",
                    "plugin ids are identifiers: letters, digits and '_', "
                    "not starting with a digit");
  }
  auto kindIndex = enumField(checker, r, "kind", kKindNames,
                             "a compiler plugin kind");
  if (kindIndex)
    out.kind = static_cast<CompilerPluginKind>(*kindIndex);
  bool isStatic = kindIndex && out.kind == CompilerPluginKind::IreeStatic;
  if (isStatic) {
    for (const char *key : {"library", "entry_point", "api_version",
                            "abi_hash"}) {
      r.any(key);
      if (r.has(key))
        checker.error(r.child(key),
                      std::string("\"") + key +
                          "\" does not apply to an iree-static plugin",
                      "iree-static plugins are compiled into the IREE "
                      "compiler; the package only activates them by id");
    }
  } else {
    out.library = readPathMap(checker, r, "library",
                              kindIndex ? Need::Required : Need::Optional,
                              platformKeyProblem);
    if (auto ep = r.string("entry_point")) {
      out.entryPoint = *ep;
      bool mlirKind = kindIndex &&
                      (out.kind == CompilerPluginKind::MlirPassPlugin ||
                       out.kind == CompilerPluginKind::MlirDialectPlugin);
      if (!isCIdentifier(*ep)) {
        checker.error(r.child("entry_point"),
                      "\"" + *ep + "\" is not a C symbol name");
      } else if (mlirKind && *ep != defaultEntryPoint(out.kind)) {
        // MLIR's PassPlugin::load and DialectPlugin::load look up one fixed
        // symbol; a library that exports another is skipped by the tool.
        std::string expected(defaultEntryPoint(out.kind));
        checker.error(r.child("entry_point"),
                      "an " + std::string(compilerPluginKindName(out.kind)) +
                          " must export \"" + expected + "\", the only entry "
                          "point MLIR tools look up; \"" + *ep +
                          "\" would never be called",
                      "write \"entry_point\": \"" + expected +
                          "\" (or leave it out) and export " + expected +
                          " from the library");
      }
    } else if (kindIndex) {
      out.entryPoint = std::string(defaultEntryPoint(out.kind));
    }
    if (auto v = r.integer("api_version")) {
      if (*v < 1)
        checker.error(r.child("api_version"), "must be 1 or more");
      out.apiVersion = *v;
    }
    if (auto h = r.string("abi_hash")) {
      bool hex = h->size() >= 8 && h->size() <= 128 &&
                 h->find_first_not_of("0123456789abcdefABCDEF") ==
                     std::string::npos;
      if (!hex)
        checker.error(r.child("abi_hash"),
                      "\"" + *h + "\" is not a hexadecimal hash",
                      "abi_hash is 8 to 128 hexadecimal digits, as the "
                      "plugin reports it");
      out.abiHash = *h;
    }
  }
  if (const json *tools = r.array("tools")) {
    bool mlirKind =
        kindIndex && (out.kind == CompilerPluginKind::MlirPassPlugin ||
                      out.kind == CompilerPluginKind::MlirDialectPlugin);
    if (kindIndex && !mlirKind)
      checker.error(r.child("tools"),
                    "\"tools\" applies to mlir-pass-plugin and "
                    "mlir-dialect-plugin plugins only",
                    "IREE's compiler loads " +
                        std::string(compilerPluginKindName(out.kind)) +
                        " plugins; leave \"tools\" out");
    else if (tools->empty())
      checker.error(r.child("tools"), "must name at least one tool",
                    "leave \"tools\" out for mlir-opt alone");
    for (size_t i = 0; i < tools->size(); ++i) {
      std::string p = r.child("tools") + "/" + std::to_string(i);
      const json &t = (*tools)[i];
      if (!t.is_string() || !isMlirToolName(t.get<std::string>())) {
        checker.error(p,
                      (t.is_string() ? "\"" + t.get<std::string>() + "\""
                                     : std::string("this value")) +
                          " is not an MLIR tool name",
                      "name each tool as it is found on PATH, e.g. "
                      "\"mlir-opt\" or \"standalone-opt\"");
        continue;
      }
      std::string name = t.get<std::string>();
      if (std::find(out.tools.begin(), out.tools.end(), name) !=
          out.tools.end())
        checker.error(p, "\"" + name + "\" is listed more than once");
      else
        out.tools.push_back(name);
    }
  }
  if (const json *opts = r.object("options")) {
    std::string optsPtr = r.child("options");
    for (auto it = opts->begin(); it != opts->end(); ++it) {
      const std::string &flag = it.key();
      std::string optPtr = optsPtr + "/" + jsonPointerEscape(flag);
      if (!checker.optionFlagName(flag, optsPtr, optPtr))
        continue;
      if (!flagsSeen.insert(flag).second)
        checker.errorAtKey(optPtr, optsPtr,
                           "option \"" + flag +
                               "\" is declared by more than one plugin",
                           "a flag belongs to one plugin");
      checkOptionSchema(checker, *it, optPtr);
      out.options.emplace(flag, *it);
    }
  }
  if (auto d = r.string("description", Need::Optional, false))
    out.description = *d;
  r.finish();
}

/// Reports a pass pipeline that is not MLIR textual pipeline syntax at the
/// pipeline's string value, with the column within the pipeline text.
static void checkPipelineSyntax(Checker &checker, const std::string &pipeline,
                                const std::string &ptr) {
  auto parsed = parsePassPipeline(pipeline);
  if (!parsed)
    checker.error(ptr, "invalid pass pipeline: " + parsed.error().str(),
                  "write MLIR's textual pass pipeline syntax, as in "
                  "func.func(canonicalize,cse) or "
                  "builtin.module(my-pass{key=value other='a b'})");
}

static void parseHook(Checker &checker, const json &value,
                      const std::string &ptr, Hook &out, bool &ok) {
  ObjectReader r(checker, value, ptr);
  ok = false;
  if (!r.valid())
    return;
  size_t errorsBefore = checker.errorCount();
  auto pointIndex =
      enumField(checker, r, "point", kHookNames, "a hook point");
  if (auto d = r.string("description", Need::Optional, false))
    out.description = *d;
  static const std::array<std::string, 8> kPayloadKeys = {
      "pipeline", "tool", "file",    "sequence",
      "value",    "path", "targets", "iree"};
  if (!pointIndex) {
    for (const auto &k : kPayloadKeys)
      r.any(k); // the point is the problem; don't also flag its payload
    r.finish();
    return;
  }
  out.point = static_cast<HookPoint>(*pointIndex);
  std::vector<std::string> allowed;
  switch (out.point) {
  case HookPoint::Preprocessing:
  case HookPoint::MlirPipeline:
    allowed = {"pipeline"};
    if (auto p = r.string("pipeline", Need::Required)) {
      out.pipeline = *p;
      checkPipelineSyntax(checker, *p, r.child("pipeline"));
    }
    break;
  case HookPoint::ExecutablePreprocessing: {
    allowed = {"pipeline", "tool"};
    auto p = r.string("pipeline");
    auto t = r.string("tool");
    if (p && t)
      checker.error(r.child("tool"),
                    "an executable-preprocessing hook takes \"pipeline\" or "
                    "\"tool\", not both");
    else if (!r.has("pipeline") && !r.has("tool"))
      checker.error(ptr, "missing required field \"pipeline\" or \"tool\"",
                    "give a pass pipeline, or a tool in the package that "
                    "reads an executable on stdin and writes it to stdout");
    if (p) {
      out.pipeline = *p;
      checkPipelineSyntax(checker, *p, r.child("pipeline"));
    }
    if (t && checker.packagePath(*t, r.child("tool")))
      out.tool = *t;
    break;
  }
  case HookPoint::ExecutableObjects:
    allowed = {"path"};
    out.paths = readPathMap(checker, r, "path", Need::Required,
                            [](const std::string &k) {
                              return archKeyProblem(k, /*allowFat=*/false);
                            });
    break;
  case HookPoint::TuningSpec: {
    // One file for every target, or one per target; and the IREE versions
    // the spec's syntax is for.
    allowed = {"file", "targets", "iree"};
    bool hasFile = r.has("file"), hasTargets = r.has("targets");
    if (hasFile && hasTargets) {
      r.any("file");
      r.any("targets");
      checker.error(r.child("targets"),
                    "a tuning-spec hook takes \"file\" or \"targets\", not "
                    "both",
                    "\"file\" is for every target; \"targets\" maps each "
                    "target to its own file");
    } else if (!hasFile && !hasTargets) {
      checker.error(ptr, "missing required field \"file\" or \"targets\"",
                    "give one spec file, or \"targets\": {\"gfx942\": "
                    "\"specs/gfx942.mlir\", \"llvm-cpu\": \"specs/cpu.mlir\"}");
    } else if (hasTargets) {
      out.paths = readPathMap(checker, r, "targets", Need::Required,
                              tuningTargetProblem);
    } else if (auto f = r.string("file", Need::Required);
               f && checker.packagePath(*f, r.child("file"))) {
      out.file = *f;
    }
    if (const json *v = r.any("iree"))
      out.iree = checker.constraint(*v, r.child("iree"));
    break;
  }
  case HookPoint::TransformSpec:
  case HookPoint::PdlSpec:
    allowed = {"file"};
    if (auto f = r.string("file", Need::Required);
        f && checker.packagePath(*f, r.child("file")))
      out.file = *f;
    break;
  case HookPoint::TransformLibrary:
    allowed = {"file", "sequence"};
    if (auto f = r.string("file", Need::Required);
        f && checker.packagePath(*f, r.child("file")))
      out.file = *f;
    if (auto s = r.string("sequence"))
      out.sequence = *s;
    break;
  case HookPoint::InputType:
    allowed = {"value"};
    if (auto v = r.string("value", Need::Required))
      out.value = *v;
    break;
  }
  for (const auto &k : kPayloadKeys) {
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end() ||
        !r.has(k))
      continue;
    r.any(k);
    std::string takes;
    for (size_t i = 0; i < allowed.size(); ++i)
      takes += (i ? (i + 1 == allowed.size() ? " or " : ", ") : "") +
               ("\"" + allowed[i] + "\"");
    checker.error(r.child(k), "\"" + k + "\" does not belong to a \"" +
                                  std::string(hookPointName(out.point)) +
                                  "\" hook (it takes " + takes + ")");
  }
  r.finish();
  ok = checker.errorCount() == errorsBefore;
}

static void parseRuntimePlugin(Checker &checker, const json &value,
                               const std::string &ptr, RuntimePlugin &out) {
  ObjectReader r(checker, value, ptr);
  if (!r.valid())
    return;
  if (auto name = r.string("name", Need::Required)) {
    out.name = *name;
    bool ok = (std::isalpha(static_cast<unsigned char>((*name)[0])) ||
               (*name)[0] == '_') &&
              name->find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_.-") == std::string::npos;
    if (!ok)
      checker.error(r.child("name"),
                    "\"" + *name + "\" is not a valid runtime plugin name",
                    "runtime plugin names are letters, digits, '_', '.' and "
                    "'-', starting with a letter or '_'");
  }
  auto formatIndex = enumField(checker, r, "format", kFormatNames,
                               "a runtime plugin format");
  if (formatIndex) {
    out.format = static_cast<RuntimeFormat>(*formatIndex);
    const bool embedded = out.format == RuntimeFormat::EmbeddedElf;
    out.library = readPathMap(
        checker, r, "library", Need::Required, [&](const std::string &k) {
          return runtimeKeyProblem(k, [&](const std::string &base) {
            return embedded ? archKeyProblem(base, /*allowFat=*/true)
                            : platformKeyProblem(base);
          });
        });
    checkBaselineBuilds(checker, r.child("library"), out.library, embedded);
  } else {
    r.any("library", Need::Required);
  }
  if (auto imports = r.stringArray("imports")) {
    for (size_t i = 0; i < imports->size(); ++i)
      if (!isCIdentifier((*imports)[i]))
        checker.error(r.child("imports") + "/" + std::to_string(i),
                      "\"" + (*imports)[i] + "\" is not a C symbol name",
                      "imports are the exact symbol names that the plugin "
                      "resolves, as called from the compiled program");
    out.imports = *imports;
  }
  if (auto params = r.stringMap("parameters"))
    for (auto &[k, v] : *params) {
      if (k.empty() || k.find('=') != std::string::npos)
        checker.errorAtKey(r.child("parameters") + "/" + jsonPointerEscape(k),
                           r.child("parameters"),
                           "\"" + k + "\" is not a valid parameter key",
                           "parameter keys are non-empty and contain no '='");
      out.parameters.emplace(k, v);
    }
  if (auto d = r.string("description", Need::Optional, false))
    out.description = *d;
  r.finish();
}

std::string ExpectedOutput::describe() const {
  switch (kind) {
  case Kind::Line:
    return text;
  case Kind::Contains:
    return "contains \"" + text + "\"";
  case Kind::Matches:
    return "matches /" + text + "/";
  }
  return text;
}

/// One item of a test's expected_output: a line, or {"contains": ...} or
/// {"matches": ...}.
static std::optional<ExpectedOutput>
parseExpectedOutput(Checker &checker, const json &value,
                    const std::string &ptr) {
  const char *hint = "write a whole line as a string, or {\"contains\": "
                     "\"text\"} or {\"matches\": \"regex\"} for part of one";
  ExpectedOutput e;
  if (value.is_string()) {
    e.text = value.get<std::string>();
    if (e.text.empty()) {
      checker.error(ptr, "must not be empty", hint);
      return std::nullopt;
    }
    return e;
  }
  if (!value.is_object()) {
    checker.error(ptr, "must be a string or an object", hint);
    return std::nullopt;
  }
  ObjectReader r(checker, value, ptr);
  bool contains = r.has("contains"), matches = r.has("matches");
  if (contains == matches) {
    checker.error(ptr, "must have exactly one of \"contains\" and \"matches\"",
                  hint);
    r.any("contains");
    r.any("matches");
    r.finish();
    return std::nullopt;
  }
  const char *key = contains ? "contains" : "matches";
  auto text = r.string(key, Need::Required);
  r.finish();
  if (!text)
    return std::nullopt;
  if (text->empty()) {
    checker.error(r.child(key), "must not be empty", hint);
    return std::nullopt;
  }
  e.kind = contains ? ExpectedOutput::Kind::Contains
                    : ExpectedOutput::Kind::Matches;
  e.text = *text;
  if (matches) {
    try {
      std::regex re(e.text, std::regex::ECMAScript);
    } catch (const std::regex_error &err) {
      checker.error(r.child(key),
                    "\"" + e.text + "\" is not a valid regular expression: " +
                        err.what(),
                    "write an ECMAScript regular expression, as JavaScript "
                    "takes it");
      return std::nullopt;
    }
  }
  return e;
}

static void parsePackageTest(Checker &checker, const json &value,
                             const std::string &ptr, PackageTest &out,
                             const std::vector<std::string> &mlirTools) {
  ObjectReader r(checker, value, ptr);
  if (!r.valid())
    return;
  if (auto name = r.string("name", Need::Required)) {
    out.name = *name;
    bool ok = name->size() <= 64 &&
              (std::isalnum(static_cast<unsigned char>((*name)[0])) ||
               (*name)[0] == '_') &&
              name->find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_.-") == std::string::npos;
    if (!ok)
      checker.error(r.child("name"),
                    "\"" + *name + "\" is not a valid test name",
                    "test names are up to 64 letters, digits, '_', '.' and "
                    "'-', starting with a letter, digit or '_'");
  }
  // iree-run-module, mlir-opt, or an MLIR tool the package's plugins name.
  std::optional<size_t> toolIndex;
  if (auto tool = r.string("tool", Need::Required)) {
    out.toolName = *tool;
    if (*tool == kTestToolNames[0])
      toolIndex = 0;
    else if (*tool == kTestToolNames[1] ||
             std::find(mlirTools.begin(), mlirTools.end(), *tool) !=
                 mlirTools.end())
      toolIndex = 1;
    if (!toolIndex) {
      std::vector<std::string_view> names(kTestToolNames.begin(),
                                          kTestToolNames.end());
      names.insert(names.end(), mlirTools.begin(), mlirTools.end());
      std::string list;
      for (std::string_view n : names)
        list += (list.empty() ? "" : ", ") + std::string(n);
      checker.error(
          r.child("tool"),
          "\"" + *tool + "\" is not a test tool" +
              didYouMean(*tool, std::span<const std::string_view>(names)),
          "use one of: " + list +
              ", or an MLIR tool that one of the package's MLIR "
              "plugins names in its \"tools\"");
    }
  }
  if (auto program = r.string("program", Need::Required);
      program && checker.packagePath(*program, r.child("program")))
    out.program = *program;
  if (const json *lines = r.array("expected_output", Need::Required)) {
    for (size_t i = 0; i < lines->size(); ++i)
      if (auto e = parseExpectedOutput(
              checker, (*lines)[i],
              r.child("expected_output") + "/" + std::to_string(i)))
        out.expectedOutput.push_back(std::move(*e));
    if (lines->empty())
      checker.error(r.child("expected_output"), "must list at least one line",
                    "write the lines the tool prints when the test passes");
  }
  if (r.has("timeout_seconds")) {
    if (auto t = r.integer("timeout_seconds")) {
      if (*t < 1 || *t > 3600)
        checker.error(r.child("timeout_seconds"),
                      "must be between 1 and 3600 seconds");
      else
        out.timeoutSeconds = static_cast<int>(*t);
    }
  }
  if (auto d = r.string("description", Need::Optional, false))
    out.description = *d;
  // The fields of the tool the test does not use.
  std::vector<std::string> notFor;
  if (!toolIndex) {
    for (const char *key : {"function", "inputs", "compile_flags", "pipeline"})
      r.any(key); // the tool is the problem; don't also flag these
  } else {
    out.tool = static_cast<PackageTestTool>(*toolIndex);
    if (out.tool == PackageTestTool::IreeRunModule) {
      if (auto f = r.string("function", Need::Required))
        out.function = *f;
      if (auto in = r.stringArray("inputs", Need::Optional, false))
        out.inputs = *in;
      if (auto flags = r.stringArray("compile_flags", Need::Optional, false)) {
        for (size_t i = 0; i < flags->size(); ++i) {
          const std::string &flag = (*flags)[i];
          std::string name = flag.substr(0, flag.find('='));
          bool ok = name.size() > 2 && name.rfind("--", 0) == 0 &&
                    std::isalnum(static_cast<unsigned char>(name[2])) &&
                    name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_.-",
                                           2) == std::string::npos;
          if (!ok)
            checker.error(r.child("compile_flags") + "/" + std::to_string(i),
                          "\"" + flag + "\" is not a compiler flag",
                          "write each flag as --name or --name=value");
        }
        out.compileFlags = *flags;
      }
      notFor = {"pipeline"};
    } else {
      if (auto p = r.string("pipeline", Need::Required)) {
        out.pipeline = *p;
        checkPipelineSyntax(checker, *p, r.child("pipeline"));
      }
      notFor = {"function", "inputs", "compile_flags"};
    }
  }
  for (const std::string &key : notFor) {
    if (!r.has(key))
      continue;
    r.any(key);
    checker.error(r.child(key),
                  "\"" + key + "\" does not belong to a \"" +
                      std::string(packageTestToolName(out.tool)) + "\" test",
                  out.tool == PackageTestTool::IreeRunModule
                      ? "iree-run-module tests take function, inputs and "
                        "compile_flags"
                      : "mlir-opt tests take a pipeline");
  }
  r.finish();
}

static void parseDependencyMap(Checker &checker, ObjectReader &r,
                               const std::string &selfName,
                               std::map<std::string, Constraint> &out) {
  const json *deps = r.object("dependencies");
  if (!deps)
    return;
  std::string mapPtr = r.child("dependencies");
  for (auto it = deps->begin(); it != deps->end(); ++it) {
    std::string p = mapPtr + "/" + jsonPointerEscape(it.key());
    if (!checker.packageName(it.key(), mapPtr, p))
      continue;
    if (!selfName.empty() && it.key() == selfName) {
      checker.errorAtKey(p, mapPtr,
                         "package \"" + selfName + "\" depends on itself");
      continue;
    }
    if (auto c = checker.constraint(*it, p))
      out.emplace(it.key(), *c);
  }
}

static void parseRequires(Checker &checker, ObjectReader &r,
                          std::optional<Constraint> &iree) {
  const json *req = r.object("requires");
  if (!req)
    return;
  ObjectReader rr(checker, *req, r.child("requires"));
  if (const json *v = rr.any("iree"))
    iree = checker.constraint(*v, rr.child("iree"));
  rr.finish();
}

Manifest parseManifest(const JsonDocument &doc, const ParseOptions &options,
                       DiagnosticList &diags) {
  Manifest m;
  Checker checker(doc, options, diags);
  ObjectReader r(checker, doc.root(), "");
  if (!r.valid())
    return m;
  if (const json *v = r.any("schema_version", Need::Required))
    checker.schemaVersion(*v, r.child("schema_version"), "schema_version");
  if (auto name = r.string("name", Need::Required))
    if (checker.packageName(*name, r.child("name")))
      m.name = *name;
  if (const json *v = r.any("version", Need::Required))
    if (auto ver = checker.version(*v, r.child("version")))
      m.version = *ver;
  if (auto s = r.string("summary", Need::Optional, false)) {
    m.summary = *s;
    checker.summary(*s, r.child("summary"));
  }
  for (auto [key, field] :
       {std::pair{"description", &m.description}, {"license", &m.license},
        {"homepage", &m.homepage}, {"repository", &m.repository}})
    if (auto s = r.string(key, Need::Optional, false))
      *field = *s;
  if (auto a = r.stringArray("authors", Need::Optional, false))
    m.authors = *a;
  if (auto k = r.stringArray("keywords")) {
    m.keywords = *k;
    if (k->size() > 20)
      checker.error(r.child("keywords"), "lists " + std::to_string(k->size()) +
                                             " keywords; at most 20 are allowed");
  }
  parseRequires(checker, r, m.requiresIree);
  parseDependencyMap(checker, r, m.name, m.dependencies);

  if (const json *compiler = r.object("compiler")) {
    ObjectReader c(checker, *compiler, r.child("compiler"));
    std::set<std::string> ids, flags;
    if (const json *plugins = c.array("plugins")) {
      for (size_t i = 0; i < plugins->size(); ++i) {
        std::string p = c.child("plugins") + "/" + std::to_string(i);
        CompilerPlugin plugin;
        parseCompilerPlugin(checker, (*plugins)[i], p, plugin, flags);
        if (!plugin.id.empty() && !ids.insert(plugin.id).second)
          checker.error(p + "/id", "plugin id \"" + plugin.id +
                                       "\" is used more than once");
        m.compilerPlugins.push_back(std::move(plugin));
      }
    }
    if (const json *hooks = c.array("hooks")) {
      std::map<HookPoint, std::string> singleSeen;
      for (size_t i = 0; i < hooks->size(); ++i) {
        std::string p = c.child("hooks") + "/" + std::to_string(i);
        Hook hook;
        bool ok = false;
        parseHook(checker, (*hooks)[i], p, hook, ok);
        if (!ok)
          continue;
        if (isSingleValued(hook.point)) {
          auto [it, fresh] = singleSeen.emplace(hook.point, p);
          if (!fresh) {
            checker.error(p + "/point",
                          "\"" + std::string(hookPointName(hook.point)) +
                              "\" takes a single value, and " + it->second +
                              " already sets it",
                          "a package may set a single-valued hook once");
            continue;
          }
        }
        m.hooks.push_back(std::move(hook));
      }
    }
    c.finish();
  }
  if (const json *runtime = r.object("runtime")) {
    ObjectReader rt(checker, *runtime, r.child("runtime"));
    if (const json *plugins = rt.array("plugins")) {
      std::set<std::string> names;
      for (size_t i = 0; i < plugins->size(); ++i) {
        std::string p = rt.child("plugins") + "/" + std::to_string(i);
        RuntimePlugin plugin;
        parseRuntimePlugin(checker, (*plugins)[i], p, plugin);
        if (!plugin.name.empty() && !names.insert(plugin.name).second)
          checker.error(p + "/name", "runtime plugin name \"" + plugin.name +
                                         "\" is used more than once");
        m.runtimePlugins.push_back(std::move(plugin));
      }
    }
    rt.finish();
  }
  if (const json *tests = r.array("tests")) {
    std::vector<std::string> mlirTools; // what tests may run besides
    for (const CompilerPlugin &cp : m.compilerPlugins)
      for (const std::string &t : cp.tools)
        if (t != kTestToolNames[0] && t != kTestToolNames[1] &&
            std::find(mlirTools.begin(), mlirTools.end(), t) == mlirTools.end())
          mlirTools.push_back(t);
    std::set<std::string> names;
    for (size_t i = 0; i < tests->size(); ++i) {
      std::string p = r.child("tests") + "/" + std::to_string(i);
      PackageTest test;
      parsePackageTest(checker, (*tests)[i], p, test, mlirTools);
      if (!test.name.empty() && !names.insert(test.name).second)
        checker.error(p + "/name",
                      "test name \"" + test.name + "\" is used more than once");
      m.tests.push_back(std::move(test));
    }
  }
  r.finish();
  return m;
}

} // namespace ireepkg
