//===- cli/commands/cmd_exec.cpp - `ireepkg exec` -------------------------===//
//
// Replaces itself with the tool, with the prefix's configuration given the
// way the tool's kind takes it (see ireepkg/tool_kind.h), before the user's
// arguments (IREE flags given later win, so the user's own flags still
// override what the prefix contributes). The kind comes from --tool-kind,
// else from probing the tool's --help.
//
// MLIR tools refuse --pass-pipeline given twice or together with individual
// pass flags (--cse): when the user's arguments choose the passes, the
// packages' --pass-pipeline is left out (with a note); their plugins are
// still loaded.
//
// iree-compile prints an error for a preprocessing pass pipeline it cannot
// parse, goes on without the pipeline and exits with 0. When a
// preprocessing pipeline is given (by the packages or the user), exec runs
// the compiler as a child instead, passes its stderr through, and exits
// with 1 when IREE reported such an error although it exited with 0.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "commands/options.h"
#include "output/output.h"
#include "host/python_env.h"
#include "commands/shared.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/pkg/checks/pipeline_report.h"
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/tool_kind.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ireepkg::cli {

namespace {

constexpr double kHelpTimeoutSeconds = 20;

/// "pass-pipeline" for "--pass-pipeline=x", "-pass-pipeline", ...; "" for
/// arguments that are not options.
std::string optionName(const std::string &arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--")
    return "";
  std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
  return name.substr(0, name.find('='));
}

/// Options of MlirOptMain tools that are not passes, so that the tool's
/// help need not be read for them.
bool obviouslyNotAPass(const std::string &name) {
  static const std::set<std::string> names = {
      "o",
      "split-input-file",
      "verify-diagnostics",
      "allow-unregistered-dialect",
      "show-dialects",
      "emit-bytecode",
      "no-implicit-module",
      "dump-pass-pipeline",
      "verify-each",
      "version",
      "help"};
  return names.count(name) || name.rfind("mlir-", 0) == 0 ||
         name.rfind("load-", 0) == 0 || name.rfind("debug", 0) == 0;
}

/// The pass and pass pipeline flags an MlirOptMain tool lists in its help
/// (the "Compiler passes to run" section).
std::set<std::string> passFlagsOf(const std::string &tool) {
  ChildOptions options;
  options.argv = {tool, "--help"};
  options.timeoutSeconds = kHelpTimeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = options.maxErr = 16u << 20;
  std::set<std::string> names;
  auto r = runChild(options);
  if (!r || r->spawnError || r->timedOut)
    return names;
  std::istringstream in(r->out);
  bool inPasses = false;
  for (std::string line; std::getline(in, line);) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos)
      continue;
    if (line.find("Compiler passes to run") != std::string::npos) {
      inPasses = true;
      continue;
    }
    if (indent <= 2) {
      inPasses = false;
      continue;
    }
    // Passes and pipelines are indented by six, their options by eight.
    if (inPasses && indent == 6 && line.compare(6, 2, "--") == 0) {
      std::string rest = line.substr(8);
      names.insert(rest.substr(0, rest.find_first_of(" =")));
    }
  }
  return names;
}

/// The user's argument that chooses the passes an MLIR tool runs
/// (--pass-pipeline, its alias -p, or a pass flag such as --cse), or "".
std::string userPassArgument(const std::string &tool,
                             const std::vector<std::string> &userArgs) {
  std::vector<std::string> unknown;
  for (const std::string &arg : userArgs) {
    std::string name = optionName(arg);
    if (name.empty())
      continue;
    if (name == "pass-pipeline" || name == "p")
      return arg;
    if (!obviouslyNotAPass(name))
      unknown.push_back(arg);
  }
  if (unknown.empty())
    return "";
  std::set<std::string> passes = passFlagsOf(tool);
  for (const std::string &arg : unknown)
    if (passes.count(optionName(arg)))
      return arg;
  return "";
}

