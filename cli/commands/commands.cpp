//===- cli/commands/commands.cpp - The ireepkg command table --------------===//
//
// The order of the commands (as `ireepkg help` lists them), aliases, and the
// values options take for shell completion. Each
// command's metadata is in its own file. Adding a command: write
// cmd_<name>.cpp with its run function and its Command, declare the
// Command's function in command.h, and list it here.
//
//===----------------------------------------------------------------------===//
#include "commands/command.h"
#include "args/global_options.h"

#include <algorithm>

namespace ireepkg::cli {

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

const std::vector<Command> &commandTable() {
  static const std::vector<Command> table = {
      helpCommand(),
      versionCommand(),
      manifestCheckCommand(),
      packCommand(),
      initCommand(),
      addCommand(),
      rmCommand(),
      installCommand(),
      lockCommand(),
      syncCommand(),
      updateCommand(),
      outdatedCommand(),
      searchCommand(),
      bundleCreateCommand(),
      removeCommand(),
      listCommand(),
      treeCommand(),
      whyCommand(),
      infoCommand(),
      verifyCommand(),
      fatelfJoinCommand(),
      fatelfSplitCommand(),
      fatelfSelectCommand(),
      fatelfDumpCommand(),
      flagsCommand(),
      envCommand(),
      execCommand(),
      newCommand(),
      testCommand(),
      doctorCommand(),
      keyGenerateCommand(),
      signCommand(),
      signatureVerifyCommand(),
      registryInitCommand(),
      publishCommand(),
      yankCommand(),
      registryAddExistingCommand(),
      registryResignCommand(),
      registryVerifyCommand(),
      registryMirrorCommand(),
      registrySiteCommand(),
      registryAddCommand(),
      registryRemoveCommand(),
      registryListCommand(),
      cacheDirCommand(),
      cacheCleanCommand(),
      cachePruneCommand(),
      configListCommand(),
      configGetCommand(),
      configSetCommand(),
      configUnsetCommand(),
      completionCommand(),
  };
  return table;
}

} // namespace ireepkg::cli
