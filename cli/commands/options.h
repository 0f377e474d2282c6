//===- cli/commands/options.h - Options several commands take ---*- C++ -*-===//
//
// The options that several commands share, spelled once; each command's
// file lists its options in its Command (registry_args.h has those of the
// commands that read registries).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_OPTIONS_H
#define IREEPKG_CLI_OPTIONS_H

#include "commands/command.h"

namespace ireepkg::cli {

inline const OptionSpec kJson{"json", 0, "", "print a machine-readable report"};
inline const OptionSpec kPrefix{
    "prefix", 0, "DIR",
    "the prefix to use (default: $IREEPKG_PREFIX, else <project>/.iree-plugins "
    "for the plugins.json found upward from here, else "
    "$XDG_DATA_HOME/ireepkg)"};
inline const OptionSpec kLockTimeout{
    "lock-timeout", 0, "SECONDS",
    "how long to wait for another ireepkg working on the prefix (default: "
    "wait as long as it takes; 0: fail at once)"};
inline const OptionSpec kQuiet{"quiet", 'q', "", "print only errors"};
inline const OptionSpec kDryRun{
    "dry-run", 0, "",
    "print what would change and change nothing: plugins.json, the lock "
    "and the prefix stay as they are (registry metadata may be fetched "
    "into the cache, and the archives of plugins with options, whose "
    "schemas are checked)"};
inline const OptionSpec kNoSync{
    "no-sync", 0, "",
    "edit plugins.json and update the lock, but leave the prefix"};
inline const OptionSpec kFrozenEdit{
    "frozen", 0, "", "edit plugins.json only: neither lock nor sync"};

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_OPTIONS_H
