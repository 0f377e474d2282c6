//===- base/src/programs.cpp - Programs beside this one -------------------===//
#include "ireepkg/base/programs.h"
#include "ireepkg/base/os.h"

#include <climits>
#include <unistd.h>

namespace ireepkg {

std::string executableDir() {
  std::string path = os::executablePath();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string besideExecutable(std::string_view relative) {
  std::string dir = executableDir();
  if (dir.empty())
    return {};
  return dir + "/" + std::string(relative);
}

} // namespace ireepkg
