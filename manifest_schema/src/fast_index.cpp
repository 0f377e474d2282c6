//===- manifest_schema/src/fast_index.cpp ---------------------------------===//
//
// Registry index files, fast path.
//
// See fast_index.h. simdjson (Debian's libsimdjson) parses and validates
// the whole document (syntax, UTF-8, control characters in strings) in
// one pass; the walk below then states parseRegistryIndex's rules
// (registry_files.cpp, checker.cpp) again, reading each field in the same
// order, and gives up at the first thing that parser would report or that
// this one does not handle. Keep the two in step: the unit tests and
// fuzz_registry_index compare them on every input.
//
// What JsonDocument checks beyond simdjson is checked here: duplicate keys
// (each field is taken at most once; a repeated dependency fails to
// insert); \u escapes (whose surrogate rules differ between parsers), a
// byte order mark and NUL bytes are left to the checking parser altogether.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/fast_index.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/semver.h"

#include <simdjson.h>

#include <map>
#include <set>
#include <string>

namespace ireepkg {

bool leftToCheckingParser(std::string_view text) {
  return text.find("\\u") != std::string_view::npos ||
         text.starts_with("\xEF\xBB\xBF") ||
         text.find('\0') != std::string_view::npos ||
         text.size() > JsonParseOptions{}.maxBytes;
}

bool isSha256Hex(std::string_view s); // registry_files.cpp

namespace {

namespace dom = simdjson::dom;

/// An object's fields by name, each at most once; false on a duplicate or
/// a name not in `names`.
template <size_t N>
bool fields(dom::object object, const std::string_view (&names)[N],
            std::optional<dom::element> (&out)[N]) {
  for (dom::key_value_pair kv : object) {
    size_t i = 0;
    while (i < N && names[i] != kv.key)
      ++i;
    if (i == N || out[i])
      return false;
    out[i] = kv.value;
  }
  return true;
}

/// A string field: present (when required) and a string.
bool string(const std::optional<dom::element> &e, std::string_view &out) {
  return e && e->get_string().get(out) == simdjson::SUCCESS;
}

/// At most 200 code points (Checker::summary).
bool summaryFits(std::string_view s) {
  size_t chars = 0;
  for (unsigned char ch : s)
    chars += (ch & 0xC0) != 0x80;
  return chars <= 200;
}

/// Valid constraint texts already parsed by this thread, in any file (the
/// checking parser's Checker keeps those of one file): the ~980 index files
/// of a large resolution hold ~53,000 constraints, ~12,000 distinct within
/// their files but only ~700 distinct in all. Constraint::parse depends on
/// the text alone. Bounded: emptied when it reaches kMaxKept texts.
class Constraints {
public:
  static constexpr size_t kMaxKept = 1u << 14;
  const Constraint *get(std::string_view text) {
    if (auto it = seen_.find(text); it != seen_.end())
      return &it->second;
    auto c = Constraint::parse(text);
    if (!c)
      return nullptr;
    if (seen_.size() >= kMaxKept)
      seen_.clear(); // what get() returns is copied at once
    return &seen_.emplace(std::string(text), std::move(*c)).first->second;
  }

private:
  std::map<std::string, Constraint, std::less<>> seen_;
};

bool readEntry(dom::element value, const std::string &indexName,
               std::vector<Version> &seen, Constraints &constraints,
               IndexEntry &e) {
  dom::object object;
  if (value.get_object().get(object))
    return false;
  static constexpr std::string_view kNames[] = {
      "version", "summary", "dependencies", "requires", "platforms",
      "archive", "sha256",  "size",         "yanked"};
  std::optional<dom::element> f[std::size(kNames)];
  if (!fields(object, kNames, f))
    return false;
  auto &[version, summary, dependencies, requires_, platforms, archive, sha256,
         size, yanked] = f;

  std::string_view text;
  if (!string(version, text))
    return false;
  auto v = Version::parse(text);
  if (!v)
    return false;
  for (const Version &other : seen)
    if (other == *v)
      return false;
  seen.push_back(*v);
  e.version = std::move(*v);

  if (summary) {
    if (!string(summary, text) || !summaryFits(text))
      return false;
    e.summary = text;
  }

  if (dependencies) {
    dom::object deps;
    if (dependencies->get_object().get(deps))
      return false;
    for (dom::key_value_pair kv : deps) {
      if (!isValidPackageName(kv.key) || kv.key == indexName ||
          kv.value.get_string().get(text) != simdjson::SUCCESS)
        return false;
      const Constraint *c = constraints.get(text);
      if (!c || !e.dependencies.emplace(std::string(kv.key), *c).second)
        return false;
    }
  }

  if (requires_) {
    dom::object req;
    if (requires_->get_object().get(req))
      return false;
    static constexpr std::string_view kReqNames[] = {"iree"};
    std::optional<dom::element> rf[1];
    if (!fields(req, kReqNames, rf))
      return false;
    if (rf[0]) {
      if (!string(rf[0], text))
        return false;
      const Constraint *c = constraints.get(text);
      if (!c)
        return false;
      e.requiresIree = *c;
    }
  }

  dom::array plats;
  if (!platforms || platforms->get_array().get(plats))
    return false;
  std::set<std::string_view> names;
  for (dom::element p : plats) {
    if (p.get_string().get(text) || text.empty() || !names.insert(text).second)
      return false;
    auto pl = Platform::parse(text);
    if (!pl)
      return false;
    e.platforms.push_back(*pl);
  }

  if (!string(archive, text) || text.empty() ||
      !packagePathProblem(text).empty())
    return false;
  e.archive = text;

  if (!string(sha256, text) || !isSha256Hex(text))
    return false;
  e.sha256 = text;

  // An integer that fits int64_t and is not negative (simdjson gives
  // larger ones as UINT64, which the checking parser calls too large).
  int64_t n = 0;
  if (!size || size->type() != dom::element_type::INT64 ||
      size->get_int64().get(n) || n < 0)
    return false;
  e.size = static_cast<uint64_t>(n);

  if (yanked && yanked->get_bool().get(e.yanked))
    return false;
  return true;
}

/// The root object of `text`, parsed by `parser`; nullopt for anything the
/// checking parser must see.
std::optional<dom::object> parseRoot(dom::parser &parser,
                                     std::string_view text) {
  if (leftToCheckingParser(text))
    return std::nullopt;
  dom::element root;
  if (parser.parse(text.data(), text.size()).get(root))
    return std::nullopt;
  dom::object object;
  if (root.get_object().get(object))
    return std::nullopt;
  return object;
}

/// schema_version: an integer from 1 to the newest this build reads.
bool schemaVersionOk(const std::optional<dom::element> &e) {
  int64_t v = 0;
  return e && e->type() == dom::element_type::INT64 &&
         e->get_int64().get(v) == simdjson::SUCCESS && v >= 1 &&
         v <= kSchemaVersion;
}

} // namespace

std::optional<RegistryIndex> parseCleanRegistryIndex(std::string_view text) {
  thread_local dom::parser parser;
  auto object = parseRoot(parser, text);
  if (!object)
    return std::nullopt;
  static constexpr std::string_view kNames[] = {"schema_version", "name",
                                                "versions"};
  std::optional<dom::element> f[std::size(kNames)];
  if (!fields(*object, kNames, f))
    return std::nullopt;
  auto &[schema, name, versions] = f;
  if (!schemaVersionOk(schema))
    return std::nullopt;

  RegistryIndex idx;
  std::string_view nameText;
  if (!string(name, nameText) || !isValidPackageName(nameText))
    return std::nullopt;
  idx.name = nameText;

  dom::array entries;
  if (!versions || versions->get_array().get(entries))
    return std::nullopt;
  idx.versions.reserve(entries.size());
  std::vector<Version> seen;
  thread_local Constraints constraints;
  for (dom::element value : entries) {
    IndexEntry e;
    if (!readEntry(value, idx.name, seen, constraints, e))
      return std::nullopt;
    idx.versions.push_back(std::move(e));
  }
  return idx;
}

std::optional<RegistrySnapshot>
parseCleanRegistrySnapshot(std::string_view text) {
  thread_local dom::parser parser;
  auto object = parseRoot(parser, text);
  if (!object)
    return std::nullopt;
  static constexpr std::string_view kNames[] = {"schema_version", "version",
                                                "expires", "index"};
  std::optional<dom::element> f[std::size(kNames)];
  if (!fields(*object, kNames, f))
    return std::nullopt;
  auto &[schema, version, expires, index] = f;
  if (!schemaVersionOk(schema))
    return std::nullopt;

  RegistrySnapshot s;
  // version: an integer from 1 (larger than int64_t: UINT64, refused).
  if (!version || version->type() != dom::element_type::INT64 ||
      version->get_int64().get(s.version) || s.version < 1)
    return std::nullopt;

  std::string_view expiresText;
  if (!string(expires, expiresText) || expiresText.empty())
    return std::nullopt;
  auto seconds = parseRfc3339(expiresText);
  if (!seconds)
    return std::nullopt;
  s.expires = expiresText;
  s.expiresUnix = *seconds;

  dom::object entries;
  if (!index || index->get_object().get(entries))
    return std::nullopt;
  for (dom::key_value_pair kv : entries) {
    std::string_view hash;
    if (!isValidPackageName(kv.key) ||
        kv.value.get_string().get(hash) != simdjson::SUCCESS ||
        !hash.starts_with("sha256:") || !isSha256Hex(hash.substr(7)))
      return std::nullopt;
    // Keys come sorted from ireepkg's writers: hint at the end.
    auto before = s.index.size();
    s.index.emplace_hint(s.index.end(), std::string(kv.key), hash);
    if (s.index.size() == before)
      return std::nullopt; // a repeated key
  }
  return s;
}

} // namespace ireepkg
