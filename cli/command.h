//===- command.h - The ireepkg command table -------------------*- C++ -*-===//
//
// Every CLI command is one entry in one table (commands.cpp); the entry's
// metadata drives argument parsing, `--help`, `ireepkg help` and "did you
// mean" suggestions. Each command's implementation lives in its own
// cmd_<name>.cpp file.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_COMMAND_H
#define IREEPKG_CLI_COMMAND_H

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ireepkg::cli {

/// Exit codes shared by every command.
enum ExitCode { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

struct OptionSpec {
  std::string name;      ///< long name without dashes, e.g. "prefix"
  char shortName = 0;    ///< e.g. 'o'
  std::string valueName; ///< empty for flags; e.g. "DIR"
  std::string help;
  bool repeatable = false;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values; ///< option values
  std::map<std::string, int> flags;                       ///< flag counts
  /// Arguments after `--`, untouched.
  std::vector<std::string> passthrough;

  bool flag(const std::string &name) const { return flags.count(name) != 0; }
  std::optional<std::string> value(const std::string &name) const {
    auto it = values.find(name);
    if (it == values.end() || it->second.empty())
      return std::nullopt;
    return it->second.back();
  }
  std::vector<std::string> all(const std::string &name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

struct Command;
using CommandFn = int (*)(const Command &self, const ParsedArgs &args);

struct Command {
  std::string name;     ///< "install", or "manifest check" for sub-commands
  std::string synopsis; ///< "<archive>... [--prefix DIR]"
  std::string summary;  ///< one line for `ireepkg help`
  std::string description; ///< paragraphs for `--help`
  std::vector<OptionSpec> options;
  std::vector<std::string> examples;
  int minPositional = 0;
  int maxPositional = -1; ///< -1 = unbounded
  bool acceptsPassthrough = false; ///< `-- args...`
  CommandFn run = nullptr;
};

/// The table, in the order `ireepkg help` lists it.
const std::vector<Command> &commandTable();

/// The values an option takes, for shell completion (empty: any; a
/// file or directory when its valueName says FILE or DIR).
std::vector<std::string> optionChoices(const Command &command,
                                       const OptionSpec &option);

/// Whether the command's arguments are installed package names (shell
/// completion offers `ireepkg list --names`).
bool takesPackageNames(const Command &command);

/// Other names of commands: {alias, command name}.
const std::vector<std::pair<std::string, std::string>> &commandAliases();

/// Options every command accepts (`--help`; `--json` where it reports).
std::string formatHelp(const Command &command);

/// Prints `ireepkg: error: ...` (and a hint) to stderr.
void printError(const std::string &message, const std::string &hint = {});
/// Prints `ireepkg: warning: ...` to stderr.
void printWarning(const std::string &message);

// Implementations, one per cmd_<name>.cpp.
int runHelp(const Command &, const ParsedArgs &);
int runVersion(const Command &, const ParsedArgs &);
int runManifestCheck(const Command &, const ParsedArgs &);
int runPack(const Command &, const ParsedArgs &);
int runInstall(const Command &, const ParsedArgs &);
int runRemove(const Command &, const ParsedArgs &);
int runList(const Command &, const ParsedArgs &);
int runInfo(const Command &, const ParsedArgs &);
int runVerify(const Command &, const ParsedArgs &);
int runFatelfJoin(const Command &, const ParsedArgs &);
int runFatelfSplit(const Command &, const ParsedArgs &);
int runFatelfSelect(const Command &, const ParsedArgs &);
int runFatelfDump(const Command &, const ParsedArgs &);
int runKeyGenerate(const Command &, const ParsedArgs &);
int runFlags(const Command &, const ParsedArgs &);
int runEnv(const Command &, const ParsedArgs &);
int runExec(const Command &, const ParsedArgs &);
int runDoctor(const Command &, const ParsedArgs &);
int runTest(const Command &, const ParsedArgs &);
int runNew(const Command &, const ParsedArgs &);
int runSign(const Command &, const ParsedArgs &);
int runSignatureVerify(const Command &, const ParsedArgs &);
int runLock(const Command &, const ParsedArgs &);
int runSync(const Command &, const ParsedArgs &);
int runUpdate(const Command &, const ParsedArgs &);
int runOutdated(const Command &, const ParsedArgs &);
int runSearch(const Command &, const ParsedArgs &);
int runBundleCreate(const Command &, const ParsedArgs &);
int runRegistryInit(const Command &, const ParsedArgs &);
int runRegistryResign(const Command &, const ParsedArgs &);
int runRegistryAddExisting(const Command &, const ParsedArgs &);
int runRegistryVerify(const Command &, const ParsedArgs &);
int runRegistryMirror(const Command &, const ParsedArgs &);
int runRegistrySite(const Command &, const ParsedArgs &);
int runPublish(const Command &, const ParsedArgs &);
int runYank(const Command &, const ParsedArgs &);
int runInit(const Command &, const ParsedArgs &);
int runAdd(const Command &, const ParsedArgs &);
int runRm(const Command &, const ParsedArgs &);
int runTree(const Command &, const ParsedArgs &);
int runWhy(const Command &, const ParsedArgs &);
int runCacheDir(const Command &, const ParsedArgs &);
int runCacheClean(const Command &, const ParsedArgs &);
int runCachePrune(const Command &, const ParsedArgs &);
int runConfigList(const Command &, const ParsedArgs &);
int runCompletion(const Command &, const ParsedArgs &);
int runRegistryAdd(const Command &, const ParsedArgs &);
int runRegistryRemove(const Command &, const ParsedArgs &);
int runRegistryList(const Command &, const ParsedArgs &);
int runConfigGet(const Command &, const ParsedArgs &);
int runConfigSet(const Command &, const ParsedArgs &);
int runConfigUnset(const Command &, const ParsedArgs &);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_COMMAND_H
