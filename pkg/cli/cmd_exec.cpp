//===- cmd_exec.cpp - `ireepkg exec` -------------------------------------===//
//
// Replaces itself with the tool, with the prefix's flagfile inserted before
// the user's arguments (IREE flags given later win, so the user's own flags
// still override what the prefix contributes).
//
//===----------------------------------------------------------------------===//
#include "output.h"

#include "ireepkg/compiler_config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg::cli {

namespace {

/// Which flagfile a tool takes: runtime tools the runtime flags, IREE's
/// compiler tools the compiler flags.
enum class ToolKind { Runtime, Compiler, Mlir };

ToolKind classify(const std::string &tool) {
  std::string base = tool.substr(tool.rfind('/') + 1);
  if (base.rfind("iree-compile", 0) == 0 || base.rfind("iree-opt", 0) == 0)
    return ToolKind::Compiler;
  if (base.rfind("mlir-opt", 0) == 0)
    return ToolKind::Mlir;
  return ToolKind::Runtime;
}

} // namespace

Expected<CompilerConfig> prefixCompilerConfig(const PrefixLocation &prefix,
                                              CompilerConfigRequest request,
                                              Reporter &reporter);

int runExec(const Command &, const ParsedArgs &args) {
  if (args.passthrough.empty()) {
    printError("'exec' needs a tool to run after --",
               "e.g. ireepkg exec -- iree-run-module --module=m.vmfb ...");
    return kExitUsage;
  }
  auto prefix = choosePrefix(args);
  if (!prefix)
    return kExitUsage;
  const std::string &tool = args.passthrough[0];
  ToolKind kind = classify(tool);
  std::string flagfile = prefix->path + "/state/" +
                         (kind == ToolKind::Compiler ? "compiler.flags"
                                                     : "runtime.flags");
  struct stat st;
  if (::stat(flagfile.c_str(), &st) != 0) {
    printError("no plugins are installed in " + prefix->path + " (" +
                   flagfile + " does not exist)",
               "install packages first, or choose another prefix with "
               "--prefix");
    return kExitFailure;
  }
  std::string resolved = findTool(tool).path;
  if (resolved.empty()) {
    printError("cannot find '" + tool + "' on PATH" +
                   (std::getenv("VIRTUAL_ENV") ? " or in $VIRTUAL_ENV/bin"
                                               : ""),
               "install IREE's tools (pip install iree-base-runtime "
               "iree-base-compiler) or activate their virtual environment");
    return kExitFailure;
  }
  std::vector<std::string> argv = {tool};
  if (kind == ToolKind::Runtime) {
    argv.push_back("--flagfile=" + flagfile);
  } else {
    // Compiler tools: the configuration is checked (option values, hook
    // conflicts, what this compiler can load) before the compiler runs.
    CompilerConfigRequest request;
    request.tool = kind == ToolKind::Mlir ? CompilerTool::MlirOpt
                   : parseCompilerTool(tool).value_or(CompilerTool::IreeCompile);
    if (kind == ToolKind::Compiler)
      if (auto caps = probeCompiler(resolved))
        request.compiler = *caps;
    CliReporter reporter;
    auto config = prefixCompilerConfig(*prefix, request, reporter);
    if (!config) {
      printError(config.error());
      return kExitFailure;
    }
    if (kind == ToolKind::Mlir) {
      // MLIR tools take the flags as arguments.
      for (const CompilerFlag &f : config->flags)
        argv.push_back(f.text());
    } else {
      // IREE's compiler tools read the prefix's response file (they take
      // LLVM's @file, not the runtime's --flagfile); what only a known
      // compiler allows (dynamically loaded plugins) follows it.
      argv.push_back("@" + flagfile);
      bool dynamic = false;
      for (const CompilerFlag &f : config->flags) {
        dynamic |= f.name == "iree-load-plugin";
        if (dynamic && (f.name == "iree-load-plugin" || f.name == "iree-plugin"))
          argv.push_back(f.text());
      }
    }
  }
  argv.insert(argv.end(), args.passthrough.begin() + 1, args.passthrough.end());
  std::vector<char *> cargv;
  for (std::string &a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(resolved.c_str(), cargv.data());
  printError("cannot run '" + resolved + "': " + std::strerror(errno));
  return kExitFailure;
}

} // namespace ireepkg::cli
