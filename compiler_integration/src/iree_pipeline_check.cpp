//===- compiler_integration/src/iree_pipeline_check.cpp - Hooks by IREE ---===//
//
// See ireepkg/compiler_integration/iree_pipeline_check.h. Each pipeline is
// run by iree-opt on `module {}` read from stdin. MLIR reports a pipeline it
// cannot build (an unknown pass, a bad option, a pass on the wrong
// operation) before any pass runs, at no location ("<unknown>:0: error:
// ..."); a pass that fails
// on the module reports at the module's location.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/iree_pipeline_check.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/base/text.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/compiler_integration/mlir_check.h"

#include <cstring>
#include <sstream>

namespace ireepkg {

namespace {

constexpr std::string_view kUnknownAt = "<unknown>:0: error: ";
constexpr std::string_view kParser = kMlirPipelineParser;

/// What lines lose at either end: spaces, tabs and carriage returns.
constexpr std::string_view kBlanks = " \t\r";

/// The pipeline as IREE takes it: preprocessing pipelines are nested in
/// `builtin.module(...)` (iree-compile refuses others), executable ones
/// must be written so (anything else is the name of a tool to run).
std::optional<std::string> ireeForm(const PipelineSource &p) {
  std::string text = trimmed(p.text, kBlanks);
  bool wrapped = startsWith(text, "builtin.module(");
  if (p.point == HookPoint::Preprocessing)
    return wrapped ? text : "builtin.module(" + text + ")";
  if (p.point == HookPoint::ExecutablePreprocessing && wrapped)
    return text;
  return std::nullopt;
}

/// IREE's words from iree-opt's stderr: its lines without MLIR's location
/// prefix, the echo of the pipeline and the caret under it, joined by "; ".
std::string ireeMessage(const std::string &err) {
  std::istringstream in(err);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::string_view v = line;
    if (startsWith(v, kUnknownAt))
      v.remove_prefix(kUnknownAt.size());
    if (startsWith(v, kParser)) {
      // "MLIR Textual PassPipeline Parser:1:1: error: <what>", then the
      // pipeline and a caret.
      size_t what = v.find("error: ");
      if (what != std::string_view::npos)
        v.remove_prefix(what + 7);
      std::string echo, caret;
      std::getline(in, echo);
      std::getline(in, caret);
    }
    std::string t = trimmed(v, kBlanks);
    if (t.empty() || t == "^")
      continue;
    out += (out.empty() ? "" : "; ") + t;
    if (out.size() > 400) {
      out.resize(400);
      out += "...";
      break;
    }
  }
  return out;
}

} // namespace

