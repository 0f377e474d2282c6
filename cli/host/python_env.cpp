//===- cli/host/python_env.cpp - What Python is given by `env` and `exec` -===//
//
// See python_env.h.
//
//===----------------------------------------------------------------------===//
#include "host/python_env.h"
#include "args/prefix_args.h"
#include "commands/shared.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/base/os.h"
#include "ireepkg/base/programs.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace ireepkg::cli {


std::string ireeToolWrapperDir() {
  std::string bin = executableDir();
  if (bin.empty())
    return "";
  std::string dir =
      bin.substr(0, bin.rfind('/') + 1) + "libexec/ireepkg/iree-tools";
  return ::access((dir + "/iree-compile").c_str(), X_OK) == 0 ? dir : "";
}

std::vector<std::pair<std::string, std::string>>
pythonEnvironment(const std::string &prefix, const std::string &ireeCompile) {
  std::vector<std::pair<std::string, std::string>> vars;
  vars.emplace_back("IREEPKG_PREFIX", prefix);
  // iree.runtime splits IREE_PY_RUNTIME_FLAGS like a shell (shlex).
  std::string pyFlags;
  std::vector<std::string> lines;
  if (flagfilesAreStale(prefix)) { // moved, and read-only where it is
    lines = runtimeFlagsOf(prefix);
  } else {
    std::ifstream in(prefix + "/state/runtime.flags");
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#')
        lines.push_back(line);
  }
  for (const std::string &line : lines)
    pyFlags += (pyFlags.empty() ? "" : " ") + shellQuote(line);
  vars.emplace_back("IREE_PY_RUNTIME_FLAGS", pyFlags);
  std::string wrapper = ireeToolWrapperDir();
  if (!wrapper.empty()) {
    const char *old = environmentOverride("IREE_TOOL_PATH");
    std::string previous = old ? old : "";
    // Under `exec` (or a second `env`) the wrapper may be there already.
    if (previous == wrapper || previous.rfind(wrapper + ":", 0) == 0) {
      const char *saved = environmentOverride("IREEPKG_IREE_TOOL_PATH");
      previous = saved ? saved : "";
    }
    vars.emplace_back("IREE_TOOL_PATH",
                      previous.empty() ? wrapper : wrapper + ":" + previous);
    vars.emplace_back("IREEPKG_IREE_TOOL_PATH", previous);
    vars.emplace_back("IREEPKG_EXECUTABLE", os::executablePath());
    if (!ireeCompile.empty())
      vars.emplace_back("IREEPKG_IREE_COMPILE", ireeCompile);
  }
  return vars;
}

} // namespace ireepkg::cli
