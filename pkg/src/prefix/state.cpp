//===- pkg/src/prefix/state.cpp - A prefix's state files ------------------===//
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/json_document.h"

#include "ireepkg/pkg/package/fatelf.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>

namespace ireepkg {

using ojson = nlohmann::ordered_json;

const InstalledPackage *InstalledState::find(std::string_view name) const {
  for (const InstalledPackage &p : packages)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string stateWriterName() { return "ireepkg " IREEPKG_VERSION; }

std::vector<std::string> unrecordedStateFiles() {
  return {kActivationFile, kCompilerFlagsFile, kCompilerIndexFile,
          kRuntimeFlagsFile, kRuntimeIndexBinary};
}

bool isStateFileName(std::string_view name) {
  return !name.empty() && name[0] != '.' &&
         name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos && name != kInstalledFile &&
         name != "lock" && name != "journal.json";
}

std::string serializeInstalled(const InstalledState &state) {
  ojson j;
  j["schema_version"] = kSchemaVersion;
  j["platform"] = state.platform;
  if (!state.cpuLevel.empty())
    j["cpu_level"] = state.cpuLevel;
  if (!state.project.values.empty() || !state.project.choose.empty()) {
    ojson proj;
    ojson values = ojson::object();
    for (const auto &[pkg, opts] : state.project.values)
      for (const auto &[flag, v] : opts)
        values[pkg][flag] = ojson::parse(v.dump());
    proj["options"] = values;
    proj["choose"] = state.project.choose;
    j["project"] = proj;
  }
  j["packages"] = ojson::array();
  for (const InstalledPackage &p : state.packages) {
    ojson o;
    o["name"] = p.name;
    o["version"] = p.version.str();
    o["reason"] = p.explicitlyInstalled ? "explicit" : "dependency";
    o["dependencies"] = p.dependencies;
    o["archive_sha256"] = p.archiveSha256;
    o["record_sha256"] = p.recordSha256;
    o["installed_size"] = p.installedSize;
    j["packages"].push_back(std::move(o));
  }
  if (state.stateRecord)
    j["state"] = {{"written_by", state.stateRecord->writtenBy},
                  {"files", state.stateRecord->files}};
  return j.dump(2) + "\n";
}

Expected<InstalledState> parseInstalled(std::string_view text,
                                        const std::string &path,
                                        DiagnosticList &warnings) {
  auto bad = [&](const std::string &why) {
    return makeError(ErrorCode::Integrity,
                     "the prefix state is corrupted: " + why,
                     Location::inFile(path),
                     "run `ireepkg verify`; reinstall the packages into a "
                     "fresh prefix if it cannot be repaired");
  };
  nlohmann::json j = parseJsonOrDiscarded(text);
  if (j.is_discarded() || !j.is_object())
    return bad("not valid JSON");
  InstalledState st;
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    return bad("no schema_version");
  st.schemaVersion = j["schema_version"].get<int>();
  if (st.schemaVersion > kSchemaVersion)
    return makeError(ErrorCode::Unsupported,
                     "the prefix was written by a newer ireepkg (schema_version " +
                         std::to_string(st.schemaVersion) + ")",
                     Location::inFile(path),
                     "upgrade ireepkg to change this prefix");
  static const std::set<std::string> known = {"schema_version", "platform",
                                              "cpu_level",      "project",
                                              "packages",       "state"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key()))
      warnings.warning(Location{path, 0, 0, "/" + it.key(), "", ""},
                       "unknown field \"" + it.key() + "\" (ignored)");
  if (j.contains("platform") && j["platform"].is_string())
    st.platform = j["platform"].get<std::string>();
  if (j.contains("cpu_level") && j["cpu_level"].is_string())
    st.cpuLevel = j["cpu_level"].get<std::string>();
  if (auto proj = j.find("project"); proj != j.end() && proj->is_object()) {
    if (auto opts = proj->find("options"); opts != proj->end() && opts->is_object())
      for (auto p = opts->begin(); p != opts->end(); ++p)
        if (p->is_object())
          for (auto f = p->begin(); f != p->end(); ++f)
            st.project.values[p.key()][f.key()] = *f;
    if (auto ch = proj->find("choose"); ch != proj->end() && ch->is_object())
      for (auto c = ch->begin(); c != ch->end(); ++c)
        if (c->is_string())
          st.project.choose[c.key()] = c->get<std::string>();
  }
  if (!j.contains("packages") || !j["packages"].is_array())
    return bad("no package list");
  for (const auto &o : j["packages"]) {
    InstalledPackage p;
    try {
      p.name = o.at("name").get<std::string>();
      auto v = Version::parse(o.at("version").get<std::string>());
      if (!v || !isValidPackageName(p.name))
        return bad("a malformed package entry");
      p.version = *v;
      p.explicitlyInstalled = o.value("reason", "explicit") == "explicit";
      p.dependencies =
          o.value("dependencies", std::vector<std::string>{});
      p.archiveSha256 = o.value("archive_sha256", "");
      p.recordSha256 = o.value("record_sha256", "");
      p.installedSize = o.value("installed_size", uint64_t{0});
    } catch (const nlohmann::json::exception &) {
      return bad("a malformed package entry");
    }
    if (st.find(p.name))
      return bad("package \"" + p.name + "\" is listed twice");
    st.packages.push_back(std::move(p));
  }
  // A transaction removes the files this names: each must be a state file.
  if (auto rec = j.find("state"); rec != j.end()) {
    StateRecord record;
    try {
      record.writtenBy = rec->at("written_by").get<std::string>();
      record.files = rec->at("files").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception &) {
      return bad("a malformed \"state\" record");
    }
    for (const std::string &f : record.files)
      if (!isStateFileName(f))
        return bad("\"state\" lists \"" + f + "\", which is not a state file");
    st.stateRecord = std::move(record);
  }
  return st;
}

std::vector<size_t>
activationOrder(const std::vector<InstalledPackage> &packages,
                const std::vector<std::string> &preferred) {
  const size_t n = packages.size();
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < n; ++i)
    byName[packages[i].name] = i;
  // Primary order: the project's (a name's first place in `preferred`),
  // then the current order.
  std::unordered_map<std::string_view, size_t> preferredAt;
  for (size_t k = 0; k < preferred.size(); ++k)
    preferredAt.emplace(preferred[k], k);
  std::vector<size_t> rank(n);
  for (size_t i = 0; i < n; ++i) {
    auto it = preferredAt.find(packages[i].name);
    rank[i] = it == preferredAt.end() ? preferred.size() + i : it->second;
  }
  std::vector<size_t> primary(n);
  for (size_t i = 0; i < n; ++i)
    primary[i] = i;
  std::stable_sort(primary.begin(), primary.end(),
                   [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  std::vector<size_t> position(n);
  for (size_t p = 0; p < n; ++p)
    position[primary[p]] = p;
  // Stable topological sort: repeatedly place the first package, in
  // primary order, whose installed dependencies are all placed (Kahn's
  // algorithm with the ready packages in a heap by primary position:
  // linear-logarithmic, for prefixes of thousands). A cycle (impossible
  // after resolution) is broken by placing the first package not placed.
  std::vector<size_t> waitingFor(n);
  std::vector<std::vector<size_t>> dependents(n);
  for (size_t i = 0; i < n; ++i)
    for (const std::string &d : packages[i].dependencies)
      if (auto it = byName.find(d); it != byName.end()) {
        ++waitingFor[i];
        dependents[it->second].push_back(i);
      }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (waitingFor[i] == 0)
      ready.push(position[i]);
  std::vector<size_t> out;
  out.reserve(n);
  std::vector<bool> placed(n);
  size_t firstUnplaced = 0; // in primary order
  while (out.size() < n) {
    size_t next;
    if (!ready.empty()) {
      next = primary[ready.top()];
      ready.pop();
      if (placed[next])
        continue;
    } else {
      while (placed[primary[firstUnplaced]])
        ++firstUnplaced;
      next = primary[firstUnplaced];
    }
    placed[next] = true;
    out.push_back(next);
    for (size_t j : dependents[next])
      if (--waitingFor[j] == 0 && !placed[j])
        ready.push(position[j]);
  }
  return out;
}

Expected<std::vector<Arch>> fatElfArchitectures(const std::string &path) {
  auto records = fatelf::readTable(path);
  if (!records)
    return Unexpected(records.error());
  return fatelf::loadableArchs(*records);
}

namespace {

std::string archList(const std::vector<Arch> &archs) {
  std::string out;
  for (Arch a : archs)
    out += (out.empty() ? "" : ", ") + std::string(archName(a));
  return out;
}

} // namespace

namespace {

RuntimeLibraryChoice chooseBuild(const RuntimePlugin &plugin,
                                 const Platform &platform,
                                 const std::string &filesDir) {
  RuntimeLibraryChoice out;
  out.embedded = plugin.format == RuntimeFormat::EmbeddedElf;
  std::string none = "no build for " + platform.str();
  if (!out.embedded) {
    auto it = plugin.library.find(platform.str());
    if (it != plugin.library.end())
      out.rel = it->second;
    else
      out.reason = none;
    return out;
  }
  if (auto it = plugin.library.find(std::string(archName(platform.arch)));
      it != plugin.library.end()) {
    out.rel = it->second;
    return out;
  }
  auto fat = plugin.library.find("fat");
  if (fat == plugin.library.end()) {
    out.reason = none;
    return out;
  }
  auto archs = fatElfArchitectures(filesDir + "/" + fat->second);
  if (!archs) {
    out.reason = none + " (its FatELF file " + fat->second +
                 " cannot be read: " + archs.error().message + ")";
    return out;
  }
  if (std::find(archs->begin(), archs->end(), platform.arch) != archs->end()) {
    out.rel = fat->second;
    return out;
  }
  out.reason = none + " (its FatELF file " + fat->second + " holds " +
               (archs->empty() ? std::string("no image IREE can load")
                               : archList(*archs)) +
               ")";
  return out;
}

} // namespace

RuntimeLibraryChoice chooseRuntimeLibrary(const RuntimePlugin &plugin,
                                          const Platform &platform,
                                          const std::string &filesDir) {
  RuntimeLibraryChoice out = chooseBuild(plugin, platform, filesDir);
  if (out.rel.empty())
    return out;
  if (const auto *fact = stoppingPlatformFact(platform.os, plugin.format)) {
    out.rel.clear();
    out.fact = fact;
    out.reason = describePlatformFact(*fact);
  }
  return out;
}

std::string runtimeLibraryFor(const RuntimePlugin &plugin,
                              const Platform &platform, bool &embedded,
                              const std::string &filesDir) {
  RuntimeLibraryChoice choice =
      chooseRuntimeLibrary(plugin, platform, filesDir);
  embedded = choice.embedded;
  return choice.rel;
}

std::string responseFileQuote(const std::string &arg) {
  bool plain = !arg.empty() && arg.find_first_of(" \t\n\r\"'\\#") ==
                                   std::string::npos;
  if (plain)
    return arg;
  std::string out = "\"";
  for (char c : arg) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

namespace {

/// The package's other runtime plugins activated on `platform`:
/// `system-library plugin "k_dll"`, ...; "" when there are none.
std::string pluginsUsedInstead(const Manifest &manifest,
                               const RuntimePlugin &plugin,
                               const Platform &platform,
                               const std::string &filesDir) {
  std::string instead;
  for (const RuntimePlugin &other : manifest.runtimePlugins)
    if (&other != &plugin &&
        !chooseRuntimeLibrary(other, platform, filesDir).rel.empty())
      instead += std::string(instead.empty() ? "" : ", ") +
                 std::string(runtimeFormatName(other.format)) + " plugin \"" +
                 other.name + "\"";
  return instead;
}

} // namespace

std::string stoppedPluginNote(const Manifest &manifest,
                              const RuntimePlugin &plugin,
                              const Platform &platform,
                              const RuntimeLibraryChoice &choice,
                              const std::string &filesDir) {
  std::string instead =
      pluginsUsedInstead(manifest, plugin, platform, filesDir);
  return choice.reason +
         (instead.empty() ? "; the package has no other runtime plugin for " +
                                platform.str()
                          : "; the package's " + instead + " is used there");
}

std::vector<UncalledPlugin> uncalledPlugins(const Manifest &manifest,
                                            const std::string &filesDir) {
  std::vector<UncalledPlugin> out;
  for (size_t i = 0; i < manifest.runtimePlugins.size(); ++i) {
    const RuntimePlugin &plugin = manifest.runtimePlugins[i];
    for (std::string_view os : osNames()) {
      Platform platform{*parseOS(os), Arch::X86_64};
      const auto *fact = stoppingPlatformFact(platform.os, plugin.format);
      if (!fact)
        continue;
      UncalledPlugin u{i, fact, {}};
      for (std::string_view arch : archNames()) {
        platform.arch = *parseArch(arch);
        if (chooseRuntimeLibrary(plugin, platform, filesDir).fact == nullptr)
          continue; // no build there at all
        bool served = false;
        for (const RuntimePlugin &other : manifest.runtimePlugins)
          served |=
              !chooseRuntimeLibrary(other, platform, filesDir).rel.empty();
        if (!served)
          u.platforms.push_back(platform);
      }
      if (!u.platforms.empty())
        out.push_back(std::move(u));
    }
  }
  return out;
}

StateWriter::~StateWriter() = default;

namespace {
std::vector<const StateWriter *> &writerList() {
  static std::vector<const StateWriter *> writers;
  return writers;
}
} // namespace

void registerStateWriter(const StateWriter &writer) {
  auto &writers = writerList();
  if (std::find(writers.begin(), writers.end(), &writer) == writers.end())
    writers.push_back(&writer);
}

const std::vector<const StateWriter *> &stateWriters() { return writerList(); }

Expected<GeneratedState> generateState(const std::string &prefix,
                                       const std::string &platformName,
                                       const std::vector<ActivePackage> &active,
                                       const ProjectSettings &project,
                                       const std::string &cpuLevel) {
  if (stateWriters().empty())
    return makeError(ErrorCode::Internal,
                     "no state writers are registered, so the prefix's "
                     "runtime and compiler state cannot be written",
                     Location::inFile(prefix),
                     "a program that changes prefixes must register the "
                     "integrations' writers (registerStateWriter) first");
  GeneratedState out;
  Platform platform = Platform::parse(platformName).value_or(hostPlatform());
  ojson j;
  j["schema_version"] = kSchemaVersion;
  j["prefix"] = prefix;
  j["platform"] = platform.str();
  j["packages"] = ojson::array();
  j["runtime"] = ojson::array();
  ojson compilerPlugins = ojson::array(), hooks = ojson::array();
  ojson skipped = ojson::array();
  for (const ActivePackage &a : active) {
    const Manifest &m = *a.manifest;
    const std::string version = a.package->version.str();
    j["packages"].push_back({{"name", m.name},
                             {"version", version},
                             {"path", a.dir},
                             {"reason", a.package->explicitlyInstalled
                                            ? "explicit"
                                            : "dependency"}});
    const std::string &filesDir = a.filesDir.empty() ? a.dir : a.filesDir;
    for (const RuntimePlugin &p : m.runtimePlugins) {
      RuntimeLibraryChoice choice = chooseRuntimeLibrary(p, platform, filesDir);
      if (choice.rel.empty()) {
        skipped.push_back({{"package", m.name},
                           {"plugin", p.name},
                           {"reason", choice.reason}});
        if (choice.fact)
          out.warnings.push_back(Diagnostic{
              Severity::Warning, Location{"", 0, 0, "", m.name, ""},
              "runtime plugin \"" + p.name + "\" is not activated on " +
                  platform.str() + ": " +
                  stoppedPluginNote(m, p, platform, choice, filesDir),
              pluginsUsedInstead(m, p, platform, filesDir).empty()
                  ? "ask the package's author for a system-library build "
                    "for " +
                        platform.str()
                  : ""});
        else
          out.warnings.push_back(
              Diagnostic{Severity::Warning, Location{"", 0, 0, "", m.name, ""},
                         "runtime plugin \"" + p.name + "\" has " +
                             choice.reason + "; it is not activated",
                         ""});
        continue;
      }
      std::string path = a.dir + "/" + choice.rel;
      std::string spec = choice.embedded ? "embedded:" + path : path;
      ojson params = ojson::object();
      for (const auto &[k, v] : p.parameters)
        params[k] = v;
      j["runtime"].push_back({{"package", m.name},
                              {"version", version},
                              {"name", p.name},
                              {"format", std::string(runtimeFormatName(p.format))},
                              {"path", path},
                              {"spec", spec},
                              {"imports", p.imports},
                              {"parameters", params}});
    }
    for (const CompilerPlugin &p : m.compilerPlugins) {
      ojson o = {{"package", m.name},
                 {"version", version},
                 {"id", p.id},
                 {"kind", std::string(compilerPluginKindName(p.kind))}};
      if (p.kind != CompilerPluginKind::IreeStatic) {
        auto it = p.library.find(platform.str());
        if (it == p.library.end()) {
          skipped.push_back({{"package", m.name},
                             {"plugin", p.id},
                             {"reason", "no build for " + platform.str()}});
          out.warnings.push_back(Diagnostic{
              Severity::Warning, Location{"", 0, 0, "", m.name, ""},
              "compiler plugin \"" + p.id + "\" has no build for " +
                  platform.str() + "; it is not activated",
              ""});
          continue;
        }
        o["library"] = a.dir + "/" + it->second;
        o["entry_point"] = p.entryPoint;
        if (p.apiVersion)
          o["api_version"] = *p.apiVersion;
        if (!p.abiHash.empty())
          o["abi_hash"] = p.abiHash;
      }
      ojson options = ojson::object();
      for (const auto &[flag, schema] : p.options)
        options[flag] = ojson::parse(schema.dump());
      o["options"] = options;
      compilerPlugins.push_back(std::move(o));
    }
    for (const Hook &h : m.hooks) {
      ojson o = {{"package", m.name},
                 {"version", version},
                 {"point", std::string(hookPointName(h.point))}};
      if (!h.pipeline.empty())
        o["pipeline"] = h.pipeline;
      if (!h.tool.empty())
        o["tool"] = a.dir + "/" + h.tool;
      if (!h.file.empty())
        o["file"] = a.dir + "/" + h.file;
      if (!h.sequence.empty())
        o["sequence"] = h.sequence;
      if (!h.value.empty())
        o["value"] = h.value;
      if (auto it = h.paths.find(std::string(archName(platform.arch)));
          h.point == HookPoint::ExecutableObjects && it != h.paths.end())
        o["path"] = a.dir + "/" + it->second;
      hooks.push_back(std::move(o));
    }
  }
  j["compiler"] = {{"plugins", compilerPlugins}, {"hooks", hooks}};
  j["skipped"] = skipped;
  const StateContext context{prefix, platform, active, project, cpuLevel};
  for (const StateWriter *writer : stateWriters())
    if (Status s = writer->write(context, out.files, j, out.warnings); !s)
      return Unexpected(s.error());
  out.activationJson = j.dump(2) + "\n";
  return out;
}

} // namespace ireepkg
