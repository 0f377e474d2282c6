//===- commands.cpp - The ireepkg command table --------------------------===//
//
// The one table of commands. Adding a command: write cmd_<name>.cpp with its
// run function, declare it in command.h, add its entry here.
//
//===----------------------------------------------------------------------===//
#include "command.h"

namespace ireepkg::cli {

static const OptionSpec kJson{"json", 0, "", "print a machine-readable report"};

const std::vector<Command> &commandTable() {
  static const std::vector<Command> table = {
      {
          "help",
          "[<command>]",
          "show help for ireepkg or for one command",
          "Without an argument, lists every command. With a command name "
          "(for example `ireepkg help manifest check`), shows that command's "
          "help, the same as `ireepkg <command> --help`.",
          {{"markdown", 0, "",
            "print the reference of every command as Markdown (this is "
            "docs/cli.md)"}},
          {"ireepkg help", "ireepkg help manifest check"},
          0,
          -1,
          false,
          runHelp,
      },
      {
          "version",
          "",
          "print ireepkg's version and the format versions it reads",
          "Prints the version of ireepkg, and the newest schema_version of "
          "each file format that this build reads and writes.",
          {kJson},
          {"ireepkg version", "ireepkg --version"},
          0,
          0,
          false,
          runVersion,
      },
      {
          "manifest check",
          "<file|dir>... [--kind KIND] [--json]",
          "validate manifests, project files, lockfiles and registry files",
          "Checks each file against every rule of its format: the published "
          "JSON Schema (manifest_schema/) and the rules a schema cannot "
          "express. Every problem is reported, each with file, line:column "
          "and JSON pointer.\n\n"
          "The kind of a file is told by its name: ireeplugin.json, "
          "plugins.json, plugins.lock.json, config.json, snapshot.json, "
          "index/<name>.json. Use --kind for files named otherwise. A "
          "directory stands for the ireepkg files in it (a package, a "
          "project, or a registry).\n\n"
          "Unknown fields are errors here (strict mode). Exit status: 0 when "
          "every file is valid, 1 when any is not, 2 on usage errors.",
          {{"kind", 0, "KIND",
            "read every file as KIND: manifest, project, lock, "
            "registry-config, snapshot or index"},
           {"lenient", 0, "",
            "report unknown fields as warnings, as when reading installed "
            "files"},
           kJson},
          {"ireepkg manifest check ireeplugin.json",
           "ireepkg manifest check examples/simple-mul examples/project",
           "ireepkg manifest check --kind manifest my-manifest.json --json"},
          1,
          -1,
          false,
          runManifestCheck,
      },
  };
  return table;
}

} // namespace ireepkg::cli
