//===- runtime_integration/src/runtime_doctor.cpp - `doctor`, runtime -----===//
//
// See ireepkg/runtime_integration/runtime_doctor.h.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/runtime_integration/runtime_doctor.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/base/programs.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/base/text.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/pkg/iree/iree_version.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <unistd.h>

namespace ireepkg {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr double kToolTimeoutSeconds = 20;
constexpr double kDefaultPluginTimeoutSeconds = 30;

//===----------------------------------------------------------------------===//
// Child processes
//===----------------------------------------------------------------------===//

/// Runs `argv` (argv[0] a path) with stdin from /dev/null, capturing stdout,
/// stderr and, with `progressFd`, descriptor 3. The child gets its own
/// process group; at `timeoutSeconds` the whole group is killed. When it
/// cannot be started, `notStarted` says why.
ChildResult runTool(const std::vector<std::string> &argv, double timeoutSeconds,
                    bool progressFd, std::string &notStarted) {
  constexpr size_t kMaxCapture = 1 << 20;
  ChildOptions options;
  options.argv = argv;
  options.timeoutSeconds = timeoutSeconds;
  options.ownProcessGroup = true;
  options.captureFd3 = progressFd;
  options.maxOut = options.maxErr = options.maxFd3 = kMaxCapture;
  options.runsPackageCode = true;
  Expected<ChildResult> r = runChild(options);
  notStarted.clear();
  if (!r) {
    notStarted = r.error().message;
    return {};
  }
  if (r->spawnError)
    notStarted = argv[0] + ": " + std::strerror(r->spawnError);
  return std::move(*r);
}



//===----------------------------------------------------------------------===//
// IREE tools
//===----------------------------------------------------------------------===//

/// The first line of `text` containing `needle`, trimmed ("" if none).
std::string lineContaining(const std::string &text, std::string_view needle) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos)
      return trimmed(line);
  return "";
}

/// The first non-empty line of `text`, trimmed.
std::string firstLine(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!trim(line).empty())
      return trimmed(line);
  return "";
}

/// The Python distribution that installed a tool, e.g.
/// "iree-base-runtime 3.13.0" (see ireepkg/iree_version.h).
std::string wheelOf(const std::string &toolPath) {
  auto d = ireeDistributionOf(toolPath);
  return d ? d->name + " " + d->version : "";
}

json checkToolImpl(const std::string &name) {
  json j = {{"name", name}};
  auto [path, source] = locateTool(name);
  if (path.empty()) {
    j["found"] = false;
    j["path"] = nullptr;
    j["version"] = nullptr;
    j["problem"] = "not found on PATH or in $VIRTUAL_ENV/bin";
    return j;
  }
  j["found"] = true;
  j["path"] = path;
  j["source"] = source;
  std::string notStarted;
  ChildResult r =
      runTool({path, "--version"}, kToolTimeoutSeconds, false, notStarted);
  std::string output = r.out + "\n" + r.err;
  std::string version;
  if (!notStarted.empty()) {
    j["problem"] = "cannot run it: " + notStarted;
  } else if (r.timedOut) {
    j["problem"] = "`" + name + " --version` did not finish within " +
                   formatSeconds(kToolTimeoutSeconds) + " s (killed)";
  } else if (r.signal) {
    j["problem"] =
        "`" + name + " --version` was killed by " + signalName(r.signal);
  } else if (name == "iree-compile") {
    version = lineContaining(output, "IREE compiler version");
  } else if (r.exitCode == 0) {
    version = lineContaining(output, "version");
    if (version.empty())
      version = firstLine(r.out);
  }
  j["version"] = version.empty() ? "present" : version;
  std::string wheel = wheelOf(path);
  j["package"] = wheel.empty() ? json(nullptr) : json(wheel);
  return j;
}

//===----------------------------------------------------------------------===//
// Runtime plugins
//===----------------------------------------------------------------------===//


/// The last stage the probe named before it ended ("" if none).
std::string lastStage(const std::string &progress) {
  std::string stage;
  std::istringstream in(progress);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      stage = line;
  return stage;
}

/// Where a crash or timeout happened, for messages.
std::string stageText(const std::string &stage) {
  static const std::map<std::string, std::string> names = {
      {"dlopen", "while loading the library (dlopen)"},
      {"query", "in iree_hal_executable_plugin_query"},
      {"header", "while reading the plugin header"},
      {"load", "in load"},
      {"resolve", "in resolve"},
      {"resolve-undeclared", "in resolve (asked for undeclared imports)"},
      {"unload", "in unload"},
      {"dlclose", "while unloading the library (dlclose)"},
      {"report", "after the checks"},
      {"done", "after the checks"},
  };
  auto it = names.find(stage);
  return it != names.end() ? it->second : "before loading the library";
}

