//===- cli/args/global_options.h - Options every command takes --*- C++ -*-===//
//
// -q/--quiet, -v/--verbose, --color, -C/--directory, --project, --offline,
// --no-load-checks and --json may stand before or after the command. Their
// table is here (global_options.cpp); main.cpp parses them with the
// command's own options and fills in GlobalOptions before the command runs.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_GLOBAL_OPTIONS_H
#define IREEPKG_CLI_GLOBAL_OPTIONS_H

#include "commands/command.h"

#include <string>
#include <vector>

namespace ireepkg::cli {

enum class ColorMode { Auto, Always, Never };

struct GlobalOptions {
  bool quiet = false;
  int verbose = 0;
  ColorMode color = ColorMode::Auto;
  /// Where the colour choice came from: "--color", "NO_COLOR",
  /// "FORCE_COLOR", "CLICOLOR_FORCE", a config file or "default".
  std::string colorSource = "default";
  bool offline = false;
  /// --no-load-checks: passed on to the libraries as IREEPKG_LOAD_CHECKS=0.
  bool noLoadChecks = false;
};

/// The process's global options (filled in by main before the command runs).
GlobalOptions &globalOptions();

/// The table of global options.
const std::vector<OptionSpec> &globalOptionTable();

/// The values --color takes.
const std::vector<std::string> &colorModeNames();

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_GLOBAL_OPTIONS_H
