//===- base/src/programs.cpp - Programs beside this one -------------------===//
#include "ireepkg/base/programs.h"

#include <climits>
#include <unistd.h>

namespace ireepkg {

std::string executablePath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf)
    return {};
  return std::string(buf, static_cast<size_t>(n));
}

std::string executableDir() {
  std::string path = executablePath();
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
