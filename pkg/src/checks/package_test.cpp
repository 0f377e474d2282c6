//===- pkg/src/checks/package_test.cpp - Running a package's smoke tests --===//
#include "ireepkg/pkg/checks/package_test.h"
#include "ireepkg/base/text.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/pkg/prefix/state.h"

#include "ireepkg/pkg/checks/pipeline_report.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

PackageTestTools findPackageTestTools() {
  PackageTestTools tools;
  tools.ireeCompile = locateTool("iree-compile").path;
  tools.ireeRunModule = locateTool("iree-run-module").path;
  tools.mlirOpt = locateTool("mlir-opt").path;
  if (tools.mlirOpt.empty())
    tools.mlirOpt = locateTool("mlir-opt-22").path;
  return tools;
}

namespace {

std::string shellQuote(const std::string &arg) {
  if (!arg.empty() &&
      arg.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789_-+=/.,:@%") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string commandLine(const std::vector<std::string> &argv) {
  std::string out;
  for (const std::string &a : argv)
    out += (out.empty() ? "" : " ") + shellQuote(a);
  return out;
}

/// The index in `expected` of the first line not found, in order, among
/// the lines of `out`; expected.size() when all are there.
bool lineFits(std::string_view line, const ExpectedOutput &e) {
  switch (e.kind) {
  case ExpectedOutput::Kind::Line:
    return trim(line) == trim(e.text);
  case ExpectedOutput::Kind::Contains:
    return line.find(e.text) != std::string_view::npos;
  case ExpectedOutput::Kind::Matches:
    try { // checked when the manifest was read
      return std::regex_search(line.begin(), line.end(),
                               std::regex(e.text, std::regex::ECMAScript));
    } catch (const std::regex_error &) {
      return false;
    }
  }
  return false;
}

size_t firstMissingLine(const std::string &out,
                        const std::vector<ExpectedOutput> &expected) {
  size_t next = 0, pos = 0;
  while (next < expected.size() && pos <= out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos)
      end = out.size();
    if (lineFits(std::string_view(out).substr(pos, end - pos), expected[next]))
      ++next;
    pos = end + 1;
  }
  return next;
}

/// Runs one tool of a test; false (with `result` filled) when it failed.
bool runTool(const std::vector<std::string> &argv, const PackageTest &test,
             const std::string &what, PackageTestResult &result,
             std::string *stdoutText = nullptr) {
  ChildOptions options;
  options.argv = argv;
  options.timeoutSeconds = test.timeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = options.maxErr = 1 << 20;
  options.runsPackageCode = true;
  auto child = runChild(options);
  result.command = commandLine(argv);
  if (!child) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason = what + ": " + child.error().message;
    return false;
  }
  std::string output = child->out + child->err;
  if (child->spawnError != 0) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason =
        "cannot run " + argv[0] + ": " +
        std::error_code(child->spawnError, std::generic_category()).message();
    return false;
  }
  if (child->timedOut) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason = what + " did not finish within " +
                    std::to_string(test.timeoutSeconds) +
                    " s (timeout_seconds) and was killed";
    result.output = output;
    return false;
  }
  if (!child->exited) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason =
        what + " crashed (signal " + std::to_string(child->signal) + ")";
    result.output = output;
    return false;
  }
  if (child->exitCode != 0) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason =
        what + " failed (exit code " + std::to_string(child->exitCode) + ")";
    // The IREE wheels' console scripts are Python wrappers that exit with
    // the native tool's return code, 256 - N for a tool killed by signal N.
    if (child->exitCode > 256 - 32 && child->exitCode < 256)
      result.reason = what + " failed (exit code " +
                      std::to_string(child->exitCode) +
                      ", as a Python wrapper reports a tool killed by signal " +
                      std::to_string(256 - child->exitCode) + ": " +
                      strsignal(256 - child->exitCode) + ")";
    result.output = output;
    return false;
  }
  if (stdoutText)
    *stdoutText = child->out;
  result.output = output;
  return true;
}

void checkOutput(const std::string &out, const PackageTest &test,
                 const std::string &what, PackageTestResult &result) {
  size_t missing = firstMissingLine(out, test.expectedOutput);
  if (missing == test.expectedOutput.size()) {
    result.outcome = PackageTestResult::Outcome::Passed;
    result.command.clear();
    result.output.clear();
    return;
  }
  result.outcome = PackageTestResult::Outcome::Failed;
  const ExpectedOutput &e = test.expectedOutput[missing];
  result.reason = what + " did not print " +
                  (e.kind == ExpectedOutput::Kind::Line
                       ? "the expected line \"" + std::string(trim(e.text)) +
                             "\""
                       : "a line that " + e.describe()) +
                  (missing ? " (after the " + std::to_string(missing) +
                                 " expected lines before it)"
                           : std::string());
  for (const ExpectedOutput &line : test.expectedOutput)
    result.expected.push_back(line.describe());
}

