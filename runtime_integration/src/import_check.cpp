//===- runtime_integration/src/import_check.cpp - Declared imports --------===//
//
// See import_check.h. The plugin runs in ireepkg-plugin-probe (see
// runtime_integration/probe/main.cpp), never in ireepkg: a plugin that
// crashes or hangs takes only the child down.
//
// Environment: IREEPKG_PROBE (the probe binary; default: beside the
// running executable).
//
//===----------------------------------------------------------------------===//
#include "import_check.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/runtime_integration/runtime_doctor.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/manifest_schema/platform.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

namespace {

constexpr double kProbeTimeoutSeconds = 30;

/// The plugin probe (findPluginProbe), or "" if it is not an executable
/// file.
std::string findProbe() {
  std::string probe = findPluginProbe();
  return ::access(probe.c_str(), X_OK) == 0 ? probe : "";
}

/// The manifest path of the build of `plugin` this host can load ("" if
/// none).
std::string hostBuild(const RuntimePlugin &plugin, const Platform &host) {
  if (plugin.format == RuntimeFormat::EmbeddedElf) {
    for (const std::string &key :
         {std::string(archName(host.arch)), std::string("fat")})
      if (auto it = plugin.library.find(key); it != plugin.library.end())
        return it->second;
    return "";
  }
  auto it = plugin.library.find(host.str());
  return it != plugin.library.end() ? it->second : "";
}

/// Writes the host's image of a FatELF to a temporary file; "" with `why`.
std::string extractHostImage(const std::string &file, const Platform &host,
                             std::string &why, bool &isFat) {
  isFat = false;
  auto data = fsutil::readFile(file, 1ull << 30);
  if (!data) {
    why = data.error().message;
    return "";
  }
  if (!fatelf::isFatElf(*data))
    return file;
  isFat = true;
  auto records = fatelf::parse(*data, file);
  if (!records) {
    why = records.error().message;
    return "";
  }
  auto record = fatelf::select(*records, host.arch, file);
  if (!record) {
    why = record.error().message;
    return "";
  }
  auto written = fsutil::writeTemporaryFile(
      data->substr(record->offset, record->size), "ireepkg-imports", ".so");
  if (!written) {
    why = written.error().message;
    return "";
  }
  return *written;
}

/// A string member of the probe's report ("" when absent or not a string).
std::string member(const nlohmann::json &report, const char *key) {
  auto it = report.find(key);
  return it != report.end() && it->is_string() ? it->get<std::string>() : "";
}

} // namespace

void checkDeclaredImports(
    const Manifest &m, const JsonDocument &doc,
    const std::function<std::string(const std::string &)> &fileOf,
    DiagnosticList &diags) {
  auto loadChecks = packLoadChecks(diags);
  if (!loadChecks)
    return;
  if (!*loadChecks) {
    // The person chose to load no package code: said once, not per plugin.
    for (size_t i = 0; i < m.runtimePlugins.size(); ++i)
      if (!m.runtimePlugins[i].imports.empty()) {
        diags.warning(doc.locate("/runtime/plugins"),
                      "the runtime plugins' imports were not checked: load "
                      "checks are off (IREEPKG_LOAD_CHECKS, --no-load-checks "
                      "or load-checks = false)");
        break;
      }
    return;
  }
  Platform host = hostPlatform();
  std::string probe;
  bool probeLooked = false;
  for (size_t i = 0; i < m.runtimePlugins.size(); ++i) {
    const RuntimePlugin &plugin = m.runtimePlugins[i];
    if (plugin.imports.empty())
      continue;
    std::string rel = hostBuild(plugin, host);
    if (rel.empty())
      continue; // nothing this host can load: not checked
    std::string base = "/runtime/plugins/" + std::to_string(i);
    auto cannotCheck = [&](const std::string &why) {
      diags.warning(doc.locate(base), "the imports of runtime plugin \"" +
                                          plugin.name +
                                          "\" were not checked: " + why);
    };
    if (!probeLooked) {
      probe = findProbe();
      probeLooked = true;
    }
    if (probe.empty()) {
      cannotCheck("ireepkg-plugin-probe was not found (set IREEPKG_PROBE)");
      continue;
    }
    std::string why;
    bool isFat = false;
    std::string library = extractHostImage(fileOf(rel), host, why, isFat);
    if (library.empty()) {
      cannotCheck(why);
      continue;
    }
    ChildOptions options;
    options.argv = {probe, library};
    for (const std::string &name : plugin.imports)
      options.argv.insert(options.argv.end(), {"--import", name});
    for (const auto &[key, value] : plugin.parameters)
      options.argv.insert(options.argv.end(), {"--param", key + "=" + value});
    options.timeoutSeconds = kProbeTimeoutSeconds;
    options.ownProcessGroup = true;
    options.maxOut = options.maxErr = 1 << 20;
    options.runsPackageCode = true;
    auto r = runChild(options);
    if (isFat)
      ::unlink(library.c_str());
    if (!r) {
      cannotCheck(r.error().message);
      continue;
    }
    if (r->spawnError) {
      cannotCheck("cannot run " + probe + ": " + std::strerror(r->spawnError));
      continue;
    }
    if (r->timedOut || !r->exited || r->exitCode != 0) {
      cannotCheck(r->timedOut ? "loading it did not finish within 30 s"
                  : r->signal ? "loading it crashed the probe (signal " +
                                    std::to_string(r->signal) + ")"
                              : "the probe exited with status " +
                                    std::to_string(r->exitCode));
      continue;
    }
    nlohmann::json report = parseJsonOrDiscarded(r->out);
    if (!report.is_object()) {
      cannotCheck("the probe wrote no report");
      continue;
    }
    std::string load = member(report, "load");
    if (load != "ok") {
      std::string stage = member(report, "dlopen") != "ok"
                              ? "dlopen: " + member(report, "dlopen")
                          : member(report, "query") != "ok"
                              ? "query: " + member(report, "query")
                              : "load: " + load;
      cannotCheck("it does not load on this host (" + stage + ")");
      continue;
    }
    std::vector<std::string> missing;
    if (auto it = report.find("missing_required");
        it != report.end() && it->is_array())
      for (const auto &v : *it)
        if (v.is_string())
          missing.push_back(v.get<std::string>());
    for (size_t k = 0; k < plugin.imports.size(); ++k) {
      const std::string &name = plugin.imports[k];
      if (std::find(missing.begin(), missing.end(), name) == missing.end())
        continue;
      diags.error(doc.locate(base + "/imports/" + std::to_string(k)),
                  "runtime plugin \"" + plugin.name + "\" declares import \"" +
                      name + "\", but its " + rel +
                      " does not resolve it (loaded on this host with "
                      "IREE's plugin ABI)",
                  "export it from the plugin's resolve function, or remove "
                  "it from \"imports\"");
    }
  }
}

} // namespace ireepkg