Expected<IreePipelineReport>
checkPipelinesWithIree(const std::vector<PipelineSource> &pipelines,
                       const IreePipelineCheckOptions &options,
                       DiagnosticList &diags) {
  IreePipelineReport report;
  std::vector<const PipelineSource *> todo;
  for (const PipelineSource &p : pipelines)
    if (p.point == HookPoint::Preprocessing ||
        p.point == HookPoint::ExecutablePreprocessing)
      todo.push_back(&p);
  if (todo.empty()) {
    report.skipped = "there are no IREE pass pipelines to check";
    return report;
  }
  auto loadChecks = loadChecksEnabled();
  if (!loadChecks)
    return Unexpected(loadChecks.error());
  std::string tool = options.ireeOpt;
  std::string off;
  if (const char *env = environmentOverride("IREEPKG_IREE_OPT");
      tool.empty() && env && *env) {
    std::string v = env;
    if (v == "off" || v == "0" || v == "no")
      off = "disabled by IREEPKG_IREE_OPT=" + v;
    else
      tool = locateTool(v).path;
    if (off.empty() && tool.empty())
      return makeError(ErrorCode::NotFound,
                       "IREEPKG_IREE_OPT names '" + v +
                           "', which is not an executable file",
                       {},
                       "point IREEPKG_IREE_OPT at IREE's iree-opt, set it to "
                       "off to skip the check, or unset it to find iree-opt "
                       "on PATH");
  } else if (tool.empty()) {
    tool = locateTool("iree-opt").path;
  }
  if (!*loadChecks || !off.empty() || tool.empty()) {
    report.skipped = !*loadChecks ? "load checks are off (IREEPKG_LOAD_CHECKS, "
                                    "--no-load-checks or load-checks = false)"
                     : !off.empty() ? off
                                    : "iree-opt was not found on PATH or in "
                                      "$VIRTUAL_ENV/bin";
    for (const PipelineSource *p : todo)
      report.pipelines.push_back(
          {p->where, p->point, "", "not-checked", report.skipped});
    // At install with no IREE compiler at all, what needs IREE says it is
    // missing (install warns that no IREE was found): the check is only
    // recorded as skipped. An author (pack) is told, and so is anyone
    // with an iree-compile but not its iree-opt.
    if (tool.empty() && off.empty() && *loadChecks &&
        (options.warnWithoutIree ||
         !locateTool("iree-compile").path.empty())) {
      Location where = todo.front()->where;
      where.line = where.column = 0;
      where.pointer.clear();
      diags.warning(where,
                    "pass pipelines were not checked against IREE: " +
                        report.skipped,
                    "install IREE's compiler (pip install iree-base-compiler) "
                    "or activate its virtual environment, so that a pipeline "
                    "IREE cannot parse is found before iree-compile ignores "
                    "it");
    }
    return report;
  }
  report.ran = true;
  report.tool = tool;
  for (const PipelineSource *p : todo) {
    IreePipelineCheck check{p->where, p->point, "", "", ""};
    std::optional<std::string> form = ireeForm(*p);
    if (!form) {
      check.status = "not-checked";
      check.message = "IREE runs an executable-preprocessing value that is "
                      "not `builtin.module(...)` as a tool";
      report.pipelines.push_back(std::move(check));
      continue;
    }
    check.pipeline = *form;
    ChildOptions child;
    child.argv = {tool};
    for (const std::string &plugin : options.dynamicPlugins)
      child.argv.push_back("--iree-load-plugin=" + plugin);
    child.argv.push_back("--pass-pipeline=" + *form);
    child.argv.push_back("-o");
    child.argv.push_back("/dev/null");
    child.argv.push_back("-");
    child.input = "module {}\n";
    child.timeoutSeconds = options.timeoutSeconds;
    child.ownProcessGroup = true;
    child.maxOut = 1u << 20;
    child.maxErr = 64u << 10;
    child.runsPackageCode = !options.dynamicPlugins.empty();
    child.hintIfNotStarted = "set IREEPKG_LOAD_CHECKS=0 to skip the check";
    auto r = runChild(child);
    if (!r)
      return Unexpected(r.error());
    const std::string at = " (checked with " + tool + ")";
    if (r->timedOut || r->signal) {
      check.status = "failed";
      check.message =
          r->timedOut
              ? "iree-opt did not finish in time and was stopped"
              : "iree-opt was killed by signal " + std::to_string(r->signal);
      diags.warning(p->where, "IREE could not check the pass pipeline: " +
                                  check.message + at);
    } else if (r->exitCode == 0) {
      check.status = "ok";
    } else if (r->err.find(kUnknownAt) != std::string::npos ||
               r->err.find(kParser) != std::string::npos) {
      check.message = ireeMessage(r->err);
      bool unknownPass = check.message.find("does not refer to a registered "
                                            "pass") != std::string::npos;
      if (unknownPass && options.passesMayComeFromDependencies) {
        check.status = "not-checked";
        diags.warning(
            p->where,
            "IREE does not know a pass of the pipeline: " + check.message + at,
            "if it comes from a dependency's IREE compiler plugin, "
            "install checks it again with the dependency; "
            "otherwise iree-compile ignores the pipeline");
      } else {
        check.status = "invalid";
        diags.error(p->where,
                    "IREE cannot parse the pass pipeline: " + check.message +
                        at,
                    "iree-compile would print this error, ignore the "
                    "pipeline and still exit with 0; `iree-opt --help` "
                    "lists the passes IREE knows");
      }
    } else {
      check.status = "failed";
      check.message = ireeMessage(r->err);
      diags.warning(p->where,
                    "IREE parses the pass pipeline, but it fails on an "
                    "empty module: " +
                        check.message + at);
    }
    report.pipelines.push_back(std::move(check));
  }
  return report;
}

} // namespace ireepkg
