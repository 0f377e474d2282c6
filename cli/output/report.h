//===- cli/output/report.h - How commands end -------------------*- C++ -*-===//
//
// The reports every command that changes a prefix prints at its end (as text
// or, with --json, as one JSON object on stdout), and how any command reports
// an Error it cannot go on from.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_REPORT_H
#define IREEPKG_CLI_REPORT_H

#include "ireepkg/base/error.h"
#include "ireepkg/pkg/prefix/install.h"

#include <string>

namespace ireepkg::cli {

/// "option values and hook choices updated from plugins.json" when they were.
void printSettingsChanged(const InstallReport &report);

/// Prints an install/remove report: the changes, or the JSON report.
void printChangeReport(const InstallReport &report, bool json, bool quiet);

/// Prints what a dry run would change; returns kExitOk.
int printDryRun(const InstallReport &plan, bool json, bool quiet);

/// Reports a transaction interrupted by a signal (and, with --json, the
/// error); returns the exit status to end with.
int printInterrupted(const Error &e, const std::string &prefix, bool json);

/// Prints `e` (and, with --json, `{"ok": false, "error": ...}` on stdout);
/// returns kExitFailure.
int printFailure(const Error &e, bool json);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_REPORT_H
