//===- cli/args/registry_args.h - Registry and network options --*- C++ -*-===//
//
// What the commands that read registries share: --registry/--registry-key
// (and IREEPKG_REGISTRY / IREEPKG_REGISTRY_KEY), --offline
// (IREEPKG_OFFLINE=1), --iree-version, --bundle, and finding the project.
// Each function prints its own usage error and returns nullopt on failure.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_REGISTRY_ARGS_H
#define IREEPKG_CLI_REGISTRY_ARGS_H

#include "commands/command.h"
#include "ireepkg/workflow/workflow.h"

#include <optional>
#include <vector>

namespace ireepkg::cli {

extern const OptionSpec kOptRegistry;
extern const OptionSpec kOptRegistryKey;
extern const OptionSpec kOptOffline;
extern const OptionSpec kOptIreeVersion;
extern const OptionSpec kOptIgnoreIreeVersion;
extern const OptionSpec kOptProject;

std::optional<workflow::Environment> environmentFrom(const ParsedArgs &args);
/// The network limits people may change through the environment
/// (IREEPKG_LOW_SPEED_LIMIT, IREEPKG_LOW_SPEED_TIME, IREEPKG_DOWNLOAD_TIMEOUT,
/// IREEPKG_RETRY_AFTER_MAX); prints an error and returns false for a value
/// that is not a number.
bool networkSettingsFromEnvironment(net::FetchOptions &fetch);

/// --project FILE (or DIR holding plugins.json), else the plugins.json found
/// upward from here.
std::optional<workflow::Project> projectFrom(const ParsedArgs &args);

/// What a project command works with: the project and the environment.
struct ProjectContext {
  workflow::Project project;
  workflow::Environment env;
};
/// projectFrom() and environmentFrom() together.
std::optional<ProjectContext> projectContext(const ParsedArgs &args);

/// The prefix a project's commands change: --prefix or IREEPKG_PREFIX, else
/// <project>/.iree-plugins.
std::optional<std::string> projectPrefix(const ParsedArgs &args,
                                         const workflow::Project &project);

/// --registry (with --registry-key), else the environment variables, else
/// the project's registries (when `project` is given).
std::vector<registry::RegistrySpec>
registriesFrom(const ParsedArgs &args, const workflow::Project *project);

/// The registry at `url` as a registry command names it, outside any
/// project: no name, --registry-key and --mirror from the command line.
registry::RegistrySpec standaloneRegistry(const ParsedArgs &args,
                                          const std::string &url);

/// One line per lock change: "+ name 1.0.0", "~ name 1.0.0 -> 1.1.0".
void printLockChanges(const std::vector<workflow::LockChange> &changes);
nlohmann::json lockChangesToJson(const std::vector<workflow::LockChange> &c);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_REGISTRY_ARGS_H
