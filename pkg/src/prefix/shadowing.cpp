//===- pkg/src/prefix/shadowing.cpp - Imports several packages provide ----===//
//
// IREE's runtime asks the registered executable plugins for imports in
// reverse registration order (the last --executable_plugin first), and a
// plugin skips what a later one already filled in. The prefix registers
// its runtime plugins in activation order (runtime.flags), so of several
// packages declaring the same import, the one activated last is used.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/prefix/shadowing.h"
#include "ireepkg/pkg/prefix/prefix.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/prefix/state.h"

#include <map>

#include <simdjson.h>

namespace ireepkg {

std::string activationPrefix(const std::string &prefix) {
  std::string file = prefix + "/state/" + kActivationFile;
  auto stamp = fsutil::fileStamp(file);
  if (!stamp || stamp->size > (64ull << 20))
    return {};
  // "prefix" comes before the lists of packages: On-Demand stops there.
  simdjson::padded_string json;
  if (simdjson::padded_string::load(file).get(json))
    return {};
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  std::string_view written;
  if (parser.iterate(json).get(doc) || doc["prefix"].get_string().get(written))
    return {};
  return std::string(written);
}

std::vector<ShadowedImport> shadowedImports(const std::string &prefix) {
  std::vector<ShadowedImport> out;
  std::string file = prefix + "/state/" + kActivationFile;
  auto stamp = fsutil::fileStamp(file);
  if (!stamp || stamp->size > (64ull << 20))
    return out;
  // Only "runtime" matters, in a file that lists every package too (a
  // prefix of 1,000 packages has 200 KB of them, which a DOM parse with
  // nlohmann takes ~2 ms over, at every install and sync). simdjson's
  // On-Demand parser reads just that array: its DOM parser took 2.4 MB of
  // fresh memory for those 200 KB, more than half of a no-op sync's heap.
  // A file that does not parse has nothing to say.
  simdjson::padded_string json;
  if (simdjson::padded_string::load(file).get(json))
    return out;
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::ondemand::array runtime;
  if (parser.iterate(json).get(doc) || doc["runtime"].get_array().get(runtime))
    return out;
  // A field that is missing or of another type is skipped, as it was;
  // any other error is a file that does not parse.
  auto skippable = [](simdjson::error_code e) {
    return e == simdjson::NO_SUCH_FIELD || e == simdjson::INCORRECT_TYPE;
  };
  // import -> the packages declaring it, in registration order, each with
  // its last plugin declaring it.
  std::map<std::string, std::vector<RuntimePluginRef>> providers;
  for (auto element : runtime) {
    simdjson::ondemand::object r;
    if (auto e = element.get_object().get(r)) {
      if (skippable(e))
        continue;
      return out;
    }
    // Fields in any order (find_field_unordered); each string is copied
    // before the next field is looked up.
    RuntimePluginRef ref;
    for (auto [key, to] :
         {std::pair{"package", &ref.package}, std::pair{"name", &ref.plugin}}) {
      std::string_view v;
      if (auto e = r[key].get_string().get(v); e && !skippable(e))
        return out;
      else if (!e)
        *to = std::string(v);
    }
    simdjson::ondemand::array imports;
    if (auto e = r["imports"].get_array().get(imports)) {
      if (skippable(e))
        continue;
      return out;
    }
    for (auto i : imports) {
      std::string_view name;
      if (auto e = i.get_string().get(name)) {
        if (skippable(e))
          continue;
        return out;
      }
      auto &list = providers[std::string(name)];
      std::erase_if(list, [&](const RuntimePluginRef &p) {
        return p.package == ref.package;
      });
      list.push_back(ref);
    }
  }
  for (auto &[name, list] : providers) {
    if (list.size() < 2)
      continue;
    ShadowedImport s;
    s.import = name;
    s.used = list.back();
    for (auto it = list.rbegin() + 1; it != list.rend(); ++it)
      s.shadowed.push_back(*it);
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace ireepkg
