//===- compiler_integration/src/compiler_doctor.cpp -----------------------===//
//
// `doctor` for compiler plugins.
//
// See compiler_doctor.h.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/compiler_doctor.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/mlir_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

namespace ireepkg {

namespace {

namespace fs = std::filesystem;

std::string fileName(const std::string &path) {
  return path.substr(path.rfind('/') + 1);
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// The line of `text` holding `needle`, trimmed; "" if none.
std::string lineWith(const std::string &text, const std::string &needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) {
      size_t b = line.find_first_not_of(" \t");
      size_t e = line.find_last_not_of(" \t\r");
      return b == std::string::npos ? "" : line.substr(b, e - b + 1);
    }
  return "";
}

/// Runs a tool on an empty stdin with a time limit; nullopt (and `why`)
/// when ireepkg cannot run it at all.
std::optional<ChildResult> runQuietly(const std::vector<std::string> &argv,
                                      double timeoutSeconds, std::string &why) {
  ChildOptions options;
  options.argv = argv;
  options.input = "";
  options.timeoutSeconds = timeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = options.maxErr = 1u << 20;
  options.runsPackageCode = true;
  auto r = runChild(options);
  if (!r) {
    why = r.error().message;
    return std::nullopt;
  }
  if (r->spawnError) {
    why = "cannot run " + argv[0] + ": " + std::strerror(r->spawnError);
    return std::nullopt;
  }
  return std::move(*r);
}

/// The plugin ids `iree-compile --iree-list-plugins` prints.
std::vector<std::string> listedPlugins(const std::string &out) {
  std::vector<std::string> ids;
  std::istringstream in(out);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("Loaded plugins:") != std::string::npos) {
      listing = true;
      continue;
    }
    if (!listing || line.empty() || line[0] != ' ')
      continue;
    size_t b = line.find_first_not_of(' ');
    size_t e = line.find_last_not_of(" \r");
    if (b != std::string::npos)
      ids.push_back(line.substr(b, e - b + 1));
  }
  return ids;
}

bool isMlir(CompilerPluginKind kind) {
  return kind == CompilerPluginKind::MlirPassPlugin ||
         kind == CompilerPluginKind::MlirDialectPlugin;
}

} // namespace

