//===- cli/main.cpp - The ireepkg command-line tool -----------------------===//
//
// Finds the command in the table, parses its arguments from the table's
// metadata, and runs it. Usage errors exit with status 2.
//
//===----------------------------------------------------------------------===//
#include "args/cli_config.h"
#include "commands/command.h"
#include "args/global_options.h"
#include "host/memory.h"
#include "output/output.h"

#include "ireepkg/compiler_integration/compiler_checks.h"
#include "ireepkg/compiler_integration/compiler_state.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/teardown.h"
#include "ireepkg/runtime_integration/runtime_checks.h"
#include "ireepkg/runtime_integration/runtime_state.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ireepkg;
using namespace ireepkg::cli;

namespace {

/// The first word of every command, for suggestions.
std::vector<std::string> commandWords() {
  std::vector<std::string> words;
  for (const Command &c : commandTable()) {
    std::string first = c.name.substr(0, c.name.find(' '));
    if (std::find(words.begin(), words.end(), first) == words.end())
      words.push_back(first);
  }
  return words;
}

int usageError(const std::string &message, const std::string &hint) {
  printError(message, hint);
  return kExitUsage;
}

const OptionSpec *findOption(const std::vector<OptionSpec> &options,
                             const std::string &name) {
  for (const OptionSpec &o : options)
    if (o.name == name)
      return &o;
  return nullptr;
}

const OptionSpec *findShort(const std::vector<OptionSpec> &options, char c) {
  for (const OptionSpec &o : options)
    if (o.shortName == c)
      return &o;
  return nullptr;
}

bool declares(const Command &cmd, const std::string &name) {
  return findOption(cmd.options, name) != nullptr;
}

/// A global option as given (before the command, or after it when the
/// command has no option of that name).
struct GlobalItem {
  const OptionSpec *spec;
  std::string value;
};

/// Parses the option at args[i] (advancing i past its value): one of
/// `cmd`'s options into `parsed`, else a global option into `globals`.
/// Returns kExitOk, or prints a usage error and returns kExitUsage.
int parseOption(const Command *cmd, const std::vector<std::string> &args,
                size_t &i, ParsedArgs &parsed, std::vector<GlobalItem> &globals,
                const std::string &helpHint) {
  static const std::vector<OptionSpec> none;
  const std::vector<OptionSpec> &own = cmd ? cmd->options : none;
  const std::vector<OptionSpec> &global = globalOptionTable();
  const std::string where = cmd ? " for '" + cmd->name + "'" : "";
  const std::string &a = args[i];
  auto store = [&](const OptionSpec *opt, bool isGlobal,
                   std::string value) -> int {
    if (isGlobal) {
      globals.push_back({opt, std::move(value)});
      return kExitOk;
    }
    if (opt->valueName.empty()) {
      parsed.flags[opt->name]++;
      return kExitOk;
    }
    if (!opt->repeatable && parsed.values.count(opt->name))
      return usageError("option '--" + opt->name + "' is given more than once",
                        helpHint);
    parsed.values[opt->name].push_back(std::move(value));
    return kExitOk;
  };
  if (a.compare(0, 2, "--") == 0) {
    std::string name = a.substr(2), value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    const OptionSpec *opt = findOption(own, name);
    bool isGlobal = false;
    if (!opt) {
      opt = findOption(global, name);
      isGlobal = opt != nullptr;
    }
    if (!opt) {
      std::vector<std::string> names = {"help"};
      for (const OptionSpec &o : own)
        names.push_back(o.name);
      for (const OptionSpec &o : global)
        names.push_back(o.name);
      std::string s = suggestClosest(name, std::span<const std::string>(names));
      return usageError("unknown option '--" + name + "'" + where +
                            (s.empty() ? "" : " (did you mean '--" + s + "'?)"),
                        helpHint);
    }
    if (opt->valueName.empty()) {
      if (hasValue)
        return usageError("option '--" + name + "' takes no value", helpHint);
      return store(opt, isGlobal, {});
    }
    if (!hasValue) {
      if (i + 1 >= args.size())
        return usageError("option '--" + name + "' needs a value (" +
                              opt->valueName + ")",
                          helpHint);
      value = args[++i];
    }
    return store(opt, isGlobal, std::move(value));
  }
  // -vv: verbose, twice.
  if (a.size() > 2 && a.find_first_not_of('v', 1) == std::string::npos &&
      !findShort(own, 'v')) {
    for (size_t k = 1; k < a.size(); ++k)
      globals.push_back({findShort(global, 'v'), {}});
    return kExitOk;
  }
  const OptionSpec *opt = findShort(own, a[1]);
  bool isGlobal = false;
  if (!opt) {
    opt = findShort(global, a[1]);
    isGlobal = opt != nullptr;
  }
  if (!opt)
    return usageError("unknown option '" + a + "'" + where, helpHint);
  if (opt->valueName.empty()) {
    if (a.size() > 2)
      return usageError("option '-" + std::string(1, a[1]) + "' takes no value",
                        helpHint);
    return store(opt, isGlobal, {});
  }
  std::string value;
  if (a.size() > 2)
    value = a.substr(a[2] == '=' ? 3 : 2);
  else if (i + 1 < args.size())
    value = args[++i];
  else
    return usageError("option '-" + std::string(1, a[1]) + "' needs a value (" +
                          opt->valueName + ")",
                      helpHint);
  return store(opt, isGlobal, std::move(value));
}

bool isOption(const std::string &a) {
  return a.size() >= 2 && a[0] == '-' && a != "--";
}

/// Applies the global options to the process and to `parsed` (where the
/// command has an option of the same name), then changes directory.
int applyGlobals(const Command &cmd, ParsedArgs &parsed,
                 const std::vector<GlobalItem> &items) {
  GlobalOptions &g = globalOptions();
  const std::string helpHint = "see `ireepkg " + cmd.name + " --help`";
  std::optional<std::string> color;
  std::vector<std::string> directories;
  for (const GlobalItem &item : items) {
    const std::string &name = item.spec->name;
    if (name == "quiet" || name == "offline") {
      if (declares(cmd, name))
        parsed.flags[name]++;
    } else if (name == "verbose") {
      g.verbose++;
    } else if (name == "no-load-checks") {
      g.noLoadChecks = true;
      ::setenv("IREEPKG_LOAD_CHECKS", "0", 1);
    } else if (name == "color") {
      color = item.value;
    } else if (name == "directory") {
      directories.push_back(item.value);
    } else if (name == "json") {
      if (!declares(cmd, "json"))
        return usageError("'ireepkg " + cmd.name + "' has no JSON report",
                          helpHint);
      parsed.flags["json"]++;
    } else if (name == "project") {
      if (!declares(cmd, "project"))
        return usageError("'ireepkg " + cmd.name +
                              "' does not read a project file, so --project "
                              "means nothing to it",
                          helpHint);
      if (parsed.values.count("project"))
        return usageError("option '--project' is given more than once",
                          helpHint);
      parsed.values["project"].push_back(item.value);
    }
  }
  g.quiet = parsed.flag("quiet") ||
            std::any_of(items.begin(), items.end(), [](const GlobalItem &i) {
              return i.spec->name == "quiet";
            });
  g.offline = parsed.flag("offline") ||
              std::any_of(items.begin(), items.end(), [](const GlobalItem &i) {
                return i.spec->name == "offline";
              });
  if (color) {
    const auto &names = colorModeNames();
    if (std::find(names.begin(), names.end(), *color) == names.end()) {
      std::string s =
          suggestClosest(*color, std::span<const std::string>(names));
      return usageError("--color takes auto, always or never, not '" + *color +
                            "'" +
                            (s.empty() ? "" : " (did you mean '" + s + "'?)"),
                        helpHint);
    }
  }
  resolveColor(color);
  if (g.quiet && g.verbose)
    return usageError("--quiet and --verbose contradict each other",
                      "give one of them");
  for (const std::string &dir : directories) {
    if (::chdir(dir.c_str()) != 0) {
      int e = errno;
      printError("cannot change to directory '" + dir +
                     "' (-C): " + std::strerror(e),
                 "give an existing directory");
      return kExitFailure;
    }
    if (g.verbose)
      verboseLine(1, "working in " + std::filesystem::current_path().string());
  }
  // The configuration files, after -C (IREEPKG_CONFIG_FILE may be
  // relative); `help` and `version` need none.
  if (cmd.name != "help" && cmd.name != "version") {
    fsutil::onUntrustedCachePath([](const std::string &path) {
      printWarning(path +
                   ": another user owns it or may write it, so nothing of "
                   "the package cache there is used (use a cache directory "
                   "of your own: IREEPKG_CACHE_DIR, or cache-dir in "
                   "config.toml)");
    });
    if (!loadCliConfig())
      return kExitFailure;
    if (auto loadChecks = loadChecksEnabled(); !loadChecks) {
      printError(loadChecks.error());
      return kExitUsage;
    }
    if (const config::Setting *c = configSetting("color"))
      resolveColor(color, c->value, settingWhere(*c));
  }
  return kExitOk;
}

int parseAndRun(const Command &cmd, std::vector<std::string> args,
                std::vector<GlobalItem> globals) {
  ParsedArgs parsed;
  setRunningCommand(&cmd);
  const std::string helpHint = "see `ireepkg " + cmd.name + " --help`";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--") {
      for (size_t j = i + 1; j < args.size(); ++j)
        (cmd.acceptsPassthrough ? parsed.passthrough : parsed.positional)
            .push_back(args[j]);
      break;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(formatHelp(cmd).c_str(), stdout);
      return kExitOk;
    }
    if (isOption(a)) {
      if (int rc = parseOption(&cmd, args, i, parsed, globals, helpHint))
        return rc;
      continue;
    }
    parsed.positional.push_back(a);
  }
  if (int rc = applyGlobals(cmd, parsed, globals))
    return rc;
  int n = static_cast<int>(parsed.positional.size());
  if (n < cmd.minPositional)
    return usageError("'" + cmd.name + "' needs " +
                          (cmd.synopsis.empty() ? "arguments" : cmd.synopsis),
                      helpHint);
  if (cmd.maxPositional >= 0 && n > cmd.maxPositional)
    return usageError("'" + cmd.name + "' takes " +
                          (cmd.maxPositional == 0
                               ? std::string("no arguments")
                               : "at most " +
                                     std::to_string(cmd.maxPositional) +
                                     " argument(s)") +
                          ", got '" + parsed.positional.back() + "'",
                      helpHint);
  auto started = std::chrono::steady_clock::now();
  int rc = cmd.run(cmd, parsed);
  if (globalOptions().verbose) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f",
                  std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - started)
                      .count());
    verboseLine(1, "'" + cmd.name + "' finished in " + buf +
                       " s with exit status " + std::to_string(rc));
  }
  return rc;
}

} // namespace

