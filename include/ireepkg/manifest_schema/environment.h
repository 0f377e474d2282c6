//===- ireepkg/environment.h - Environment overrides ------------*- C++ -*-===//
//
// Every environment variable ireepkg reads goes through here. A process
// that runs with privileges its caller does not have (a set-user-ID or
// set-group-ID copy of ireepkg, or one with file capabilities) ignores
// every environment override, as the Vulkan loader does: otherwise the
// caller could point it at a library to load (IREEPKG_HTTP_MODULE), a
// prefix to write, or a tool to run.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_ENVIRONMENT_H
#define IREEPKG_ENVIRONMENT_H

#include <optional>
#include <string>

namespace ireepkg {

/// True when the process runs with privileges its caller does not have:
/// effective and real user or group ids differ, or the kernel marked the
/// exec as secure (AT_SECURE: set-id bits or file capabilities).
bool runningPrivileged();

/// The value of environment variable `name`, or nullptr when it is unset,
/// or when the process runs privileged (then every override is ignored).
const char *environmentOverride(const char *name);

/// The invoking user's home directory: $HOME, or, when privileged or unset,
/// the real user's entry in the password database.
std::optional<std::string> homeDirectory();

} // namespace ireepkg

#endif // IREEPKG_ENVIRONMENT_H
