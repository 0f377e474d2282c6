//===- cmd_help.cpp - `ireepkg help` and `ireepkg version` ---------------===//
#include "command.h"

#include "ireepkg/formats.h"
#include "ireepkg/platform.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#ifndef IREEPKG_VERSION
#define IREEPKG_VERSION "0.0.0"
#endif

namespace ireepkg::cli {

void printError(const std::string &message, const std::string &hint) {
  std::fprintf(stderr, "ireepkg: error: %s\n", message.c_str());
  if (!hint.empty())
    std::fprintf(stderr, "  hint: %s\n", hint.c_str());
}

void printWarning(const std::string &message) {
  std::fprintf(stderr, "ireepkg: warning: %s\n", message.c_str());
}

/// Wraps `text` at 78 columns with `indent` spaces; keeps blank lines.
static std::string wrap(const std::string &text, size_t indent) {
  std::string out, line;
  std::string pad(indent, ' ');
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string para =
        text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    line = pad;
    size_t wpos = 0;
    bool any = false;
    while (wpos < para.size()) {
      size_t sp = para.find(' ', wpos);
      std::string word = para.substr(
          wpos, sp == std::string::npos ? std::string::npos : sp - wpos);
      wpos = sp == std::string::npos ? para.size() : sp + 1;
      if (word.empty())
        continue;
      if (any && line.size() + 1 + word.size() > 78) {
        out += line + "\n";
        line = pad;
        any = false;
      }
      line += (any ? " " : "") + word;
      any = true;
    }
    out += (any ? line : std::string()) + "\n";
    if (nl == std::string::npos)
      break;
    pos = nl + 1;
  }
  return out;
}

std::string formatHelp(const Command &c) {
  std::string out = "ireepkg " + c.name + " - " + c.summary + "\n\n";
  out += "Usage: ireepkg " + c.name +
         (c.synopsis.empty() ? "" : " " + c.synopsis) + "\n\n";
  if (!c.description.empty())
    out += wrap(c.description, 0) + "\n";
  out += "Options:\n";
  auto optLine = [&](const std::string &left, const std::string &help) {
    std::string l = "  " + left;
    if (l.size() < 26)
      l.resize(26, ' ');
    else
      l += "\n" + std::string(26, ' ');
    std::string w = wrap(help, 26);
    out += l + w.substr(26);
  };
  for (const OptionSpec &o : c.options) {
    std::string left = o.shortName ? std::string("-") + o.shortName + ", " : "";
    left += "--" + o.name;
    if (!o.valueName.empty())
      left += " " + o.valueName;
    optLine(left, o.help + (o.repeatable ? " (repeatable)" : ""));
  }
  optLine("-h, --help", "show this help");
  if (!c.examples.empty()) {
    out += "\nExamples:\n";
    for (const std::string &e : c.examples)
      out += "  " + e + "\n";
  }
  return out;
}

int runHelp(const Command &, const ParsedArgs &args) {
  if (!args.positional.empty()) {
    std::string name;
    for (size_t i = 0; i < args.positional.size(); ++i)
      name += (i ? " " : "") + args.positional[i];
    for (const Command &c : commandTable())
      if (c.name == name) {
        std::fputs(formatHelp(c).c_str(), stdout);
        return kExitOk;
      }
    std::vector<std::string> names;
    for (const Command &c : commandTable())
      names.push_back(c.name);
    std::string s = suggestClosest(name, std::span<const std::string>(names));
    printError("unknown command '" + name + "'" +
                   (s.empty() ? "" : " (did you mean '" + s + "'?)"),
               "see `ireepkg help` for the list of commands");
    return kExitUsage;
  }
  std::string out =
      "ireepkg - packages, versions and automatic activation for IREE "
      "compiler and runtime plugins\n\n"
      "Usage: ireepkg <command> [options] [arguments]\n\nCommands:\n";
  for (const Command &c : commandTable()) {
    std::string l = "  " + c.name;
    if (l.size() < 20)
      l.resize(20, ' ');
    else
      l += "\n" + std::string(20, ' ');
    out += l + c.summary + "\n";
  }
  out += "\nRun `ireepkg <command> --help` for a command's options.\n"
         "Exit status: 0 success, 1 failure, 2 usage error.\n";
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int runVersion(const Command &, const ParsedArgs &args) {
  if (args.flag("json")) {
    nlohmann::json j = {{"version", IREEPKG_VERSION},
                        {"host_platform", hostPlatform().str()},
                        {"schema_version", kSchemaVersion},
                        {"lock_version", kSchemaVersion}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  std::printf("ireepkg %s\n", IREEPKG_VERSION);
  std::printf("host platform: %s\n", hostPlatform().str().c_str());
  std::printf("formats: schema_version %d, lock_version %d\n", kSchemaVersion,
              kSchemaVersion);
  return kExitOk;
}

} // namespace ireepkg::cli
