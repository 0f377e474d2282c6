//===- compiler_integration/src/compiler_plugin_info.cpp - Plugins' info --===//
//
// See compiler_plugin_info.h. The library runs in ireepkg-plugin-probe
// (--compiler-plugin), never in ireepkg: a plugin's constructors run at
// dlopen, and one that crashes or hangs takes only the child down.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/compiler_plugin_info.h"

#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/pkg/checks/integration_checks.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstring>
#include <set>
#include <unistd.h>

namespace ireepkg {

namespace {

constexpr double kProbeTimeoutSeconds = 30;

/// major.minor.patch of "3.13.0", "3.13.0rc20261016", "3.13.1-dev".
std::optional<std::array<long, 3>> leadingVersion(std::string_view text) {
  std::array<long, 3> parts{};
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (at >= text.size() || text[at] != '.')
        return std::nullopt;
      ++at;
    }
    size_t start = at;
    long value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9' &&
           at - start < 9)
      value = value * 10 + (text[at++] - '0');
    if (at == start)
      return std::nullopt;
    parts[i] = value;
  }
  return parts;
}

std::string member(const nlohmann::json &report, const char *key) {
  auto it = report.find(key);
  return it != report.end() && it->is_string() ? it->get<std::string>() : "";
}

} // namespace

const CompilerPluginAbi *compilerPluginAbiFor(std::string_view version) {
  auto v = leadingVersion(version);
  if (!v)
    return nullptr;
  const CompilerPluginAbi *found = nullptr;
  for (const CompilerPluginAbi &row : kCompilerPluginAbis)
    if (auto r = leadingVersion(row.ireeVersion); r && *r <= *v)
      found = &row;
  return found;
}

std::string knownCompilerPluginHash(std::string_view version) {
  auto v = leadingVersion(version);
  if (!v)
    return "";
  for (const CompilerPluginAbi &row : kCompilerPluginAbis)
    if (leadingVersion(row.ireeVersion) == v)
      return row.abiHash;
  return "";
}

Expected<CompilerPluginInfo>
readCompilerPluginInfo(const std::string &library,
                       CompilerPluginLayout layout) {
  std::string probe = findPluginProbe();
  if (::access(probe.c_str(), X_OK) != 0)
    return makeError(ErrorCode::NotFound,
                     "ireepkg-plugin-probe was not found at " + probe,
                     Location{}, "set IREEPKG_PROBE to the probe program");
  ChildOptions options;
  options.argv = {probe, "--compiler-plugin",
                  std::string(compilerPluginLayoutName(layout)), library};
  options.timeoutSeconds = kProbeTimeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = options.maxErr = 1 << 20;
  options.runsPackageCode = true;
  auto r = runChild(options);
  if (!r)
    return Unexpected(r.error());
  auto failed = [&](const std::string &why) {
    return makeError(ErrorCode::Invalid,
                     "cannot read the plugin info of " + library + ": " + why);
  };
  if (r->spawnError)
    return failed("cannot run " + probe + ": " + std::strerror(r->spawnError));
  if (r->timedOut)
    return failed("loading it did not finish within 30 s");
  if (!r->exited)
    return failed("loading it crashed the probe (signal " +
                  std::to_string(r->signal) + ")");
  if (r->exitCode != 0)
    return failed("the probe exited with status " +
                  std::to_string(r->exitCode) + ": " + firstOutputLine(r->err));
  nlohmann::json report = parseJsonOrDiscarded(r->out);
  if (!report.is_object())
    return failed("the probe wrote no report");
  if (std::string dl = member(report, "dlopen"); dl != "ok")
    return failed("dlopen: " + dl);
  if (std::string info = member(report, "info"); info != "ok")
    return failed(
        info == "missing symbol"
            ? std::string("it does not export ") + kCompilerPluginInfoSymbol
        : info == "returned null" ? std::string(kCompilerPluginInfoSymbol) +
                                        " returned no plugin info (NULL)"
                                  : info);
  CompilerPluginInfo out;
  out.layout = layout;
  if (auto it = report.find("api_version");
      it != report.end() && it->is_number_unsigned())
    out.apiVersion = it->get<uint32_t>();
  out.abiHash = member(report, "abi_hash");
  out.pluginId = member(report, "plugin_id");
  out.pluginVersion = member(report, "plugin_version");
  auto reg = report.find("register");
  out.hasRegister =
      reg != report.end() && reg->is_boolean() && reg->get<bool>();
  return out;
}

