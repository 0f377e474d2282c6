//===- compiler_integration/src/mlir_check_client.cpp - MLIR checker ------===//
//
// ireepkg loads MLIR pass and dialect plugins, and checks hook pipelines
// with MLIR's own parser, through the `ireepkg-mlir-check` tool
// (compiler_integration/tools/mlir_check.cpp), run as a child process:
// ireepkg links no MLIR, and a plugin that crashes cannot take it down.
// This file turns plugins and pipelines into the tool's request
// (with ireepkg's own parse of each pipeline, which knows where every pass
// and option is written), runs the tool (see child_process.h) with a
// time limit, and reads its report back into diagnostics that point at the
// pipeline's place in the manifest and the column within the pipeline.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/mlir_check.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/programs.h"

#include "ireepkg/manifest_schema/pipeline.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/pkg/iree/iree_version.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

namespace {

using nlohmann::json;

const char *const kToolName = "ireepkg-mlir-check";
constexpr double kDefaultStepSeconds = 30;
constexpr size_t kMaxStdout = 64u << 20;
constexpr size_t kMaxStderr = 64u << 10;
const char *const kOffHint =
    "set IREEPKG_MLIR_CHECK=off to check pass pipelines for syntax only";

//===----------------------------------------------------------------------===//
// The pipelines as the tool sees them
//===----------------------------------------------------------------------===//

/// One pass element of a pipeline.
struct PassPlan {
  std::string name;
  std::string anchor; ///< the operation it is nested on, or "any"
  bool hasOptions = false;
  std::string options;
  size_t column = 0;               ///< of its name, in the hook's text
  std::vector<PassOption> written; ///< its options, with their columns
};

/// One pipeline as the tool parses it: `text` inside `anchor(...)`.
struct FragmentPlan {
  size_t source = 0; ///< index into the pipelines
  std::string anchor;
  std::string text;
  size_t offset = 0; ///< of `text` in the hook's text
  std::vector<PassPlan> passes;
};

void collectPasses(const std::vector<PipelineElement> &elements,
                   const std::string &anchor, std::vector<PassPlan> &out) {
  for (const PipelineElement &e : elements) {
    if (e.isNested()) {
      collectPasses(e.elements, e.name, out);
      continue;
    }
    PassPlan p;
    p.name = e.name;
    p.anchor = anchor;
    p.hasOptions = e.hasOptions;
    p.options = e.optionsText;
    p.column = e.column;
    p.written = e.options;
    out.push_back(std::move(p));
  }
}

/// How MLIR will parse each pipeline. Preprocessing and mlir-pipeline
/// fragments are composed into one `builtin.module(...)` (see
/// composePassPipelines): a `builtin.module(...)` fragment contributes its
/// inside, any other fragment is parsed as it is inside `builtin.module`.
/// An executable-preprocessing pipeline stands alone: `op(...)` is parsed
/// on `op`, a bare list of passes on any operation. Pipelines with syntax
/// errors (reported by the manifest check) are left out.
std::vector<FragmentPlan>
planFragments(const std::vector<PipelineSource> &pipelines) {
  std::vector<FragmentPlan> plans;
  for (size_t i = 0; i < pipelines.size(); ++i) {
    const std::string &text = pipelines[i].text;
    auto parsed = parsePassPipeline(text);
    if (!parsed)
      continue;
    FragmentPlan plan;
    plan.source = i;
    bool executable = pipelines[i].point == HookPoint::ExecutablePreprocessing;
    bool unwrap = executable ? parsed->isAnchored()
                             : parsed->anchor() == "builtin.module";
    const std::vector<PipelineElement> *elements = &parsed->elements;
    if (unwrap) {
      const PipelineElement &top = parsed->elements.front();
      size_t open = text.find('(', top.column - 1 + top.name.size());
      size_t close = text.find_last_of(')');
      if (open == std::string::npos || close == std::string::npos ||
          close <= open)
        continue; // cannot happen after a successful parse
      plan.anchor = top.name;
      plan.offset = open + 1;
      plan.text = text.substr(open + 1, close - open - 1);
      elements = &top.elements;
    } else {
      plan.anchor = executable ? "any" : "builtin.module";
      plan.text = text;
    }
    collectPasses(*elements, plan.anchor, plan.passes);
    plans.push_back(std::move(plan));
  }
  return plans;
}

//===----------------------------------------------------------------------===//
// Finding and running the tool
//===----------------------------------------------------------------------===//

struct Checker {
  std::string path;    ///< "" when there is none
  std::string skipped; ///< why not, when path is ""
  bool warn = false;   ///< say so in a warning
  std::string hint;
};

Expected<Checker> findChecker() {
  Checker c;
  auto loadChecks = loadChecksEnabled();
  if (!loadChecks)
    return Unexpected(loadChecks.error());
  if (!*loadChecks) {
    c.skipped = "load checks are off (IREEPKG_LOAD_CHECKS, --no-load-checks "
                "or load-checks = false)";
    return c;
  }
  if (const char *env = environmentOverride("IREEPKG_MLIR_CHECK"); env && *env) {
    std::string v = env;
    if (v == "off" || v == "0" || v == "no") {
      c.skipped = "disabled by IREEPKG_MLIR_CHECK=" + v;
      return c;
    }
    if (::access(env, X_OK) != 0)
      return makeError(ErrorCode::NotFound,
                       "IREEPKG_MLIR_CHECK names '" + v +
                           "', which is not an executable file",
                       {},
                       "point IREEPKG_MLIR_CHECK at the ireepkg-mlir-check "
                       "tool, set it to off to skip the check, or unset it "
                       "to use the one beside ireepkg");
    c.path = v;
    return c;
  }
  std::string exeDir = executableDir();
  if (exeDir.empty()) {
    c.skipped = std::string(kToolName) +
                " was not found: the running executable's directory is "
                "unknown";
    c.warn = true;
    c.hint = "set IREEPKG_MLIR_CHECK to the path of ireepkg-mlir-check";
    return c;
  }
  std::string dir = exeDir + "/";
  std::string tool = dir + kToolName;
  if (::access(tool.c_str(), X_OK) == 0) {
    c.path = tool;
    return c;
  }
  c.skipped = std::string(kToolName) + " was not found in " + dir;
  c.warn = true;
  c.hint = "it is built and installed beside ireepkg when MLIR 22 "
           "(libmlir-22-dev) is available; or set IREEPKG_MLIR_CHECK to its "
           "path (IREEPKG_MLIR_CHECK=off skips this check)";
  return c;
}

double stepSeconds(DiagnosticList &diags) {
  std::string invalid;
  double v = environmentSeconds("IREEPKG_MLIR_CHECK_TIMEOUT",
                                kDefaultStepSeconds, invalid);
  if (!invalid.empty())
    diags.warning(Location{},
                  "IREEPKG_MLIR_CHECK_TIMEOUT=\"" + invalid +
                      "\" is not a number of seconds; using 30",
                  "give the time limit of each step in seconds, e.g. 10");
  return v;
}

/// Runs `tool` with `input` on stdin, collecting stdout and the start of
/// stderr; after `timeoutSeconds` its process group is killed.
Expected<ChildResult> runChecker(const std::string &tool,
                                 const std::string &input,
                                 double timeoutSeconds) {
  ChildOptions options;
  options.argv = {tool};
  options.name = kToolName;
  options.input = input;
  options.timeoutSeconds = timeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = kMaxStdout;
  options.maxErr = kMaxStderr;
  options.hintIfNotStarted = kOffHint;
  options.runsPackageCode = true;
  Expected<ChildResult> result = runChild(options);
  if (result && !result->readError.empty() && !result->timedOut)
    return makeError(ErrorCode::Io, result->readError);
  return result;
}

//===----------------------------------------------------------------------===//
// Reading the report
//===----------------------------------------------------------------------===//

std::string quoted(const std::string &s) { return "\"" + s + "\""; }

Unexpected badOutput(const std::string &what) {
  return makeError(ErrorCode::Internal,
                   std::string(kToolName) + " output: " + what, {},
                   std::string("is ") + kToolName +
                       " from the same build as ireepkg? (check "
                       "IREEPKG_MLIR_CHECK)");
}

std::string stringField(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

/// The column (in the hook's text) of an error of pass `p`.
size_t passErrorColumn(const PassPlan &p, const std::string &option) {
  if (!option.empty())
    for (const PassOption &o : p.written)
      if (o.key == option)
        return o.column;
  return p.column;
}

/// What to do about an MLIR plugin that does not load.
std::string mlirPluginHint(bool dialect) {
  std::string flag = dialect ? "--load-dialect-plugin" : "--load-pass-plugin";
  std::string entry =
      dialect ? "mlirGetDialectPluginInfo" : "mlirGetPassPluginInfo";
  return "MLIR tools skip a plugin they cannot load and go on without it "
         "(`mlir-opt-22 " +
         flag +
         "=<library>` only prints a warning); build it against "
         "libMLIR.so.22 (libmlir-22-dev) and export " +
         entry +
         ", returning MLIR_PLUGIN_API_VERSION (1) and a non-null callback";
}

std::string atColumn(size_t column) {
  return column ? " (at column " + std::to_string(column) + ")" : "";
}

} // namespace

nlohmann::json mlirCheckRequest(const std::vector<PipelineSource> &pipelines,
                                const std::vector<PassPluginSource> &plugins,
                                double stepTimeoutSeconds) {
  json fragments = json::array();
  for (const FragmentPlan &f : planFragments(pipelines)) {
    json passes = json::array();
    for (const PassPlan &p : f.passes) {
      json j = {{"name", p.name}, {"anchor", p.anchor}};
      if (p.hasOptions)
        j["options"] = p.options;
      passes.push_back(std::move(j));
    }
    fragments.push_back(
        {{"anchor", f.anchor}, {"text", f.text}, {"passes", passes}});
  }
  json paths = json::array();
  for (const PassPluginSource &p : plugins)
    paths.push_back(
        {{"path", p.path}, {"kind", p.dialect ? "dialect" : "pass"}});
  return {{"plugins", paths},
          {"fragments", fragments},
          {"step_timeout_ms",
           static_cast<int64_t>(std::ceil(stepTimeoutSeconds * 1000))}};
}

Status readMlirCheckOutput(std::string_view output,
                           const std::vector<PipelineSource> &pipelines,
                           const std::vector<PassPluginSource> &plugins,
                           MlirCheckReport &report, DiagnosticList &diags) {
  json doc = parseJsonOrDiscarded(output);
  if (doc.is_discarded())
    return badOutput("malformed JSON");
  if (!doc.is_object())
    return badOutput("/: must be an object");
  std::vector<FragmentPlan> plans = planFragments(pipelines);
  auto frags = doc.find("fragments");
  auto loads = doc.find("plugins");
  if (frags == doc.end() || !frags->is_array() || frags->size() != plans.size())
    return badOutput("/fragments: must be an array of " +
                     std::to_string(plans.size()) + " results");
  if (loads == doc.end() || !loads->is_array() ||
      loads->size() != plugins.size())
    return badOutput("/plugins: must be an array of " +
                     std::to_string(plugins.size()) + " results");
  report.ran = true;
  report.mlirVersion = stringField(doc, "mlir_version");
  const std::string mlir = "MLIR " + report.mlirVersion;

  // Plugins first: a pipeline that uses a plugin's passes is only checked
  // if the plugin loaded.
  for (size_t i = 0; i < plugins.size(); ++i) {
    const json &r = (*loads)[i];
    if (!r.is_object())
      return badOutput("/plugins/" + std::to_string(i) + ": must be an object");
    PassPluginLoad load;
    load.path = plugins[i].path;
    load.dialect = plugins[i].dialect;
    load.loaded = r.value("loaded", false);
    load.name = stringField(r, "name");
    load.version = stringField(r, "version");
    load.error = stringField(r, "error");
    if (auto p = r.find("passes"); p != r.end() && p->is_array())
      for (const json &n : *p)
        if (n.is_string())
          load.passes.push_back(n.get<std::string>());
    if (auto d = r.find("dialects"); d != r.end() && d->is_array())
      for (const json &n : *d)
        if (n.is_string())
          load.dialects.push_back(n.get<std::string>());
    if (!load.loaded) {
      const PassPluginSource &src = plugins[i];
      std::string message = std::string("MLIR ") +
                            (src.dialect ? "dialect" : "pass") + " plugin " +
                            quoted(src.label.empty() ? src.path : src.label) +
                            " cannot be loaded by " + mlir + ": " + load.error;
      std::string hint = mlirPluginHint(src.dialect);
      if (src.checked)
        diags.error(src.where, message, hint);
      else
        diags.warning(src.where,
                      message + "; pipelines that use its passes "
                                "are not checked",
                      hint);
    }
    report.plugins.push_back(std::move(load));
  }

  // Pipelines, in order; those with syntax errors were left out.
  std::vector<const json *> byPipeline(pipelines.size(), nullptr);
  std::vector<const FragmentPlan *> planOf(pipelines.size(), nullptr);
  for (size_t j = 0; j < plans.size(); ++j) {
    const json &r = (*frags)[j];
    std::string at = "/fragments/" + std::to_string(j);
    if (!r.is_object())
      return badOutput(at + ": must be an object");
    auto passes = r.find("passes");
    if (passes == r.end() || !passes->is_array() ||
        passes->size() != plans[j].passes.size())
      return badOutput(at + "/passes: must be an array of " +
                       std::to_string(plans[j].passes.size()) + " results");
    byPipeline[plans[j].source] = &r;
    planOf[plans[j].source] = &plans[j];
  }
  for (size_t i = 0; i < pipelines.size(); ++i) {
    const PipelineSource &src = pipelines[i];
    PipelineCheck check;
    check.where = src.where;
    check.point = src.point;
    if (!byPipeline[i]) {
      check.status = "syntax-only";
      report.pipelines.push_back(std::move(check));
      continue;
    }
    const json &r = *byPipeline[i];
    const FragmentPlan &plan = *planOf[i];
    size_t known = 0;
    auto error = [&](const json &e, size_t column) {
      if (!e.is_object())
        return;
      ++check.errors;
      diags.error(src.where,
                  "invalid pass pipeline (" + mlir +
                      "): " + stringField(e, "message") + atColumn(column),
                  stringField(e, "hint"));
    };
    const json &passes = r["passes"];
    for (size_t k = 0; k < plan.passes.size(); ++k) {
      const json &p = passes[k];
      if (!p.is_object() || !p.value("known", false))
        continue;
      ++known;
      if (auto errs = p.find("errors"); errs != p.end() && errs->is_array())
        for (const json &e : *errs)
          error(e, passErrorColumn(plan.passes[k], stringField(e, "option")));
    }
    if (auto errs = r.find("errors"); errs != r.end() && errs->is_array())
      for (const json &e : *errs) {
        size_t column = 0;
        if (auto c = e.find("column");
            c != e.end() && c->is_number_unsigned() && c->get<size_t>() > 0)
          column = plan.offset + c->get<size_t>();
        error(e, column);
      }
    if (auto u = r.find("unknown"); u != r.end() && u->is_array())
      for (const json &n : *u)
        if (n.is_string())
          check.unknownPasses.push_back(n.get<std::string>());
    if (auto s = r.find("suggestions"); s != r.end() && s->is_object())
      for (const std::string &name : check.unknownPasses) {
        auto near = s->find(name);
        // IREE's passes are never known here; a near MLIR name is chance.
        if (near == s->end() || !near->is_string() ||
            name.compare(0, 5, "iree-") == 0)
          continue;
        size_t column = 0;
        for (const PassPlan &p : plan.passes)
          if (p.name == name) {
            column = p.column;
            break;
          }
        diags.warning(
            src.where,
            "pass " + quoted(name) + " is not known to " + mlir +
                " or to a loaded pass plugin; did you mean " +
                quoted(near->get<std::string>()) + "?" + atColumn(column),
            "passes MLIR does not know are not checked; if " + quoted(name) +
                " comes from IREE or from a pass plugin that is "
                "not installed here, ignore this warning");
      }
    check.status = check.unknownPasses.empty() ? "checked"
                   : known > 0                 ? "partial"
                                               : "not-checked";
    report.pipelines.push_back(std::move(check));
  }
  return ok();
}

Expected<MlirCheckReport>
checkPipelinesWithMlir(const std::vector<PipelineSource> &pipelines,
                       const std::vector<PassPluginSource> &plugins,
                       DiagnosticList &diags) {
  MlirCheckReport report;
  auto syntaxOnly = [&](const std::string &why) {
    report.skipped = why;
    for (const PipelineSource &p : pipelines)
      report.pipelines.push_back({p.where, p.point, "syntax-only", {}, 0});
    return report;
  };
  bool pluginsToCheck =
      std::any_of(plugins.begin(), plugins.end(),
                  [](const PassPluginSource &p) { return p.checked; });
  if (pipelines.empty() && !pluginsToCheck)
    return syntaxOnly("there are no pass pipelines or MLIR plugins to check");
  auto checker = findChecker();
  if (!checker)
    return Unexpected(checker.error());
  if (checker->path.empty()) {
    if (checker->warn) {
      Location where =
          pipelines.empty() ? plugins.front().where : pipelines.front().where;
      where.line = where.column = 0;
      where.pointer.clear();
      std::string what =
          pipelines.empty() ? "MLIR plugins were not load-checked: "
          : pluginsToCheck  ? "pass pipelines were checked for syntax only "
                              "and MLIR plugins were not load-checked: "
                            : "pass pipelines were checked for syntax only: ";
      diags.warning(where, what + checker->skipped, checker->hint);
    }
    return syntaxOnly(checker->skipped);
  }
  report.checker = checker->path;
  double step = stepSeconds(diags);
  json request = mlirCheckRequest(pipelines, plugins, step);
  // Every step has its own limit in the tool (starting MLIR at least a
  // minute); this one only guards against the tool itself getting stuck.
  size_t steps = plugins.size() + 2;
  for (const json &f : request["fragments"])
    steps += 1 + f["passes"].size();
  auto child =
      runChecker(checker->path,
                 request.dump(-1, ' ', false, json::error_handler_t::replace),
                 step * static_cast<double>(steps) + 70);
  if (!child)
    return Unexpected(child.error());
  std::string detail = firstOutputLine(child->err);
  if (child->timedOut)
    return makeError(ErrorCode::Internal,
                     std::string(kToolName) + " did not finish in time and "
                                              "was stopped",
                     {}, kOffHint);
  if (child->signal) {
    const char *name = strsignal(child->signal);
    return makeError(ErrorCode::Internal,
                     std::string(kToolName) + " was killed by signal " +
                         std::to_string(child->signal) +
                         (name ? std::string(" (") + name + ")" : "") +
                         (detail.empty() ? "" : ": " + detail),
                     {}, kOffHint);
  }
  if (!child->exited || child->exitCode != 0)
    return makeError(ErrorCode::Internal,
                     std::string(kToolName) + " failed with exit status " +
                         std::to_string(child->exitCode) +
                         (detail.empty() ? "" : ": " + detail),
                     {}, kOffHint);
  if (Status s =
          readMlirCheckOutput(child->out, pipelines, plugins, report, diags);
      !s)
    return Unexpected(s.error());
  report.checker = checker->path;
  return report;
}

namespace {

/// Loads the plugin into each MLIR tool it names besides mlir-opt (which
/// ireepkg-mlir-check stands for) that is on PATH, in a child process on an
/// empty input: a tool that fails with it loaded (one that registers the
/// plugin's dialect itself aborts) or ignores it is an error at its
/// "tools" entry; a named tool not found, a warning. Not with load checks
/// off.
void checkInNamedTools(
    const CompilerPlugin &plugin, const PassPluginSource &src,
    const std::string &toolsPointer,
    const std::function<Location(const std::string &)> &locate,
    DiagnosticList &diags) {
  if (auto on = loadChecksEnabled(); on && !*on)
    return; // load checks are off (findChecker says so)
  for (size_t j = 0; j < plugin.tools.size(); ++j) {
    const std::string &name = plugin.tools[j];
    if (name == "mlir-opt")
      continue;
    Location where = locate(toolsPointer + "/" + std::to_string(j));
    std::string path = locateTool(name).path;
    if (path.empty()) {
      diags.warning(where,
                    "the MLIR plugin " + src.label +
                        " was not load-checked in " + name +
                        ": it is not on PATH",
                    "put " + name +
                        " on PATH to check that the plugin loads "
                        "into it");
      continue;
    }
    ChildOptions options;
    options.argv = {path,
                    std::string(src.dialect ? "--load-dialect-plugin="
                                            : "--load-pass-plugin=") +
                        src.path,
                    "-"};
    options.input = "";
    double limit = stepSeconds(diags);
    options.timeoutSeconds = limit;
    options.ownProcessGroup = true;
    options.maxOut = options.maxErr = 1u << 20;
    options.runsPackageCode = true;
    auto r = runChild(options);
    std::string problem;
    if (!r)
      problem = r.error().message;
    else if (r->spawnError)
      problem = "cannot run " + path + ": " + std::strerror(r->spawnError);
    else if (std::string ended = describeAbnormalEnd(*r, name, limit);
             !ended.empty()) {
      // One line (diagnostics are): what it said first, when it says it
      // (a failure's exit status comes with it already).
      std::string said = firstOutputLine(r->err.empty() ? r->out : r->err);
      problem = "with it loaded, " + ended +
                (r->exited || said.empty() ? "" : "; it printed: " + said);
    } else if (r->err.find("Request ignored") != std::string::npos) {
      problem = name + " does not load it and goes on without it (\"" +
                firstOutputLine(r->err) + "\")";
    }
    if (!problem.empty())
      diags.error(where,
                  "the MLIR plugin " + src.label + " cannot be used in " +
                      name + ": " + problem,
                  "a tool that registers the plugin's dialect or passes "
                  "itself aborts on the second registration: link the plugin "
                  "against the shared libMLIR without what the tool has, or "
                  "leave " +
                      name + " out of \"tools\"");
  }
}

} // namespace

Expected<MlirCheckReport>
checkPackagePipelines(const std::vector<PipelineCheckPackage> &packages,
                      const Platform &platform, bool loadPlugins,
                      DiagnosticList &diags, bool authoring) {
  std::vector<PipelineSource> pipelines;
  std::vector<PassPluginSource> plugins;
  IreePipelineCheckOptions iree;
  iree.warnWithoutIree = authoring;
  bool host = platform.str() == hostPlatform().str();
  std::set<std::string> present;
  for (const PipelineCheckPackage &pkg : packages)
    present.insert(pkg.name);
  for (const PipelineCheckPackage &pkg : packages) {
    if (pkg.manifest && pkg.check)
      for (const auto &[name, constraint] : pkg.manifest->dependencies)
        iree.passesMayComeFromDependencies |= !present.count(name);
    if (pkg.manifest && loadPlugins && host)
      for (const CompilerPlugin &p : pkg.manifest->compilerPlugins) {
        auto lib = p.library.find(platform.str());
        if (p.kind == CompilerPluginKind::IreeDynamic && lib != p.library.end())
          iree.dynamicPlugins.push_back(pkg.dir + "/" + lib->second);
      }
    if (!pkg.manifest)
      continue;
    auto locate = [&](const std::string &pointer) {
      Location l = pkg.document ? pkg.document->locate(pointer)
                                : Location{pkg.file, 0, 0, pointer, "", ""};
      l.package = pkg.name;
      return l;
    };
    const Manifest &m = *pkg.manifest;
    if (pkg.check)
      for (size_t i = 0; i < m.hooks.size(); ++i) {
        const Hook &h = m.hooks[i];
        bool pipelineHook = h.point == HookPoint::Preprocessing ||
                            h.point == HookPoint::MlirPipeline ||
                            h.point == HookPoint::ExecutablePreprocessing;
        if (!pipelineHook || h.pipeline.empty())
          continue;
        pipelines.push_back(
            {h.pipeline, h.point,
             locate("/compiler/hooks/" + std::to_string(i) + "/pipeline")});
      }
    if (!loadPlugins || !host)
      continue;
    for (size_t i = 0; i < m.compilerPlugins.size(); ++i) {
      const CompilerPlugin &p = m.compilerPlugins[i];
      if (p.kind != CompilerPluginKind::MlirPassPlugin &&
          p.kind != CompilerPluginKind::MlirDialectPlugin)
        continue;
      auto lib = p.library.find(platform.str());
      if (lib == p.library.end())
        continue;
      std::error_code ec;
      fs::path full = fs::absolute(fs::path(pkg.dir) / lib->second, ec);
      PassPluginSource src;
      src.path = ec ? (fs::path(pkg.dir) / lib->second).string()
                    : full.lexically_normal().string();
      src.label = lib->second;
      src.where = locate("/compiler/plugins/" + std::to_string(i) +
                         "/library/" + jsonPointerEscape(platform.str()));
      src.checked = pkg.check;
      src.dialect = p.kind == CompilerPluginKind::MlirDialectPlugin;
      if (pkg.check)
        checkInNamedTools(p, src,
                          "/compiler/plugins/" + std::to_string(i) + "/tools",
                          locate, diags);
      plugins.push_back(std::move(src));
    }
  }
  // Without pipelines, only the plugins being checked need loading.
  if (pipelines.empty())
    std::erase_if(plugins,
                  [](const PassPluginSource &p) { return !p.checked; });
  if (pipelines.empty() && plugins.empty()) {
    MlirCheckReport report;
    report.skipped = "there are no pass pipelines or MLIR plugins to check";
    return report;
  }
  auto report = checkPipelinesWithMlir(pipelines, plugins, diags);
  if (!report)
    return report;
  // What MLIR found wrong is not asked of IREE again.
  std::vector<PipelineSource> forIree;
  for (size_t i = 0; i < pipelines.size(); ++i)
    if (i >= report->pipelines.size() || report->pipelines[i].errors == 0)
      forIree.push_back(pipelines[i]);
  auto ireeReport = checkPipelinesWithIree(forIree, iree, diags);
  if (!ireeReport)
    return Unexpected(ireeReport.error());
  report->iree = std::move(*ireeReport);
  return report;
}

} // namespace ireepkg
