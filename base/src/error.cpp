//===- base/src/error.cpp - Errors and diagnostics ------------------------===//
//
// Formatting of ireepkg::Error and ireepkg::Diagnostic.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/error.h"

#include <algorithm>

namespace ireepkg {

const char *errorCodeName(ErrorCode code) {
  switch (code) {
  case ErrorCode::Usage:
    return "usage";
  case ErrorCode::Io:
    return "io";
  case ErrorCode::Parse:
    return "parse";
  case ErrorCode::Invalid:
    return "invalid";
  case ErrorCode::NotFound:
    return "not-found";
  case ErrorCode::Conflict:
    return "conflict";
  case ErrorCode::Unsupported:
    return "unsupported";
  case ErrorCode::Integrity:
    return "integrity";
  case ErrorCode::Internal:
    return "internal";
  case ErrorCode::Interrupted:
    return "interrupted";
  }
  return "internal";
}

/// Names from archives and file systems may hold anything; never let them
/// put control sequences on a terminal.
static std::string escaped(const std::string &in) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : in) {
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

static std::string formatPrefix(const Location &where) {
  std::string out;
  if (!where.file.empty()) {
    out += escaped(where.file);
    if (where.line) {
      out += ':' + std::to_string(where.line);
      if (where.column)
        out += ':' + std::to_string(where.column);
    }
    out += ": ";
  }
  if (!where.package.empty())
    out += "package '" + escaped(where.package) + "': ";
  if (!where.member.empty())
    out += "member '" + escaped(where.member) + "': ";
  if (!where.pointer.empty())
    out += where.pointer + ": ";
  return out;
}

std::string Diagnostic::format() const {
  std::string out = formatPrefix(where);
  if (severity == Severity::Warning)
    out += "warning: ";
  out += escaped(message);
  return out;
}

/// Messages quote the offending input; a hostile input can be megabytes.
/// Shortens every quoted run longer than 64 bytes to its ends, so that a
/// diagnostic stays one readable line.
static std::string shortenQuoted(std::string message) {
  if (message.size() < 128)
    return message;
  std::string out;
  size_t pos = 0;
  while (pos < message.size()) {
    size_t open = message.find('"', pos);
    if (open == std::string::npos)
      break;
    size_t close = message.find('"', open + 1);
    if (close == std::string::npos)
      break;
    out.append(message, pos, open + 1 - pos);
    size_t len = close - open - 1;
    if (len > 64) {
      auto cut = [&](size_t at) { // don't split a UTF-8 sequence
        while (at > open + 1 && (message[at] & 0xC0) == 0x80)
          --at;
        return at;
      };
      size_t headEnd = cut(open + 1 + 40);
      size_t tailStart = cut(close - 16);
      out.append(message, open + 1, headEnd - open - 1);
      out += "...(" + std::to_string(len) + " bytes)...";
      out.append(message, tailStart, close - tailStart);
    } else {
      out.append(message, open + 1, len);
    }
    out += '"';
    pos = close + 1;
  }
  out.append(message, pos, std::string::npos);
  return out;
}

void DiagnosticList::error(Location where, std::string message,
                           std::string hint) {
  items_.push_back(Diagnostic{Severity::Error, std::move(where),
                              shortenQuoted(std::move(message)),
                              std::move(hint)});
}

void DiagnosticList::warning(Location where, std::string message,
                             std::string hint) {
  items_.push_back(Diagnostic{Severity::Warning, std::move(where),
                              shortenQuoted(std::move(message)),
                              std::move(hint)});
}

void DiagnosticList::append(const DiagnosticList &other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool DiagnosticList::hasErrors() const { return errorCount() != 0; }

size_t DiagnosticList::errorCount() const {
  return std::count_if(items_.begin(), items_.end(), [](const Diagnostic &d) {
    return d.severity == Severity::Error;
  });
}

size_t DiagnosticList::warningCount() const {
  return items_.size() - errorCount();
}

void DiagnosticList::sort() {
  std::stable_sort(items_.begin(), items_.end(),
                   [](const Diagnostic &a, const Diagnostic &b) {
                     if (a.where.file != b.where.file)
                       return a.where.file < b.where.file;
                     if (a.where.line != b.where.line)
                       return a.where.line < b.where.line;
                     return a.where.column < b.where.column;
                   });
}

std::string Error::format() const {
  std::string out;
  if (diagnostics.empty()) {
    out = formatPrefix(where) + message;
    if (!hint.empty())
      out += "\n  hint: " + hint;
    return out;
  }
  for (size_t i = 0; i < diagnostics.size(); ++i) {
    if (i)
      out += '\n';
    out += diagnostics[i].format();
    if (!diagnostics[i].hint.empty())
      out += "\n  hint: " + diagnostics[i].hint;
  }
  if (!hint.empty())
    out += "\n  hint: " + hint;
  return out;
}

Unexpected makeError(ErrorCode code, const DiagnosticList &diagnostics) {
  Error e;
  e.code = code;
  e.diagnostics = diagnostics.items();
  for (const Diagnostic &d : diagnostics.items())
    if (d.severity == Severity::Error) {
      e.message = d.message;
      e.where = d.where;
      break;
    }
  if (e.message.empty() && !diagnostics.items().empty()) {
    e.message = diagnostics.items().front().message;
    e.where = diagnostics.items().front().where;
  }
  return Unexpected(std::move(e));
}

} // namespace ireepkg
