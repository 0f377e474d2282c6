//===- cli/host/find_tool.cpp - Executables on PATH or in the virtualenv --===//
#include "host/find_tool.h"

#include "ireepkg/pkg/iree/iree_version.h"

#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg::cli {

bool isExecutableFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

FoundTool findTool(const std::string &name) {
  LocatedTool t = locateTool(name);
  return FoundTool{t.path, t.source};
}

} // namespace ireepkg::cli
