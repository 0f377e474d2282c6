//===- cmd_config.cpp - `ireepkg config list|get|set|unset` --------------===//
#include "cli_config.h"
#include "output.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/base/child_process.h"

#include <cstdio>
#include <cstdlib>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);

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

} // namespace ireepkg::cli
