//===- cli/output/reporter.h - What the libraries report --------*- C++ -*-===//
//
// The Reporter the commands hand to the libraries: warnings, notes and
// verbose details on stderr as they happen, progress lines on a terminal
// only (see progress.h), and the summary at the end.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_REPORTER_H
#define IREEPKG_CLI_REPORTER_H

#include "output/progress.h"

#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/reporter.h"

namespace ireepkg::cli {

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

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_REPORTER_H