std::string str(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> strs(const json &j, const char *key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it != j.end() && it->is_array())
    for (const json &v : *it)
      if (v.is_string())
        out.push_back(v.get<std::string>());
  return out;
}

bool isFalse(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && !it->get<bool>();
}

uint64_t num(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

std::string hex32(uint64_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08llx",
                static_cast<unsigned long long>(value));
  return buf;
}

/// Turns the probe's report into problems.
void interpretReport(const json &report, RuntimePluginCheck &check) {
  auto problem = [&](const std::string &text) {
    check.problems.push_back(text);
  };
  std::string dlopen = str(report, "dlopen");
  if (dlopen != "ok") {
    problem("could not be loaded: " +
            (dlopen.empty() ? std::string("dlopen failed") : dlopen));
    return;
  }
  std::string query = str(report, "query");
  if (query == "missing symbol") {
    problem("does not export iree_hal_executable_plugin_query");
    return;
  }
  if (query == "returned null") {
    problem("iree_hal_executable_plugin_query returned NULL for ABI "
            "version 0.1");
    return;
  }
  std::string interface = str(report, "interface");
  if (interface == "NULL header") {
    problem("the plugin interface has a NULL header");
    return;
  }
  if (isFalse(report, "version_ok"))
    problem("ABI version mismatch: the plugin declares version " +
            hex32(num(report, "version")) + "; IREE's runtime supports " +
            hex32(num(report, "host_version")) + " (v0.1)");
  if (isFalse(report, "features_ok"))
    problem("declares the FULL_STATUS feature, which IREE runtimes built "
            "without full status support (such as the released tools) "
            "refuse");
  if (isFalse(report, "sanitizer_ok")) {
    std::string sanitizer = str(report, "sanitizer");
    if (sanitizer == "address" || sanitizer == "thread")
      problem("sanitizer mismatch: the plugin was built with the " + sanitizer +
              " sanitizer and the runtime with " +
              str(report, "host_sanitizer"));
    else
      problem("sanitizer mismatch: the plugin was built with the " + sanitizer +
              " sanitizer, which IREE's runtime never accepts");
  }
  if (!interface.empty() && interface != "ok")
    problem("the plugin interface has a " + interface);
  std::vector<std::string> features = strs(report, "features");
  // IREE's embedded-ELF loader passes STANDALONE as required_features,
  // but iree_hal_executable_plugin_initialize never checks it: such a
  // plugin loads and runs. IREE's headers still ask for the bit.
  if (check.format == "embedded-elf" && report.contains("features") &&
      report["features"].is_array() &&
      std::find(features.begin(), features.end(), "STANDALONE") ==
          features.end())
    check.warnings.push_back(
        "embedded-elf plugin does not declare the STANDALONE feature; IREE's "
        "runtime loads it anyway (it does not check the bit), but IREE's "
        "plugin headers ask embedded plugins to declare it");

  std::string load = str(report, "load");
  bool loaded = load == "ok";
  if (!loaded && load != "not attempted" && !load.empty())
    problem("load failed: " + load);
  if (loaded) {
    std::vector<std::string> missing = strs(report, "missing_required");
    for (const std::string &name : missing)
      problem("does not resolve declared import \"" + name + "\"");
    std::string resolve = str(report, "resolve");
    if (!check.declared.empty()) {
      if (missing.empty() && resolve != "ok")
        problem("resolve returned " + resolve +
                " although every declared import was resolved");
      else if (!missing.empty() && resolve == "ok")
        problem("resolve returned OK although declared imports are missing "
                "(the ABI requires NOT_FOUND)");
      else if (!missing.empty() && resolve != "NOT_FOUND")
        problem("resolve failed: " + resolve);
    }
    for (const std::string &name : strs(report, "undeclared_resolved"))
      problem("resolves \"" + name + "\", which its manifest does not declare");
    std::string dlclose = str(report, "dlclose");
    if (!dlclose.empty() && dlclose != "ok")
      problem("dlclose failed: " + dlclose);
  }
  uint64_t leaked = num(report, "leaked_allocations");
  if (leaked > 0)
    problem("leaked " + std::to_string(leaked) +
            (leaked == 1 ? " allocation (" : " allocations (") +
            std::to_string(num(report, "leaked_bytes")) + " bytes) " +
            (loaded ? "after unload" : "after its failed load"));
  for (const std::string &text : strs(report, "allocator_errors"))
    problem("misused the host allocator: " + text);
}

