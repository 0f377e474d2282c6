//===- cli/args/prefix_args.h - The prefix a command acts on ----*- C++ -*-===//
//
// The prefix choice shared by every command that takes --prefix (with
// config.toml's "prefix" below it), its installed state for the read-only
// commands, --lock-timeout, and the exit status of a failed setup.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_PREFIX_ARGS_H
#define IREEPKG_CLI_PREFIX_ARGS_H

#include "commands/command.h"

#include "ireepkg/pkg/prefix/prefix.h"

#include <optional>

namespace ireepkg::cli {

/// The exit status for the last failure of choosePrefix, projectFrom,
/// projectContext, environmentFrom or projectPrefix: kExitUsage when the
/// arguments themselves are wrong (an empty --prefix, a bad --iree-version),
/// kExitFailure otherwise (no project file, an unreadable one, no HOME).
int setupFailure();
void setSetupFailure(int code);

/// The prefix for this command (see locatePrefix), or prints an error.
/// A prefix that was moved or copied is followed (followMovedPrefix).
std::optional<PrefixLocation> choosePrefix(const ParsedArgs &args);

/// When `prefix` was moved or copied since its state files were written,
/// writes them again for where it is now and says so (with --dry-run,
/// only says so); when they cannot be written there, warns that IREE's
/// flagfile still names the old place.
void followMovedPrefix(const ParsedArgs &args, const std::string &prefix);

/// Whether `prefix`'s state files still name another place (it was moved
/// and they could not be written again): then its flagfiles are stale and
/// the flags are given as arguments instead (runtimeFlagsOf).
bool flagfilesAreStale(const std::string &prefix);

/// The target for libireepkg_runtime that chooses builds for CPU `level`
/// ("x86_64_v3", "x86_64+avx512f", "x86_64_v1" for the baseline) on
/// `target` ("host", a platform or an architecture), or a usage error when
/// the level is not one of the target's architecture (--cpu-level).
Expected<std::string> cpuLevelTarget(const std::string &target,
                                     const std::string &level);

/// The prefix setting `--cpu-level LEVEL` of install and sync asks for on
/// `target` ("host" or the platform installed for): the level, or "" for
/// "host" (which clears it). Prints the usage error and returns nullopt
/// when the level is not one of the target's architecture.
std::optional<std::string> cpuLevelOption(const std::string &target,
                                          const std::string &level);

/// `--executable_plugin=<spec>` for each runtime plugin of `prefix` for
/// its platform, from libireepkg_runtime (which finds a moved prefix's files
/// where it is now); empty when it has none or cannot be read.
std::vector<std::string> runtimeFlagsOf(const std::string &prefix);

/// The platform `prefix` is for, "windows-x86_64" (its runtime index's;
/// the host's for a prefix without one).
std::string prefixPlatform(const std::string &prefix);

/// When `platform` (a prefix's) is not the host's, says so on stderr
/// (unless --quiet): "note: <prefix> is a prefix for <platform>, not this
/// host (<host>): <what>".
void noteOtherPlatform(const std::string &prefix, const std::string &platform,
                       const std::string &what);

/// What the read-only commands start from: the prefix (choosePrefix) and
/// its installed state, read with a CliReporter. When either fails it has
/// been printed, and `exitCode` is what the command exits with.
struct PrefixState {
  PrefixLocation prefix;
  InstalledState state;
};
std::optional<PrefixState> readPrefixState(const ParsedArgs &args, bool json,
                                           int &exitCode);

/// Parses --lock-timeout; prints a usage error and returns false if bad.
bool lockOptions(const ParsedArgs &args, LockOptions &out);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_PREFIX_ARGS_H
