//===- main.cpp - The ireepkg command-line tool --------------------------===//
//
// Finds the command in the table, parses its arguments from the table's
// metadata, and runs it. Usage errors exit with status 2.
//
//===----------------------------------------------------------------------===//
#include "command.h"

#include "ireepkg/compiler_integration/compiler_state.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/runtime_integration/runtime_state.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
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

const OptionSpec *findOption(const Command &cmd, const std::string &name) {
  for (const OptionSpec &o : cmd.options)
    if (o.name == name)
      return &o;
  return nullptr;
}

const OptionSpec *findShort(const Command &cmd, char c) {
  for (const OptionSpec &o : cmd.options)
    if (o.shortName == c)
      return &o;
  return nullptr;
}

int parseAndRun(const Command &cmd, std::vector<std::string> args) {
  ParsedArgs parsed;
  const std::string helpHint =
      "see `ireepkg " + cmd.name + " --help`";
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
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2), value;
      bool hasValue = false;
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        hasValue = true;
      }
      const OptionSpec *opt = findOption(cmd, name);
      if (!opt) {
        std::vector<std::string> names = {"help"};
        for (const OptionSpec &o : cmd.options)
          names.push_back(o.name);
        std::string s = suggestClosest(name, std::span<const std::string>(names));
        return usageError("unknown option '--" + name + "' for '" + cmd.name +
                              "'" + (s.empty() ? "" : " (did you mean '--" + s +
                                                          "'?)"),
                          helpHint);
      }
      if (opt->valueName.empty()) {
        if (hasValue)
          return usageError("option '--" + name + "' takes no value",
                            helpHint);
        parsed.flags[name]++;
        continue;
      }
      if (!hasValue) {
        if (i + 1 >= args.size())
          return usageError("option '--" + name + "' needs a value (" +
                                opt->valueName + ")",
                            helpHint);
        value = args[++i];
      }
      if (!opt->repeatable && parsed.values.count(name))
        return usageError("option '--" + name + "' is given more than once",
                          helpHint);
      parsed.values[name].push_back(value);
      continue;
    }
    if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
      const OptionSpec *opt = findShort(cmd, a[1]);
      if (!opt)
        return usageError("unknown option '" + a + "' for '" + cmd.name + "'",
                          helpHint);
      if (opt->valueName.empty()) {
        if (a.size() > 2)
          return usageError("option '-" + std::string(1, a[1]) +
                                "' takes no value",
                            helpHint);
        parsed.flags[opt->name]++;
        continue;
      }
      std::string value;
      if (a.size() > 2)
        value = a.substr(a[2] == '=' ? 3 : 2);
      else if (i + 1 < args.size())
        value = args[++i];
      else
        return usageError("option '-" + std::string(1, a[1]) +
                              "' needs a value (" + opt->valueName + ")",
                          helpHint);
      if (!opt->repeatable && parsed.values.count(opt->name))
        return usageError("option '--" + opt->name +
                              "' is given more than once",
                          helpHint);
      parsed.values[opt->name].push_back(value);
      continue;
    }
    parsed.positional.push_back(a);
  }
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
  return cmd.run(cmd, parsed);
}

} // namespace

int main(int argc, char **argv) {
  // The CLI wires the layers together: every transaction and verification
  // writes (or checks) the integrations' state files.
  ireepkg::registerStateWriter(ireepkg::runtimeStateWriter());
  ireepkg::registerStateWriter(ireepkg::compilerStateWriter());
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto &table = commandTable();
  auto find = [&](const std::string &name) -> const Command * {
    for (const Command &c : table)
      if (c.name == name)
        return &c;
    return nullptr;
  };
  if (args.empty()) {
    find("help")->run(*find("help"), {});
    return kExitUsage;
  }
  if (args[0] == "--version" || args[0] == "-V")
    return parseAndRun(*find("version"), {args.begin() + 1, args.end()});
  if (args[0] == "--help" || args[0] == "-h")
    return parseAndRun(*find("help"), {args.begin() + 1, args.end()});
  if (args[0].size() > 1 && args[0][0] == '-')
    return usageError("unknown option '" + args[0] + "'",
                      "options follow the command: ireepkg <command> "
                      "[options]; see `ireepkg help`");

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
        return usageError("unknown command '" + args[0] + " " + args[1] + "'" +
                              (s.empty() ? "" : " (did you mean '" + args[0] +
                                                    " " + s + "'?)"),
                          "'" + args[0] + "' takes a sub-command: " + list);
      }
      return usageError("'" + args[0] + "' needs a sub-command: " + list,
                        "see `ireepkg help " + args[0] + " " + subs[0] + "`");
    }
    std::vector<std::string> words = commandWords();
    std::string s = suggestClosest(args[0], std::span<const std::string>(words));
    return usageError("unknown command '" + args[0] + "'" +
                          (s.empty() ? "" : " (did you mean '" + s + "'?)"),
                      "see `ireepkg help` for the list of commands");
  }
  return parseAndRun(*cmd, {args.begin() + used, args.end()});
}
