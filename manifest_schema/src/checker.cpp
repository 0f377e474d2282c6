//===- manifest_schema/src/checker.cpp ------------------------------------===//
// Walking a JsonDocument with diagnostics.
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "checker.h"

#include <set>

namespace ireepkg::detail {

std::string describeType(const json &value) { return describeJsonType(value); }

} // namespace ireepkg::detail

namespace ireepkg {

std::string describeJsonType(const nlohmann::json &value) {
  switch (value.type()) {
  case nlohmann::json::value_t::null:
    return "null";
  case nlohmann::json::value_t::boolean:
    return "a boolean";
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
    return "an integer";
  case nlohmann::json::value_t::number_float:
    return "a number";
  case nlohmann::json::value_t::string:
    return "a string";
  case nlohmann::json::value_t::array:
    return "an array";
  case nlohmann::json::value_t::object:
    return "an object";
  default:
    return "an unsupported value";
  }
}

} // namespace ireepkg

namespace ireepkg::detail {

std::optional<Version> Checker::version(const json &value,
                                        const std::string &ptr) {
  if (!value.is_string()) {
    error(ptr, "must be a string, not " + describeType(value));
    return std::nullopt;
  }
  auto v = Version::parse(value.get<std::string>());
  if (!v) {
    error(ptr, v.error().message, v.error().hint);
    return std::nullopt;
  }
  return *v;
}

std::optional<Constraint> Checker::constraint(const json &value,
                                              const std::string &ptr) {
  if (!value.is_string()) {
    error(ptr, "must be a string, not " + describeType(value));
    return std::nullopt;
  }
  const std::string &text = value.get_ref<const std::string &>();
  if (auto it = constraints_.find(text); it != constraints_.end())
    return it->second;
  auto c = Constraint::parse(text);
  if (!c) {
    error(ptr, c.error().message, c.error().hint);
    return std::nullopt;
  }
  constraints_.emplace(text, *c);
  return *c;
}

bool Checker::packageName(const std::string &name, const std::string &ptr,
                          const std::string &keyPtr) {
  if (isValidPackageName(name))
    return true;
  std::string message = "\"" + name + "\" is not a valid package name";
  if (keyPtr.empty())
    error(ptr, message, kPackageNameRule);
  else
    errorAtKey(keyPtr, ptr, message, kPackageNameRule);
  return false;
}

bool Checker::optionFlagName(const std::string &flag,
                             const std::string &mapPtr,
                             const std::string &keyPtr) {
  bool ok = !flag.empty() &&
            ((flag[0] >= 'a' && flag[0] <= 'z') ||
             (flag[0] >= '0' && flag[0] <= '9')) &&
            flag.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._-") ==
                std::string::npos;
  if (ok)
    return true;
  std::string msg = flag.rfind('-', 0) == 0
                        ? "\"" + flag + "\" must be written without leading "
                                        "dashes"
                        : "\"" + flag + "\" is not a valid flag name";
  errorAtKey(keyPtr, mapPtr, msg,
             "option keys are the full flag name without leading dashes, in "
             "lowercase, e.g. \"iree-my-plugin-tile\"");
  return false;
}

void Checker::summary(const std::string &text, const std::string &ptr) {
  size_t chars = 0; // UTF-8 code points, as JSON Schema's maxLength counts
  for (unsigned char ch : text)
    chars += (ch & 0xC0) != 0x80;
  if (chars > 200)
    error(ptr,
          "is " + std::to_string(chars) + " characters; a summary is at most 200",
          "move the details to \"description\"");
}

bool Checker::packagePath(const std::string &path, const std::string &ptr) {
  std::string problem = packagePathProblem(path);
  if (problem.empty())
    return true;
  error(ptr, "\"" + path + "\" is " + problem,
        "paths are relative to the package root, '/'-separated, and stay "
        "inside the package");
  return false;
}

void Checker::schemaVersion(const json &value, const std::string &ptr,
                            const char *fieldName) {
  if (!value.is_number_integer()) {
    error(ptr, "must be an integer, not " + describeType(value));
    return;
  }
  int64_t v = value.get<int64_t>();
  if (v > kSchemaVersion)
    error(ptr,
          std::string(fieldName) + " " + std::to_string(v) +
              " is newer than this ireepkg understands (it reads " +
              std::to_string(kSchemaVersion) + ")",
          "upgrade ireepkg to read this file");
  else if (v < 1)
    error(ptr, std::string(fieldName) + " must be 1, not " + std::to_string(v));
}

ObjectReader::ObjectReader(Checker &checker, const json &value,
                           std::string ptr)
    : checker_(checker), ptr_(std::move(ptr)) {
  if (value.is_object())
    object_ = &value;
  else
    checker_.error(ptr_, "must be an object, not " + describeType(value));
}

bool ObjectReader::has(const std::string &key) const {
  return object_ && object_->contains(key);
}

const json *ObjectReader::get(const std::string &key, Need need,
                              json::value_t type, const char *typeName) {
  known_.insert(key);
  if (!object_)
    return nullptr;
  auto it = object_->find(key);
  if (it == object_->end()) {
    if (need == Need::Required)
      checker_.error(ptr_, "missing required field \"" + key + "\"");
    return nullptr;
  }
  const json &v = *it;
  bool matches = v.type() == type ||
                 (type == json::value_t::number_integer &&
                  v.is_number_unsigned());
  if (type != json::value_t::discarded && !matches) {
    checker_.error(child(key), std::string("must be ") + typeName + ", not " +
                                   describeType(v));
    return nullptr;
  }
  return &v;
}

const json *ObjectReader::any(const std::string &key, Need need) {
  return get(key, need, json::value_t::discarded, "");
}

std::optional<std::string> ObjectReader::string(const std::string &key,
                                                Need need, bool nonEmpty) {
  const json *v = get(key, need, json::value_t::string, "a string");
  if (!v)
    return std::nullopt;
  std::string s = v->get<std::string>();
  if (nonEmpty && s.empty()) {
    checker_.error(child(key), "must not be empty");
    return std::nullopt;
  }
  return s;
}

std::optional<int64_t> ObjectReader::integer(const std::string &key,
                                             Need need) {
  const json *v = get(key, need, json::value_t::number_integer, "an integer");
  if (!v)
    return std::nullopt;
  if (v->is_number_unsigned() &&
      v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    checker_.error(child(key), "is too large");
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<bool> ObjectReader::boolean(const std::string &key, Need need) {
  const json *v = get(key, need, json::value_t::boolean, "a boolean");
  if (!v)
    return std::nullopt;
  return v->get<bool>();
}

const json *ObjectReader::array(const std::string &key, Need need) {
  return get(key, need, json::value_t::array, "an array");
}

const json *ObjectReader::object(const std::string &key, Need need) {
  return get(key, need, json::value_t::object, "an object");
}

std::optional<std::vector<std::string>>
ObjectReader::stringArray(const std::string &key, Need need, bool unique) {
  const json *arr = array(key, need);
  if (!arr)
    return std::nullopt;
  std::vector<std::string> out;
  std::set<std::string> seen;
  bool ok = true;
  for (size_t i = 0; i < arr->size(); ++i) {
    std::string p = child(key) + "/" + std::to_string(i);
    const json &item = (*arr)[i];
    if (!item.is_string()) {
      checker_.error(p, "must be a string, not " + describeType(item));
      ok = false;
      continue;
    }
    std::string s = item.get<std::string>();
    if (s.empty()) {
      checker_.error(p, "must not be empty");
      ok = false;
      continue;
    }
    if (unique && !seen.insert(s).second) {
      checker_.error(p, "\"" + s + "\" is listed more than once");
      ok = false;
      continue;
    }
    out.push_back(std::move(s));
  }
  if (!ok)
    return std::nullopt;
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>>
ObjectReader::stringMap(const std::string &key, Need need) {
  const json *obj = object(key, need);
  if (!obj)
    return std::nullopt;
  std::vector<std::pair<std::string, std::string>> out;
  bool ok = true;
  for (auto it = obj->begin(); it != obj->end(); ++it) {
    std::string p = child(key) + "/" + jsonPointerEscape(it.key());
    if (!it->is_string()) {
      checker_.error(p, "must be a string, not " + describeType(*it));
      ok = false;
      continue;
    }
    out.emplace_back(it.key(), it->get<std::string>());
  }
  if (!ok)
    return std::nullopt;
  return out;
}

void ObjectReader::finish() {
  if (!object_)
    return;
  std::vector<std::string> known(known_.begin(), known_.end());
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (known_.count(it.key()))
      continue;
    checker_.strictProblem(
        child(it.key()),
        "unknown field \"" + it.key() + "\"" +
            didYouMean(it.key(), std::span<const std::string>(known)),
        checker_.strict()
            ? "remove it or fix its spelling (see docs/manifest-reference.md)"
            : "this file may have been written by a newer ireepkg; the field "
              "is ignored");
  }
}

} // namespace ireepkg::detail
