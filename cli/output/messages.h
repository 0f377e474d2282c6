//===- cli/output/messages.h - Errors, warnings, verbose lines --*- C++ -*-===//
//
// How the CLI prints an Error (and the same as JSON for --json), and the
// labels its messages start with. printError(message, hint) and
// printWarning are declared in command.h, which every command sees.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_MESSAGES_H
#define IREEPKG_CLI_MESSAGES_H

#include "commands/command.h"

#include "ireepkg/base/error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ireepkg::cli {

/// `ireepkg: <message>` on stderr when -v was given `level` times or more
/// (and not --quiet).
void verboseLine(int level, const std::string &message);

/// printf to stdout of what a command did ("packed …", "published …",
/// "wrote …"), unless --quiet. Errors, and what a command was asked for (a
/// listing, a value, the problems a check found), print regardless.
[[gnu::format(printf, 1, 2)]] void printSummary(const char *format, ...);

/// Prints an Error: `ireepkg: error: <where>: message` (one line per
/// diagnostic) and hints.
void printError(const Error &error);

/// `ireepkg: error:` and `  hint:`, painted for stderr.
std::string errorLabel();
std::string hintLabel();

/// A Diagnostic as JSON (for --json reports).
nlohmann::json diagnosticToJson(const Diagnostic &d);
nlohmann::json errorToJson(const Error &e);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_MESSAGES_H
