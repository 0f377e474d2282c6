//===- compiler_integration/tools/embed_compile.cpp -----------------------===//
//
// ireepkg-embed-compile.
//
//   ireepkg-embed-compile --prefix P [--compiler-lib PATH] [--set flag=value]...
//                         <input.mlir> -o <out.vmfb> [-- extra compiler flags]
//
// A test tool for the embedding API (include/ireepkg/compiler_integration/compiler_embedding.h):
// builds the compiler configuration of a prefix, applies it to
// libIREECompiler.so inside this process (process-global flags through
// ireeCompilerSetupGlobalCL, the others through ireeCompilerSessionSetFlags),
// compiles the input with the standard pipeline and writes VM bytecode.
// It prints where each flag went:
//
//   process-global (ireeCompilerSetupGlobalCL):
//     --iree-hal-executable-object-search-path=... [hermetic-mul]
//   session (ireeCompilerSessionSetFlags):
//     --iree-plugin=input_torch [mul-pipeline]
//
// Extra flags after `--` are the command line's: process-global ones join
// the SetupGlobalCL call, the others are set on the session by compileFile.
// --check-process-rules then tries what IREE allows once per process and
// prints each refusal ("refused: <message>"): process-global flags again on
// the same library, and on a second CompilerLibrary of the same file.
// Exit status: 0 compiled, 1 failed, 2 usage error. Built into build/bin,
// not installed.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/compiler_embedding.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace ireepkg;

const char *const kUsage =
    "usage: ireepkg-embed-compile --prefix P [--compiler-lib PATH]\n"
    "           [--set flag=value]... [--check-process-rules]\n"
    "           <input.mlir> -o <out.vmfb>\n"
    "           [-- extra compiler flags]\n"
    "Compiles <input.mlir> with libIREECompiler.so loaded into this process,\n"
    "configured by the packages of prefix P. The library is --compiler-lib,\n"
    "else $IREE_COMPILER_LIB, else the iree.compiler package of the active\n"
    "Python (python3 on PATH, then $VIRTUAL_ENV/bin/python).\n";

class StderrReporter : public Reporter {
public:
  void warning(const Diagnostic &d) override {
    std::fprintf(stderr, "ireepkg-embed-compile: warning: %s\n",
                 d.format().c_str());
  }
};

int fail(const Error &e) {
  std::string text = e.format();
  std::fprintf(stderr, "ireepkg-embed-compile: error: %s\n", text.c_str());
  return 1;
}

int usage(const std::string &message) {
  std::fprintf(stderr, "ireepkg-embed-compile: %s\n%s", message.c_str(),
               kUsage);
  return 2;
}

std::string absolute(const std::string &path) {
  if (path.empty() || path[0] == '/')
    return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd))
    return path;
  return std::string(cwd) + "/" + path;
}

void printFlags(const char *title, const std::vector<CompilerFlag> &flags) {
  std::printf("%s:\n", title);
  if (flags.empty())
    std::printf("  (none)\n");
  for (const CompilerFlag &f : flags)
    std::printf("  %s [%s]\n", f.text().c_str(),
                f.package.empty()
                    ? (f.name == "iree-preprocessing-pass-pipeline"
                           ? "composed"
                           : "command line")
                    : f.package.c_str());
}

} // namespace

