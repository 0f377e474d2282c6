//===- cli/commands/cmd_config.cpp - `ireepkg config list|get|set|unset` --===//
#include "args/cli_config.h"
#include "commands/options.h"
#include "output/output.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/base/child_process.h"

#include <cstdio>
#include <cstdlib>

namespace ireepkg::cli {

namespace {

struct Effective {
  std::optional<std::string> value; ///< nullopt: not set
  std::string source;               ///< "flag", "env", "file", "default"
  std::string where; ///< "--offline", "IREEPKG_OFFLINE", "file:line:col", ""
};

std::string defaultCacheDir() {
  if (const char *x = environmentOverride("XDG_CACHE_HOME"); x && x[0] == '/')
    return std::string(x) + "/ireepkg";
  if (auto home = homeDirectory())
    return *home + "/.cache/ireepkg";
  return {};
}

std::string defaultPrefix() {
  if (const char *x = environmentOverride("XDG_DATA_HOME"); x && x[0] == '/')
    return std::string(x) + "/ireepkg";
  if (auto home = homeDirectory())
    return *home + "/.local/share/ireepkg";
  return {};
}

/// The value a key has for this run, and where it comes from.
Effective effective(const config::KeySpec &k) {
  const GlobalOptions &g = globalOptions();
  if (k.name == "color") {
    if (g.colorSource == "--color" || g.colorSource == "FORCE_COLOR" ||
        g.colorSource == "CLICOLOR_FORCE" || g.colorSource == "NO_COLOR") {
      const char *v = g.color == ColorMode::Always   ? "always"
                      : g.color == ColorMode::Never ? "never"
                                                    : "auto";
      return {v, g.colorSource == "--color" ? "flag" : "env", g.colorSource};
    }
  } else if (k.name == "offline" && g.offline) {
    return {"true", "flag", "--offline"};
  } else if (k.name == "load-checks" && g.noLoadChecks) {
    return {"false", "flag", "--no-load-checks"};
  } else if (!k.environment.empty()) {
    const char *v = environmentOverride(k.environment.c_str());
    if (v && *v) {
      std::string value = v;
      if (k.name == "offline")
        value = value == "0" ? "false" : "true";
      if (k.name == "load-checks") {
        auto on = loadChecksEnabled();
        value = on && !*on ? "false" : "true";
      }
      // cache-dir and load-checks from a file are passed on in the
      // environment: they are still the file's.
      const config::Setting *s = configSetting(k.name);
      if (!((k.name == "cache-dir" || k.name == "load-checks") && s &&
            s->value == value))
        return {value, "env", k.environment};
    }
  }
  if (const config::Setting *s = configSetting(k.name))
    return {s->value, "file", settingWhere(*s)};
  if (k.name == "cache-dir")
    return {defaultCacheDir(), "default", ""};
  if (k.name == "prefix")
    return {defaultPrefix(), "default", ""};
  if (k.name == "parallel-downloads")
    return {"50", "default", ""};
  if (k.name == "color")
    return {"auto", "default", ""};
  if (k.name == "offline")
    return {"false", "default", ""};
  if (k.name == "load-checks")
    return {"true", "default", ""};
  return {std::nullopt, "default", ""};
}

int unknownKey(const std::string &key) {
  std::vector<std::string> names;
  for (const config::KeySpec &k : config::keys())
    names.push_back(k.name);
  std::string all;
  for (const std::string &n : names)
    all += (all.empty() ? "" : ", ") + n;
  printError("unknown key '" + key + "'" +
                 didYouMean(key, std::span<const std::string>(names)),
             "the keys are " + all);
  return kExitUsage;
}

/// The file `set` and `unset` change: --file, --system, else the user's.
std::optional<std::string> targetFile(const ParsedArgs &args) {
  if (args.flag("system"))
    return std::string(config::kSystemConfigPath);
  auto user = config::userConfigPath();
  if (!user) {
    printError(user.error());
    return std::nullopt;
  }
  return *user;
}

/// The JSON of a key's value and origin, for `list` and `get`.
nlohmann::json effectiveJson(const std::string &key, const Effective &e) {
  return {
      {"key", key},
      {"value", e.value ? nlohmann::json(*e.value) : nlohmann::json()},
      {"source", e.source},
      {"where", e.where.empty() ? nlohmann::json() : nlohmann::json(e.where)}};
}

/// Where a value comes from, in words: "default", "env IREEPKG_OFFLINE".
std::string originText(const Effective &e) {
  return e.source == "default" ? "default" : e.source + " " + e.where;
}

/// What `set` and `unset` start with: the key, checked, and the file to
/// change. nullopt after printing the error; `status` is the exit status.
std::optional<std::string> fileToChange(const ParsedArgs &args, int &status) {
  const std::string &key = args.positional[0];
  if (!config::findKey(key)) {
    status = unknownKey(key);
    return std::nullopt;
  }
  auto file = targetFile(args);
  if (!file)
    status = kExitFailure;
  return file;
}

} // namespace

int runConfigList(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  if (json) {
    nlohmann::json files = nlohmann::json::array();
    for (const config::ConfigFile &f : cliConfigFiles()) {
      std::error_code ec;
      files.push_back({{"path", f.path},
                       {"exists", std::filesystem::exists(f.path, ec)}});
    }
    nlohmann::json list = nlohmann::json::array();
    for (const config::KeySpec &k : config::keys())
      list.push_back(effectiveJson(k.name, effective(k)));
    std::printf(
        "%s\n",
        nlohmann::json({{"files", files}, {"settings", list}}).dump(2).c_str());
    return kExitOk;
  }
  for (const config::KeySpec &k : config::keys()) {
    Effective e = effective(k);
    std::printf("%s = %s  (%s)\n", k.name.c_str(),
                e.value ? e.value->c_str() : "(not set)",
                originText(e).c_str());
  }
  return kExitOk;
}

int runConfigGet(const Command &, const ParsedArgs &args) {
  const std::string &key = args.positional[0];
  const config::KeySpec *k = config::findKey(key);
  if (!k)
    return unknownKey(key);
  Effective e = effective(*k);
  if (args.flag("json")) {
    std::printf("%s\n", effectiveJson(key, e).dump(2).c_str());
    return e.value ? kExitOk : kExitFailure;
  }
  if (!e.value)
    return kExitFailure; // not set: nothing to print, as `git config`
  std::printf("%s\n", e.value->c_str());
  if (args.flag("show-origin"))
    std::fprintf(stderr, "%s\n", originText(e).c_str());
  return kExitOk;
}

int runConfigSet(const Command &, const ParsedArgs &args) {
  const std::string &key = args.positional[0];
  int status = kExitOk;
  auto file = fileToChange(args, status);
  if (!file)
    return status;
  Status s = config::setValue(*file, key, args.positional[1]);
  if (!s) {
    printError(s.error());
    return s.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
  }
  if (!globalOptions().quiet)
    std::printf("%s = %s in %s\n", key.c_str(), args.positional[1].c_str(),
                file->c_str());
  return kExitOk;
}

int runConfigUnset(const Command &, const ParsedArgs &args) {
  const std::string &key = args.positional[0];
  int status = kExitOk;
  auto file = fileToChange(args, status);
  if (!file)
    return status;
  Status s = config::unsetValue(*file, key);
  if (!s) {
    printError(s.error());
    return kExitFailure;
  }
  return kExitOk;
}

const Command &configListCommand() {
  static const Command command{
      .name = "config list",
      .synopsis = "[--json]",
      .summary = "show every configuration value and where it comes from",
      .description =
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
      .options = {kJson},
      .examples = {"ireepkg config list", "ireepkg config list --json"},
      .maxPositional = 0,
      .run = runConfigList,
  };
  return command;
}

const Command &configGetCommand() {
  static const Command command{
      .name = "config get",
      .synopsis = "<key> [--show-origin] [--json]",
      .summary = "print one configuration value",
      .description =
          "Prints the value this run uses for <key> (see `ireepkg config "
          "list`). Exit status 1, printing nothing, when the key is not set "
          "anywhere and has no default (registry, registry-key), as `git "
          "config` does.",
      .options = {{"show-origin", 0, "",
                   "also print where the value comes from, "
                   "on stderr"},
                  kJson},
      .examples = {"ireepkg config get cache-dir"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runConfigGet,
  };
  return command;
}

const Command &configSetCommand() {
  static const Command command{
      .name = "config set",
      .synopsis = "<key> <value> [--system]",
      .summary = "set a value in the user's (or the system's) config.toml",
      .description =
          "Writes `<key> = <value>` into the user's config.toml "
          "($IREEPKG_CONFIG_FILE, else $XDG_CONFIG_HOME/ireepkg/config.toml, "
          "else ~/.config/ireepkg/config.toml), or /etc/ireepkg/config.toml "
          "with --system, creating the file and its directory if needed. The "
          "line that sets the key is replaced; every other line, comments "
          "included, stays as it was. The value is checked first: a path or "
          "text, true or false for offline, a number from 1 to 256 for "
          "parallel-downloads, auto, always or never for color.",
      .options = {{"system", 0, "", "write /etc/ireepkg/config.toml"}},
      .examples =
          {"ireepkg config set offline true",
           "ireepkg config set registry https://plugins.example.org/iree",
           "ireepkg config set --system parallel-downloads 8"},
      .minPositional = 2,
      .maxPositional = 2,
      .run = runConfigSet,
  };
  return command;
}

const Command &configUnsetCommand() {
  static const Command command{
      .name = "config unset",
      .synopsis = "<key> [--system]",
      .summary = "remove a value from the user's (or the system's) config.toml",
      .description =
          "Removes the line that sets <key>; every other line stays as it "
          "was. Nothing changes when no line sets it.",
      .options = {{"system", 0, "", "change /etc/ireepkg/config.toml"}},
      .examples = {"ireepkg config unset offline"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runConfigUnset,
  };
  return command;
}

} // namespace ireepkg::cli
