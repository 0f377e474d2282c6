//===- cli/args/global_options.cpp - The process's global options ---------===//
#include "args/global_options.h"

namespace ireepkg::cli {

const std::vector<OptionSpec> &globalOptionTable() {
  static const std::vector<OptionSpec> table = {
      {"quiet", 'q', "",
       "print only errors: no warnings, notes, progress or lines saying what "
       "was done (packed, published, wrote...); what a command is asked for "
       "(a listing, a value, the problems a check finds) still prints"},
      {"verbose", 'v', "",
       "also print on stderr what is being done: where each registry's "
       "snapshot came from, its version and key, each archive taken from the "
       "download cache or fetched (from where, how many bytes, how long), "
       "the project file and prefix used, and the command's time; -vv also "
       "each registry index file, read from the registry or the cache",
       true},
      {"color", 0, "WHEN",
       "colour errors, warnings, hints and changes: auto (the default: only "
       "on a terminal whose TERM is not dumb), always or never. Without "
       "--color, FORCE_COLOR or CLICOLOR_FORCE set to anything but 0 means "
       "always, else NO_COLOR set to anything means never"},
      {"directory", 'C', "DIR",
       "change to DIR before doing anything else; relative paths, the "
       "project file and the prefix are then found from there; each further "
       "-C is relative to the one before",
       true},
      {"project", 0, "FILE",
       "the project file, or a directory holding plugins.json (default: the "
       "plugins.json found upward from the current directory); for the "
       "commands that read a project"},
      {"offline", 0, "",
       "never open a network connection: use only cached metadata and "
       "archives (also IREEPKG_OFFLINE=1)"},
      {"no-load-checks", 0, "",
       "load no package code to check it: install, sync, add, update and "
       "pack then check MLIR pipelines for syntax only and load neither "
       "MLIR plugins nor runtime plugins (also IREEPKG_LOAD_CHECKS=0, or "
       "load-checks = false in config.toml); doctor, test and exec still "
       "run package code, since that is what they are asked to do"},
      {"json", 0, "",
       "print a machine-readable report, for the commands that have one"},
  };
  return table;
}

const std::vector<std::string> &colorModeNames() {
  static const std::vector<std::string> names = {"auto", "always", "never"};
  return names;
}

GlobalOptions &globalOptions() {
  static GlobalOptions options;
  return options;
}

} // namespace ireepkg::cli