/// A scratch directory, removed when it goes out of scope.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    const char *tmp = environmentOverride("TMPDIR");
    std::string tmpl =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/ireepkg-test-XXXXXX";
    if (char *p = mkdtemp(tmpl.data()))
      path = p;
  }
  ~ScratchDir() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

void runIreeTest(const PackageTestTarget &target, const PackageTest &test,
                 const PackageTestTools &tools, PackageTestResult &result) {
  // A test that cannot run fails: skipping it would report untested
  // plugins as tested (`pack --no-test` is how an author skips tests).
  if (tools.ireeCompile.empty() || tools.ireeRunModule.empty()) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason = std::string(tools.ireeCompile.empty() ? "iree-compile"
                                                          : "iree-run-module") +
                    " was not found (on PATH or in $VIRTUAL_ENV/bin)";
    result.hint = "install IREE's tools (pip install iree-base-compiler "
                  "iree-base-runtime) or activate their virtual environment";
    return;
  }
  ScratchDir scratch;
  if (scratch.path.empty()) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason = "cannot create a scratch directory for the compiled module";
    return;
  }
  std::string vmfb = scratch.path + "/" + "module.vmfb";
  std::vector<std::string> compile = {
      tools.ireeCompile,
      target.root + "/" + test.program,
      "--iree-hal-target-device=local",
      "--iree-hal-local-target-device-backends=llvm-cpu",
      "--iree-llvmcpu-target-cpu=host",
      "--iree-opt-const-eval=false"};
  // The package's own configuration first, as `exec` gives it before the
  // user's flags: the test's compile_flags come later and win.
  if (tools.activatedCompilerFlags) {
    std::vector<std::string> args(compile.begin() + 1, compile.end());
    args.insert(args.end(), test.compileFlags.begin(), test.compileFlags.end());
    auto flags = tools.activatedCompilerFlags(target, args);
    if (!flags) {
      result.outcome = PackageTestResult::Outcome::Failed;
      result.reason =
          "cannot activate the package for its tests: " + flags.error().message;
      result.hint = flags.error().hint;
      return;
    }
    compile.insert(compile.end(), flags->begin(), flags->end());
  }
  compile.insert(compile.end(), test.compileFlags.begin(),
                 test.compileFlags.end());
  compile.push_back("-o");
  compile.push_back(vmfb);
  if (!runTool(compile, test, "iree-compile", result))
    return;
  // IREE goes on without a pass pipeline it cannot parse and exits with 0.
  if (std::optional<std::string> line = ireePipelineErrorLine(result.output)) {
    result.outcome = PackageTestResult::Outcome::Failed;
    result.reason = "iree-compile reported an error in a pass pipeline (\"" +
                    *line + "\") and compiled without it";
    result.hint = "fix the pipeline: the package's preprocessing hook "
                  "(`ireepkg flags compiler` shows what it gives) or the "
                  "test's compile_flags";
    return;
  }

  std::vector<std::string> run = {tools.ireeRunModule, "--device=local-sync"};
  if (target.runtimeFlagfile) {
    run.push_back("--flagfile=" + *target.runtimeFlagfile);
  } else {
    // The dependencies' plugins first, in activation order, then its own.
    auto add = [&](const Manifest &manifest, const std::string &root) {
      for (const RuntimePlugin &plugin : manifest.runtimePlugins) {
        bool embedded = false;
        std::string rel =
            runtimeLibraryFor(plugin, target.platform, embedded, root);
        if (rel.empty())
          continue;
        std::string path = root + "/" + rel;
        run.push_back("--executable_plugin=" +
                      (embedded ? "embedded:" + path : path));
      }
    };
    for (const PackageTestTarget::Dependency &d : target.dependencies)
      add(d.manifest, d.root);
    add(*target.manifest, target.root);
  }
  run.push_back("--module=" + vmfb);
  run.push_back("--function=" + test.function);
  for (const std::string &input : test.inputs)
    run.push_back("--input=" + input);
  std::string out;
  if (!runTool(run, test, "iree-run-module", result, &out))
    return;
  checkOutput(out, test, "iree-run-module", result);
}

