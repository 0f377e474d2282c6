//===- manifest_schema/src/checker.h --------------------------------------===//
//
// Walking a JsonDocument with diagnostics.
//
// Private helpers shared by the format parsers: typed field access on JSON
// objects that reports wrong types, missing required fields and unknown
// fields (errors in strict mode, warnings otherwise) at the exact source
// position, so that each format parser states its rules and nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_MANIFEST_SCHEMA_CHECKER_H
#define IREEPKG_MANIFEST_SCHEMA_CHECKER_H

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/semver.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ireepkg::detail {

using json = nlohmann::json;

/// "a string", "an integer", ... for messages.
std::string describeType(const json &value);

class Checker {
public:
  Checker(const JsonDocument &doc, const ParseOptions &options,
          DiagnosticList &diags)
      : doc_(doc), options_(options), diags_(diags) {}

  const JsonDocument &doc() const { return doc_; }
  bool strict() const { return options_.strict; }

  void error(const std::string &ptr, std::string message,
             std::string hint = {}) {
    diags_.error(doc_.locate(ptr), std::move(message), std::move(hint));
  }
  /// Reports at the position of the key of `ptr`, e.g. a bad map key.
  void errorAtKey(const std::string &keyPtr, const std::string &reportPtr,
                  std::string message, std::string hint = {}) {
    Location where = doc_.locateKey(keyPtr);
    where.pointer = reportPtr;
    diags_.error(where, std::move(message), std::move(hint));
  }
  void warning(const std::string &ptr, std::string message,
               std::string hint = {}) {
    diags_.warning(doc_.locate(ptr), std::move(message), std::move(hint));
  }
  /// Error in strict mode, warning otherwise (unknown fields).
  void strictProblem(const std::string &keyPtr, std::string message,
                     std::string hint = {}) {
    Location where = doc_.locateKey(keyPtr);
    if (options_.strict)
      diags_.error(where, std::move(message), std::move(hint));
    else
      diags_.warning(where, std::move(message), std::move(hint));
  }

  /// Parses a version string, reporting a failure at `ptr`.
  std::optional<Version> version(const json &value, const std::string &ptr);
  std::optional<Constraint> constraint(const json &value,
                                       const std::string &ptr);
  /// Checks a package name; reports at `ptr` (or at the key of `keyPtr`).
  bool packageName(const std::string &name, const std::string &ptr,
                   const std::string &keyPtr = {});
  /// Checks an option key: a flag name without leading dashes. Reports at
  /// the key of `keyPtr`, with pointer `mapPtr`.
  bool optionFlagName(const std::string &flag, const std::string &mapPtr,
                      const std::string &keyPtr);
  /// Checks a one-line summary (at most 200 characters).
  void summary(const std::string &text, const std::string &ptr);
  /// Checks a path inside a package.
  bool packagePath(const std::string &path, const std::string &ptr);
  /// schema_version / lock_version: 1 is read; newer is refused.
  void schemaVersion(const json &value, const std::string &ptr,
                     const char *fieldName);

  size_t errorCount() const { return diags_.errorCount(); }

private:
  const JsonDocument &doc_;
  const ParseOptions &options_;
  DiagnosticList &diags_;
  /// Valid constraint texts parsed so far: an index file repeats a few
  /// constraints across all its versions.
  std::map<std::string, Constraint, std::less<>> constraints_;
};

enum class Need { Optional, Required };

/// Reads the fields of one JSON object. Every accessor marks its key as
/// known; finish() reports the keys nobody asked for.
class ObjectReader {
public:
  /// `what` names the object in messages ("the manifest", "a hook", ...).
  ObjectReader(Checker &checker, const json &value, std::string ptr);

  bool valid() const { return object_ != nullptr; }
  const std::string &pointer() const { return ptr_; }
  std::string child(const std::string &key) const {
    return ptr_ + "/" + jsonPointerEscape(key);
  }
  bool has(const std::string &key) const;

  /// The raw value (any type), or nullptr.
  const json *any(const std::string &key, Need need = Need::Optional);
  std::optional<std::string> string(const std::string &key,
                                    Need need = Need::Optional,
                                    bool nonEmpty = true);
  std::optional<int64_t> integer(const std::string &key,
                                 Need need = Need::Optional);
  std::optional<bool> boolean(const std::string &key,
                              Need need = Need::Optional);
  const json *array(const std::string &key, Need need = Need::Optional);
  const json *object(const std::string &key, Need need = Need::Optional);
  /// An array of strings (each non-empty); reports duplicates when `unique`.
  std::optional<std::vector<std::string>>
  stringArray(const std::string &key, Need need = Need::Optional,
              bool unique = true);
  /// An object whose values are all strings.
  std::optional<std::vector<std::pair<std::string, std::string>>>
  stringMap(const std::string &key, Need need = Need::Optional);

  /// Reports unknown keys (suggesting the closest known one).
  void finish();

private:
  const json *get(const std::string &key, Need need, json::value_t type,
                  const char *typeName);

  Checker &checker_;
  const json *object_ = nullptr;
  std::string ptr_;
  std::set<std::string> known_;
};

} // namespace ireepkg::detail

#endif // IREEPKG_MANIFEST_SCHEMA_CHECKER_H
