//===- ireepkg/pkg/project/user_config.h - config.toml ----------*- C++ -*-===//
//
// ireepkg's configuration files, in TOML: /etc/ireepkg/config.toml for the
// system, then $XDG_CONFIG_HOME/ireepkg/config.toml (default
// ~/.config/ireepkg/config.toml) for the user, or the file
// $IREEPKG_CONFIG_FILE names instead of the user's. A later file overrides
// an earlier one; environment variables and flags override both (the CLI
// applies that order). A privileged run (set-user-ID) reads only the
// system file. A file that a user other than the current one and root
// owns, or that its group or others may write, is not used.
//
// Every key is a top-level key; an unknown key or a value of the wrong type
// is an error with file:line:column, as is a file that is not TOML.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_USER_CONFIG_H
#define IREEPKG_USER_CONFIG_H

#include "ireepkg/base/error.h"

#include <optional>
#include <string>
#include <vector>

namespace ireepkg::config {

enum class ValueType { String, Path, Bool, Integer, Color };

/// One key a config file may set.
struct KeySpec {
  std::string name;        ///< "cache-dir"
  ValueType type;
  std::string environment; ///< the variable that overrides it, "" if none
  std::string flag;        ///< the flag that overrides it, "" if none
  std::string help;
};

/// Every key, in the order `ireepkg config list` shows them.
const std::vector<KeySpec> &keys();
const KeySpec *findKey(const std::string &name);

/// A value read from a file, as text ("true", "8", a path).
struct Setting {
  std::string key;
  std::string value;
  Location where; ///< file, line, column of the value
};

struct ConfigFile {
  std::string path;
  std::vector<Setting> settings;
  /// Set (and `settings` empty) when the file exists but is not used: a
  /// user other than the current one and root owns it, or its group or
  /// others may write it, so that another user could choose the current
  /// user's cache, prefix or registry. Says why, for a warning.
  std::string ignored;
};

/// The files to read, lowest precedence first: the system file, then the
/// user's (or $IREEPKG_CONFIG_FILE). When privileged, only the system file.
/// Files that do not exist are listed too (reading skips them).
std::vector<std::string> configPaths();

/// The user's file: $IREEPKG_CONFIG_FILE, else
/// $XDG_CONFIG_HOME/ireepkg/config.toml, else ~/.config/ireepkg/config.toml.
/// NotFound when there is no home directory.
Expected<std::string> userConfigPath();
inline constexpr const char *kSystemConfigPath = "/etc/ireepkg/config.toml";

/// Reads one file: Parse errors (not TOML) and Invalid ones (unknown key,
/// wrong type) name file:line:column. A missing file reads as empty, and
/// one another user may write as empty with ConfigFile::ignored set.
Expected<ConfigFile> readConfigFile(const std::string &path);

/// Reads every file of configPaths(), lowest precedence first.
Expected<std::vector<ConfigFile>> readConfig();

/// The effective value of `key` over `files` (the last file that sets it).
const Setting *lookup(const std::vector<ConfigFile> &files,
                      const std::string &key);

/// Checks `value` for `key` (Usage error when it does not fit the type) and
/// returns it as the file will hold it (a TOML value: "text" quoted, true,
/// 8).
Expected<std::string> tomlValue(const std::string &key,
                                const std::string &value);

/// Sets `key` to `value` in the file at `path` (created, with its
/// directory, if missing), replacing the line that sets it or adding one
/// before the first table; every other line stays as it was. The file is
/// replaced atomically and must still read back as valid config.
Status setValue(const std::string &path, const std::string &key,
                const std::string &value);

/// Removes the line that sets `key` from `path`; nothing when none does.
Status unsetValue(const std::string &path, const std::string &key);

} // namespace ireepkg::config

#endif // IREEPKG_USER_CONFIG_H
