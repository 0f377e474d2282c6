//===- cli/args/cli_config.h - config.toml in the CLI -----------*- C++ -*-===//
//
// Reads the configuration files once (before the command runs) and answers
// the commands' questions about them. Precedence, highest first: a flag,
// the environment variable, the user's file (or $IREEPKG_CONFIG_FILE), the
// system file, the built-in default.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_CLI_CONFIG_H
#define IREEPKG_CLI_CLI_CONFIG_H

#include "ireepkg/pkg/project/user_config.h"

#include <optional>
#include <string>
#include <vector>

namespace ireepkg::cli {

/// Reads the files; on an error prints it and returns false. Then applies
/// what works through the environment: cache-dir becomes IREEPKG_CACHE_DIR
/// when that is unset.
bool loadCliConfig();

/// The files read (lowest precedence first); empty before loadCliConfig().
const std::vector<config::ConfigFile> &cliConfigFiles();

/// The value of `key` in the files, or nullptr.
const config::Setting *configSetting(const std::string &key);

/// "file:line:column" of a setting.
std::string settingWhere(const config::Setting &s);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_CLI_CONFIG_H
