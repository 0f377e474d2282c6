//===- cli/output/hints.h - Hints fitted to a command -----------*- C++ -*-===//
//
// The libraries' hints name the flags that fix a problem (--registry-key,
// --prefix, --lock-timeout, ...), but the same error reaches commands that
// take some of those flags and commands that do not: `lock` must not
// suggest --registry-key. Every hint printed (as text or in --json) passes
// through fitHint, which rewrites what names a flag the running command
// does not take into what that command's user can do instead (usually
// plugins.json or an environment variable), or leaves it out.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_HINTS_H
#define IREEPKG_CLI_HINTS_H

#include "commands/command.h"

#include <string>

namespace ireepkg::cli {

/// The command main runs, whose flags the hints are fitted to (none before
/// a command is chosen: hints are shown as they are).
void setRunningCommand(const Command *command);

/// Whether the running command (or, before one runs, any) takes --`flag`:
/// one of its options or a global one.
bool runningCommandTakes(const std::string &flag);

/// `hint` naming only flags the running command takes.
std::string fitHint(const std::string &hint);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_HINTS_H