/// Runs the compiler with its stderr passed through, read for IREE's pass
/// pipeline errors (see the file comment); returns exec's exit status. A
/// signal that ends the compiler ends ireepkg the same way.
int runWatchingPipelineErrors(const std::string &path,
                              std::vector<char *> &argv,
                              const std::string &tool) {
  constexpr size_t kKept = 1u << 20; // IREE says it before compiling
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    printError("cannot run '" + path + "': " + std::strerror(errno));
    return kExitFailure;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    printError("cannot run '" + path + "': " + std::strerror(errno));
    return kExitFailure;
  }
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::execv(path.c_str(), argv.data());
    std::string why = "ireepkg: error: cannot run '" + path +
                      "': " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, why.data(), why.size());
    ::_exit(127);
  }
  ::close(fds[1]);
  // Like system(): Ctrl-C and Ctrl-\ go to the compiler, which decides.
  struct sigaction ignore = {}, oldInt = {}, oldQuit = {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &oldInt);
  ::sigaction(SIGQUIT, &ignore, &oldQuit);
  std::string kept;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(STDERR_FILENO, buf + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break; // our stderr is gone: keep reading, so the compiler goes on
      off += w;
    }
    if (kept.size() < kKept)
      kept.append(buf, std::min(static_cast<size_t>(n), kKept - kept.size()));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &oldInt, nullptr);
  ::sigaction(SIGQUIT, &oldQuit, nullptr);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::signal(sig, SIG_DFL);
    ::raise(sig);
    return 128 + sig;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitFailure;
  if (code != 0)
    return code;
  if (std::optional<std::string> line = ireePipelineErrorLine(kept)) {
    printError(tool + " reported an error in a pass pipeline (\"" + *line +
                   "\"), compiled without that pipeline and exited with 0",
               "fix the pipeline (a package's preprocessing hook: `ireepkg "
               "doctor` checks them against this IREE); the output was "
               "written without it");
    return kExitFailure;
  }
  return code;
}

/// Whether a preprocessing pass pipeline reaches the compiler.
bool givesPreprocessingPipeline(const CompilerConfig &config,
                                const std::vector<std::string> &userArgs) {
  for (const CompilerFlag &f : config.flags)
    if (f.name == "iree-preprocessing-pass-pipeline")
      return true;
  for (const std::string &arg : userArgs)
    if (optionName(arg) == "iree-preprocessing-pass-pipeline")
      return true;
  return false;
}

} // namespace

