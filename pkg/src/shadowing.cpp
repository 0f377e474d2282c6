//===- shadowing.cpp - Imports more than one package provides ------------===//
//
// IREE's runtime asks the registered executable plugins for imports in
// reverse registration order (the last --executable_plugin first), and a
// plugin skips what a later one already filled in. The prefix registers
// its runtime plugins in activation order (runtime.flags), so of several
// packages declaring the same import, the one activated last is used.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/prefix.h"
#include "ireepkg/manifest_schema/json_document.h"

#include "ireepkg/pkg/file_util.h"
#include "ireepkg/pkg/state.h"

#include <map>

#include <nlohmann/json.hpp>

namespace ireepkg {

std::vector<ShadowedImport> shadowedImports(const std::string &prefix) {
  std::vector<ShadowedImport> out;
  std::string file = prefix + "/state/" + kActivationFile;
  if (!fsutil::exists(file))
    return out;
  auto text = fsutil::readFile(file, 64ull << 20);
  if (!text)
    return out;
  nlohmann::json j = parseJsonOrDiscarded(*text);
  if (!j.is_object() || !j.contains("runtime") || !j["runtime"].is_array())
    return out;
  // import -> the packages declaring it, in registration order, each with
  // its last plugin declaring it.
  std::map<std::string, std::vector<RuntimePluginRef>> providers;
  for (const nlohmann::json &r : j["runtime"]) {
    if (!r.is_object() || !r.contains("imports") || !r["imports"].is_array())
      continue;
    auto text = [&](const char *key) {
      auto it = r.find(key);
      return it != r.end() && it->is_string() ? it->get<std::string>() : "";
    };
    RuntimePluginRef ref{text("package"), text("name")};
    for (const nlohmann::json &i : r["imports"]) {
      if (!i.is_string())
        continue;
      auto &list = providers[i.get<std::string>()];
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
