//===- base/src/environment.cpp - Environment overrides -------------------===//
#include "ireepkg/base/environment.h"

#include <cmath>
#include <cstdlib>
#include <pwd.h>
#include <string_view>
#include <sys/auxv.h>
#include <unistd.h>

namespace ireepkg {

bool runningPrivileged() {
  static const bool privileged = ::geteuid() != ::getuid() ||
                                 ::getegid() != ::getgid() ||
                                 ::getauxval(AT_SECURE) != 0;
  return privileged;
}

std::string privilegedRunRefusal() {
  if (!runningPrivileged())
    return {};
  const auto ids = [](const char *what, unsigned real, unsigned effective) {
    return "the real " + std::string(what) + " id is " + std::to_string(real) +
           " but the effective one is " + std::to_string(effective);
  };
  std::string why;
  if (::geteuid() != ::getuid())
    why = ids("user", ::getuid(), ::geteuid()) + " (a set-user-ID program)";
  else if (::getegid() != ::getgid())
    why = ids("group", ::getgid(), ::getegid()) + " (a set-group-ID program)";
  else
    why = "the kernel started it as a secure program (set-user-ID, "
          "set-group-ID or file capabilities)";
  return "refusing to run with privileges the caller does not have: " + why +
         "; ireepkg installs, loads and runs package code and writes files, "
         "and does so only with the rights of the user who runs it";
}

std::string privilegedRunHint() {
  return "run it as yourself; remove the set-user-ID and set-group-ID bits "
         "and file capabilities from the program (chmod u-s,g-s; setcap -r), "
         "or use sudo to act as root";
}

std::string privilegedRunReport(const char *tool) {
  std::string why = privilegedRunRefusal();
  if (why.empty())
    return why;
  return std::string(tool) + ": error: " + why +
         "\n  hint: " + privilegedRunHint() + "\n";
}

const char *environmentOverride(const char *name) {
  if (runningPrivileged())
    return nullptr;
  return std::getenv(name);
}

const char *terminalDescription(const char *name) {
  static constexpr std::string_view kTerminal[] = {"TERM", "COLUMNS", "LINES"};
  for (std::string_view t : kTerminal)
    if (name == t)
      return std::getenv(name);
  return environmentOverride(name);
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

double environmentSeconds(const char *name, double fallback,
                          std::string &invalid) {
  const char *env = environmentOverride(name);
  if (!env || !*env)
    return fallback;
  char *end = nullptr;
  double value = std::strtod(env, &end);
  if (*end || !std::isfinite(value) || value <= 0 || value > 86400) {
    invalid = env;
    return fallback;
  }
  return value;
}

} // namespace ireepkg
