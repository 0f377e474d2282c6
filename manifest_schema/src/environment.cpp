//===- environment.cpp - Environment overrides -----------------------------===//
#include "ireepkg/manifest_schema/environment.h"

#include <cstdlib>
#include <pwd.h>
#include <sys/auxv.h>
#include <unistd.h>

namespace ireepkg {

bool runningPrivileged() {
  static const bool privileged = ::geteuid() != ::getuid() ||
                                 ::getegid() != ::getgid() ||
                                 ::getauxval(AT_SECURE) != 0;
  return privileged;
}

const char *environmentOverride(const char *name) {
  if (runningPrivileged())
    return nullptr;
  return std::getenv(name);
}

std::optional<std::string> homeDirectory() {
  if (const char *home = environmentOverride("HOME"); home && *home)
    return std::string(home);
  struct passwd pw, *found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(::getuid(), &pw, buffer, sizeof buffer, &found) == 0 &&
      found && found->pw_dir && *found->pw_dir)
    return std::string(found->pw_dir);
  return std::nullopt;
}

} // namespace ireepkg
