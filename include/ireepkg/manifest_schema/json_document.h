//===- ireepkg/manifest_schema/json_document.h ----------------------------===//
//
// JSON with source positions.
//
// A parsed JSON file that remembers where every value came from, so that
// diagnostics can say `file:line:column: /json/pointer: ...`.
//
// Parsing is nlohmann/json's (strict RFC 8259, UTF-8 checked). nlohmann 3.11
// keeps no source positions and silently keeps the last of duplicate keys, so
// we drive its SAX parser through an input iterator that records how far the
// lexer has read at each event, and build the value tree ourselves; that gives
// each value's offset, rejects duplicate keys and bounds nesting depth.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_JSON_DOCUMENT_H
#define IREEPKG_JSON_DOCUMENT_H

#include "ireepkg/base/error.h"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ireepkg {

struct JsonParseOptions {
  /// Deeper nesting is refused (protects every recursive consumer).
  unsigned maxDepth = 256;
  /// Larger inputs are refused before parsing.
  size_t maxBytes = 64u << 20;
  /// Record a source offset for every value (costs memory on big files).
  bool trackLocations = true;
};

/// A JSON value tree plus a map from JSON pointer to source position.
class JsonDocument {
public:
  JsonDocument();
  JsonDocument(JsonDocument &&) noexcept;
  JsonDocument &operator=(JsonDocument &&) noexcept;
  ~JsonDocument();

  /// Parses `text`. `file` is only used in diagnostics. On a syntax error the
  /// Error carries the position of the problem.
  static Expected<JsonDocument> parse(std::string_view text, std::string file,
                                      const JsonParseOptions &options = {});
  /// Reads and parses a file.
  static Expected<JsonDocument> load(const std::string &path,
                                     const JsonParseOptions &options = {});

  const nlohmann::json &root() const;
  const std::string &file() const { return file_; }

  /// Location of the value at `pointer` ("" is the root). Falls back to the
  /// nearest enclosing value that has one.
  Location locate(const std::string &pointer) const;
  /// Location of the *key* of the member at `pointer` (e.g. of `"x86-64"` in
  /// `{"x86-64": ...}`); falls back to locate().
  Location locateKey(const std::string &pointer) const;

  /// Byte offset where the value at `pointer` starts (its first character),
  /// or nullopt when there is no such value or locations were not tracked.
  /// With keyOffset, this lets a caller edit the text in place (project
  /// files keep their formatting when `add` and `rm` change them).
  std::optional<size_t> valueOffset(const std::string &pointer) const;
  /// Byte offset of the opening quote of the key of the member at `pointer`.
  std::optional<size_t> keyOffset(const std::string &pointer) const;

  /// Line/column (1-based) of a byte offset.
  void lineColumn(size_t offset, uint32_t &line, uint32_t &column) const;

  struct Impl; // the tree and position tables (json_document.cpp)

private:
  friend Expected<nlohmann::json> parseJson(std::string_view,
                                            const std::string &,
                                            const JsonParseOptions &);
  std::unique_ptr<Impl> impl_;
  std::string file_;
};

/// The one way ireepkg reads JSON it needs no source positions for (RECORD,
/// journals, caches, installed state, reports of its own child tools): the
/// same parser as JsonDocument, so every file gets the same size limit,
/// depth limit and refusal of duplicate keys, without the position tables.
/// Error messages quote the input only as escaped, bounded excerpts.
Expected<nlohmann::json> parseJson(std::string_view text,
                                   const std::string &file,
                                   const JsonParseOptions &options = {});

/// parseJson for callers that only need to know whether the text was good
/// JSON: the value, or a discarded value (is_discarded()) on any error.
nlohmann::json parseJsonOrDiscarded(std::string_view text,
                                    const JsonParseOptions &options = {});

/// `in` as it may appear in a message: control and non-ASCII bytes escaped
/// (\xNN), cut to `maxBytes` with "..." so that a message never carries an
/// untrusted input whole.
std::string printableExcerpt(std::string_view in, size_t maxBytes = 200);

/// Escapes one reference token for a JSON pointer (RFC 6901: ~ and /).
std::string jsonPointerEscape(std::string_view token);

/// "a string", "an integer", "null", ... for messages about wrong types.
std::string describeJsonType(const nlohmann::json &value);

} // namespace ireepkg

#endif // IREEPKG_JSON_DOCUMENT_H
