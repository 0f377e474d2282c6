//===- output.h - What the CLI prints --------------------------*- C++ -*-===//
//
// The CLI's side of reporting: errors and warnings on stderr, progress on a
// terminal only (quiet when piped), and the prefix choice shared by every
// command that takes --prefix.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_OUTPUT_H
#define IREEPKG_CLI_OUTPUT_H

#include "command.h"
#include "progress.h"
#include "global_options.h"

#include "ireepkg/pkg/prefix.h"

#include <nlohmann/json.hpp>

namespace ireepkg::cli {

//===----------------------------------------------------------------------===//
// Colour
//===----------------------------------------------------------------------===//

/// Settles the colour mode: `flag` (--color) if given, else FORCE_COLOR or
/// CLICOLOR_FORCE (set, not "0": always), else NO_COLOR (set: never), else
/// `configured` (the config file's "color") when given, else auto.
void resolveColor(const std::optional<std::string> &flag,
                  const std::optional<std::string> &configured = std::nullopt,
                  const std::string &configuredWhere = {});

enum class OutStream { Out, Err };
/// Whether text written to the stream gets colour: always, never, or (auto)
/// when it is a terminal whose TERM is not "dumb".
bool colorEnabled(OutStream stream);

enum class Style { Error, Warning, Hint, Note, Added, Removed, Changed, Bold };
/// `text` wrapped in the style's escape sequences when colour is enabled
/// for `stream`; else `text` as it is.
std::string paint(Style style, const std::string &text,
                  OutStream stream = OutStream::Out);

/// `ireepkg: <message>` on stderr when -v was given `level` times or more
/// (and not --quiet).
void verboseLine(int level, const std::string &message);

/// Prints an Error: `ireepkg: error: <where>: message` (one line per
/// diagnostic) and hints.
void printError(const Error &error);

/// Prints to stderr as things happen; progress lines only on a terminal
/// (see progress.h).
class CliReporter : public Reporter {
public:
  explicit CliReporter(bool quiet = false);
  ~CliReporter() override;
  void waitingForLock(const std::string &prefix,
                      const std::string &holder) override;
  void recovered(const std::string &prefix, const std::string &what) override;
  void warning(const Diagnostic &diagnostic) override;
  void progress(const std::string &label, uint64_t done,
                uint64_t total) override;
  void itemProgress(const std::string &label, uint64_t done,
                    uint64_t total) override;
  /// True after Ctrl-C, once the command called catchInterrupts().
  bool interrupted() override;
  void detail(int level, const std::string &message) override;
  void clearProgress();
  /// Erases the progress lines and prints, unless quiet, what was done:
  /// `Downloaded 2 packages (1.2 MiB) in 0.41s` when anything was
  /// downloaded, then `Installed 2 packages in 12ms` (or `... and removed
  /// 1`, or `Removed 1 package`) when anything changed.
  void printSummary(const InstallReport &report);

private:
  bool quiet_;
  bool tty_;
  ProgressBoard board_;
  ProgressState state_;
  void redraw(bool force);
};

/// The exit status for the last failure of choosePrefix, projectFrom,
/// projectContext, environmentFrom or projectPrefix: kExitUsage when the
/// arguments themselves are wrong (an empty --prefix, a bad --iree-version),
/// kExitFailure otherwise (no project file, an unreadable one, no HOME).
int setupFailure();
void setSetupFailure(int code);

/// The prefix for this command (see locatePrefix), or prints an error.
std::optional<PrefixLocation> choosePrefix(const ParsedArgs &args);

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

/// An executable tool: `name` itself when it holds a '/', else the first
/// on PATH, else in $VIRTUAL_ENV/bin. `path` is absolute, or empty when
/// nothing was found; `source` is "path", "PATH" or "VIRTUAL_ENV".
struct FoundTool {
  std::string path;
  std::string source;
};
FoundTool findTool(const std::string &name);
bool isExecutableFile(const std::string &path);

/// Imports more than one package provides (install, list, doctor): one
/// line each, "" when there are none; and the same as JSON.
std::string shadowedImportsText(const std::vector<ShadowedImport> &imports);
nlohmann::json
shadowedImportsToJson(const std::vector<ShadowedImport> &imports);

/// Human-readable byte counts ("1.2 MiB").
std::string formatBytes(uint64_t bytes);

/// A Diagnostic as JSON (for --json reports).
nlohmann::json diagnosticToJson(const Diagnostic &d);
nlohmann::json errorToJson(const Error &e);

/// Everything `info` and `list --json` say about a manifest.
nlohmann::json manifestToJson(const Manifest &m);
/// The human-readable form of the same.
std::string describeManifest(const Manifest &m, const std::string &indent);

} // namespace ireepkg::cli

#endif