void runMlirOptTest(const PackageTestTarget &target, const PackageTest &test,
                    const PackageTestTools &tools, PackageTestResult &result) {
  // mlir-opt, or another MLIR tool the package's plugins name ("tools").
  std::string name = test.toolName.empty() ? "mlir-opt" : test.toolName;
  std::string path = name == "mlir-opt" ? tools.mlirOpt : locateTool(name).path;
  if (path.empty()) {
    result.outcome = PackageTestResult::Outcome::Failed;
    if (name == "mlir-opt") {
      result.reason = "mlir-opt (or mlir-opt-22) was not found on PATH";
      result.hint = "install MLIR's tools (Debian: mlir-22-tools) or put "
                    "mlir-opt on PATH";
    } else {
      result.reason = name + " was not found on PATH";
      result.hint = "put " + name +
                    " (the MLIR tool the test runs, which the package's "
                    "plugins name in \"tools\") on PATH";
    }
    return;
  }
  std::vector<std::string> argv = {path};
  // The dependencies' plugins first, in activation order, then its own.
  auto add = [&](const Manifest &manifest, const std::string &root) {
    for (const CompilerPlugin &plugin : manifest.compilerPlugins) {
      const char *flag =
          plugin.kind == CompilerPluginKind::MlirPassPlugin
              ? "--load-pass-plugin="
          : plugin.kind == CompilerPluginKind::MlirDialectPlugin
              ? "--load-dialect-plugin="
              : nullptr;
      // The plugins that are for this tool (no "tools": mlir-opt).
      if (!flag || (plugin.tools.empty()
                        ? name != "mlir-opt"
                        : std::find(plugin.tools.begin(), plugin.tools.end(),
                                    name) == plugin.tools.end()))
        continue;
      auto it = plugin.library.find(target.platform.str());
      if (it != plugin.library.end())
        argv.push_back(flag + root + "/" + it->second);
    }
  };
  for (const PackageTestTarget::Dependency &d : target.dependencies)
    add(d.manifest, d.root);
  add(*target.manifest, target.root);
  argv.push_back("--pass-pipeline=" + test.pipeline);
  argv.push_back(target.root + "/" + test.program);
  std::string out;
  if (!runTool(argv, test, name, result, &out))
    return;
  checkOutput(out, test, name, result);
}

} // namespace

std::vector<PackageTestResult>
runPackageTests(const PackageTestTarget &target, const PackageTestTools &tools,
                const std::vector<std::string> &only) {
  std::vector<PackageTestResult> results;
  for (const PackageTest &test : target.manifest->tests) {
    if (!only.empty() &&
        std::find(only.begin(), only.end(), test.name) == only.end())
      continue;
    PackageTestResult result;
    result.package = target.package;
    result.version = target.version;
    result.test = test.name;
    result.tool = test.toolName.empty()
                      ? std::string(packageTestToolName(test.tool))
                      : test.toolName;
    auto start = std::chrono::steady_clock::now();
    if (target.dependencyError) {
      result.outcome = PackageTestResult::Outcome::Failed;
      result.reason = "cannot activate the package for its tests: " +
                      target.dependencyError->message;
      result.hint = target.dependencyError->hint;
    } else if (test.tool == PackageTestTool::IreeRunModule)
      runIreeTest(target, test, tools, result);
    else
      runMlirOptTest(target, test, tools, result);
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    results.push_back(std::move(result));
  }
  return results;
}

Expected<std::vector<PackageTestResult>>
runInstalledPackageTests(const std::string &prefix,
                         const std::vector<std::string> &packages,
                         const PackageTestTools &tools, Reporter &reporter) {
  auto state = readInstalledState(prefix, reporter);
  if (!state)
    return std::unexpected(state.error());
  for (const std::string &name : packages)
    if (!state->find(name)) {
      Error e(ErrorCode::NotFound,
              "package \"" + name + "\" is not installed in " + prefix);
      e.hint = "`ireepkg list` shows what is installed";
      return std::unexpected(e);
    }
  Platform host = hostPlatform();
  std::vector<PackageTestResult> results;
  for (const InstalledPackage &p : state->packages) {
    if (!packages.empty() &&
        std::find(packages.begin(), packages.end(), p.name) == packages.end())
      continue;
    auto manifest = readInstalledManifest(prefix, p, reporter);
    if (!manifest)
      return std::unexpected(manifest.error());
    PackageTestTarget target;
    target.package = p.name;
    target.version = p.version.str();
    target.root = packageDir(prefix, p.name, p.version);
    target.manifest = &*manifest;
    target.platform = host;
    target.runtimeFlagfile = prefix + "/state/runtime.flags";
    if (!state->platform.empty() && state->platform != host.str()) {
      for (const PackageTest &t : manifest->tests) {
        PackageTestResult r;
        r.package = target.package;
        r.version = target.version;
        r.test = t.name;
        r.tool = std::string(packageTestToolName(t.tool));
        r.outcome = PackageTestResult::Outcome::Skipped;
        r.reason = "the prefix targets " + state->platform +
                   "; tests run on this host (" + host.str() + ") only";
        results.push_back(std::move(r));
      }
      continue;
    }
    auto more = runPackageTests(target, tools);
    results.insert(results.end(), std::make_move_iterator(more.begin()),
                   std::make_move_iterator(more.end()));
  }
  return results;
}