/// Reads a whole file; nullopt if it cannot.
std::optional<std::string> readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return std::nullopt;
  return buffer.str();
}


/// Runs the probe on one plugin and records what it found.
void probePluginImpl(RuntimePluginCheck &check, const RuntimePlugin &plugin,
                 const std::string &probe, double timeoutSeconds) {
  std::string library = check.path;
  std::string temporary;
  if (plugin.format == RuntimeFormat::EmbeddedElf) {
    auto data = readWholeFile(check.path);
    if (!data) {
      check.problems.push_back("cannot read the library " + check.path);
      return;
    }
    if (fatelf::isFatElf(*data)) {
      Arch host = hostPlatform().arch;
      auto records = fatelf::parse(*data, check.path);
      if (!records) {
        check.problems.push_back("invalid FatELF file: " +
                                 records.error().message);
        return;
      }
      auto record = fatelf::select(*records, host, check.path);
      if (!record) {
        check.problems.push_back(record.error().message);
        return;
      }
      auto written = fsutil::writeTemporaryFile(
          std::string_view(*data).substr(record->offset, record->size),
          "ireepkg-doctor", ".so");
      if (!written) {
        check.problems.push_back("cannot extract the " +
                                 std::string(archName(host)) +
                                 " image: " + written.error().message);
        return;
      }
      temporary = *written;
      check.image = std::string(archName(host));
      library = temporary;
    }
  }

  std::vector<std::string> argv = {probe, library, "--progress-fd", "3"};
  for (const std::string &name : check.declared)
    argv.insert(argv.end(), {"--import", name});
  for (const std::string &name : check.probed)
    argv.insert(argv.end(), {"--probe-import", name});
  for (const auto &[key, value] : plugin.parameters)
    argv.insert(argv.end(), {"--param", key + "=" + value});
  std::string notStarted;
  ChildResult r = runTool(argv, timeoutSeconds, true, notStarted);
  if (!temporary.empty())
    ::unlink(temporary.c_str());

  std::string stage = lastStage(r.fd3);
  std::string where = stageText(stage);
  std::string tail =
      r.err.size() > 4000 ? r.err.substr(r.err.size() - 4000) : r.err;
  check.process = {{"stage", stage.empty() ? json(nullptr) : json(stage)},
                   {"stderr", tail}};
  if (!notStarted.empty()) {
    check.process["end"] = "not started";
    check.problems.push_back("could not be checked: cannot run the plugin "
                             "probe: " +
                             notStarted);
    return;
  }
  if (r.timedOut) {
    check.process["end"] = "timed out";
    check.process["timeout_seconds"] = timeoutSeconds;
    check.problems.push_back("timed out " + where + " after " +
                             formatSeconds(timeoutSeconds) + " s (killed)");
    return;
  }
  if (r.signal) {
    check.process["end"] = "signaled";
    check.process["signal"] = r.signal;
    check.process["signal_name"] = signalName(r.signal);
    check.problems.push_back("crashed " + where + ": killed by " +
                             signalName(r.signal) + " (signal " +
                             std::to_string(r.signal) + ")");
    return;
  }
  check.process["end"] = "exited";
  check.process["exit_code"] = r.exitCode;
  json report = parseJsonOrDiscarded(r.out);
  bool finished = stage == "done" || stage == "report";
  if (!finished || report.is_discarded() || !report.is_object()) {
    check.problems.push_back("the probe exited with status " +
                             std::to_string(r.exitCode) + " " + where +
                             " without a report (did the plugin call exit()?)");
    return;
  }
  check.probe = report;
  interpretReport(report, check);
}

/// IREEPKG_DOCTOR_TIMEOUT, seconds per plugin.
double pluginTimeoutImpl(std::string &warning) {
  std::string invalid;
  double value = environmentSeconds("IREEPKG_DOCTOR_TIMEOUT",
                                    kDefaultPluginTimeoutSeconds, invalid);
  if (!invalid.empty())
    warning = "IREEPKG_DOCTOR_TIMEOUT=\"" + invalid +
              "\" is not a number of seconds; using " +
              formatSeconds(kDefaultPluginTimeoutSeconds);
  return value;
}


} // namespace

std::string formatSeconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return buf;
}

json checkIreeTool(const std::string &name) { return checkToolImpl(name); }

void probeRuntimePlugin(RuntimePluginCheck &check, const RuntimePlugin &plugin,
                        const std::string &probe, double timeoutSeconds) {
  probePluginImpl(check, plugin, probe, timeoutSeconds);
}

double pluginTimeoutSeconds(std::string &warning) {
  return pluginTimeoutImpl(warning);
}

} // namespace ireepkg
