//===- compiler_integration/src/compiler_index.cpp ------------------------===//
// The stored compiler inputs.
#include "ireepkg/compiler_integration/compiler_index.h"
#include "ireepkg/manifest_schema/json_document.h"

#include <nlohmann/json.hpp>

namespace ireepkg {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

std::string encodeCompilerIndex(const std::vector<ActivatedPackage> &packages,
                                const std::string &platform,
                                const ProjectSettings &project) {
  ojson j;
  j["schema_version"] = 1;
  j["platform"] = platform;
  ojson values = ojson::object();
  for (const auto &[pkg, opts] : project.values)
    for (const auto &[flag, v] : opts)
      values[pkg][flag] = ojson::parse(v.dump());
  j["project"] = {{"options", values}, {"choose", project.choose}};
  j["packages"] = ojson::array();
  for (const ActivatedPackage &p : packages) {
    ojson pkg = {{"name", p.name}, {"version", p.version.str()},
                 {"dir", p.dir}};
    pkg["plugins"] = ojson::array();
    for (const CompilerPlugin &cp : p.manifest->compilerPlugins) {
      ojson o = {{"id", cp.id},
                 {"kind", std::string(compilerPluginKindName(cp.kind))},
                 {"entry_point", cp.entryPoint},
                 {"library", cp.library}};
      if (cp.apiVersion)
        o["api_version"] = *cp.apiVersion;
      if (!cp.abiHash.empty())
        o["abi_hash"] = cp.abiHash;
      ojson opts = ojson::object();
      for (const auto &[flag, schema] : cp.options)
        opts[flag] = ojson::parse(schema.dump());
      o["options"] = opts;
      pkg["plugins"].push_back(std::move(o));
    }
    pkg["hooks"] = ojson::array();
    for (const Hook &h : p.manifest->hooks) {
      ojson o = {{"point", std::string(hookPointName(h.point))}};
      for (auto [key, value] :
           {std::pair{"pipeline", &h.pipeline}, {"tool", &h.tool},
            {"file", &h.file}, {"sequence", &h.sequence}, {"value", &h.value}})
        if (!value->empty())
          o[key] = *value;
      if (!h.paths.empty())
        o["path"] = h.paths;
      if (h.iree)
        o["iree"] = h.iree->text();
      pkg["hooks"].push_back(std::move(o));
    }
    j["packages"].push_back(std::move(pkg));
  }
  return j.dump(1) + "\n";
}

Expected<CompilerIndex> decodeCompilerIndex(std::string_view text,
                                            const std::string &path) {
  auto bad = [&](const std::string &why) {
    return makeError(ErrorCode::Integrity,
                     "the prefix's compiler index is corrupted: " + why,
                     Location::inFile(path),
                     "run `ireepkg verify`; reinstalling a package rewrites it");
  };
  json j = parseJsonOrDiscarded(text);
  if (!j.is_object())
    return bad("not valid JSON");
  // Not j.value("schema_version", 0): that throws when the member is there
  // but is not a number.
  auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer() || *version != 1)
    return makeError(ErrorCode::Unsupported,
                     "the compiler index was written by another ireepkg",
                     Location::inFile(path),
                     "reinstall a package to rewrite it");
  CompilerIndex idx;
  try {
    idx.platform = j.at("platform").get<std::string>();
    const json &proj = j.at("project");
    for (auto p = proj.at("options").begin(); p != proj.at("options").end(); ++p)
      for (auto f = p->begin(); f != p->end(); ++f)
        idx.project.values[p.key()][f.key()] = *f;
    idx.project.choose =
        proj.at("choose").get<std::map<std::string, std::string>>();
    for (const json &pkg : j.at("packages")) {
      Manifest &m = idx.manifests.emplace_back();
      m.name = pkg.at("name").get<std::string>();
      auto v = Version::parse(pkg.at("version").get<std::string>());
      if (!v)
        return bad("a malformed version");
      m.version = *v;
      for (const json &o : pkg.at("plugins")) {
        CompilerPlugin cp;
        cp.id = o.at("id").get<std::string>();
        std::string kind = o.at("kind").get<std::string>();
        bool known = false;
        for (auto k : {CompilerPluginKind::IreeStatic,
                       CompilerPluginKind::IreeDynamic,
                       CompilerPluginKind::MlirPassPlugin,
                       CompilerPluginKind::MlirDialectPlugin})
          if (compilerPluginKindName(k) == kind) {
            cp.kind = k;
            known = true;
          }
        if (!known)
          return bad("unknown plugin kind \"" + kind + "\"");
        cp.entryPoint = o.value("entry_point", "");
        cp.library = o.at("library").get<std::map<std::string, std::string>>();
        if (o.contains("api_version"))
          cp.apiVersion = o.at("api_version").get<int64_t>();
        cp.abiHash = o.value("abi_hash", "");
        for (auto f = o.at("options").begin(); f != o.at("options").end(); ++f)
          cp.options.emplace(f.key(), *f);
        m.compilerPlugins.push_back(std::move(cp));
      }
      for (const json &o : pkg.at("hooks")) {
        Hook h;
        auto point = parseHookPoint(o.at("point").get<std::string>());
        if (!point)
          return bad("unknown hook point");
        h.point = *point;
        h.pipeline = o.value("pipeline", "");
        h.tool = o.value("tool", "");
        h.file = o.value("file", "");
        h.sequence = o.value("sequence", "");
        h.value = o.value("value", "");
        if (o.contains("path"))
          h.paths = o.at("path").get<std::map<std::string, std::string>>();
        if (o.contains("iree")) {
          auto c = Constraint::parse(o.at("iree").get<std::string>());
          if (!c)
            return bad("a malformed IREE version range");
          h.iree = *c;
        }
        m.hooks.push_back(std::move(h));
      }
      idx.packages.push_back(
          {m.name, m.version, pkg.at("dir").get<std::string>(), &m});
    }
  } catch (const json::exception &) {
    return bad("a malformed entry");
  }
  return idx;
}

} // namespace ireepkg