std::vector<CompilerPluginCheck>
checkCompilerPlugins(const std::vector<DoctorPackage> &packages,
                     const Platform &platform,
                     const CompilerDoctorTools &tools) {
  std::vector<CompilerPluginCheck> checks;
  std::vector<const CompilerPlugin *> plugins;
  bool host = platform.str() == hostPlatform().str();
  for (const DoctorPackage &p : packages) {
    if (!p.manifest)
      continue;
    for (const CompilerPlugin &cp : p.manifest->compilerPlugins) {
      CompilerPluginCheck c;
      c.package = p.name;
      c.version = p.version.str();
      c.plugin = cp.id;
      c.kind = std::string(compilerPluginKindName(cp.kind));
      if (cp.kind != CompilerPluginKind::IreeStatic) {
        auto lib = cp.library.find(platform.str());
        if (lib == cp.library.end())
          c.skipped = "no build for " + platform.str();
        else
          c.path = p.dir + "/" + lib->second;
        if (c.skipped.empty() && !host)
          c.skipped = "the prefix targets " + platform.str() +
                      "; only plugins for this host (" + hostPlatform().str() +
                      ") can be loaded";
        std::error_code ec;
        if (c.skipped.empty() && !fs::exists(c.path, ec))
          c.problems.push_back("the library " + lib->second +
                               " is missing from the installed package");
      }
      checks.push_back(std::move(c));
      plugins.push_back(&cp);
    }
  }
  auto ready = [&](const CompilerPluginCheck &c) {
    return c.skipped.empty() && c.problems.empty();
  };

  // MLIR plugins: ireepkg-mlir-check says why one does not load ...
  std::vector<PassPluginSource> sources;
  std::vector<size_t> sourceOf;
  for (size_t i = 0; i < checks.size(); ++i) {
    if (!isMlir(plugins[i]->kind) || !ready(checks[i]))
      continue;
    PassPluginSource s;
    s.path = checks[i].path;
    s.label = checks[i].path;
    s.checked = true;
    s.dialect = plugins[i]->kind == CompilerPluginKind::MlirDialectPlugin;
    sources.push_back(std::move(s));
    sourceOf.push_back(i);
  }
  std::vector<std::optional<PassPluginLoad>> loads(checks.size());
  std::string checkerProblem, mlirVersion;
  if (!sources.empty()) {
    DiagnosticList ignored; // the same failures come back in the report
    auto report = checkPipelinesWithMlir({}, sources, ignored);
    if (!report)
      checkerProblem = report.error().message;
    else if (!report->ran)
      checkerProblem = report->skipped;
    else {
      mlirVersion = report->mlirVersion;
      for (size_t k = 0; k < report->plugins.size() && k < sourceOf.size(); ++k)
        loads[sourceOf[k]] = report->plugins[k];
    }
  }
  // ... and the real mlir-opt-22 shows what a user gets.
  for (size_t i = 0; i < checks.size(); ++i) {
    CompilerPluginCheck &c = checks[i];
    if (!isMlir(plugins[i]->kind) || !ready(c))
      continue;
    bool dialect = plugins[i]->kind == CompilerPluginKind::MlirDialectPlugin;
    const std::optional<PassPluginLoad> &load = loads[i];
    std::string reason = load && !load->loaded ? load->error : "";
    if (load && load->loaded) {
      std::vector<std::string> parts;
      if (!load->name.empty())
        parts.push_back(load->name + (load->version.empty()
                                          ? ""
                                          : " " + load->version));
      if (!load->passes.empty())
        parts.push_back("passes " + joinNames(load->passes));
      if (!load->dialects.empty())
        parts.push_back("dialects " + joinNames(load->dialects));
      c.details = joinNames(parts);
    }
    // The tools it is for ("tools"; mlir-opt, as mlir-opt-22, by default).
    std::vector<std::string> named = plugins[i]->tools;
    if (named.empty())
      named.push_back("mlir-opt");
    std::vector<std::string> checkedWith;
    for (const std::string &name : named) {
      std::string path;
      if (name == "mlir-opt") {
        path = tools.mlirOpt;
        if (path.empty()) {
          // Without mlir-opt-22, ireepkg-mlir-check's load says what MLIR
          // makes of it.
          if (!load) {
            if (named.size() == 1)
              c.skipped = "mlir-opt-22 was not found, and ireepkg-mlir-check "
                          "could not load it: " +
                          checkerProblem;
            else
              c.warnings.push_back("mlir-opt-22 was not found, and "
                                   "ireepkg-mlir-check could not load it: " +
                                   checkerProblem);
            continue;
          }
          checkedWith.push_back("ireepkg-mlir-check (MLIR " + mlirVersion +
                                "; mlir-opt-22 was not found)");
          if (!load->loaded)
            c.problems.push_back("MLIR " + mlirVersion +
                                 " cannot load it: " + reason);
          continue;
        }
      } else {
        path = tools.findTool ? tools.findTool(name) : "";
        if (path.empty()) {
          c.warnings.push_back(name +
                               ", which it names in \"tools\", was not found "
                               "on PATH: not checked with it");
          continue;
        }
      }
      std::string tool = fileName(path);
      checkedWith.push_back(path);
      std::string why;
      auto r = runQuietly({path,
                           std::string(dialect ? "--load-dialect-plugin="
                                               : "--load-pass-plugin=") +
                               c.path,
                           "-"},
                          tools.timeoutSeconds, why);
      if (!r) {
        c.problems.push_back("could not be checked with " + tool + ": " + why);
        continue;
      }
      std::string ignoredLine = lineWith(r->err, "Request ignored");
      std::string ended = describeAbnormalEnd(*r, tool, tools.timeoutSeconds);
      if (!ended.empty())
        c.problems.push_back(
            "with it loaded, " + ended +
            (name == "mlir-opt" ? std::string() : describeToolOutput(*r)));
      else if (!ignoredLine.empty())
        c.problems.push_back(
            tool + " does not load it and goes on without it (\"" +
            ignoredLine + "\")" + (reason.empty() ? "" : ": " + reason));
      else if (!reason.empty())
        c.problems.push_back("MLIR " + mlirVersion +
                             " (ireepkg-mlir-check) "
                             "cannot load it: " +
                             reason);
    }
    c.checkedWith = joinNames(checkedWith);
    if (checkedWith.empty() && c.skipped.empty() && c.problems.empty())
      c.skipped = "none of the MLIR tools it names (" + joinNames(named) +
                  ") was found";
  }

  // iree-static: the compiler must have the plugin compiled in.
  bool anyStatic = false;
  for (size_t i = 0; i < checks.size(); ++i)
    anyStatic |= plugins[i]->kind == CompilerPluginKind::IreeStatic;
  std::vector<std::string> listed;
  std::string listProblem;
  if (anyStatic) {
    if (tools.ireeCompile.empty()) {
      listProblem = "iree-compile was not found";
    } else {
      std::string why;
      auto r = runQuietly({tools.ireeCompile, "--iree-list-plugins"},
                          tools.timeoutSeconds, why);
      if (!r)
        listProblem = why;
      else if (std::string ended =
                   describeAbnormalEnd(*r, "iree-compile --iree-list-plugins",
                                       tools.timeoutSeconds);
               !ended.empty())
        listProblem = ended;
      else
        listed = listedPlugins(r->out);
    }
  }
  for (size_t i = 0; i < checks.size(); ++i) {
    if (plugins[i]->kind != CompilerPluginKind::IreeStatic)
      continue;
    CompilerPluginCheck &c = checks[i];
    if (tools.ireeCompile.empty()) {
      c.skipped = "iree-compile was not found";
      continue;
    }
    c.checkedWith = tools.ireeCompile;
    if (!listProblem.empty())
      c.problems.push_back("could not be checked: " + listProblem);
    else if (std::find(listed.begin(), listed.end(), c.plugin) == listed.end())
      c.problems.push_back("iree-compile does not have a plugin \"" + c.plugin +
                           "\" (`iree-compile --iree-list-plugins` lists " +
                           joinNames(listed) + ")");
  }

  // iree-dynamic: loaded by the real compiler.
  std::optional<CompilerCapabilities> caps;
  for (size_t i = 0; i < checks.size(); ++i) {
    CompilerPluginCheck &c = checks[i];
    if (plugins[i]->kind != CompilerPluginKind::IreeDynamic || !ready(c))
      continue;
    if (tools.ireeCompile.empty()) {
      c.skipped = "iree-compile was not found";
      continue;
    }
    c.checkedWith = tools.ireeCompile;
    if (!caps) {
      auto probed = probeCompiler(tools.ireeCompile);
      caps = probed ? *probed : CompilerCapabilities{};
    }
    if (!caps->loadsPlugins) {
      std::string which = caps->version.empty()
                              ? std::string()
                              : " (IREE " + caps->version + ")";
      c.problems.push_back("iree-compile" + which +
                           " cannot load plugins: it has no --iree-load-plugin "
                           "flag");
      continue;
    }
    std::string load = "--iree-load-plugin=" +
                       (caps->pluginIdSpelling ? c.plugin + "=" + c.path
                                               : c.path);
    std::string why;
    auto r = runQuietly({tools.ireeCompile, load, "--iree-list-plugins"},
                        tools.timeoutSeconds, why);
    if (!r) {
      c.problems.push_back("could not be checked: " + why);
      continue;
    }
    if (std::string ended =
            describeAbnormalEnd(*r, "iree-compile", tools.timeoutSeconds);
        !ended.empty()) {
      c.problems.push_back("the compiler does not load it: " + ended);
      continue;
    }
    std::vector<std::string> ids = listedPlugins(r->out);
    if (std::find(ids.begin(), ids.end(), c.plugin) == ids.end())
      c.problems.push_back("iree-compile loads the library but lists no plugin "
                           "\"" + c.plugin + "\" (it lists " + joinNames(ids) +
                           ")");
  }
  return checks;
}

} // namespace ireepkg
