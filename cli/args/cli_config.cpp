//===- cli/args/cli_config.cpp - config.toml in the CLI -------------------===//
#include "args/cli_config.h"

#include "commands/command.h"
#include "output/output.h"

#include "ireepkg/base/environment.h"

#include <cstdlib>

namespace ireepkg::cli {

namespace {
std::vector<config::ConfigFile> &files() {
  static std::vector<config::ConfigFile> f;
  return f;
}
} // namespace

bool loadCliConfig() {
  auto read = config::readConfig();
  if (!read) {
    printError(read.error());
    return false;
  }
  files() = std::move(*read);
  for (const config::ConfigFile &f : files()) {
    if (!f.ignored.empty())
      printWarning(f.path + ": not used: " + f.ignored);
    if (!f.settings.empty())
      verboseLine(1, "configuration: " + f.path);
  }
  // The cache is opened in many places, all through IREEPKG_CACHE_DIR.
  if (const config::Setting *s = configSetting("cache-dir")) {
    const char *env = environmentOverride("IREEPKG_CACHE_DIR");
    if (!(env && *env))
      ::setenv("IREEPKG_CACHE_DIR", s->value.c_str(), 1);
  }
  // So are the load checks, through IREEPKG_LOAD_CHECKS (which
  // --no-load-checks has set already when given).
  if (const config::Setting *s = configSetting("load-checks")) {
    const char *env = environmentOverride("IREEPKG_LOAD_CHECKS");
    if (!(env && *env))
      ::setenv("IREEPKG_LOAD_CHECKS", s->value == "false" ? "0" : "1", 1);
  }
  return true;
}

const std::vector<config::ConfigFile> &cliConfigFiles() { return files(); }

const config::Setting *configSetting(const std::string &key) {
  return config::lookup(files(), key);
}

std::string settingWhere(const config::Setting &s) {
  return s.where.file + ":" + std::to_string(s.where.line) + ":" +
         std::to_string(s.where.column);
}

} // namespace ireepkg::cli
