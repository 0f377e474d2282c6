//===- cli/output/messages.cpp - Errors, warnings, verbose lines ----------===//
#include "output/messages.h"

#include "args/global_options.h"
#include "output/color.h"
#include "output/hints.h"

#include <cstdarg>
#include <cstdio>

namespace ireepkg::cli {

void verboseLine(int level, const std::string &message) {
  const GlobalOptions &g = globalOptions();
  if (g.quiet || g.verbose < level)
    return;
  std::fprintf(stderr, "%s %s\n",
               paint(Style::Note, "ireepkg:", OutStream::Err).c_str(),
               message.c_str());
}

void printSummary(const char *format, ...) {
  if (globalOptions().quiet)
    return;
  va_list args;
  va_start(args, format);
  std::vfprintf(stdout, format, args);
  va_end(args);
}

std::string errorLabel() {
  return "ireepkg: " + paint(Style::Error, "error:", OutStream::Err);
}
std::string hintLabel() {
  return "  " + paint(Style::Hint, "hint:", OutStream::Err);
}

void printError(const std::string &message, const std::string &hint) {
  std::fprintf(stderr, "%s %s\n", errorLabel().c_str(), message.c_str());
  if (!hint.empty())
    std::fprintf(stderr, "%s %s\n", hintLabel().c_str(), fitHint(hint).c_str());
}

void printWarning(const std::string &message) {
  if (globalOptions().quiet)
    return;
  std::fprintf(stderr, "ireepkg: %s %s\n",
               paint(Style::Warning, "warning:", OutStream::Err).c_str(),
               message.c_str());
}

void printError(const Error &error) {
  if (error.diagnostics.empty()) {
    // A message of several lines (the resolver's explanation) keeps its
    // lines; each is escaped on its own.
    std::string first = error.message, rest;
    if (size_t nl = first.find('\n'); nl != std::string::npos) {
      rest = first.substr(nl + 1);
      first.resize(nl);
    }
    Diagnostic d{Severity::Error, error.where, first, error.hint};
    std::fprintf(stderr, "%s %s\n", errorLabel().c_str(), d.format().c_str());
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      Diagnostic line{Severity::Error, {}, rest.substr(0, nl), ""};
      std::fprintf(stderr, "  %s\n", line.format().c_str());
      rest = nl == std::string::npos ? "" : rest.substr(nl + 1);
    }
    if (!error.hint.empty())
      std::fprintf(stderr, "%s %s\n", hintLabel().c_str(),
                   fitHint(error.hint).c_str());
    return;
  }
  for (const Diagnostic &d : error.diagnostics) {
    if (d.severity == Severity::Error)
      std::fprintf(stderr, "%s %s\n", errorLabel().c_str(), d.format().c_str());
    else
      std::fprintf(stderr, "ireepkg: %s\n", d.format().c_str());
    if (!d.hint.empty())
      std::fprintf(stderr, "%s %s\n", hintLabel().c_str(),
                   fitHint(d.hint).c_str());
  }
  if (!error.hint.empty())
    std::fprintf(stderr, "%s %s\n", hintLabel().c_str(),
                 fitHint(error.hint).c_str());
}

nlohmann::json diagnosticToJson(const Diagnostic &d) {
  nlohmann::json j = {
      {"severity", d.severity == Severity::Error ? "error" : "warning"},
      {"message", d.message}};
  if (!d.where.file.empty())
    j["file"] = d.where.file;
  if (d.where.line) {
    j["line"] = d.where.line;
    j["column"] = d.where.column;
  }
  if (!d.where.pointer.empty())
    j["pointer"] = d.where.pointer;
  if (!d.where.package.empty())
    j["package"] = d.where.package;
  if (!d.where.member.empty())
    j["member"] = d.where.member;
  if (!d.hint.empty())
    j["hint"] = fitHint(d.hint);
  return j;
}

nlohmann::json errorToJson(const Error &e) {
  nlohmann::json j = {{"code", errorCodeName(e.code)}, {"message", e.message}};
  nlohmann::json diags = nlohmann::json::array();
  if (e.diagnostics.empty())
    diags.push_back(diagnosticToJson(
        Diagnostic{Severity::Error, e.where, e.message, e.hint}));
  for (const Diagnostic &d : e.diagnostics)
    diags.push_back(diagnosticToJson(d));
  j["diagnostics"] = diags;
  if (!e.hint.empty())
    j["hint"] = fitHint(e.hint);
  return j;
}

} // namespace ireepkg::cli
