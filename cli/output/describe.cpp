//===- cli/output/describe.cpp - Manifests and imports, shown -------------===//
#include "output/describe.h"

#include <cstdio>
#include <set>

namespace ireepkg::cli {

std::string shadowedImportsText(const std::vector<ShadowedImport> &imports) {
  std::string out;
  auto who = [](const RuntimePluginRef &r) {
    return r.package + " (" + r.plugin + ")";
  };
  for (const ShadowedImport &s : imports) {
    std::string others;
    for (const RuntimePluginRef &r : s.shadowed)
      others += (others.empty() ? "" : ", ") + who(r);
    out += "import " + s.import + ": IREE uses " + who(s.used) +
           ", activated last; shadowed: " + others + "\n";
  }
  return out;
}

nlohmann::json
shadowedImportsToJson(const std::vector<ShadowedImport> &imports) {
  nlohmann::json out = nlohmann::json::array();
  auto ref = [](const RuntimePluginRef &r) {
    return nlohmann::json{{"package", r.package}, {"plugin", r.plugin}};
  };
  for (const ShadowedImport &s : imports) {
    nlohmann::json shadowed = nlohmann::json::array();
    for (const RuntimePluginRef &r : s.shadowed)
      shadowed.push_back(ref(r));
    out.push_back(
        {{"import", s.import}, {"used", ref(s.used)}, {"shadowed", shadowed}});
  }
  return out;
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B",
                  static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

nlohmann::json manifestToJson(const Manifest &m) {
  nlohmann::json j = {{"name", m.name}, {"version", m.version.str()}};
  if (!m.summary.empty())
    j["summary"] = m.summary;
  if (!m.license.empty())
    j["license"] = m.license;
  if (m.requiresIree)
    j["requires"] = {{"iree", m.requiresIree->text()}};
  nlohmann::json deps = nlohmann::json::object();
  for (const auto &[n, c] : m.dependencies)
    deps[n] = c.text();
  j["dependencies"] = deps;
  std::set<std::string> platforms;
  nlohmann::json compiler = nlohmann::json::array();
  for (const CompilerPlugin &p : m.compilerPlugins) {
    nlohmann::json o = {{"id", p.id},
                        {"kind", std::string(compilerPluginKindName(p.kind))}};
    if (!p.entryPoint.empty())
      o["entry_point"] = p.entryPoint;
    if (!p.abiHash.empty())
      o["abi_hash"] = p.abiHash;
    nlohmann::json lib = nlohmann::json::object();
    for (const auto &[k, v] : p.library) {
      lib[k] = v;
      platforms.insert(k);
    }
    if (!p.library.empty())
      o["library"] = lib;
    nlohmann::json opts = nlohmann::json::object();
    for (const auto &[flag, schema] : p.options)
      opts[flag] = schema;
    o["options"] = opts;
    compiler.push_back(o);
  }
  j["compiler_plugins"] = compiler;
  nlohmann::json hooks = nlohmann::json::array();
  for (const Hook &h : m.hooks) {
    nlohmann::json o = {{"point", std::string(hookPointName(h.point))}};
    if (!h.pipeline.empty())
      o["pipeline"] = h.pipeline;
    if (!h.tool.empty())
      o["tool"] = h.tool;
    if (!h.file.empty())
      o["file"] = h.file;
    if (!h.sequence.empty())
      o["sequence"] = h.sequence;
    if (!h.value.empty())
      o["value"] = h.value;
    if (!h.paths.empty())
      o[h.point == HookPoint::TuningSpec ? "targets" : "path"] = h.paths;
    if (h.iree)
      o["iree"] = h.iree->text();
    hooks.push_back(o);
  }
  j["hooks"] = hooks;
  nlohmann::json runtime = nlohmann::json::array();
  for (const RuntimePlugin &p : m.runtimePlugins) {
    for (const auto &[k, v] : p.library)
      platforms.insert(k);
    runtime.push_back({{"name", p.name},
                       {"format", std::string(runtimeFormatName(p.format))},
                       {"library", p.library},
                       {"imports", p.imports},
                       {"parameters", p.parameters}});
  }
  j["runtime_plugins"] = runtime;
  j["platforms"] =
      platforms.empty() ? nlohmann::json("any") : nlohmann::json(platforms);
  return j;
}

std::string describeManifest(const Manifest &m, const std::string &in) {
  std::string out;
  if (!m.summary.empty())
    out += in + "summary: " + m.summary + "\n";
  if (!m.license.empty())
    out += in + "license: " + m.license + "\n";
  if (m.requiresIree)
    out += in + "requires: iree " + m.requiresIree->text() + "\n";
  if (!m.dependencies.empty()) {
    out += in + "dependencies:";
    for (const auto &[n, c] : m.dependencies)
      out += " " + n + " " + c.text() + ";";
    out.pop_back();
    out += "\n";
  }
  for (const CompilerPlugin &p : m.compilerPlugins) {
    out += in + "compiler plugin " + p.id + " (" +
           std::string(compilerPluginKindName(p.kind)) + ")";
    for (const auto &[k, v] : p.library) {
      out += "\n" + in + "    " + k + ": " + v;
      if (p.kind == CompilerPluginKind::IreeDynamic &&
          k.rfind("windows-", 0) == 0)
        out += " (never activated: IREE loads no dynamic plugins on Windows)";
    }
    out += "\n";
    if (p.kind == CompilerPluginKind::IreeDynamic)
      out += in + "    activated (--iree-load-plugin, --iree-plugin=" + p.id +
             ") when its plugin ABI hash" +
             (p.abiHash.empty() ? std::string() : " (" + p.abiHash + ")") +
             " is the compiler's\n";
    for (const auto &[flag, schema] : p.options) {
      out += in + "    option --" + flag + ": " + schema.value("type", "?");
      if (schema.contains("default"))
        out += " (default " + schema["default"].dump() + ")";
      if (schema.contains("description"))
        out += " - " + schema["description"].get<std::string>();
      out += "\n";
    }
  }
  for (const Hook &h : m.hooks) {
    out += in + "hook " + std::string(hookPointName(h.point)) + ": ";
    if (!h.pipeline.empty())
      out += h.pipeline;
    else if (!h.tool.empty())
      out += h.tool;
    else if (!h.file.empty())
      out += h.file + (h.sequence.empty() ? "" : "@" + h.sequence);
    else if (!h.value.empty())
      out += h.value;
    else
      for (const auto &[a, d] : h.paths)
        out += a + "=" + d + " ";
    if (h.iree)
      out += " (IREE " + h.iree->text() + ")";
    if (h.point == HookPoint::TuningSpec)
      out += "\n" + in +
             "    linked with the other active packages' specs "
             "for the compile's target; the first package in activation "
             "order wins where two match the same operation";
    out += "\n";
  }
  for (const RuntimePlugin &p : m.runtimePlugins) {
    out += in + "runtime plugin " + p.name + " (" +
           std::string(runtimeFormatName(p.format)) + ")";
    if (!p.imports.empty()) {
      out += ", imports:";
      for (const std::string &i : p.imports)
        out += " " + i;
    }
    out += "\n";
    for (const auto &[k, v] : p.library)
      out += in + "    " + k + ": " + v + "\n";
  }
  return out;
}

} // namespace ireepkg::cli