nlohmann::json packageTestResultToJson(const PackageTestResult &r) {
  const char *outcome =
      r.outcome == PackageTestResult::Outcome::Passed    ? "passed"
      : r.outcome == PackageTestResult::Outcome::Skipped ? "skipped"
                                                         : "failed";
  return {
      {"package", r.package}, {"version", r.version}, {"test", r.test},
      {"tool", r.tool},       {"outcome", outcome},   {"reason", r.reason},
      {"command", r.command}, {"output", r.output},   {"expected", r.expected},
      {"hint", r.hint},       {"seconds", r.seconds}};
}

std::string formatPackageTestResult(const PackageTestResult &r) {
  std::string who = r.package + " " + r.version + " " + r.test;
  std::string text;
  switch (r.outcome) {
  case PackageTestResult::Outcome::Passed:
    return "ok    " + who + " (" + r.tool + ")\n";
  case PackageTestResult::Outcome::Skipped:
    return "skip  " + who + " — " + r.reason + "\n";
  case PackageTestResult::Outcome::Failed:
    break;
  }
  text = "FAIL  " + who + ": " + r.reason + "\n";
  if (!r.hint.empty())
    text += "  hint: " + r.hint + "\n";
  if (!r.command.empty())
    text += "  command: " + r.command + "\n";
  if (!r.expected.empty()) {
    text += "  expected output:\n";
    for (const std::string &line : r.expected)
      text += "    " + line + "\n";
  }
  if (!r.output.empty()) {
    text += r.expected.empty() ? "  output:\n" : "  actual output:\n";
    size_t pos = 0;
    while (pos < r.output.size()) {
      size_t end = r.output.find('\n', pos);
      if (end == std::string::npos)
        end = r.output.size();
      text += "    " + r.output.substr(pos, end - pos) + "\n";
      pos = end + 1;
    }
  }
  return text;
}

Expected<std::vector<std::string>>
installedDependencyClosure(const InstalledState &state,
                           const Manifest &manifest, const std::string &dir,
                           const std::string &prefix) {
  std::set<std::string> wanted;
  std::vector<std::string> todo;
  for (const auto &[name, constraint] : manifest.dependencies)
    todo.push_back(name);
  while (!todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    if (name == manifest.name || !wanted.insert(name).second)
      continue;
    const InstalledPackage *p = state.find(name);
    if (!p)
      return makeError(
          ErrorCode::NotFound,
          "its dependency \"" + name + "\" is not installed" +
              (prefix.empty() ? std::string() : " in " + prefix),
          Location::inFile(dir + "/ireeplugin.json"),
          "install it (`ireepkg install " + name +
              "`), or choose the prefix that has it with --prefix, so that "
              "the tests run with the package's dependencies activated");
    for (const std::string &d : p->dependencies)
      todo.push_back(d);
  }
  std::vector<std::string> ordered;
  for (const InstalledPackage &p : state.packages)
    if (wanted.count(p.name))
      ordered.push_back(p.name);
  return ordered;
}

PackageTestTarget directoryTestTarget(const std::string &dir,
                                      const Manifest &manifest,
                                      const std::string &dependencyPrefix) {
  PackageTestTarget target;
  target.package = manifest.name;
  target.version = manifest.version.str();
  target.root = std::filesystem::absolute(dir).lexically_normal().string();
  target.manifest = &manifest;
  target.platform = hostPlatform();
  if (manifest.dependencies.empty())
    return target;
  Reporter quiet;
  InstalledState empty;
  Expected<InstalledState> state = empty;
  if (!dependencyPrefix.empty())
    state = readInstalledState(dependencyPrefix, quiet);
  if (!state) {
    target.dependencyError = state.error();
    return target;
  }
  auto names =
      installedDependencyClosure(*state, manifest, target.root,
                                 dependencyPrefix);
  if (!names) {
    target.dependencyError = names.error();
    return target;
  }
  for (const std::string &name : *names) {
    const InstalledPackage *p = state->find(name);
    auto dep = readInstalledManifest(dependencyPrefix, *p, quiet);
    if (!dep) {
      target.dependencyError = dep.error();
      return target;
    }
    target.dependencies.push_back(
        {name, packageDir(dependencyPrefix, p->name, p->version),
         std::move(*dep)});
  }
  return target;
}

} // namespace ireepkg
