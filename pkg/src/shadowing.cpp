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

#include "ireepkg/pkg/file_util.h"
#include "ireepkg/pkg/state.h"

#include <map>

#include <simdjson.h>

namespace ireepkg {

std::vector<ShadowedImport> shadowedImports(const std::string &prefix) {
  std::vector<ShadowedImport> out;
  std::string file = prefix + "/state/" + kActivationFile;
  if (!fsutil::exists(file))
    return out;
  auto text = fsutil::readFile(file, 64ull << 20);
  if (!text)
    return out;
  // Only "runtime" matters, in a file that lists every package too (a
  // prefix of 1,000 packages has 200 KB of them, which a DOM parse with
  // nlohmann takes ~2 ms over, at every install and sync): simdjson parses
  // it in a tenth of that. A file that does not parse has nothing to say.
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text->data(), text->size()).get(root))
    return out;
  simdjson::dom::array runtime;
  if (root["runtime"].get_array().get(runtime))
    return out;
  // import -> the packages declaring it, in registration order, each with
  // its last plugin declaring it.
  std::map<std::string, std::vector<RuntimePluginRef>> providers;
  for (simdjson::dom::element r : runtime) {
    simdjson::dom::array imports;
    if (r["imports"].get_array().get(imports))
      continue;
    auto text = [&](const char *key) {
      std::string_view v;
      return r[key].get_string().get(v) ? std::string() : std::string(v);
    };
    RuntimePluginRef ref{text("package"), text("name")};
    for (simdjson::dom::element i : imports) {
      std::string_view name;
      if (i.get_string().get(name))
        continue;
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
