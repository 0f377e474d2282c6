//===- manifest_schema/src/option_schema.cpp ------------------------------===//
//
// Compiler plugin option schemas.
//
// Plugin options are described with a small subset of the JSON Schema
// vocabulary (type, enum, minimum, maximum, pattern, items, minItems,
// maxItems, default, description). This file checks such schemas and checks
// values against them; a general JSON Schema library would accept far more
// than a compiler flag can express, and would not give messages that name
// the option's own rule.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/suggest.h"
#include "option_schema.h"

#include <cmath>
#include <regex>

namespace ireepkg {

using json = nlohmann::json;
using detail::describeType;

static std::string show(const json &v) {
  std::string s = v.dump();
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

static bool isIntegral(const json &v) {
  if (v.is_number_integer())
    return true;
  if (v.is_number_float()) {
    double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return false;
}

static bool typeMatches(const std::string &type, const json &v) {
  if (type == "integer")
    return isIntegral(v);
  if (type == "number")
    return v.is_number();
  if (type == "string")
    return v.is_string();
  if (type == "boolean")
    return v.is_boolean();
  if (type == "array")
    return v.is_array();
  return false;
}

static std::string article(const std::string &type) {
  return (type == "integer" || type == "array") ? "an " + type : "a " + type;
}

/// Compiles an ECMAScript pattern; returns the error text or "".
static std::string regexProblem(const std::string &pattern) {
  try {
    std::regex re(pattern, std::regex::ECMAScript);
    (void)re;
    return {};
  } catch (const std::regex_error &e) {
    return e.what();
  }
}

std::string optionValueProblem(const json &schema, const json &value) {
  if (!schema.is_object())
    return "the option has no valid schema";
  std::string type = schema.value("type", "");
  if (!typeMatches(type, value))
    return "expected " + article(type) + ", got " + describeType(value) +
           " (" + show(value) + ")";
  if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
    bool found = false;
    for (const json &e : *it)
      if (e == value || (e.is_number() && value.is_number() &&
                         e.get<double>() == value.get<double>()))
        found = true;
    if (!found) {
      std::string list;
      for (size_t i = 0; i < it->size(); ++i)
        list += (i ? ", " : "") + show((*it)[i]);
      return show(value) + " is not one of " + list;
    }
  }
  if (value.is_number()) {
    double d = value.get<double>();
    if (auto it = schema.find("minimum");
        it != schema.end() && it->is_number() && d < it->get<double>())
      return show(value) + " is less than the minimum " + show(*it);
    if (auto it = schema.find("maximum");
        it != schema.end() && it->is_number() && d > it->get<double>())
      return show(value) + " is greater than the maximum " + show(*it);
  }
  if (value.is_string()) {
    if (auto it = schema.find("pattern");
        it != schema.end() && it->is_string()) {
      std::string pattern = it->get<std::string>();
      if (!regexProblem(pattern).empty())
        return "the option's pattern is not a valid regular expression";
      std::regex re(pattern, std::regex::ECMAScript);
      if (!std::regex_search(value.get<std::string>(), re))
        return show(value) + " does not match the pattern " + show(*it);
    }
  }
  if (value.is_array()) {
    size_t n = value.size();
    if (auto it = schema.find("minItems");
        it != schema.end() && it->is_number_integer() &&
        n < it->get<uint64_t>())
      return "has " + std::to_string(n) + " items, fewer than the minimum " +
             show(*it);
    if (auto it = schema.find("maxItems");
        it != schema.end() && it->is_number_integer() &&
        n > it->get<uint64_t>())
      return "has " + std::to_string(n) + " items, more than the maximum " +
             show(*it);
    if (auto it = schema.find("items"); it != schema.end())
      for (size_t i = 0; i < n; ++i) {
        std::string p = optionValueProblem(*it, value[i]);
        if (!p.empty())
          return "item " + std::to_string(i) + ": " + p;
      }
  }
  return {};
}

namespace detail {

static const std::vector<std::string_view> kOptionTypes = {
    "integer", "number", "string", "boolean", "array"};

void checkOptionSchema(Checker &checker, const json &schema,
                       const std::string &ptr) {
  ObjectReader r(checker, schema, ptr);
  if (!r.valid())
    return;
  size_t errorsBefore = checker.errorCount();
  std::string type;
  if (auto t = r.string("type", Need::Required)) {
    type = *t;
    if (std::find(kOptionTypes.begin(), kOptionTypes.end(), type) ==
        kOptionTypes.end()) {
      checker.error(r.child("type"),
                    "\"" + type + "\" is not an option type" +
                        didYouMean(type, kOptionTypes),
                    "option types are integer, number, string, boolean and "
                    "array");
      type.clear();
    }
  }
  auto onlyFor = [&](const char *key, std::initializer_list<const char *> types,
                     const char *what) {
    if (!r.has(key) || type.empty())
      return;
    for (const char *t : types)
      if (type == t)
        return;
    checker.error(r.child(key), std::string("\"") + key +
                                    "\" applies only to " + what +
                                    " options, not to " + type + " ones");
  };
  if (const json *e = r.array("enum")) {
    if (e->empty())
      checker.error(r.child("enum"), "must list at least one value");
    for (size_t i = 0; i < e->size() && !type.empty(); ++i)
      if (!typeMatches(type, (*e)[i]))
        checker.error(r.child("enum") + "/" + std::to_string(i),
                      "enum value " + show((*e)[i]) + " is not " +
                          article(type));
  }
  const json *minimum = r.any("minimum");
  const json *maximum = r.any("maximum");
  for (auto [key, v] : {std::pair{"minimum", minimum}, {"maximum", maximum}})
    if (v && !v->is_number())
      checker.error(r.child(key),
                    "must be a number, not " + describeType(*v));
  onlyFor("minimum", {"integer", "number"}, "integer and number");
  onlyFor("maximum", {"integer", "number"}, "integer and number");
  if (minimum && maximum && minimum->is_number() && maximum->is_number() &&
      minimum->get<double>() > maximum->get<double>())
    checker.error(r.child("minimum"), "minimum " + show(*minimum) +
                                          " is greater than maximum " +
                                          show(*maximum));
  if (auto pattern = r.string("pattern", Need::Optional, false)) {
    std::string problem = regexProblem(*pattern);
    if (!problem.empty())
      checker.error(r.child("pattern"),
                    "\"" + *pattern +
                        "\" is not a valid regular expression: " + problem,
                    "patterns use ECMAScript regular expression syntax");
  }
  onlyFor("pattern", {"string"}, "string");
  if (const json *items = r.any("items")) {
    onlyFor("items", {"array"}, "array");
    checkOptionSchema(checker, *items, r.child("items"));
  } else if (type == "array") {
    checker.error(ptr, "missing required field \"items\"",
                  "array options say what their items are");
  }
  auto minItems = r.integer("minItems");
  auto maxItems = r.integer("maxItems");
  for (auto [key, v] : {std::pair{"minItems", minItems}, {"maxItems", maxItems}})
    if (v && *v < 0)
      checker.error(r.child(key), "must not be negative");
  if (minItems && maxItems && *minItems > *maxItems)
    checker.error(r.child("minItems"), "minItems " + std::to_string(*minItems) +
                                           " is greater than maxItems " +
                                           std::to_string(*maxItems));
  onlyFor("minItems", {"array"}, "array");
  onlyFor("maxItems", {"array"}, "array");
  r.string("description", Need::Optional, false);
  const json *def = r.any("default");
  r.finish();
  // Only judge the default against a schema that is itself sound.
  if (def && checker.errorCount() == errorsBefore && !type.empty()) {
    std::string problem = optionValueProblem(schema, *def);
    if (!problem.empty())
      checker.error(r.child("default"),
                    "default does not satisfy the option's own schema: " +
                        problem);
  }
}

} // namespace detail
} // namespace ireepkg
