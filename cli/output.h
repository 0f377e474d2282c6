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

#include "ireepkg/pkg/prefix.h"

#include <nlohmann/json.hpp>

namespace ireepkg::cli {

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
