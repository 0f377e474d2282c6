//===- cli/commands/command.h - The ireepkg command table -------*- C++ -*-===//
//
// Every CLI command is one Command, defined with its implementation in its
// own cmd_<name>.cpp file; one table (commands.cpp) lists them in order. A
// Command's metadata drives argument parsing, `--help`, `ireepkg help`, the
// completion scripts and "did you mean" suggestions.
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
  std::string name;       ///< "install", or "manifest check" for sub-commands
  std::string synopsis{}; ///< "<archive>... [--prefix DIR]"
  std::string summary;    ///< one line for `ireepkg help`
  std::string description{}; ///< paragraphs for `--help`
  std::vector<OptionSpec> options{};
  std::vector<std::string> examples{};
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

// Each command, defined with its metadata in its own file (cmd_<name>.cpp);
// commandTable() lists them in order.
const Command &helpCommand();
const Command &versionCommand();
const Command &manifestCheckCommand();
const Command &packCommand();
const Command &initCommand();
const Command &addCommand();
const Command &rmCommand();
const Command &installCommand();
const Command &lockCommand();
const Command &syncCommand();
const Command &updateCommand();
const Command &outdatedCommand();
const Command &searchCommand();
const Command &bundleCreateCommand();
const Command &removeCommand();
const Command &listCommand();
const Command &treeCommand();
const Command &whyCommand();
const Command &infoCommand();
const Command &verifyCommand();
const Command &fatelfJoinCommand();
const Command &fatelfSplitCommand();
const Command &fatelfSelectCommand();
const Command &fatelfDumpCommand();
const Command &flagsCommand();
const Command &envCommand();
const Command &execCommand();
const Command &newCommand();
const Command &testCommand();
const Command &doctorCommand();
const Command &keyGenerateCommand();
const Command &signCommand();
const Command &signatureVerifyCommand();
const Command &registryInitCommand();
const Command &publishCommand();
const Command &yankCommand();
const Command &registryAddExistingCommand();
const Command &registryResignCommand();
const Command &registryVerifyCommand();
const Command &registryMirrorCommand();
const Command &registrySiteCommand();
const Command &registryAddCommand();
const Command &registryRemoveCommand();
const Command &registryListCommand();
const Command &cacheDirCommand();
const Command &cacheCleanCommand();
const Command &cachePruneCommand();
const Command &configListCommand();
const Command &configGetCommand();
const Command &configSetCommand();
const Command &configUnsetCommand();
const Command &completionCommand();

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_COMMAND_H
