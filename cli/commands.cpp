//===- commands.cpp - The ireepkg command table --------------------------===//
//
// The one table of commands. Adding a command: write cmd_<name>.cpp with its
// run function, declare it in command.h, add its entry here.
//
// Why one file of this size: it is data, the text of every command's help
// and of the global options, and one table is what keeps --help, `ireepkg
// help`, docs/cli.md, the manual page and the completion scripts from
// drifting apart.
//
//===----------------------------------------------------------------------===//
#include "command.h"
#include "global_options.h"
#include "registry_args.h"

#include <algorithm>

namespace ireepkg::cli {

static const OptionSpec kJson{"json", 0, "", "print a machine-readable report"};
static const OptionSpec kPrefix{
    "prefix", 0, "DIR",
    "the prefix to use (default: $IREEPKG_PREFIX, else <project>/.iree-plugins "
    "for the plugins.json found upward from here, else "
    "$XDG_DATA_HOME/ireepkg)"};
static const OptionSpec kLockTimeout{
    "lock-timeout", 0, "SECONDS",
    "how long to wait for another ireepkg working on the prefix (default: "
    "wait as long as it takes; 0: fail at once)"};
static const OptionSpec kQuiet{"quiet", 'q', "", "print only errors"};
static const OptionSpec kDryRun{
    "dry-run", 0, "",
    "print what would change and change nothing: plugins.json, the lock "
    "and the prefix stay as they are (registry metadata may be fetched "
    "into the cache, and the archives of plugins with options, whose "
    "schemas are checked)"};
static const OptionSpec kNoSync{
    "no-sync", 0, "",
    "edit plugins.json and update the lock, but leave the prefix"};
static const OptionSpec kFrozenEdit{
    "frozen", 0, "",
    "edit plugins.json only: neither lock nor sync"};
static const OptionSpec kSigningKey{"key", 'k', "FILE",
                                    "the registry's minisign secret key"};
static const OptionSpec kPasswordFile{"password-file", 0, "FILE",
                                      "read the secret key's password from "
                                      "FILE (its first line)"};
static const OptionSpec kExpiresDays{
    "expires-days", 0, "N",
    "the new snapshot expires N days from now (default: 30); clients refuse "
    "an expired snapshot"};
static const OptionSpec kRegistryDir{"registry", 0, "DIR",
                                     "the registry directory to write"};
static const OptionSpec kSite{
    "site", 0, "DIR",
    "then write the registry's web site to DIR, as `ireepkg registry site` "
    "does"};
static const OptionSpec kSiteUrl{
    "site-url", 0, "URL",
    "the URL users reach the registry at, for the site's install snippets "
    "(default: the directory as a file:// URL)"};

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

const std::vector<std::pair<std::string, std::string>> &commandAliases() {
  static const std::vector<std::pair<std::string, std::string>> aliases = {
      {"uninstall", "remove"}};
  return aliases;
}

std::vector<std::string> optionChoices(const Command &command,
                                       const OptionSpec &option) {
  const std::string &c = command.name, &o = option.name;
  if (o == "color")
    return colorModeNames();
  if (o == "format" && c == "flags")
    return {"args", "flagfile", "json"};
  if (o == "kind" && c == "manifest check")
    return {"manifest", "project", "lock", "registry-config", "snapshot",
            "index"};
  if (o == "kind" && c == "new")
    return {"runtime", "mlir-passes", "mlir-dialect", "compiler-config"};
  if (o == "shell")
    return {"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell"};
  if (o == "tool-kind")
    return {"runtime", "compiler", "mlir", "python"};
  if (o == "tool")
    return {"iree-compile", "iree-opt", "mlir-opt"};
  if (o == "platform")
    return {"linux-x86_64", "linux-aarch64", "macos-arm64", "macos-x86_64",
            "windows-x86_64"};
  if (o == "invert" || o == "upgrade-package")
    return {"@packages"};
  return {};
}

bool takesPackageNames(const Command &command) {
  static const std::vector<std::string> names = {
      "remove", "info", "why", "verify", "test", "cache clean", "update"};
  return std::find(names.begin(), names.end(), command.name) != names.end();
}

const std::vector<std::string> &colorModeNames() {
  static const std::vector<std::string> names = {"auto", "always", "never"};
  return names;
}

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
            "docs/cli.md)"},
           {"man", 0, "",
            "print the manual page ireepkg(1) (this is docs/man/ireepkg.1, "
            "installed into share/man/man1)"}},
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
          "project, or a registry). A package archive (<name>-<version>"
          ".ireepkg) gets the checks install makes of its first members "
          "(member rules, RECORD, size limits), then its ireeplugin.json is "
          "checked like any manifest.\n\n"
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
           "ireepkg manifest check dist/simple-mul-1.2.0.ireepkg",
           "ireepkg manifest check --kind manifest my-manifest.json --json"},
          1,
          -1,
          false,
          runManifestCheck,
      },
      {
          "pack",
          "<dir> [-o DIR] [--fatelf] [--json]",
          "check a package directory and write its .ireepkg archive",
          "Validates <dir>/ireeplugin.json, checks that every file it names "
          "exists, and inspects every native library: the file is an ELF, "
          "Mach-O or COFF of the declared architecture and OS; an "
          "embedded-elf runtime plugin is freestanding (no DT_NEEDED, no "
          "interpreter) and exports iree_hal_executable_plugin_query, as "
          "does a system-library one; a compiler plugin library exports its "
          "entry point. Hook pass pipelines are checked with MLIR's own "
          "parser (ireepkg-mlir-check) wherever MLIR knows the passes, with "
          "the package's own MLIR pass plugin loaded: unknown options, bad "
          "option values and wrong nesting are errors; passes MLIR does not "
          "know (IREE's) are left to the syntax check. --json reports what "
          "was checked (\"pipeline_check\").\n\n"
          "Then writes <name>-<version>.ireepkg: a zstd-compressed tar whose "
          "first member is ireeplugin.json, with .ireepkg/RECORD.json "
          "listing every other file's SHA-256 and size. The archive is "
          "reproducible: the same inputs give the same bytes.\n\n"
          "--fatelf also joins an embedded-elf plugin's per-architecture "
          "files into one FatELF .sos inside the package (library key "
          "\"fat\").\n\n"
          "When the manifest has \"tests\", they run last, on the package "
          "directory (its own runtime plugins, or its MLIR plugins, for this "
          "host), with the IREE and MLIR tools found as `ireepkg test` finds "
          "them; a test whose tool is missing fails. If a test fails, its "
          "output is shown and no archive is left. --no-test skips them, "
          "says so, and records it in the archive's RECORD.json "
          "(\"tests_skipped\": true).",
          {{"output", 'o', "DIR", "where to write the archive (default: .)"},
           {"fatelf", 0, "",
            "join each embedded-elf plugin's per-architecture files into a "
            "FatELF .sos in the package"},
           {"no-test", 0, "",
            "do not run the package's tests (the archive records it)"},
           kJson},
          {"ireepkg pack examples/simple-mul -o dist/"},
          1,
          1,
          false,
          runPack,
      },
      {
          "init",
          "[--registry NAME=URL] [--registry-key KEY] [--platform OS-ARCH]... "
          "[--force]",
          "write a starter plugins.json in the current directory",
          "Writes plugins.json (see docs/guide-users.md) with schema_version, "
          "the registry given with --registry (or an empty list), the "
          "platforms to lock for (default: the host's) and an empty plugin "
          "list, and prints it. An existing plugins.json is kept unless "
          "--force.",
          {{"registry", 0, "NAME=URL",
            "list this registry: an https:// or file:// URL, or a directory "
            "relative to plugins.json"},
           {"registry-key", 0, "KEY",
            "the registry's minisign public key (its base64 line or .pub "
            "file)"},
           {"platform", 0, "OS-ARCH",
            "a platform to lock for (default: the host's)", true},
           {"force", 0, "", "replace an existing plugins.json"},
           kJson},
          {"ireepkg init",
           "ireepkg init --registry default=https://plugins.example.org/iree "
           "--registry-key RWQ... --platform linux-x86_64 --platform "
           "linux-aarch64"},
          0,
          0,
          false,
          runInit,
      },
      {
          "add",
          "<name>[@<constraint>]... | --path DIR [--option FLAG=VALUE]... "
          "[--registry NAME] [--no-sync | --frozen] [--dry-run]",
          "add plugins to the project (plugins.json), lock and sync",
          "Edits the plugins.json of the current directory or the nearest "
          "one above it. A plugin it does not list yet is appended to "
          "\"plugins\" (the end of the activation order); a listed one keeps "
          "its place and gets the new version constraint, registry and "
          "options. Without @<constraint>, the caret constraint of the "
          "newest version in the project's registries is written (^1.2.0).\n\n"
          "What is added is checked first, and any problem is an error that "
          "leaves every file as it was: a package no registry of plugins.json "
          "has (with the closest name there is), a constraint no version "
          "matches (with the versions there are), an option the package "
          "does not declare or a value its option schema refuses (with the "
          "options it declares).\n\n"
          "Then, as `uv add` does, the project is locked (plugins.lock.json) "
          "and its prefix synced, so that the plugins are ready to use: "
          "--no-sync stops after the lock and leaves the prefix; --frozen "
          "only edits plugins.json (the registries are then asked only for "
          "the newest version of a plugin given without a constraint, and "
          "the checks above are left to the next `lock`). The lock is "
          "computed before anything is written. --dry-run prints what would "
          "change (plugins.json, the lock, the prefix) and changes "
          "nothing.\n\n"
          "--option sets one value in the plugin's \"options\", replacing a "
          "value of the same flag; VALUE is read as JSON when it is a "
          "number, a boolean, a quoted string or an array, otherwise as "
          "text.\n\n"
          "--path DIR adds the local package in DIR (a package directory "
          "with its ireeplugin.json, which names it) as {\"name\", \"path\"}, "
          "the path written relative to plugins.json; `lock` and `sync` "
          "take it from there, with no version and no registry.\n\n"
          "Every other byte of plugins.json stays as it was (order, "
          "indentation, line endings), and new entries copy the layout of "
          "their neighbours.",
          {{"option", 0, "FLAG=VALUE",
            "set an option of the plugin (flag without dashes)", true},
           {"registry", 0, "NAME",
            "take the plugins from this registry of plugins.json"},
           {"path", 0, "DIR", "add the local package in DIR"},
           kNoSync,
           kFrozenEdit,
           kDryRun,
           kOptIreeVersion,
           kOptIgnoreIreeVersion,
           kOptOffline,
           kOptProject,
           kPrefix,
           kLockTimeout,
           kJson},
          {"ireepkg add simple-mul@^1.2",
           "ireepkg add mul-pipeline --option iree-llvmcpu-distribution-size=64",
           "ireepkg add 'torch-input@>=2.0.0, <3.0.0' --registry local",
           "ireepkg add --path ./plugins/local-experiment",
           "ireepkg add simple-mul --dry-run",
           "ireepkg add simple-mul@^1.2 --no-sync"},
          0,
          -1,
          false,
          runAdd,
      },
      {
          "rm",
          "<name>... [--no-sync | --frozen] [--dry-run] [--json]",
          "remove plugins from the project (plugins.json), lock and sync",
          "Removes each named plugin, with its options, from the plugins.json "
          "of the current directory or the nearest one above it. Every other "
          "byte of the file stays as it was. If a name is not listed, "
          "nothing changes. Then, as `uv remove` does, the project is "
          "locked and its prefix synced: what no other plugin needs is "
          "uninstalled. --no-sync stops after the lock and leaves the "
          "prefix; --frozen only edits plugins.json. --dry-run prints what "
          "would change and changes nothing.\n\n"
          "`ireepkg remove` (or `uninstall`) is the other way: it removes "
          "installed packages from a prefix directly and leaves plugins.json "
          "alone.",
          {kNoSync, kFrozenEdit, kDryRun, kOptIreeVersion,
           kOptIgnoreIreeVersion, kOptOffline, kOptProject, kPrefix,
           kLockTimeout, kJson},
          {"ireepkg rm simple-mul", "ireepkg rm simple-mul --no-sync"},
          1,
          -1,
          false,
          runRm,
      },
      {
          "install",
          "<archive>... | <name>[@<constraint>]... [--registry URL] "
          "[--prefix DIR] [--dry-run]",
          "install packages, from archive files or a registry, in one "
          "transaction",
          "With archive files: verifies each archive (member rules, RECORD "
          "hashes and sizes, the manifest), checks that the package supports "
          "the target platform, resolves dependencies among the given "
          "archives and what is already installed, and checks the incoming "
          "hook pass pipelines with MLIR's own parser and the MLIR pass "
          "plugins of the prefix as it will be.\n\n"
          "With package names (`simple-mul`, `simple-mul@^1.2`): resolves "
          "them and their dependencies against the registry (--registry, "
          "else $IREEPKG_REGISTRY, else the project's registries), keeping "
          "the installed versions where they fit, for the IREE version in "
          "the environment (or --iree-version) and the prefix's platform. "
          "Every snapshot signature, index hash and archive hash is "
          "verified; archives are downloaded in parallel into the download "
          "cache. With --bundle, packages come from an offline bundle "
          "instead, verified the same way. Into a project's own prefix "
          "(no --prefix, inside the project) only packages plugins.json "
          "lists are installed by name: the next `sync` would remove any "
          "other, so `ireepkg add` it instead.\n\n"
          "The IREE in use is the version of the iree-base-compiler / "
          "iree-base-runtime distribution that installed iree-compile (else "
          "iree-run-module) found on PATH or in $VIRTUAL_ENV/bin, else what "
          "the tool's --version prints; --iree-version overrides it. An "
          "archive whose \"requires.iree\" excludes it is refused, and a "
          "version by name is never chosen, unless --ignore-iree-version "
          "(then each such package is installed with a warning); when no "
          "IREE is found, a warning says the requirements were not "
          "checked. When two packages' runtime plugins "
          "declare the same import, the report says which one IREE uses (the "
          "one activated last) and which is shadowed.\n\n"
          "Everything is installed in one transaction: it completes, or the "
          "prefix is left exactly as it was. The prefix's activation index "
          "and IREE flagfiles are rewritten in the same transaction. "
          "Progress, the summary and Ctrl-C (exit status 130) are as for "
          "`ireepkg sync`.\n\n"
          "--dry-run resolves and checks as the install would and prints "
          "what would change, without fetching an archive by name or "
          "changing the prefix.",
          {kPrefix,
           {"platform", 0, "OS-ARCH",
            "install for this platform instead of the host's"},
           {"cpu-level", 0, "LEVEL",
            "write state/runtime.flags with the builds for this CPU level "
            "(x86_64_v1 to x86_64_v4, or ARCH+FEATURE...) instead of this "
            "machine's CPU, for a prefix prepared for another machine; kept "
            "by later commands (installed.json's cpu_level); \"host\" "
            "clears it"},
           kOptRegistry,
           kOptRegistryKey,
           {"bundle", 0, "FILE", "install from this offline bundle"},
           kOptOffline,
           kOptIreeVersion,
           kOptIgnoreIreeVersion,
           kLockTimeout,
           {"no-cache", 0, "", "do not use or fill the package cache"},
           kDryRun,
           kQuiet,
           kJson},
          {"ireepkg install simple-mul-1.2.0.ireepkg",
           "ireepkg install --prefix /opt/iree-plugins *.ireepkg",
           "ireepkg install simple-mul@^1.2 --registry "
           "https://plugins.example.org/iree --registry-key RWQ...",
           "ireepkg install --bundle vendor.ireebundle --registry-key "
           "RWQ... simple-mul"},
          1,
          -1,
          false,
          runInstall,
      },
      {
          "lock",
          "[--upgrade] [--upgrade-package NAME]... [--check [--exit-code]]",
          "resolve plugins.json into plugins.lock.json",
          "Resolves the project's plugins and their dependencies for every "
          "platform plugins.json lists (a lock for linux-aarch64 can be made "
          "on any machine) and the IREE in use (see `ireepkg help install`; "
          "or --iree-version), keeping the locked version of every package "
          "that still fits; the lockfile records that IREE version. Option "
          "values in plugins.json are checked against each plugin's option "
          "schema. The lockfile is written only when "
          "its bytes change; it is deterministic (sorted, no timestamps).\n\n"
          "When no solution exists, the error explains why, as a chain of "
          "reasons.",
          {{"upgrade", 0, "", "ignore every locked version"},
           {"upgrade-package", 0, "NAME", "ignore the locked version of NAME",
            true},
           {"check", 0, "",
            "write nothing; exit with status 1 if the lockfile is missing or "
            "would change, 0 if it is up to date"},
           {"exit-code", 0, "",
            "with --check: the same (--check always exits 1 when there is "
            "something to lock, as `git diff --exit-code`); accepted for "
            "symmetry with `outdated --exit-code`"},
           kOptIreeVersion,
           kOptOffline,
           kOptProject,
           kQuiet,
           kJson},
          {"ireepkg lock", "ireepkg lock --upgrade-package simple-mul",
           "ireepkg lock --check"},
          0,
          0,
          false,
          runLock,
      },
      {
          "sync",
          "[--locked | --frozen] [--offline] [--bundle FILE] [--dry-run]",
          "make the project's prefix exactly the lockfile",
          "Installs, upgrades and removes packages so that the project's "
          "prefix (<project>/.iree-plugins, or --prefix) holds exactly the "
          "packages of plugins.lock.json, in the lock's activation order, in "
          "one transaction. When plugins.json changed since the lock was "
          "written, the lock is brought up to date first.\n\n"
          "--locked fails instead when the lock is out of date (for CI); "
          "--frozen uses the lock as it is without checking it. --offline "
          "opens no connection and says which packages are missing from the "
          "download cache. --bundle installs from an offline bundle, "
          "verified exactly as from the registry.\n\n"
          "Every package's \"requires.iree\" is checked against the IREE in "
          "use (see `ireepkg help install`), whatever IREE the lock was "
          "resolved for; a package that excludes it is refused unless "
          "--ignore-iree-version.\n\n"
          "On a terminal, progress is shown while it runs (a line per "
          "download, one for all of them with speed and time left, one for "
          "the package being installed); at the end, and when piped only "
          "then, a summary (`Installed 2 packages in 12ms`). Ctrl-C stops it "
          "before anything is changed: it says so and exits with status "
          "130.\n\n"
          "--dry-run prints what would change (the lock, when plugins.json "
          "changed since it was written, and each package to install, change "
          "or remove) and changes nothing.",
          {{"locked", 0, "", "fail if plugins.lock.json is out of date"},
           {"frozen", 0, "", "install the lockfile as it is, unchecked"},
           {"bundle", 0, "FILE", "take the packages from this offline bundle"},
           kOptOffline,
           kOptIreeVersion,
           kOptIgnoreIreeVersion,
           {"platform", 0, "OS-ARCH",
            "sync a prefix for this platform (default: the prefix's, else "
            "the host's)"},
           {"cpu-level", 0, "LEVEL",
            "write state/runtime.flags with the builds for this CPU level, "
            "as `install --cpu-level` does; kept by later commands, "
            "\"host\" clears it"},
           kOptProject,
           kPrefix,
           kLockTimeout,
           kDryRun,
           kQuiet,
           kJson},
          {"ireepkg sync", "ireepkg sync --locked", "ireepkg sync --dry-run",
           "ireepkg sync --offline", "ireepkg sync --bundle vendor.ireebundle"},
          0,
          0,
          false,
          runSync,
      },
      {
          "update",
          "[<name>...] [--dry-run]",
          "move locked packages to the newest versions allowed, and sync",
          "Re-resolves the project ignoring the locked versions of the "
          "named packages (of every package when none is named), writes "
          "plugins.lock.json, and syncs the project's prefix to it. "
          "--dry-run prints what would change and changes nothing.",
          {kOptIreeVersion, kOptOffline, kOptProject, kPrefix, kLockTimeout,
           kDryRun, kQuiet, kJson},
          {"ireepkg update", "ireepkg update simple-mul",
           "ireepkg update --dry-run"},
          0,
          -1,
          false,
          runUpdate,
      },
      {
          "outdated",
          "[--all] [--exit-code] [--json]",
          "list locked packages with newer versions",
          "For each package of the project: the locked version, the newest "
          "version plugins.json allows (what `ireepkg update` would choose) "
          "and the newest published version. Lists only packages where "
          "these differ, unless --all.",
          {{"all", 0, "", "list every package"},
           {"exit-code", 0, "",
            "exit with status 1 when a package is out of date (0 when none "
            "is), as `git diff --exit-code`"},
           kOptIreeVersion, kOptOffline, kOptProject, kJson},
          {"ireepkg outdated", "ireepkg outdated --json",
           "ireepkg outdated --exit-code || echo 'updates available'"},
          0,
          0,
          false,
          runOutdated,
      },
      {
          "search",
          "<text> [--registry URL] [--json]",
          "find packages by name in registries",
          "Lists the packages whose name contains <text> (ignoring case), "
          "exact and prefix matches first, with the newest version and its "
          "summary. Searches --registry (else $IREEPKG_REGISTRY, else the "
          "project's registries); snapshots are verified as for install.",
          {kOptRegistry, kOptRegistryKey, kOptOffline, kOptProject, kJson},
          {"ireepkg search mul", "ireepkg search fft --json"},
          1,
          1,
          false,
          runSearch,
      },
      {
          "bundle create",
          "-o <file>.ireebundle [--lock FILE] [--platform OS-ARCH]...",
          "write the locked packages into one offline bundle file",
          "Writes one file holding, for each registry of the lockfile, its "
          "signed snapshot, the index files and archives (with their "
          "signatures) of exactly the locked packages. `ireepkg sync "
          "--bundle` and `ireepkg install --bundle` install from it on a "
          "machine with no network, verified exactly as from the registry "
          "(signature, index hashes, archive hashes); only the snapshot's "
          "expiry and the rollback check are not applied to a bundle. The "
          "bundle is checked that way before it is written.",
          {{"output", 'o', "FILE", "the bundle to write"},
           {"lock", 0, "FILE", "the lockfile (default: the project's)"},
           {"platform", 0, "OS-ARCH",
            "check that the lock covers this platform", true},
           kOptProject,
           kQuiet,
           kJson},
          {"ireepkg bundle create -o vendor.ireebundle"},
          0,
          0,
          false,
          runBundleCreate,
      },
      {
          "remove",
          "<name>... [--cascade] [--prefix DIR] [--dry-run]",
          "remove installed packages, in one transaction",
          "Removes the named packages from the prefix. A package that another "
          "installed package depends on is not removed (the error names the "
          "dependent) unless --cascade, which also removes the dependents.\n\n"
          "`remove` changes a prefix and leaves plugins.json alone; in a "
          "project, `ireepkg rm` removes a plugin from plugins.json instead "
          "(and then locks and syncs, which removes it from the project's "
          "prefix). Removing from a project's prefix a package plugins.json "
          "asks for warns that the next `sync` installs it again. "
          "`ireepkg uninstall` is another name for `remove`. --dry-run "
          "prints what would be removed and changes nothing.",
          {{"cascade", 0, "", "also remove the packages that depend on them"},
           kPrefix,
           kLockTimeout,
           kDryRun,
           kQuiet,
           kJson},
          {"ireepkg remove simple-mul", "ireepkg remove --cascade simple-mul",
           "ireepkg remove --dry-run --cascade simple-mul"},
          1,
          -1,
          false,
          runRemove,
      },
      {
          "list",
          "[--prefix DIR] [--json]",
          "list the installed packages in activation order",
          "Lists every installed package with its version, whether it was "
          "installed explicitly or as a dependency, and what it provides. "
          "--names prints only the names, one a line (shell completion uses "
          "it).",
          {kPrefix,
           {"names", 0, "", "print only the package names, one a line"},
           kJson},
          {"ireepkg list", "ireepkg list --json"},
          0,
          0,
          false,
          runList,
      },
      {
          "tree",
          "[--depth N] [--invert NAME] [--prefix DIR] [--json]",
          "show the installed packages as a dependency tree",
          "Prints each explicitly installed package with the packages it "
          "depends on below it, each with its version and what it "
          "contributes (runtime plugins with their format, compiler plugins "
          "with their kind, hooks). A package shown before is marked (*) and "
          "not expanded again. A dependency that nothing installed "
          "explicitly needs any more is shown as a root of its own.\n\n"
          "--invert NAME turns the tree over: NAME at the top, and below it "
          "the packages that depend on it, up to those installed "
          "explicitly.",
          {{"depth", 0, "N", "show N levels below each root (0: roots only)"},
           {"invert", 'i', "NAME",
            "show what depends on NAME instead of what NAME depends on"},
           kPrefix,
           kJson},
          {"ireepkg tree", "ireepkg tree --depth 1", "ireepkg tree -i simple-mul"},
          0,
          0,
          false,
          runTree,
      },
      {
          "why",
          "<name> [--prefix DIR] [--json]",
          "show why a package is installed",
          "Prints every path from an explicitly installed package to <name>, "
          "one per line (`app 1.0.0 -> lib 2.0.0 -> <name> 1.2.0`). Exit "
          "status 1 if <name> is not installed.",
          {kPrefix, kJson},
          {"ireepkg why simple-mul"},
          1,
          1,
          false,
          runWhy,
      },
      {
          "info",
          "<name|archive> [--prefix DIR] [--json]",
          "show everything about an installed package or an archive",
          "Shows version, platforms, compiler plugins with their options and "
          "defaults, hooks, runtime plugins with formats and imports, "
          "dependencies, installed size and location, and whether it was "
          "installed explicitly or pulled in as a dependency. For an "
          "installed package, also which of its runtime plugins are "
          "activated on the prefix's platform, and why any is not (with a "
          "note on stderr when that platform is not the host's).",
          {kPrefix, kJson},
          {"ireepkg info simple-mul", "ireepkg info simple-mul-1.2.0.ireepkg"},
          1,
          1,
          false,
          runInfo,
      },
      {
          "verify",
          "[<name>...] [--prefix DIR] [--json]",
          "re-hash installed files and check the prefix's state",
          "Re-hashes every installed file against its package's RECORD and "
          "checks the prefix's state files; reports every modified, missing "
          "or extra file. Exit status 1 if anything is off. A state file an "
          "older ireepkg wrote differently is listed as outdated, which is "
          "not a failure: the next change to the prefix rewrites it.",
          {kPrefix, kJson},
          {"ireepkg verify", "ireepkg verify simple-mul --json"},
          0,
          -1,
          false,
          runVerify,
      },
      {
          "fatelf join",
          "<elf>... [-o <out.sos>]",
          "join per-architecture ELF files into one FatELF .sos",
          "Writes IREE's FatELF v1 layout: header, one record per input, "
          "then the images, page-aligned. IREE's runtime loads the record "
          "that matches the host. Without -o (or with -o -) the file goes "
          "to standard output, when that is not a terminal.",
          {{"output", 'o', "FILE", "the .sos file to write (- for standard "
                                   "output)"}},
          {"ireepkg fatelf join -o plugin.sos plugin.x86_64.so "
           "plugin.aarch64.so",
           "ireepkg fatelf join plugin.x86_64.so plugin.aarch64.so > "
           "plugin.sos"},
          1,
          -1,
          false,
          runFatelfJoin,
      },
      {
          "fatelf split",
          "<file.sos> [-o DIR]",
          "write each image of a FatELF file to its own file",
          "Writes <stem>.<arch>.so for every record, byte-identical to the "
          "files that were joined.",
          {{"output", 'o', "DIR", "where to write (default: .)"}},
          {"ireepkg fatelf split plugin.sos -o out/"},
          1,
          1,
          false,
          runFatelfSplit,
      },
      {
          "fatelf select",
          "<file.sos> [--arch ARCH] [-o <out>]",
          "extract the image IREE would load on an architecture",
          "Applies the runtime's selection rule (machine, OS ABI, word size, "
          "byte order) for the host, or for --arch. Without -o (or with -o "
          "-) the image goes to standard output, when that is not a "
          "terminal.",
          {{"arch", 0, "ARCH", "select for this architecture (default: host)"},
           {"output", 'o', "FILE", "the ELF file to write (- for standard "
                                   "output)"}},
          {"ireepkg fatelf select plugin.sos -o plugin.so"},
          1,
          1,
          false,
          runFatelfSelect,
      },
      {
          "fatelf dump",
          "<file.sos> [--json]",
          "print a FatELF file's header and records",
          "Prints the version and, for each record, the architecture, ELF "
          "machine, OS ABI, word size, byte order, offset and size.",
          {kJson},
          {"ireepkg fatelf dump plugin.sos"},
          1,
          1,
          false,
          runFatelfDump,
      },
      {
          "flags",
          "runtime|compiler [--format args|flagfile|json | --json] [--platform "
          "OS-ARCH] [--cpu-level LEVEL] [--target TARGET]",
          "print the IREE flags that activate the prefix's plugins",
          "`flags runtime` prints one --executable_plugin= per runtime plugin "
          "of the prefix, in activation order (IREE checks the last one "
          "first, so later packages override earlier ones), for the "
          "prefix's platform (with a note on stderr when that is not the "
          "host's) or for --platform; plugins not activated for the target "
          "(no build for it, or one IREE's runtime cannot call there, such "
          "as embedded ELF on Windows) are named "
          "on stderr, one line each with the reason (with --format json, in "
          "\"skipped\"). `flags compiler` prints the compiler flags of the "
          "active compiler plugins and hooks; --target chooses the packages' "
          "tuning specs, linked into one file in activation order (the "
          "first package wins where two specs match the same operation). "
          "Read-only and fast: it reads "
          "the prefix's precomputed activation index, and only for skipped "
          "plugins their manifest.",
          {{"format", 0, "FORMAT",
            "args (one flag per line, the default), flagfile (with a "
            "comment header, for --flagfile=) or json"},
           {"platform", 0, "OS-ARCH",
            "the target (default: the prefix's platform); runtime only"},
           {"cpu-level", 0, "LEVEL",
            "runtime only: choose builds for this CPU instead of the host's "
            "(x86_64_v1 to x86_64_v4, or ARCH+FEATURE..., e.g. "
            "x86_64+avx512f); without it the host's CPU is read, and other "
            "platforms get their baseline builds"},
           {"tool", 0, "TOOL",
            "compiler only: iree-compile (default), iree-opt or mlir-opt"},
           {"set", 0, "FLAG=VALUE",
            "compiler only: set a plugin option (checked against its "
            "schema)",
            true},
           {"target", 0, "TARGET",
            "compiler only: what the compile is for, choosing tuning specs: "
            "a ROCm architecture (gfx942), llvm-cpu or a CPU name; "
            "repeatable",
            true},
           {"check-files", 0, "", "runtime only: fail if a listed file is "
                                  "missing"},
           {"json", 0, "", "the same as --format json"},
           kPrefix},
          {"ireepkg flags runtime", "ireepkg flags runtime --format json",
           "ireepkg flags runtime --platform linux-aarch64",
           "ireepkg flags runtime --cpu-level x86_64_v3"},
          1,
          1,
          false,
          runFlags,
      },
      {
          "env",
          "[sh|bash|zsh|fish|pwsh] [--shell SHELL] [--json]",
          "print shell commands that point IREE at the prefix's plugins",
          "Prints exports for the current prefix, for Python's iree.runtime "
          "and iree.compiler: IREEPKG_PREFIX; IREE_PY_RUNTIME_FLAGS holding "
          "the runtime flags, which iree.runtime parses when it is imported; "
          "and IREE_TOOL_PATH naming ireepkg's iree-compile wrapper, which "
          "iree.compiler runs instead of its own iree-compile so that "
          "compile_file and compile_str get the prefix's compiler plugins, "
          "options and hooks (through `ireepkg exec`), with "
          "IREEPKG_IREE_TOOL_PATH (the previous IREE_TOOL_PATH) and "
          "IREEPKG_EXECUTABLE. Apply them with `eval \"$(ireepkg env)\"` "
          "(sh, bash, zsh), `ireepkg env fish | source`, or `ireepkg env pwsh "
          "| Invoke-Expression`; --json (or `env json`) prints them as a JSON "
          "object instead. The runtime flags are the prefix's platform's, "
          "with a note on stderr when that is not the host's.",
          {{"shell", 0, "SHELL",
            "sh (default), bash, zsh, dash, ksh, fish, pwsh or powershell"},
           kJson,
           kPrefix},
          {"eval \"$(ireepkg env)\"", "ireepkg env fish | source",
           "ireepkg env --json"},
          0,
          1,
          false,
          runEnv,
      },
      {
          "exec",
          "[--prefix DIR] [--tool-kind KIND] -- <tool> [<args>...]",
          "run an IREE tool with the prefix's plugins activated",
          "Runs <tool> with the prefix's configuration inserted before your "
          "arguments, so that your own flags still win: "
          "--flagfile=<prefix>/state/runtime.flags for IREE's runtime tools "
          "(iree-run-module, iree-benchmark-module, ...); the response file "
          "@<prefix>/state/compiler.flags for iree-compile and iree-opt, "
          "after checking the configuration (option values, hook conflicts, "
          "what this compiler can load) so that nothing invalid reaches the "
          "compiler; the flags themselves (--load-pass-plugin=, "
          "--load-dialect-plugin=, --pass-pipeline=) for MLIR tools such as "
          "mlir-opt-22 or standalone-opt. Python (an interpreter, or a "
          "script Python runs such as pytest) gets nothing in its arguments "
          "but the variables of `ireepkg env` in its environment: "
          "IREE_PY_RUNTIME_FLAGS for iree.runtime, IREEPKG_PREFIX, and "
          "IREE_TOOL_PATH naming ireepkg's iree-compile wrapper, so that "
          "iree.compiler's compile_file and compile_str run the iree-compile "
          "beside the interpreter through `exec` (see docs/python.md). The "
          "kind of tool is read from its --help (once per binary, cached), "
          "else a script's #! line, not from its name; --tool-kind says it "
          "instead. "
          "When your arguments to an MLIR tool choose the passes "
          "(--pass-pipeline, -p or a pass flag such as --cse), the packages' "
          "--pass-pipeline is left out, with a note on stderr. The tool is "
          "found on PATH, then in the active Python virtual environment. A "
          "prefix for another platform (install --platform) is refused: its "
          "plugins are for the machine it is deployed to.",
          {kPrefix,
           {"tool-kind", 0, "KIND",
            "what the tool is: runtime, compiler, mlir or python (default: "
            "read from the tool's --help)"}},
          {"ireepkg exec -- iree-run-module --device=local-sync "
           "--module=m.vmfb --function=main --input=4xf32=1",
           "ireepkg exec -- python train.py", "ireepkg exec -- pytest"},
          0,
          0,
          true,
          runExec,
      },
      {
          "new",
          "<dir> --kind KIND [--name NAME]",
          "start a new plugin package project",
          "Writes a complete package project into <dir> (which must not "
          "exist, or be empty): the plugin's sources, a CMakeLists.txt using "
          "ireepkg's CMake helpers (find_package(ireepkg CONFIG)), "
          "ireeplugin.json with a test, the test program, and a README.md "
          "with the commands that build, test and pack it. Kinds: runtime "
          "(an IREE executable plugin in C, built as embedded ELF files for "
          "x86_64 and aarch64 and a system library; its test runs a program "
          "with iree-run-module), mlir-passes and mlir-dialect (MLIR plugins "
          "in C++ for Debian's MLIR 22; their tests run mlir-opt), "
          "compiler-config (a compiler configuration with no native code; "
          "its test compiles and runs a program). The package name is "
          "<dir>'s name unless --name gives one.",
          {{"kind", 0, "KIND",
            "runtime, mlir-passes, mlir-dialect or compiler-config"},
           {"name", 0, "NAME", "the package name (default: <dir>'s name)"}},
          {"ireepkg new my-kernels --kind runtime",
           "ireepkg new tag-passes --kind mlir-passes"},
          1,
          1,
          false,
          runNew,
      },
      {
          "test",
          "[<package>|<dir>...] [--prefix DIR] [--json]",
          "run the tests packages ship",
          "Runs the smoke tests of the installed packages (all, or those "
          "named), as their manifests' \"tests\" describe them, against the "
          "IREE and MLIR tools in use: iree-compile and iree-run-module found "
          "on PATH, then in the active virtual environment, and mlir-opt, "
          "then mlir-opt-22, on PATH. An iree-run-module test compiles its "
          "program for the local CPU with the package and its installed "
          "dependencies activated (their compiler flags, as `exec` gives "
          "them, before the test's compile_flags) and runs the function with "
          "the inputs through the prefix's runtime plugins "
          "(state/runtime.flags); an mlir-opt test runs the pipeline on its "
          "program with the package's MLIR plugins loaded, and a test may run "
          "another MLIR tool its plugins name (\"tools\"). Each tool runs in a child process with the "
          "test's time limit (timeout_seconds, default 120). A test passes "
          "when its tools succeed and the expected lines appear, in order, "
          "in what the tool prints; a failure shows the command, the "
          "expected lines and the tool's output. A test whose tool is not "
          "found fails. Exit status 1 if any test fails.\n\n"
          "An argument with a '/' (./my-package, build/package) is a package "
          "directory instead: its tests run with its own runtime plugins for "
          "this host, as `pack` runs them, and its dependencies from the "
          "prefix.",
          {kPrefix, kJson},
          {"ireepkg test", "ireepkg test my-plugin --json",
           "ireepkg test ./build/package"},
          0,
          -1,
          false,
          runTest,
      },
      {
          "doctor",
          "[--prefix DIR] [--json]",
          "check the IREE tools and load every runtime plugin in isolation",
          "Finds the IREE tools (PATH, the active virtual environment) and "
          "reports their versions; then loads every installed runtime plugin "
          "for the host in a separate process through IREE's executable "
          "plugin ABI (query, version check, load with a host allocator, "
          "resolve every declared import, unload) and reports crashes, "
          "version or sanitizer mismatches, and any difference between the "
          "manifest's imports and what the library really resolves. A "
          "crashing plugin cannot crash doctor. Then checks every compiler "
          "plugin: MLIR pass and dialect plugins loaded into mlir-opt-22 "
          "(which only warns about a plugin it cannot load) and into the "
          "other MLIR tools they name (\"tools\"; one not on PATH is a "
          "warning), iree-static ids "
          "against `iree-compile --iree-list-plugins`, iree-dynamic libraries "
          "loaded by iree-compile. Exit status 1 if any plugin has a problem.\n\n"
          "--run-tests also runs the installed packages' tests, as `ireepkg "
          "test` does; a failing test makes the exit status 1.",
          {kPrefix, kJson,
           {"run-tests", 0, "", "also run the installed packages' tests"}},
          {"ireepkg doctor", "ireepkg doctor --json"},
          0,
          0,
          false,
          runDoctor,
      },
      {
          "key generate",
          "-o <base> [--password-file FILE] [--comment TEXT]",
          "make a minisign-compatible Ed25519 key pair for signing",
          "Writes <base>.pub (the public key, for registry configs and "
          "project files) and <base>.key (the secret key, encrypted with a "
          "password as minisign does, or unencrypted when no password file "
          "is given). The files are interchangeable with minisign's.",
          {{"output", 'o', "BASE", "write BASE.pub and BASE.key"},
           {"password-file", 0, "FILE",
            "read the secret key's password from FILE (default: no password)"},
           {"comment", 0, "TEXT", "the untrusted comment of the key files"},
           {"force", 0, "", "overwrite existing key files"}},
          {"ireepkg key generate -o registry-signing"},
          0,
          0,
          false,
          runKeyGenerate,
      },
      {
          "sign",
          "<file>... --key <secret key> [--password-file FILE]",
          "sign files, writing <file>.minisig beside each",
          "Signs each file with a minisign secret key (prehashed Ed25519, "
          "minisign's default), writing <file>.minisig that `minisign -V` "
          "accepts.",
          {{"key", 'k', "FILE", "the minisign secret key file"},
           {"password-file", 0, "FILE", "read the key's password from FILE"},
           {"trusted-comment", 't', "TEXT",
            "the signed trusted comment (default: file name and time)"}},
          {"ireepkg sign snapshot.json --key registry-signing.key"},
          1,
          -1,
          false,
          runSign,
      },
      {
          "signature verify",
          "<file> --public-key <key|file> [--signature FILE] [--json]",
          "check a file's minisign signature",
          "Checks <file>.minisig (or --signature) against a public key given "
          "as its base64 text or as a .pub file: the signature, the key id, "
          "and the signature over the trusted comment. Works with "
          "signatures made by minisign -S.",
          {{"public-key", 'p', "KEY", "the public key, or a .pub file"},
           {"signature", 0, "FILE", "the signature (default: <file>.minisig)"},
           kJson},
          {"ireepkg signature verify snapshot.json -p RWQ..."},
          1,
          1,
          false,
          runSignatureVerify,
      },
      {
          "registry init",
          "<dir> --key FILE [--password-file FILE] [--name NAME] "
          "[--mirror URL]... [--json]",
          "create a signed registry in a new or empty directory",
          "Writes a registry's layout into <dir>: config.json (its name, the "
          "public half of --key as its signing key, and its mirrors), index/, "
          "archives/, and snapshot.json version 1 with its signature "
          "snapshot.json.minisig. Serve the directory with any web server, or "
          "use it as it is (a path or file:// URL).\n\n"
          "A key is required: clients only use signed registries. Make one "
          "with `ireepkg key generate`. Clients do not trust config.json's "
          "key by themselves: give them the public key (printed here) "
          "through a channel they trust.",
          {kSigningKey,
           kPasswordFile,
           {"name", 0, "NAME",
            "the registry's name (default: the directory's name)"},
           {"mirror", 0, "URL", "another URL serving the same registry",
            true},
           {"description", 0, "TEXT", "what the registry holds"},
           kExpiresDays,
           kJson},
          {"ireepkg key generate -o registry-signing",
           "ireepkg registry init ./registry --key registry-signing.key"},
          1,
          1,
          false,
          runRegistryInit,
      },
      {
          "publish",
          "<archive>... --registry DIR --key FILE [--password-file FILE] "
          "[--expires-days N] [--json]",
          "add package archives to a registry directory and re-sign it",
          "Checks each archive as `install` does (manifest, RECORD, every "
          "member rule), copies it to archives/<name>/<name>-<version>.ireepkg "
          "with its signature, adds the version to index/<name>.json (its "
          "dependencies, IREE requirement, platforms, size and SHA-256), and "
          "writes a new snapshot.json, version one higher, signed with "
          "--key, which must be one of config.json's keys.\n\n"
          "A published version never changes: publishing a name and version "
          "that is there with other contents is refused; with the same "
          "contents nothing changes.\n\n"
          "Several archives are published in one transaction: each is "
          "checked first (two of the same name and version must have the "
          "same contents), and if any is refused none is published; "
          "otherwise they all go in with one new snapshot, and --site "
          "writes the site once. Every file is replaced atomically, under "
          "a lock, in an order that lets clients read the registry while it "
          "is being updated.",
          {kRegistryDir, kSigningKey, kPasswordFile, kExpiresDays, kSite,
           kSiteUrl, kJson},
          {"ireepkg publish dist/simple-mul-1.2.0.ireepkg --registry "
           "./registry --key registry-signing.key",
           "ireepkg publish dist/*.ireepkg --registry ./registry --key "
           "registry-signing.key --site ./registry/site --site-url "
           "https://plugins.example.org/iree"},
          1,
          -1,
          false,
          runPublish,
      },
      {
          "yank",
          "<name>@<version> --registry DIR --key FILE [--undo] [--json]",
          "withdraw a published version (or restore it with --undo)",
          "Marks the version as yanked in index/<name>.json and re-signs the "
          "snapshot. A yanked version stays downloadable for lockfiles that "
          "already pin it, but resolution never chooses it otherwise. "
          "--undo clears the mark.",
          {kRegistryDir,
           kSigningKey,
           kPasswordFile,
           {"undo", 0, "", "restore the version instead"},
           kExpiresDays,
           kSite,
           kSiteUrl,
           kJson},
          {"ireepkg yank simple-mul@1.2.0 --registry ./registry --key "
           "registry-signing.key"},
          1,
          1,
          false,
          runYank,
      },
      {
          "registry add-existing",
          "<name>@<version> --registry oci://HOST/NAMESPACE --key FILE "
          "[--json]",
          "add a version another OCI client pushed to the signed metadata",
          "For a registry kept in an OCI registry: the artifact "
          "NAMESPACE/<name>:<version> was pushed by another tool (oras, a "
          "CI's own pusher) with the archive as its layer of media type "
          "application/vnd.ireepkg.archive.v1. Downloads that layer "
          "(verified against its digest), checks it as `publish` checks an "
          "archive (it must be that name and version), and adds it to the "
          "index and a new signed snapshot. The artifact is left as it was.",
          {kRegistryDir, kSigningKey, kPasswordFile, kExpiresDays, kJson},
          {"ireepkg registry add-existing simple-mul@1.2.0 --registry "
           "oci://ghcr.io/acme/iree-plugins --key registry-signing.key"},
          1,
          1,
          false,
          runRegistryAddExisting,
      },
      {
          "registry resign",
          "<dir> --key FILE [--password-file FILE] [--expires-days N] "
          "[--json]",
          "re-sign a registry's snapshot with a new version and expiry",
          "Checks that every index file still has the hash the current "
          "snapshot pins, then writes the same snapshot with its version "
          "raised by one and a new expiry, signed with --key. Run it "
          "regularly (before the snapshot expires: clients refuse an expired "
          "one), or after adding a new key to config.json to move to it.",
          {kSigningKey, kPasswordFile, kExpiresDays, kSite, kSiteUrl, kJson},
          {"ireepkg registry resign ./registry --key registry-signing.key "
           "--expires-days 90"},
          1,
          1,
          false,
          runRegistryResign,
      },
      {
          "registry verify",
          "<dir|url> [--registry-key KEY]... [--archives] [--json]",
          "check a registry as a client does and list what it holds",
          "Reads the registry the way every ireepkg client does: the "
          "snapshot's signature against the trusted keys, its version "
          "against the highest this machine has seen (rollback) and its "
          "expiry (freeze), and every index file's hash against the "
          "snapshot. With --archives, also downloads every archive into the "
          "cache and checks its size and SHA-256. Any failure is reported "
          "with what it means and exit status 1.",
          {{"registry-key", 0, "KEY",
            "trust this minisign public key (the RW... line, or a .pub "
            "file)",
            true},
           {"mirror", 0, "URL", "another URL of the same registry", true},
           {"archives", 0, "", "also fetch and check every archive"},
           {"offline", 0, "",
            "open no network connection (a remote registry's archives must "
            "be in the cache)"},
           kJson},
          {"ireepkg registry verify ./registry --registry-key RWQ...",
           "ireepkg registry verify https://plugins.example.org/iree "
           "--registry-key registry-signing.pub --archives"},
          1,
          1,
          false,
          runRegistryVerify,
      },
      {
          "registry mirror",
          "<url> <dir> [--registry-key KEY]... [--mirror URL]... [--json]",
          "copy a registry into a directory, verified (a static mirror)",
          "Reads the registry at <url> (oci://, https:// or a directory) the "
          "way every client does, and writes it into <dir> as a directory "
          "registry: config.json, snapshot.json and its signature and the "
          "index files byte for byte, every archive (yanked ones too) and "
          "each archive's signature. The copy verifies with the same key: "
          "serve it with any web server, list it as a mirror in "
          "plugins.json, or carry it to a machine without network. Nothing "
          "is written before it is checked (the snapshot's signature, "
          "version and expiry, every index's hash, every archive's size "
          "and SHA-256), and files move into <dir> in the order a publisher "
          "writes them, so a copy being served stays consistent.\n\n"
          "<dir> must be new, empty, or an earlier copy: run the command "
          "again to bring it up to date (only archives it lacks are "
          "fetched). A copy newer than <url> is not overwritten.",
          {{"registry-key", 0, "KEY",
            "trust this minisign public key (the RW... line, or a .pub "
            "file)",
            true},
           {"mirror", 0, "URL", "another URL of the same registry", true},
           kJson},
          {"ireepkg registry mirror oci://ghcr.io/acme/iree-plugins "
           "./static-copy --registry-key registry-signing.pub"},
          2,
          2,
          false,
          runRegistryMirror,
      },
      {
          "registry site",
          "[<dir|url>] -o DIR [--registry-key KEY]... [--url URL] "
          "[--index-only] [--json]",
          "write a registry's static web site (search, one page per package)",
          "Reads the registry the way every client does (the snapshot's "
          "signature, expiry and version, every index file's hash) and "
          "writes a self-contained static web site into DIR: index.html with "
          "search and filters (platform, kind, IREE version) over a prebuilt "
          "index, all.html, and packages/<name>.html with every version "
          "(yanked ones marked), dependencies and dependents, requires.iree, "
          "each compiler plugin's options, hooks, runtime plugins and their "
          "imports, size, SHA-256, the signing key, install snippets and the "
          "package's README. No server-side code and nothing loaded from "
          "elsewhere: it works from file:// and from any web server.\n\n"
          "The details only a manifest holds come from the newest version's "
          "archive, checked against the size and SHA-256 of its index entry "
          "(a remote registry's archives are downloaded into the cache). "
          "Text from packages is escaped; a README is rendered from Markdown "
          "without raw HTML. <dir|url> defaults to the current directory; a "
          "directory given without --registry-key is checked with the keys "
          "of its own config.json, as publish does. DIR must be new, empty, "
          "or a site written before: it is updated in place (files that "
          "differ are replaced, each atomically; other files removed).",
          {{"output", 'o', "DIR", "the directory to write the site to"},
           {"registry-key", 0, "KEY",
            "trust this minisign public key (the RW... line, or a .pub "
            "file)",
            true},
           {"mirror", 0, "URL", "another URL of the same registry", true},
           {"url", 0, "URL",
            "the URL users reach the registry at, for install snippets and "
            "archive links (default: the registry as given; a directory as "
            "a file:// URL)"},
           {"index-only", 0, "",
            "read no archive: show only what the index files hold"},
           {"offline", 0, "",
            "open no network connection (a remote registry's archives must "
            "be in the cache)"},
           kJson},
          {"ireepkg registry site ./registry -o ./registry/site --url "
           "https://plugins.example.org/iree",
           "ireepkg registry site https://plugins.example.org/iree "
           "--registry-key RWQ... -o site"},
          0,
          1,
          false,
          runRegistrySite,
      },
      {
          "registry add",
          "<name> <url|dir> [--registry-key KEY] [--mirror URL]... [--json]",
          "add a registry to the project's plugins.json",
          "Appends {\"name\", \"url\", \"public_key\"} (and \"mirrors\") to "
          "\"registries\" of the plugins.json of the current directory or "
          "the nearest one above it (or --project). Every other byte of the "
          "file stays as it was, the plugins included. <url|dir> is an "
          "https:// or file:// URL, or a directory relative to plugins.json. "
          "A name that is there already is refused. Without --registry-key "
          "the registry has no trusted key, and ireepkg refuses to use it "
          "until one is written.",
          {{"registry-key", 0, "KEY",
            "the registry's minisign public key (its base64 line or .pub "
            "file)"},
           {"mirror", 0, "URL", "another URL serving the same registry", true},
           kOptProject,
           kJson},
          {"ireepkg registry add default https://plugins.example.org/iree "
           "--registry-key RWQ...",
           "ireepkg registry add local ./registry --registry-key "
           "registry-signing.pub"},
          2,
          2,
          false,
          runRegistryAdd,
      },
      {
          "registry remove",
          "<name>... [--json]",
          "remove registries from the project's plugins.json",
          "Removes each named registry from \"registries\"; every other "
          "byte of the file stays as it was. A registry that a plugin names "
          "in its \"registry\" is not removed (the error names the plugin). "
          "If any name is not there, nothing changes.",
          {kOptProject, kJson},
          {"ireepkg registry remove staging"},
          1,
          -1,
          false,
          runRegistryRemove,
      },
      {
          "registry list",
          "[--json]",
          "list the registries of the project's plugins.json",
          "Prints each registry of the project with its URL, its mirrors "
          "and whether it has a trusted public key.",
          {kOptProject, kJson},
          {"ireepkg registry list", "ireepkg registry list --json"},
          0,
          0,
          false,
          runRegistryList,
      },
      {
          "cache dir",
          "[--json]",
          "print where the package cache is",
          "Prints the cache directory: $IREEPKG_CACHE_DIR, else "
          "$XDG_CACHE_HOME/ireepkg, else ~/.cache/ireepkg. With --json, also "
          "the number of files and bytes in each of its parts.",
          {kJson},
          {"ireepkg cache dir"},
          0,
          0,
          false,
          runCacheDir,
      },
      {
          "cache clean",
          "[<name>...] [--json]",
          "empty the package cache, or drop packages' downloaded archives",
          "Without names, removes everything in the cache: installed-file "
          "blobs, archives seen before, downloaded archives, registry "
          "metadata, extracted bundles, inspection results. With names, "
          "removes only the downloaded archives of those packages (every "
          "version). Prints the number of files and bytes removed. Installed "
          "prefixes are not affected: their files are links or copies; the "
          "next install or sync fetches or extracts again what it needs. "
          "Only the cache's own files go: a directory that holds anything "
          "else at its top level (a home directory given by mistake) is "
          "refused, and nothing is removed.",
          {kJson},
          {"ireepkg cache clean", "ireepkg cache clean simple-mul"},
          0,
          -1,
          false,
          runCacheClean,
      },
      {
          "cache prune",
          "[--json]",
          "remove what nothing uses from the package cache",
          "Removes every partial download or staging file whose process is "
          "gone (`*.part-<pid>-*`, `*.tmp-<pid>` in downloads/, "
          "registries/<id>/http/ and bundles/; a `*.part-<random>` without "
          "a process id once it is an hour old); every installed-file blob "
          "that no prefix hard-links (its link count is 1), with its "
          "\"verified\" markers, and markers of blobs that changed; and, when "
          "blobs were removed, the records of archives seen before (they "
          "promise blobs that may be gone). Where the cache places files by "
          "reflink or copy, the link count cannot tell, and every blob goes: "
          "the next install of such a package extracts its archive again. "
          "Downloaded archives, registry metadata and extracted bundles are "
          "kept (a lockfile may need them offline; `cache clean` removes "
          "them). Prints the number of files and bytes removed. Refuses a "
          "directory that is not an ireepkg cache, as `cache clean` does.",
          {kJson},
          {"ireepkg cache prune"},
          0,
          0,
          false,
          runCachePrune,
      },
      {
          "config list",
          "[--json]",
          "show every configuration value and where it comes from",
          "Prints each key of config.toml with the value this run uses and "
          "where that comes from: a flag (--color, --offline), an "
          "environment variable, a file (file:line:column), or the default. "
          "The files are read in this order, each overriding the one "
          "before: /etc/ireepkg/config.toml, then $XDG_CONFIG_HOME/ireepkg/"
          "config.toml (default ~/.config/ireepkg/config.toml) or, instead, "
          "the file $IREEPKG_CONFIG_FILE names. Environment variables and "
          "flags override every file.\n\n"
          "Keys (all at the top of the file): registry and registry-key "
          "(the registry for install and search when neither --registry, "
          "IREEPKG_REGISTRY nor a project names one), cache-dir "
          "(IREEPKG_CACHE_DIR), prefix (the prefix outside projects, below "
          "--prefix and IREEPKG_PREFIX), parallel-downloads "
          "(IREEPKG_PARALLEL_DOWNLOADS, 1 to 256), color (auto, always, "
          "never), offline (true or false; IREEPKG_OFFLINE) and load-checks "
          "(true or false; IREEPKG_LOAD_CHECKS, --no-load-checks). A relative "
          "path in a file is relative to the file's directory. A file that "
          "is not TOML, an unknown key or a value of the wrong type stops "
          "every command (but help and version) with file:line:column.",
          {kJson},
          {"ireepkg config list", "ireepkg config list --json"},
          0,
          0,
          false,
          runConfigList,
      },
      {
          "config get",
          "<key> [--show-origin] [--json]",
          "print one configuration value",
          "Prints the value this run uses for <key> (see `ireepkg config "
          "list`). Exit status 1, printing nothing, when the key is not set "
          "anywhere and has no default (registry, registry-key), as `git "
          "config` does.",
          {{"show-origin", 0, "", "also print where the value comes from, "
                                  "on stderr"},
           kJson},
          {"ireepkg config get cache-dir"},
          1,
          1,
          false,
          runConfigGet,
      },
      {
          "config set",
          "<key> <value> [--system]",
          "set a value in the user's (or the system's) config.toml",
          "Writes `<key> = <value>` into the user's config.toml "
          "($IREEPKG_CONFIG_FILE, else $XDG_CONFIG_HOME/ireepkg/config.toml, "
          "else ~/.config/ireepkg/config.toml), or /etc/ireepkg/config.toml "
          "with --system, creating the file and its directory if needed. The "
          "line that sets the key is replaced; every other line, comments "
          "included, stays as it was. The value is checked first: a path or "
          "text, true or false for offline, a number from 1 to 256 for "
          "parallel-downloads, auto, always or never for color.",
          {{"system", 0, "", "write /etc/ireepkg/config.toml"}},
          {"ireepkg config set offline true",
           "ireepkg config set registry https://plugins.example.org/iree",
           "ireepkg config set --system parallel-downloads 8"},
          2,
          2,
          false,
          runConfigSet,
      },
      {
          "config unset",
          "<key> [--system]",
          "remove a value from the user's (or the system's) config.toml",
          "Removes the line that sets <key>; every other line stays as it "
          "was. Nothing changes when no line sets it.",
          {{"system", 0, "", "change /etc/ireepkg/config.toml"}},
          {"ireepkg config unset offline"},
          1,
          1,
          false,
          runConfigUnset,
      },
      {
          "completion",
          "bash|zsh|fish|powershell",
          "print a shell completion script",
          "Prints a script that completes ireepkg's commands, options, the "
          "values of options that take a fixed set (--color, --format, "
          "--kind, --shell, ...), files and directories where an option "
          "takes one, and installed package names where a command takes "
          "them (through `ireepkg list --names`). It is generated from the "
          "same table as `--help`. Load it with `source <(ireepkg completion "
          "bash)` (or save it as "
          "/usr/share/bash-completion/completions/ireepkg), `ireepkg "
          "completion zsh > \"${fpath[1]}/_ireepkg\"` (the zsh script "
          "uses zsh's bashcompinit), `ireepkg completion fish > "
          "~/.config/fish/completions/ireepkg.fish`, or `ireepkg "
          "completion powershell | Out-String | Invoke-Expression`.",
          {},
          {"source <(ireepkg completion bash)",
           "ireepkg completion fish > ~/.config/fish/completions/ireepkg.fish"},
          1,
          1,
          false,
          runCompletion,
      },
  };
  return table;
}

} // namespace ireepkg::cli