void checkDynamicCompilerPlugins(
    const Manifest &m, const JsonDocument &doc,
    const std::function<std::string(const std::string &)> &fileOf,
    DiagnosticList &diags) {
  // IREE's loader: "dynamic plugins are not supported on Windows".
  for (size_t i = 0; i < m.compilerPlugins.size(); ++i) {
    const CompilerPlugin &cp = m.compilerPlugins[i];
    if (cp.kind != CompilerPluginKind::IreeDynamic)
      continue;
    for (const auto &[platform, path] : cp.library)
      if (platform.rfind("windows-", 0) == 0)
        diags.warning(doc.locate("/compiler/plugins/" + std::to_string(i) +
                                 "/library/" + jsonPointerEscape(platform)),
                      "iree-dynamic plugin \"" + cp.id + "\": the " + platform +
                          " build is never activated: IREE's "
                          "compilers do not load dynamic plugins on Windows");
  }
  std::string host = hostPlatform().str();
  bool any = false;
  // A plugin that names another entry point is not read here: IREE's
  // loaders call only iree_get_compiler_plugin_info.
  auto readable = [&](const CompilerPlugin &cp) {
    return cp.kind == CompilerPluginKind::IreeDynamic &&
           cp.entryPoint == kCompilerPluginInfoSymbol && cp.library.count(host);
  };
  for (const CompilerPlugin &cp : m.compilerPlugins)
    any |= readable(cp);
  if (!any)
    return;
  auto loadChecks = packLoadChecks(diags);
  if (!loadChecks)
    return;
  if (!*loadChecks) {
    diags.warning(doc.locate("/compiler/plugins"),
                  "the dynamic compiler plugins' ids and ABI hashes were not "
                  "read: load checks are off (IREEPKG_LOAD_CHECKS, "
                  "--no-load-checks or load-checks = false)");
    return;
  }
  // The IREE versions the package is for: the table's rows requires_iree
  // admits (every row without it); rows before the first admitted one
  // still hold for versions after them.
  std::vector<const CompilerPluginAbi *> rows;
  for (const CompilerPluginAbi &row : kCompilerPluginAbis) {
    auto v = Version::parse(row.ireeVersion);
    if (v && (!m.requiresIree || m.requiresIree->set().contains(*v)))
      rows.push_back(&row);
  }
  if (rows.empty())
    rows.push_back(&std::end(kCompilerPluginAbis)[-1]);
  std::set<CompilerPluginLayout> layouts;
  std::vector<std::string> knownHashes, knownVersions;
  for (const CompilerPluginAbi *row : rows) {
    layouts.insert(row->layout);
    if (*row->abiHash) {
      knownHashes.push_back(row->abiHash);
      knownVersions.push_back(row->ireeVersion);
    }
  }
  std::string forWhat =
      m.requiresIree ? "IREE " + m.requiresIree->text() + " (requires_iree)"
                     : std::string("the IREE versions ireepkg knows");
  if (layouts.size() > 1) {
    diags.error(
        doc.locate(m.requiresIree ? "/requires_iree" : "/compiler/plugins"),
        forWhat + " spans IREE versions whose compilers read a "
                  "dynamic plugin's info in different layouts",
        "a dynamic compiler plugin is built against one IREE "
        "version: narrow requires_iree to it");
    return;
  }
  CompilerPluginLayout layout = *layouts.begin();
  for (size_t i = 0; i < m.compilerPlugins.size(); ++i) {
    const CompilerPlugin &cp = m.compilerPlugins[i];
    if (!readable(cp))
      continue;
    auto lib = cp.library.find(host);
    std::string base = "/compiler/plugins/" + std::to_string(i);
    auto info = readCompilerPluginInfo(fileOf(lib->second), layout);
    if (!info) {
      diags.error(
          doc.locate(base + "/library/" + jsonPointerEscape(host)),
          "iree-dynamic plugin \"" + cp.id + "\": " + info.error().message,
          "IREE's compilers call " + std::string(kCompilerPluginInfoSymbol) +
              " when they load the library; define it with "
              "IREE_DEFINE_COMPILER_PLUGIN");
      continue;
    }
    std::string what = "iree-dynamic plugin \"" + cp.id + "\" (" + lib->second +
                       ", read in IREE's " +
                       std::string(compilerPluginLayoutName(layout)) +
                       " layout)";
    if (info->pluginId != cp.id)
      diags.error(doc.locate(base + "/id"),
                  what + " reports the id \"" + info->pluginId + "\", not \"" +
                      cp.id + "\"",
                  "the manifest's id is what --iree-plugin= activates: "
                  "write the id the library reports");
    if (!cp.abiHash.empty() && info->abiHash != cp.abiHash)
      diags.error(doc.locate(base + "/abi_hash"),
                  what + " was built against plugin API headers " +
                      info->abiHash + ", but the manifest's abi_hash is " +
                      cp.abiHash,
                  "write the library's hash, or rebuild it against the "
                  "IREE the manifest names");
    else if (!knownHashes.empty() &&
             std::find(knownHashes.begin(), knownHashes.end(), info->abiHash) ==
                 knownHashes.end())
      diags.error(doc.locate(base + "/library/" + jsonPointerEscape(host)),
                  what + " was built against plugin API headers " +
                      info->abiHash + ", but IREE " + knownVersions.front() +
                      " has " + knownHashes.front() +
                      (knownHashes.size() > 1 ? " (and others)" : "") +
                      ": its compiler would refuse it",
                  "rebuild the plugin against the IREE it is for, and say "
                  "which in requires_iree");
  }
}

} // namespace ireepkg
