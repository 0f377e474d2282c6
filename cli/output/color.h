//===- cli/output/color.h - How the CLI paints output -----------*- C++ -*-===//
//
// The --color choice (flag, environment, config file) and the escape
// sequences of each style.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_COLOR_H
#define IREEPKG_CLI_COLOR_H

#include <optional>
#include <string>

namespace ireepkg::cli {

/// Settles the colour mode: `flag` (--color) if given, else FORCE_COLOR or
/// CLICOLOR_FORCE (set, not "0": always), else NO_COLOR (set: never), else
/// `configured` (the config file's "color") when given, else auto.
void resolveColor(const std::optional<std::string> &flag,
                  const std::optional<std::string> &configured = std::nullopt,
                  const std::string &configuredWhere = {});

enum class OutStream { Out, Err };
/// Whether text written to the stream gets colour: always, never, or (auto)
/// when it is a terminal whose TERM is not "dumb".
bool colorEnabled(OutStream stream);

enum class Style { Error, Warning, Hint, Note, Added, Removed, Changed, Bold };
/// `text` wrapped in the style's escape sequences when colour is enabled
/// for `stream`; else `text` as it is.
std::string paint(Style style, const std::string &text,
                  OutStream stream = OutStream::Out);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_COLOR_H
