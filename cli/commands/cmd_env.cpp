//===- cli/commands/cmd_env.cpp - `ireepkg env` ---------------------------===//
//
// Shell exports (or JSON) for the current prefix: the variables of
// python_env.h, for iree.runtime and iree.compiler. IREE_PY_RUNTIME_FLAGS is
// split like a shell command line by iree.runtime (shlex), so each flag is
// quoted for that split first, and the whole value then for the target
// shell.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/suggest.h"
#include "commands/options.h"
#include "output/output.h"
#include "host/python_env.h"
#include "commands/shared.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace ireepkg::cli {

/// POSIX-shell quoting: as is when safe, else '...' with ' as '"'"'. Also
/// what iree.runtime's split of IREE_PY_RUNTIME_FLAGS undoes (`exec`).
std::string shellQuote(const std::string &s) {
  bool safe = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::strchr("@%+=:,./-_", c)))
      safe = false;
  if (safe)
    return s;
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
  return out + "'";
}

namespace {

std::string shQuote(const std::string &s) { return shellQuote(s); }

std::string fishQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "'";
}

std::string pwshQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

} // namespace

int runEnv(const Command &, const ParsedArgs &args) {
  std::optional<std::string> given = args.value("shell");
  if (!args.positional.empty()) {
    if (given && *given != args.positional[0]) {
      printError("the shell is given twice ('" + args.positional[0] +
                     "' and --shell " + *given + ")",
                 "give it once: ireepkg env bash");
      return kExitUsage;
    }
    given = args.positional[0];
  }
  std::string shell = given.value_or("sh");
  // The names people type, each with the syntax it takes.
  static const std::vector<std::string_view> kShells = {
      "sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "json"};
  bool known = false;
  for (std::string_view k : kShells)
    known |= shell == k;
  if (!known) {
    printError("unknown shell '" + shell + "'" + didYouMean(shell, kShells),
               "shells are sh, bash, zsh, dash, ksh, fish and pwsh "
               "(powershell); --json prints the variables as JSON");
    return kExitUsage;
  }
  std::string syntax = "sh";
  if (args.flag("json") || shell == "json")
    syntax = "json";
  else if (shell == "fish")
    syntax = "fish";
  else if (shell == "pwsh" || shell == "powershell")
    syntax = "pwsh";
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  auto vars = pythonEnvironment(prefix->path, "");
  const std::string platform = prefixPlatform(prefix->path);
  noteOtherPlatform(prefix->path, platform,
                    "IREE_PY_RUNTIME_FLAGS names its plugins for " + platform);
  if (syntax == "json") {
    nlohmann::json j = {{"prefix", prefix->path},
                        {"variables", nlohmann::json::object()}};
    for (const auto &[name, value] : vars)
      j["variables"][name] = value;
    std::printf("%s\n", j.dump(2).c_str());
  }
  for (const auto &[name, value] : vars) {
    if (syntax == "sh")
      std::printf("export %s=%s\n", name.c_str(), shQuote(value).c_str());
    else if (syntax == "fish")
      std::printf("set -gx %s %s;\n", name.c_str(), fishQuote(value).c_str());
    else if (syntax == "pwsh")
      std::printf("$env:%s = %s\n", name.c_str(), pwshQuote(value).c_str());
  }
  struct stat st;
  if (::stat((prefix->path + "/state/runtime.flags").c_str(), &st) != 0 ||
      vars[1].second.empty())
    std::fprintf(stderr,
                 "ireepkg: note: no runtime plugins are active in %s\n",
                 prefix->path.c_str());
  return kExitOk;
}

const Command &envCommand() {
  static const Command command{
      .name = "env",
      .synopsis = "[sh|bash|zsh|fish|pwsh] [--shell SHELL] [--json]",
      .summary = "print shell commands that point IREE at the prefix's plugins",
      .description =
          "Prints exports for the current prefix, for Python's iree.runtime "
          "and iree.compiler: IREEPKG_PREFIX; IREE_PY_RUNTIME_FLAGS holding "
          "the runtime flags, which iree.runtime parses when it is imported; "
          "and IREE_TOOL_PATH naming ireepkg's iree-compile wrapper, which "
          "iree.compiler runs instead of its own iree-compile so that "
          "compile_file and compile_str get the prefix's compiler plugins, "
          "options and hooks (through `ireepkg exec`), with "
          "IREEPKG_IREE_TOOL_PATH (the previous IREE_TOOL_PATH) and "
          "IREEPKG_EXECUTABLE. Apply them with `eval \"$(ireepkg env)\"` "
          "(sh, bash, zsh), `ireepkg env fish | source`, or `ireepkg env pwsh "
          "| Invoke-Expression`; --json (or `env json`) prints them as a JSON "
          "object instead. The runtime flags are the prefix's platform's, "
          "with a note on stderr when that is not the host's.",
      .options =
          {{"shell", 0, "SHELL",
            "sh (default), bash, zsh, dash, ksh, fish, pwsh or powershell"},
           kJson,
           kPrefix},
      .examples = {"eval \"$(ireepkg env)\"", "ireepkg env fish | source",
                   "ireepkg env --json"},
      .maxPositional = 1,
      .run = runEnv,
  };
  return command;
}

} // namespace ireepkg::cli
