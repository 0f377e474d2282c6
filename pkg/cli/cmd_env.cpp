//===- cmd_env.cpp - `ireepkg env` ---------------------------------------===//
//
// Shell exports for the current prefix. IREE_PY_RUNTIME_FLAGS is split like
// a shell command line by iree.runtime (shlex), so each flag is quoted for
// that split first, and the whole value then for the target shell.
//
//===----------------------------------------------------------------------===//
#include "output.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>

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
  std::string shell = args.value("shell").value_or("sh");
  if (shell != "sh" && shell != "fish" && shell != "pwsh") {
    printError("unknown shell '" + shell + "'" +
                   didYouMean(shell, std::vector<std::string_view>{
                                         "sh", "fish", "pwsh"}),
               "shells are sh (also for bash and zsh), fish and pwsh");
    return kExitUsage;
  }
  auto prefix = choosePrefix(args);
  if (!prefix)
    return kExitUsage;
  std::vector<std::string> flags;
  std::ifstream in(prefix->path + "/state/runtime.flags");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#')
      flags.push_back(line);
  std::string pyFlags;
  for (const std::string &f : flags)
    pyFlags += (pyFlags.empty() ? "" : " ") + shQuote(f);
  std::vector<std::pair<std::string, std::string>> vars = {
      {"IREEPKG_PREFIX", prefix->path}, {"IREE_PY_RUNTIME_FLAGS", pyFlags}};
  for (const auto &[name, value] : vars) {
    if (shell == "sh")
      std::printf("export %s=%s\n", name.c_str(), shQuote(value).c_str());
    else if (shell == "fish")
      std::printf("set -gx %s %s;\n", name.c_str(), fishQuote(value).c_str());
    else
      std::printf("$env:%s = %s\n", name.c_str(), pwshQuote(value).c_str());
  }
  if (flags.empty())
    std::fprintf(stderr,
                 "ireepkg: note: no runtime plugins are active in %s\n",
                 prefix->path.c_str());
  return kExitOk;
}

} // namespace ireepkg::cli
