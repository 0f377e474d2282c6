//===- cli/output/hints.cpp - Hints fitted to a command -------------------===//
#include "output/hints.h"

#include "args/global_options.h"

#include <regex>

namespace ireepkg::cli {

namespace {

const Command *running = nullptr;

/// What a hint says in place of a flag the running command does not take.
/// The patterns are the libraries' own wording (registry, pkg); each rule
/// applies only when the command lacks `flag`.
struct HintRewrite {
  const char *flag;
  const char *pattern;
  const char *replacement;
};

const HintRewrite kRewrites[] = {
    // A registry's key: a project's commands trust keys through
    // plugins.json only.
    {"registry-key",
     ", or, where the registry is named by its URL on the command line "
     "\\([^)]*\\), with `--registry-key [^`]*`",
     ""},
    {"registry-key", "\\(--registry-key, or ", "("},
    // The prefix: IREEPKG_PREFIX chooses it where --prefix is not taken.
    {"prefix", "pass --prefix or set IREEPKG_PREFIX", "set IREEPKG_PREFIX"},
    {"prefix", "pass --prefix (\\S+) to use it",
     "set IREEPKG_PREFIX=$1 to use it"},
    {"prefix", "with --prefix,", "with IREEPKG_PREFIX,"},
    {"platform", " \\(--platform\\)", ""},
    {"cascade", ", or use --cascade", ""},
    {"lock-timeout", ", or raise --lock-timeout", ""},
};

} // namespace

void setRunningCommand(const Command *command) { running = command; }

bool runningCommandTakes(const std::string &flag) {
  if (!running)
    return true;
  for (const OptionSpec &o : running->options)
    if (o.name == flag)
      return true;
  for (const OptionSpec &o : globalOptionTable())
    if (o.name == flag)
      return true;
  return false;
}

std::string fitHint(const std::string &hint) {
  std::string out = hint;
  for (const HintRewrite &r : kRewrites)
    if (out.find(std::string("--") + r.flag) != std::string::npos &&
        !runningCommandTakes(r.flag))
      out = std::regex_replace(out, std::regex(r.pattern), r.replacement);
  return out;
}

} // namespace ireepkg::cli