int runExec(const Command &, const ParsedArgs &args) {
  if (args.passthrough.empty()) {
    printError("'exec' needs a tool to run after --",
               "e.g. ireepkg exec -- iree-run-module --module=m.vmfb ...");
    return kExitUsage;
  }
  std::optional<ToolKind> explicitKind;
  if (auto k = args.value("tool-kind")) {
    explicitKind = parseToolKind(*k);
    if (!explicitKind) {
      printError("unknown tool kind '" + *k + "'" +
                     didYouMean(*k, toolKindNames()),
                 "tool kinds are runtime, compiler, mlir and python");
      return kExitUsage;
    }
  }
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  // Its plugins are for the machine it is deployed to: this host's IREE
  // could not load them (or, for compiler tools, they are not this host's).
  if (const std::string platform = prefixPlatform(prefix->path),
      host = hostPlatform().str();
      platform != host) {
    printError("the prefix " + prefix->path + " is for " + platform +
                   ", not this host (" + host +
                   "), so its plugins cannot be activated here",
               "run the tool on a " + platform +
                   " machine with the prefix copied there (see "
                   "docs/guide-deploying.md), or install for this host into "
                   "another prefix: ireepkg install --platform " +
                   host + " --prefix DIR ...");
    return kExitFailure;
  }
  auto noPlugins = [&](const std::string &flagfile) {
    printError("no plugins are installed in " + prefix->path + " (" +
                   flagfile + " does not exist)",
               "install packages first, or choose another prefix with "
               "--prefix");
    return kExitFailure;
  };
  const std::string runtimeFlags = prefix->path + "/state/runtime.flags";
  const std::string compilerFlags = prefix->path + "/state/compiler.flags";
  struct stat st;
  if (::stat(runtimeFlags.c_str(), &st) != 0 &&
      ::stat(compilerFlags.c_str(), &st) != 0)
    return noPlugins(runtimeFlags);
  const std::string &tool = args.passthrough[0];
  std::string resolved = findTool(tool).path;
  if (resolved.empty()) {
    printError("cannot find '" + tool + "' on PATH" +
                   (environmentOverride("VIRTUAL_ENV") ? " or in $VIRTUAL_ENV/bin"
                                               : ""),
               "install IREE's tools (pip install iree-base-runtime "
               "iree-base-compiler) or activate their virtual environment");
    return kExitFailure;
  }
  ToolKind kind;
  if (explicitKind) {
    kind = *explicitKind;
  } else {
    auto probed = probeToolKind(resolved);
    if (!probed) {
      printError(probed.error());
      return kExitFailure;
    }
    kind = *probed;
  }
  const std::string &flagfile =
      kind == ToolKind::Compiler ? compilerFlags : runtimeFlags;
  if (::stat(flagfile.c_str(), &st) != 0)
    return noPlugins(flagfile);
  std::vector<std::string> userArgs(args.passthrough.begin() + 1,
                                    args.passthrough.end());
  std::vector<std::string> argv = {tool};
  bool watchPipelineErrors = false;
  // A moved prefix whose flagfiles could not be written again (a read-only
  // image) still names its old place there: the flags go as arguments.
  const bool stale = flagfilesAreStale(prefix->path);
  if (kind == ToolKind::Runtime && stale) {
    for (std::string &f : runtimeFlagsOf(prefix->path))
      argv.push_back(std::move(f));
  } else if (kind == ToolKind::Runtime) {
    argv.push_back("--flagfile=" + flagfile);
  } else if (kind == ToolKind::Python) {
    // Python takes the configuration from its environment (python_env.h):
    // iree.runtime reads IREE_PY_RUNTIME_FLAGS when imported, iree.compiler
    // finds ireepkg's iree-compile wrapper through IREE_TOOL_PATH; the
    // wrapper runs the iree-compile installed beside this interpreter (its
    // virtual environment's), when there is one.
    std::string besides = resolved.substr(0, resolved.rfind('/') + 1) +
                          "iree-compile";
    for (const auto &[name, value] : pythonEnvironment(
             prefix->path, isExecutableFile(besides) ? besides : ""))
      ::setenv(name.c_str(), value.c_str(), 1);
  } else {
    // Compiler tools: the configuration is checked (option values, hook
    // conflicts, what this compiler can load) before the compiler runs.
    CompilerConfigRequest request;
    request.tool =
        kind == ToolKind::Mlir
            ? CompilerTool::MlirOpt
            : parseCompilerTool(tool).value_or(CompilerTool::IreeCompile);
    if (kind == ToolKind::Compiler) {
      if (auto caps = probeCompiler(resolved))
        request.compiler = *caps;
      // The compile's own target flags choose the tuning specs.
      request.targets = compileTargetsOf(userArgs);
    }
    CliReporter reporter;
    auto config = prefixCompilerConfig(*prefix, request, reporter);
    if (!config) {
      printError(config.error());
      return kExitFailure;
    }
    if (kind == ToolKind::Compiler)
      for (const Diagnostic &d : config->notes)
        reporter.warning(d);
    if (kind == ToolKind::Mlir) {
      // MLIR tools take the flags as arguments; a pipeline of the user's
      // own replaces the packages'.
      std::string own = userPassArgument(resolved, userArgs);
      for (const CompilerFlag &f : config->flags) {
        if (f.name == "pass-pipeline" && !own.empty()) {
          std::fprintf(stderr,
                       "ireepkg: note: your arguments choose the passes (%s), "
                       "so the packages' --pass-pipeline=%s is left out; "
                       "their plugins are still loaded\n",
                       own.c_str(), f.value.c_str());
          continue;
        }
        argv.push_back(f.text());
      }
    } else {
      // IREE's compiler tools read the prefix's response file (they take
      // LLVM's @file, not the runtime's --flagfile). It cannot hold what
      // only a known compiler allows (dynamically loaded plugins): with
      // one, every flag is an argument, so that --iree-plugin= stays in
      // activation order.
      watchPipelineErrors = kind == ToolKind::Compiler &&
                            givesPreprocessingPipeline(*config, userArgs);
      bool dynamic = false;
      for (const CompilerFlag &f : config->flags)
        dynamic |= f.name == "iree-load-plugin";
      if (!stale && !dynamic) {
        argv.push_back("@" + flagfile);
        // What depends on the compile (the linked tuning spec of the
        // target) is not in the response file.
        for (const CompilerFlag &f : config->flags)
          if (f.perCompile)
            argv.push_back(f.text());
      } else {
        for (const CompilerFlag &f : config->flags)
          argv.push_back(f.text());
      }
    }
  }
  argv.insert(argv.end(), userArgs.begin(), userArgs.end());
  std::vector<char *> cargv;
  for (std::string &a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  if (watchPipelineErrors)
    return runWatchingPipelineErrors(resolved, cargv, tool);
  ::execv(resolved.c_str(), cargv.data());
  printError("cannot run '" + resolved + "': " + std::strerror(errno));
  return kExitFailure;
}

const Command &execCommand() {
  static const Command command{
      .name = "exec",
      .synopsis = "[--prefix DIR] [--tool-kind KIND] -- <tool> [<args>...]",
      .summary = "run an IREE tool with the prefix's plugins activated",
      .description =
          "Runs <tool> with the prefix's configuration inserted before your "
          "arguments, so that your own flags still win: "
          "--flagfile=<prefix>/state/runtime.flags for IREE's runtime tools "
          "(iree-run-module, iree-benchmark-module, ...); the response file "
          "@<prefix>/state/compiler.flags for iree-compile and iree-opt, "
          "after checking the configuration (option values, hook conflicts, "
          "what this compiler can load) so that nothing invalid reaches the "
          "compiler; the flags themselves (--load-pass-plugin=, "
          "--load-dialect-plugin=, --pass-pipeline=) for MLIR tools such as "
          "mlir-opt-22 or standalone-opt. Python (an interpreter, or a "
          "script Python runs such as pytest) gets nothing in its arguments "
          "but the variables of `ireepkg env` in its environment: "
          "IREE_PY_RUNTIME_FLAGS for iree.runtime, IREEPKG_PREFIX, and "
          "IREE_TOOL_PATH naming ireepkg's iree-compile wrapper, so that "
          "iree.compiler's compile_file and compile_str run the iree-compile "
          "beside the interpreter through `exec` (see docs/python.md). The "
          "kind of tool is read from its --help (once per binary, cached), "
          "else a script's #! line, not from its name; --tool-kind says it "
          "instead. "
          "When your arguments to an MLIR tool choose the passes "
          "(--pass-pipeline, -p or a pass flag such as --cse), the packages' "
          "--pass-pipeline is left out, with a note on stderr. The tool is "
          "found on PATH, then in the active Python virtual environment. A "
          "prefix for another platform (install --platform) is refused: its "
          "plugins are for the machine it is deployed to.",
      .options =
          {kPrefix,
           {"tool-kind", 0, "KIND",
            "what the tool is: runtime, compiler, mlir or python (default: "
            "read from the tool's --help)"}},
      .examples = {"ireepkg exec -- iree-run-module --device=local-sync "
                   "--module=m.vmfb --function=main --input=4xf32=1",
                   "ireepkg exec -- python train.py", "ireepkg exec -- pytest"},
      .maxPositional = 0,
      .acceptsPassthrough = true,
      .run = runExec,
  };
  return command;
}

} // namespace ireepkg::cli
