//===- prefix_args.cpp - The prefix a command acts on, from its arguments -===//
#include "prefix_args.h"

#include "cli_config.h"
#include "messages.h"
#include "reporter.h"

#include <cstdlib>
#include <unistd.h>

namespace ireepkg::cli {

namespace {
int gSetupFailure = kExitFailure;
}
int setupFailure() { return gSetupFailure; }
void setSetupFailure(int code) { gSetupFailure = code; }

std::optional<PrefixLocation> choosePrefix(const ParsedArgs &args) {
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) {
    printError("cannot read the current directory");
    setSetupFailure(kExitFailure);
    return std::nullopt;
  }
  auto loc = locatePrefix(args.value("prefix"), cwd);
  if (!loc) {
    printError(loc.error());
    setSetupFailure(loc.error().code == ErrorCode::Usage ? kExitUsage
                                                         : kExitFailure);
    return std::nullopt;
  }
  // config.toml's prefix: below --prefix, IREEPKG_PREFIX and the project.
  if (loc->reason == "XDG_DATA_HOME" || loc->reason == "default")
    if (const config::Setting *p = configSetting("prefix")) {
      auto configured = locatePrefix(p->value, cwd);
      if (!configured) {
        printError(configured.error());
        setSetupFailure(kExitFailure);
        return std::nullopt;
      }
      loc = std::move(configured);
      loc->reason = settingWhere(*p);
    }
  verboseLine(1, "prefix: " + loc->path + " (from " + loc->reason + ")");
  return *loc;
}

int printFailure(const Error &e, bool json);

std::optional<PrefixState> readPrefixState(const ParsedArgs &args, bool json,
                                           int &exitCode) {
  auto prefix = choosePrefix(args);
  if (!prefix) {
    exitCode = setupFailure();
    return std::nullopt;
  }
  CliReporter reporter(json);
  auto state = readInstalledState(prefix->path, reporter);
  if (!state) {
    exitCode = printFailure(state.error(), json);
    return std::nullopt;
  }
  return PrefixState{std::move(*prefix), std::move(*state)};
}

bool lockOptions(const ParsedArgs &args, LockOptions &out) {
  auto v = args.value("lock-timeout");
  if (!v)
    return true;
  char *end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end || d < 0 || d > 86400 * 7) {
    printError("--lock-timeout takes a number of seconds, not '" + *v + "'");
    return false;
  }
  out.timeoutSeconds = d;
  return true;
}

} // namespace ireepkg::cli