int main(int argc, char **argv) {
  if (std::string refusal =
          ireepkg::privilegedRunReport("ireepkg-embed-compile");
      !refusal.empty())
    return std::fputs(refusal.c_str(), stderr), 1;
  std::optional<std::string> prefix, compilerLib, output;
  std::vector<std::pair<std::string, std::string>> sets;
  std::vector<std::string> positional, extra;
  bool checkRules = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const std::string &name) -> std::optional<std::string> {
      if (arg == name) {
        if (i + 1 >= argc)
          return std::nullopt;
        return std::string(argv[++i]);
      }
      return arg.substr(name.size() + 1);
    };
    auto is = [&](const std::string &name) {
      return arg == name || arg.rfind(name + "=", 0) == 0;
    };
    if (arg == "--") {
      for (++i; i < argc; ++i)
        extra.push_back(argv[i]);
      break;
    }
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (is("--prefix")) {
      if (!(prefix = value("--prefix")))
        return usage("--prefix needs a value");
    } else if (is("--compiler-lib")) {
      if (!(compilerLib = value("--compiler-lib")))
        return usage("--compiler-lib needs a value");
    } else if (is("--set")) {
      auto s = value("--set");
      size_t eq = s ? s->find('=') : std::string::npos;
      if (!s || eq == std::string::npos || eq == 0)
        return usage("--set takes flag=value");
      sets.emplace_back(s->substr(0, eq), s->substr(eq + 1));
    } else if (arg == "--check-process-rules") {
      checkRules = true;
    } else if (arg == "-o") {
      if (!(output = value("-o")))
        return usage("-o needs a value");
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (!prefix)
    return usage("--prefix is required");
  if (positional.size() != 1)
    return usage("expected one input file");
  if (!output)
    return usage("-o <out.vmfb> is required");
  for (const std::string &e : extra)
    if (e.empty() || e[0] != '-')
      return usage("extra compiler flags must be flags, not '" + e + "'");

  // The prefix's configuration (what `ireepkg flags compiler` prints).
  StderrReporter reporter;
  std::string prefixPath = absolute(*prefix);
  auto location = findCompilerLibrary(compilerLib.value_or(""));
  if (!location)
    return fail(location.error());
  auto library = CompilerLibrary::open(location->path);
  if (!library)
    return fail(library.error());
  std::printf("compiler library: %s (%s), embedding API %d.%d\n",
              (*library)->path().c_str(), location->source.c_str(),
              (*library)->apiMajor(), (*library)->apiMinor());
  std::fflush(stdout);

  CompilerConfigRequest request;
  request.sets = sets;
  // iree-dynamic plugins: ask the iree-compile the wheel keeps next to the
  // library what it can load.
  std::string libDir = location->path.substr(
      0, location->path.find_last_of('/') == std::string::npos
             ? 0
             : location->path.find_last_of('/'));
  auto config = buildPrefixCompilerConfig(prefixPath, request, reporter, [&] {
    std::string tool = (libDir.empty() ? "." : libDir) + "/iree-compile";
    return ::access(tool.c_str(), X_OK) == 0 ? tool : std::string();
  });
  if (!config)
    return fail(config.error());
  for (const Diagnostic &d : config->notes)
    reporter.warning(d);

  // Extra flags: those a session does not take must be in the one
  // SetupGlobalCL call (applyConfig routes them); the rest go to
  // compileFile.
  std::vector<std::string> sessionExtra;
  for (const std::string &e : extra) {
    CompilerFlag f = parseCompilerFlag(e);
    if (f.global || !(*library)->isSessionOption(f.name))
      config->flags.push_back(f);
    else
      sessionExtra.push_back(e);
  }

  auto applied = (*library)->applyConfig(*config);
  if (!applied)
    return fail(applied.error());
  printFlags("process-global (ireeCompilerSetupGlobalCL)", applied->global);
  std::vector<CompilerFlag> sessionFlags = applied->sessionFlags;
  for (const std::string &e : sessionExtra)
    sessionFlags.push_back(parseCompilerFlag(e));
  printFlags("session (ireeCompilerSessionSetFlags)", sessionFlags);
  if (!applied->loadedAtInitialization.empty())
    printFlags("loaded at initialization (IREE_LOAD_PLUGINS)",
               applied->loadedAtInitialization);
  std::fflush(stdout);

  auto result =
      applied->session->compileFile(positional[0], *output, sessionExtra);
  if (!result)
    return fail(result.error());
  for (const CompilerDiagnostic &d : result->diagnostics)
    std::fprintf(stderr, "%s: %s\n", compilerDiagnosticSeverityName(d.severity),
                 d.message.c_str());
  std::printf("wrote %s\n", output->c_str());

  if (checkRules) {
    auto refused = [](const char *what, const Status &s) {
      if (s)
        std::printf("%s: accepted\n", what);
      else
        std::printf("%s: refused: %s\n", what, s.error().message.c_str());
    };
    CompilerFlag other{"iree-hal-executable-object-search-path", "/nonexistent",
                       "", true};
    refused("global flags after a session", (*library)->setGlobalFlags({other}));
    refused("the same global flags again",
            (*library)->setGlobalFlags((*library)->globalFlags()));
    auto second = CompilerLibrary::open(location->path);
    if (!second)
      return fail(second.error());
    refused("global flags on a second CompilerLibrary",
            (*second)->setGlobalFlags({other}));
  }
  return 0;
}
