//===- ireepkg/base/child_process.h - Running a helper tool --------===//
//
// ireepkg runs its helper tools (ireepkg-inspect, ireepkg-mlir-check,
// ireepkg-plugin-probe, the IREE tools' --version) as child processes, so
// that code which may crash or hang never runs inside ireepkg. runChild
// starts one with posix_spawn (no shell), gives it its input, collects
// what it writes and waits for it, with an optional time limit.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_CHILD_PROCESS_H
#define IREEPKG_BASE_CHILD_PROCESS_H

#include "ireepkg/base/error.h"

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg {

struct ChildOptions {
  /// The program (argv[0], a path: PATH is not searched) and its arguments.
  std::vector<std::string> argv;
  /// The tool's name in error messages; "" for argv[0]'s file name.
  std::string name;
  /// What the child reads on stdin; without it, /dev/null.
  std::optional<std::string> input;
  /// After this many seconds the child (and, with ownProcessGroup, its
  /// group) is killed and the result says timedOut. None: no limit.
  std::optional<double> timeoutSeconds;
  /// Start the child in a process group of its own; whatever is left in
  /// that group when the child ends (or times out) is killed.
  bool ownProcessGroup = false;
  /// Also collect what the child writes to descriptor 3.
  bool captureFd3 = false;
  /// How much of each output is kept; the rest is read and dropped.
  size_t maxOut = std::numeric_limits<size_t>::max();
  size_t maxErr = std::numeric_limits<size_t>::max();
  size_t maxFd3 = std::numeric_limits<size_t>::max();
  /// When set, a program that cannot be started is an error ("cannot run
  /// <argv0>: <why>", with this hint) instead of a result with spawnError.
  std::optional<std::string> hintIfNotStarted;
  /// The child loads or runs a package's native code (ireepkg-mlir-check,
  /// ireepkg-plugin-probe, IREE's tools with a package's plugins): it gets
  /// packageCodeEnvironment() instead of ireepkg's whole environment.
  bool runsPackageCode = false;
};

struct ChildResult {
  /// The errno of posix_spawn when the program could not be started
  /// (nothing else is set then); 0 when it ran.
  int spawnError = 0;
  /// It did not end within timeoutSeconds and was killed (signal is then
  /// SIGKILL).
  bool timedOut = false;
  /// It ended by exiting, with exitCode; otherwise `signal` ended it.
  bool exited = false;
  int exitCode = 0;
  int signal = 0;
  std::string out, err, fd3;
  /// Why reading its output failed ("cannot read the output of <name>:
  /// ...", or "" if it did not); what was read before is kept.
  std::string readError;
};

/// Runs `options.argv` and waits for it. The child's signal mask is empty
/// and SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP and SIGCHLD have their
/// default actions. Output is read until the child has ended and closed
/// its end of the pipes; descendants that keep them open get half a second.
/// Fails when ireepkg itself cannot set up or wait for the child, and with
/// hintIfNotStarted when the program cannot be started.
Expected<ChildResult> runChild(const ChildOptions &options);

/// What of ireepkg's environment a child that runs package code sees, as
/// "NAME=value" strings: what programs need to start and find their
/// libraries (PATH, HOME, TMPDIR, the locale, LD_LIBRARY_PATH, IREE's own
/// IREE_* variables, the sanitizers' options), and nothing else, so that
/// no token, password or credential file path a caller keeps in its
/// environment (GITHUB_TOKEN, AWS_*, DOCKER_CONFIG, REGISTRY_AUTH_FILE,
/// XDG_RUNTIME_DIR, IREEPKG_REGISTRY's URL, ...) reaches a package.
std::vector<std::string> packageCodeEnvironment();

/// Whether install, sync, add, update and pack may load a package's code to
/// check it (the MLIR load check, the runtime plugins' import check):
/// IREEPKG_LOAD_CHECKS, which the CLI sets from --no-load-checks or the
/// config key load-checks. Unset, empty, 1, true, yes, on: they may; 0,
/// false, no, off: they may not. Anything else is a Usage error.
Expected<bool> loadChecksEnabled();

/// The first line of `text` (a tool's stderr), cut at 300 bytes, for
/// messages.
std::string firstOutputLine(const std::string &text);

/// How a tool run by runChild ended, when that is a problem ("" when it
/// exited with 0): "<tool> did not finish within <n> s (stopped)", "<tool>
/// was killed by signal 6 (Aborted)", "<tool> failed (exit status 1):
/// <first line it printed>".
std::string describeAbnormalEnd(const ChildResult &result,
                                const std::string &tool, double timeoutSeconds);

/// What a tool printed (stderr, else stdout) for a message: "; it
/// printed:" and its last 20 non-blank lines, each on a line of its own
/// indented by six; "" when it printed nothing.
std::string describeToolOutput(const ChildResult &result);

} // namespace ireepkg

#endif // IREEPKG_BASE_CHILD_PROCESS_H
