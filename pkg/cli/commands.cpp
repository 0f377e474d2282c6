//===- commands.cpp - The ireepkg command table --------------------------===//
//
// The one table of commands. Adding a command: write cmd_<name>.cpp with its
// run function, declare it in command.h, add its entry here.
//
//===----------------------------------------------------------------------===//
#include "command.h"

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
          "\"fat\").",
          {{"output", 'o', "DIR", "where to write the archive (default: .)"},
           {"fatelf", 0, "",
            "join each embedded-elf plugin's per-architecture files into a "
            "FatELF .sos in the package"},
           kJson},
          {"ireepkg pack examples/simple-mul -o dist/"},
          1,
          1,
          false,
          runPack,
      },
      {
          "install",
          "<archive>... [--prefix DIR] [--platform OS-ARCH]",
          "install package archives into a prefix, in one transaction",
          "Verifies each archive (member rules, RECORD hashes and sizes, the "
          "manifest), checks that the package supports the target platform, "
          "resolves dependencies among the given archives and what is "
          "already installed, checks the incoming hook pass pipelines with "
          "MLIR's own parser and the MLIR pass plugins of the prefix as it "
          "will be, and installs everything in one transaction: "
          "it completes, or the prefix is left exactly as it was. The "
          "prefix's activation index and IREE flagfiles are rewritten in "
          "the same transaction.",
          {kPrefix,
           {"platform", 0, "OS-ARCH",
            "install for this platform instead of the host's"},
           kLockTimeout,
           {"no-cache", 0, "", "do not use or fill the package cache"},
           kQuiet,
           kJson},
          {"ireepkg install simple-mul-1.2.0.ireepkg",
           "ireepkg install --prefix /opt/iree-plugins *.ireepkg"},
          1,
          -1,
          false,
          runInstall,
      },
      {
          "remove",
          "<name>... [--cascade] [--prefix DIR]",
          "remove installed packages, in one transaction",
          "Removes the named packages. A package that another installed "
          "package depends on is not removed (the error names the "
          "dependent) unless --cascade, which also removes the dependents.",
          {{"cascade", 0, "", "also remove the packages that depend on them"},
           kPrefix,
           kLockTimeout,
           kQuiet,
           kJson},
          {"ireepkg remove simple-mul", "ireepkg remove --cascade simple-mul"},
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
          "installed explicitly or as a dependency, and what it provides.",
          {kPrefix, kJson},
          {"ireepkg list", "ireepkg list --json"},
          0,
          0,
          false,
          runList,
      },
      {
          "info",
          "<name|archive> [--prefix DIR] [--json]",
          "show everything about an installed package or an archive",
          "Shows version, platforms, compiler plugins with their options and "
          "defaults, hooks, runtime plugins with formats and imports, "
          "dependencies, installed size and location, and whether it was "
          "installed explicitly or pulled in as a dependency.",
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
          "or extra file. Exit status 1 if anything is off.",
          {kPrefix, kJson},
          {"ireepkg verify", "ireepkg verify simple-mul --json"},
          0,
          -1,
          false,
          runVerify,
      },
      {
          "fatelf join",
          "<elf>... -o <out.sos>",
          "join per-architecture ELF files into one FatELF .sos",
          "Writes IREE's FatELF v1 layout: header, one record per input, "
          "then the images, page-aligned. IREE's runtime loads the record "
          "that matches the host.",
          {{"output", 'o', "FILE", "the .sos file to write"}},
          {"ireepkg fatelf join -o plugin.sos plugin.x86_64.so "
           "plugin.aarch64.so"},
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
          "<file.sos> [--arch ARCH] -o <out>",
          "extract the image IREE would load on an architecture",
          "Applies the runtime's selection rule (machine, OS ABI, word size, "
          "byte order) for the host, or for --arch.",
          {{"arch", 0, "ARCH", "select for this architecture (default: host)"},
           {"output", 'o', "FILE", "the ELF file to write"}},
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
          "runtime|compiler [--format args|flagfile|json] [--platform OS-ARCH]",
          "print the IREE flags that activate the prefix's plugins",
          "`flags runtime` prints one --executable_plugin= per runtime plugin "
          "of the prefix, in activation order (IREE checks the last one "
          "first, so later packages override earlier ones), for the host or "
          "for --platform. `flags compiler` prints the compiler flags of the "
          "active compiler plugins and hooks. Read-only and fast: it reads "
          "the prefix's precomputed activation index and nothing else.",
          {{"format", 0, "FORMAT",
            "args (one flag per line, the default), flagfile (with a "
            "comment header, for --flagfile=) or json"},
           {"platform", 0, "OS-ARCH",
            "the target (default: the host); runtime only"},
           {"tool", 0, "TOOL",
            "compiler only: iree-compile (default), iree-opt or mlir-opt"},
           {"set", 0, "FLAG=VALUE",
            "compiler only: set a plugin option (checked against its "
            "schema)",
            true},
           {"check-files", 0, "", "runtime only: fail if a listed file is "
                                  "missing"},
           kPrefix},
          {"ireepkg flags runtime", "ireepkg flags runtime --format json",
           "ireepkg flags runtime --platform linux-aarch64"},
          1,
          1,
          false,
          runFlags,
      },
      {
          "env",
          "[--shell sh|fish|pwsh]",
          "print shell commands that point IREE at the prefix's plugins",
          "Prints exports for the current prefix: IREEPKG_PREFIX, and "
          "IREE_PY_RUNTIME_FLAGS holding the runtime flags, so that Python's "
          "iree.runtime picks the plugins up when it is imported. Apply them "
          "with `eval \"$(ireepkg env)\"` (sh, bash, zsh), `ireepkg env "
          "--shell fish | source`, or `ireepkg env --shell pwsh | "
          "Invoke-Expression`.",
          {{"shell", 0, "SHELL", "sh (default), fish or pwsh"}, kPrefix},
          {"eval \"$(ireepkg env)\""},
          0,
          0,
          false,
          runEnv,
      },
      {
          "exec",
          "[--prefix DIR] -- <tool> [<args>...]",
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
          "mlir-opt-22. The tool is found on PATH, then in the active Python "
          "virtual environment.",
          {kPrefix},
          {"ireepkg exec -- iree-run-module --device=local-sync "
           "--module=m.vmfb --function=main --input=4xf32=1"},
          0,
          0,
          true,
          runExec,
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
          "crashing plugin cannot crash doctor. Exit status 1 if any plugin "
          "has a problem.",
          {kPrefix, kJson},
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
  };
  return table;
}

} // namespace ireepkg::cli
