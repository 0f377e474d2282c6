//===- cli/output/color.cpp - Whether and how the CLI paints its output ---===//
#include "output/color.h"

#include "args/global_options.h"

#include "ireepkg/base/environment.h"

#include <cstdlib>
#include <unistd.h>

namespace ireepkg::cli {

void resolveColor(const std::optional<std::string> &flag,
                  const std::optional<std::string> &configured,
                  const std::string &configuredWhere) {
  GlobalOptions &g = globalOptions();
  auto mode = [](const std::string &v) {
    return v == "always"  ? ColorMode::Always
           : v == "never" ? ColorMode::Never
                          : ColorMode::Auto;
  };
  auto set = [](const char *name) {
    const char *v = environmentOverride(name);
    return v && *v && std::string(v) != "0";
  };
  if (flag) {
    g.color = mode(*flag);
    g.colorSource = "--color";
  } else if (set("FORCE_COLOR")) {
    g.color = ColorMode::Always;
    g.colorSource = "FORCE_COLOR";
  } else if (set("CLICOLOR_FORCE")) {
    g.color = ColorMode::Always;
    g.colorSource = "CLICOLOR_FORCE";
  } else if (const char *v = environmentOverride("NO_COLOR"); v && *v) {
    g.color = ColorMode::Never;
    g.colorSource = "NO_COLOR";
  } else if (configured) {
    g.color = mode(*configured);
    g.colorSource = configuredWhere;
  } else {
    g.color = ColorMode::Auto;
    g.colorSource = "default";
  }
}

bool colorEnabled(OutStream stream) {
  switch (globalOptions().color) {
  case ColorMode::Always:
    return true;
  case ColorMode::Never:
    return false;
  case ColorMode::Auto:
    break;
  }
  if (::isatty(stream == OutStream::Out ? STDOUT_FILENO : STDERR_FILENO) != 1)
    return false;
  const char *term = terminalDescription("TERM");
  return !(term && std::string(term) == "dumb");
}

std::string paint(Style style, const std::string &text, OutStream stream) {
  if (text.empty() || !colorEnabled(stream))
    return text;
  const char *code = "";
  switch (style) {
  case Style::Error:
    code = "1;31"; // bold red
    break;
  case Style::Warning:
    code = "1;33"; // bold yellow
    break;
  case Style::Hint:
    code = "36"; // cyan
    break;
  case Style::Note:
    code = "1;34"; // bold blue
    break;
  case Style::Added:
    code = "32"; // green
    break;
  case Style::Removed:
    code = "31"; // red
    break;
  case Style::Changed:
    code = "33"; // yellow
    break;
  case Style::Bold:
    code = "1";
    break;
  }
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

} // namespace ireepkg::cli