int main(int argc, char **argv) {
  // Before anything else, even --help: a package manager does not act with
  // privileges its user did not start it with.
  if (std::string refusal = privilegedRunRefusal(); !refusal.empty()) {
    resolveColor(std::nullopt);
    printError(refusal, privilegedRunHint());
    return kExitFailure;
  }
  // The CLI wires the layers together: every transaction and verification
  // writes (or checks) the integrations' state files, and pack and install
  // run their checks.
  ireepkg::registerStateWriter(ireepkg::runtimeStateWriter());
  ireepkg::registerStateWriter(ireepkg::compilerStateWriter());
  ireepkg::registerRuntimeChecks(ireepkg::runtimeChecks());
  ireepkg::registerCompilerChecks(ireepkg::compilerChecks());
  // The process exits after one command: the big structures a command is
  // done with are left to the exit instead of freed one by one.
  ireepkg::setSkipFreesAtExit(true);
  ireepkg::cli::preferHugePagesForHeap();
  std::vector<std::string> args(argv + 1, argv + argc);
  resolveColor(std::nullopt); // errors in the arguments may be coloured too
  const auto &table = commandTable();
  auto find = [&](const std::string &name) -> const Command * {
    for (const Command &c : table)
      if (c.name == name)
        return &c;
    for (const auto &[alias, target] : commandAliases())
      if (alias == name)
        for (const Command &c : table)
          if (c.name == target)
            return &c;
    return nullptr;
  };
  if (args.empty()) {
    find("help")->run(*find("help"), {});
    return kExitUsage;
  }
  // Global options before the command.
  std::vector<GlobalItem> globals;
  size_t first = 0;
  {
    ParsedArgs unused;
    const std::string hint =
        "see `ireepkg help` for the options every command accepts; a "
        "command's own options follow it";
    while (first < args.size() && isOption(args[first])) {
      const std::string &a = args[first];
      if (a == "--version" || a == "-V")
        return parseAndRun(*find("version"),
                           {args.begin() + first + 1, args.end()}, globals);
      if (a == "--help" || a == "-h")
        return parseAndRun(*find("help"),
                           {args.begin() + first + 1, args.end()}, globals);
      if (int rc = parseOption(nullptr, args, first, unused, globals, hint))
        return rc;
      ++first;
    }
    // --color applies at once: to the errors about the command too.
    for (const GlobalItem &item : globals)
      if (item.spec->name == "color") {
        const auto &names = colorModeNames();
        if (std::find(names.begin(), names.end(), item.value) != names.end())
          resolveColor(item.value);
      }
    if (first == args.size()) {
      printError("a command is missing after the options",
                 "see `ireepkg help` for the list of commands");
      return kExitUsage;
    }
    args.erase(args.begin(), args.begin() + static_cast<long>(first));
  }
  if (args[0] == "--")
    return usageError("a command is missing before '--'",
                      "see `ireepkg help` for the list of commands");

  // Longest command name made of the leading words.
  const Command *cmd = nullptr;
  size_t used = 0;
  std::string name;
  for (size_t i = 0; i < args.size() && i < 3; ++i) {
    if (!args[i].empty() && args[i][0] == '-')
      break;
    name += (i ? " " : "") + args[i];
    if (const Command *c = find(name)) {
      cmd = c;
      used = i + 1;
    }
  }
  if (!cmd) {
    // A command group named without its sub-command?
    std::vector<std::string> subs;
    for (const Command &c : table)
      if (c.name.rfind(args[0] + " ", 0) == 0)
        subs.push_back(c.name.substr(args[0].size() + 1));
    if (!subs.empty()) {
      std::string list;
      for (size_t i = 0; i < subs.size(); ++i)
        list += (i ? ", " : "") + subs[i];
      if (args.size() > 1 && args[1][0] != '-') {
        std::string s =
            suggestClosest(args[1], std::span<const std::string>(subs));
        return usageError(
            "unknown command '" + args[0] + " " + args[1] + "'" +
                (s.empty() ? ""
                           : " (did you mean '" + args[0] + " " + s + "'?)"),
            "'" + args[0] + "' takes a sub-command: " + list);
      }
      return usageError("'" + args[0] + "' needs a sub-command: " + list,
                        "see `ireepkg help " + args[0] + " " + subs[0] + "`");
    }
    std::vector<std::string> words = commandWords();
    std::string s =
        suggestClosest(args[0], std::span<const std::string>(words));
    return usageError("unknown command '" + args[0] + "'" +
                          (s.empty() ? "" : " (did you mean '" + s + "'?)"),
                      "see `ireepkg help` for the list of commands");
  }
  return parseAndRun(*cmd, {args.begin() + used, args.end()}, globals);
}
