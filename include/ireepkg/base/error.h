//===- ireepkg/base/error.h - Errors and diagnostics ------------*- C++ -*-===//
//
// One error type for every user-facing failure in ireepkg's libraries. An
// Error says what failed, where (file, line:column, JSON pointer, package,
// member) and what to do. Libraries return Expected<T>; they never print or
// exit. Only a tool's main() prints.
//
// Validators that find several problems at once collect Diagnostics in a
// DiagnosticList instead of stopping at the first.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_ERROR_H
#define IREEPKG_BASE_ERROR_H

#include <cstdint>
#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace ireepkg {

/// Broad category of an error; drives exit codes and `--json` output.
enum class ErrorCode {
  Usage,        ///< bad command line
  Io,           ///< file system failure
  Parse,        ///< malformed input file
  Invalid,      ///< well-formed input that breaks a rule
  NotFound,     ///< a named thing does not exist
  Conflict,     ///< two inputs disagree
  Unsupported,  ///< valid, but not something this build can do
  Integrity,    ///< hash, size or signature mismatch
  Internal,     ///< a bug in ireepkg
  Interrupted,  ///< the person asked to stop (Ctrl-C); nothing was changed
};

const char *errorCodeName(ErrorCode code);

/// Where something happened. Every field is optional.
struct Location {
  std::string file;
  uint32_t line = 0;   ///< 1-based; 0 when unknown
  uint32_t column = 0; ///< 1-based, in bytes; 0 when unknown
  std::string pointer; ///< RFC 6901 JSON pointer ("" = unknown, "/" = root)
  std::string package; ///< package name, when the problem belongs to one
  std::string member;  ///< archive member, when the problem belongs to one

  bool empty() const {
    return file.empty() && pointer.empty() && package.empty() &&
           member.empty();
  }

  /// A file (and line) only: the common case for I/O and whole-file errors.
  static Location inFile(std::string file, uint32_t line = 0) {
    Location where;
    where.file = std::move(file);
    where.line = line;
    return where;
  }
};

enum class Severity { Error, Warning };

/// One problem found while checking an input.
struct Diagnostic {
  Severity severity = Severity::Error;
  Location where;
  std::string message;
  std::string hint; ///< what to do about it; may be empty

  /// `file:line:col: /pointer: message` (warnings add `warning: `).
  std::string format() const;
};

class DiagnosticList {
public:
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  void error(Location where, std::string message, std::string hint = {});
  void warning(Location where, std::string message, std::string hint = {});
  void append(const DiagnosticList &other);

  bool hasErrors() const;
  size_t errorCount() const;
  size_t warningCount() const;
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic> &items() const { return items_; }
  /// Sorts by file, then line and column, keeping insertion order on ties.
  void sort();

private:
  std::vector<Diagnostic> items_;
};

/// A failure returned by a library function.
struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;
  Location where;
  std::string hint;
  /// Every problem, for errors that carry more than one (validation).
  std::vector<Diagnostic> diagnostics;

  Error() = default;
  Error(ErrorCode code, std::string message, Location where = {},
        std::string hint = {})
      : code(code), message(std::move(message)), where(std::move(where)),
        hint(std::move(hint)) {}

  /// Human-readable text, one line per problem, hints last.
  std::string format() const;
};

template <typename T> using Expected = std::expected<T, Error>;
using Unexpected = std::unexpected<Error>;

inline Unexpected makeError(ErrorCode code, std::string message,
                            Location where = {}, std::string hint = {}) {
  return Unexpected(
      Error(code, std::move(message), std::move(where), std::move(hint)));
}

/// An error carrying a whole list of diagnostics (the first one is the
/// message).
Unexpected makeError(ErrorCode code, const DiagnosticList &diagnostics);

/// Status for functions with no value.
using Status = Expected<void>;
inline Status ok() { return {}; }

} // namespace ireepkg

#endif // IREEPKG_BASE_ERROR_H
