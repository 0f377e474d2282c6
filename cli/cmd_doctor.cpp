//===- cmd_doctor.cpp - `ireepkg doctor` ----------------------------------===//
//
// Checks what a user of the prefix will run into:
//
//  1. the IREE tools (iree-compile, iree-run-module, iree-benchmark-module)
//     on PATH, then in $VIRTUAL_ENV/bin, with their versions;
//  2. every installed runtime plugin for the host, each loaded in a child
//     process (ireepkg-plugin-probe, see pkg/probe/main.cpp) that drives it
//     through IREE's executable plugin ABI. Crashes, hangs and exit() in a
//     plugin end the child, never doctor; the child reports the stage it
//     was in through a pipe, so a crash is blamed on the right call.
//
// What a plugin resolves is compared with its manifest's `imports`. Extra
// imports can only be found by asking for them by name: each plugin is
// asked for the imports the OTHER plugins of its package declare, and for
// one name no plugin declares (a plugin that resolves anything is wrong).
//
// 3. every installed compiler plugin (see pkg/src/compiler_doctor.h): MLIR
//    plugins loaded into mlir-opt-22, iree-static ids against
//    `iree-compile --iree-list-plugins`, iree-dynamic libraries loaded by
//    iree-compile.
//
// Environment: IREEPKG_PROBE (the probe binary; default: beside this
// executable), IREEPKG_DOCTOR_TIMEOUT (seconds per plugin, default 30).
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "ireepkg/json_document.h"
#include "ireepkg/environment.h"

#include "child_process.h"
#include "compiler_doctor.h"
#include "package_test.h"
#include "state.h"
#include "ireepkg/fatelf.h"
#include "ireepkg/iree_version.h"
#include "ireepkg/platform.h"
#include "ireepkg/prefix.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr double kToolTimeoutSeconds = 20;
constexpr double kDefaultPluginTimeoutSeconds = 30;
/// A name no plugin should resolve.
constexpr const char *kUnknownImport = "ireepkg_doctor_unknown_import";
constexpr const char *kToolNames[] = {"iree-compile", "iree-run-module",
                                      "iree-benchmark-module"};

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

/// "SIGSEGV", or "signal 42" for one without a well-known name.
std::string signalName(int sig) {
  static const std::map<int, const char *> names = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
      {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
      {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
      {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
  };
  auto it = names.find(sig);
  return it != names.end() ? it->second : "signal " + std::to_string(sig);
}

std::string formatSeconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return buf;
}

/// JSON text that never throws on bytes that are not UTF-8 (paths, plugin
/// strings, child output).
std::string dumpJson(const json &j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

//===----------------------------------------------------------------------===//
// IREE tools
//===----------------------------------------------------------------------===//

std::string absolutePath(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string trim(std::string_view text) {
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return "";
  size_t e = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(b, e - b + 1));
}

/// The first line of `text` containing `needle`, trimmed ("" if none).
std::string lineContaining(const std::string &text, std::string_view needle) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos)
      return trim(line);
  return "";
}

/// The first non-empty line of `text`, trimmed.
std::string firstLine(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!trim(line).empty())
      return trim(line);
  return "";
}

/// The Python distribution that installed a tool, e.g.
/// "iree-base-runtime 3.13.0" (see ireepkg/iree_version.h).
std::string wheelOf(const std::string &toolPath) {
  auto d = ireeDistributionOf(toolPath);
  return d ? d->name + " " + d->version : "";
}

json checkTool(const std::string &name) {
  json j = {{"name", name}};
  auto [path, source] = findTool(name);
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

struct PluginCheck {
  std::string package, version, plugin, format;
  std::string path;    ///< the installed library (absolute); "" if none
  std::string image;   ///< for a FatELF file: the architecture extracted
  std::string skipped; ///< why it was not checked ("" = checked)
  std::vector<std::string> declared, probed;
  std::vector<std::string> problems;
  std::vector<std::string> warnings; ///< worth knowing; IREE still runs it
  json probe = nullptr;   ///< the probe's report, when it finished
  json process = nullptr; ///< how the probe process ended
};

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
void interpretReport(const json &report, PluginCheck &check) {
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

/// Writes `bytes` to a new temporary file; "" on failure.
std::string writeTempFile(std::string_view bytes, std::string &error) {
  const char *tmp = environmentOverride("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/ireepkg-doctor-XXXXXX.so";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemps(name.data(), 3);
  if (fd < 0) {
    error = pattern + ": " + std::strerror(errno);
    return "";
  }
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = std::string(name.data()) + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(name.data());
      return "";
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ::close(fd);
  return name.data();
}

/// Runs the probe on one plugin and records what it found.
void probePlugin(PluginCheck &check, const RuntimePlugin &plugin,
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
      std::string error;
      temporary = writeTempFile(
          std::string_view(*data).substr(record->offset, record->size), error);
      if (temporary.empty()) {
        check.problems.push_back("cannot extract the " +
                                 std::string(archName(host)) +
                                 " image: " + error);
        return;
      }
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

/// The probe binary: $IREEPKG_PROBE, else beside this executable.
std::string findProbe() {
  if (const char *env = environmentOverride("IREEPKG_PROBE"); env && *env)
    return absolutePath(env);
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return "ireepkg-plugin-probe";
  self[n] = '\0';
  return (fs::path(self).parent_path() / "ireepkg-plugin-probe").string();
}

/// IREEPKG_DOCTOR_TIMEOUT, seconds per plugin.
double pluginTimeout() {
  const char *env = environmentOverride("IREEPKG_DOCTOR_TIMEOUT");
  if (!env || !*env)
    return kDefaultPluginTimeoutSeconds;
  char *end = nullptr;
  double value = std::strtod(env, &end);
  if (*end || !std::isfinite(value) || value <= 0 || value > 86400) {
    printWarning(std::string("IREEPKG_DOCTOR_TIMEOUT=\"") + env +
                 "\" is not a number of seconds; using " +
                 formatSeconds(kDefaultPluginTimeoutSeconds));
    return kDefaultPluginTimeoutSeconds;
  }
  return value;
}

json checkToJson(const PluginCheck &c) {
  json j;
  j["package"] = c.package;
  j["version"] = c.version;
  j["plugin"] = c.plugin.empty() ? json(nullptr) : json(c.plugin);
  j["format"] = c.format.empty() ? json(nullptr) : json(c.format);
  j["path"] = c.path.empty() ? json(nullptr) : json(c.path);
  if (!c.image.empty())
    j["fatelf_image"] = c.image;
  j["ok"] = c.problems.empty();
  j["skipped"] = c.skipped.empty() ? json(nullptr) : json(c.skipped);
  j["problems"] = c.problems;
  j["warnings"] = c.warnings;
  j["imports"] = c.declared;
  j["undeclared_checked"] = c.probed;
  j["probe"] = c.probe;
  j["process"] = c.process;
  return j;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

json compilerCheckToJson(const CompilerPluginCheck &c) {
  auto orNull = [](const std::string &s) {
    return s.empty() ? json(nullptr) : json(s);
  };
  return {{"package", c.package},
          {"version", c.version},
          {"plugin", c.plugin},
          {"kind", c.kind},
          {"path", orNull(c.path)},
          {"ok", c.problems.empty()},
          {"skipped", orNull(c.skipped)},
          {"checked_with", orNull(c.checkedWith)},
          {"details", orNull(c.details)},
          {"problems", c.problems}};
}

/// The compiler plugins' section of the text report ("" when there are
/// none).
std::string compilerChecksText(const std::vector<CompilerPluginCheck> &checks,
                               const std::string &prefix,
                               const Platform &platform) {
  if (checks.empty())
    return "";
  std::string text =
      "\nCompiler plugins in " + prefix + " (" + platform.str() + "):\n";
  for (const CompilerPluginCheck &c : checks) {
    std::string who =
        c.package + " " + c.version + " " + c.plugin + " (" + c.kind + ")";
    if (!c.problems.empty())
      for (const std::string &problem : c.problems)
        text += "FAIL  " + who + ": " + problem + "\n";
    else if (!c.skipped.empty())
      text += "skip  " + who + " — " + c.skipped + "\n";
    else
      text += "ok    " + who + " — checked with " + c.checkedWith +
              (c.details.empty() ? "" : ": " + c.details) + "\n";
  }
  return text;
}

/// The IREE in use and the packages' requirements on it, as text.
std::string ireeText(const Expected<IreeInstallation> &iree,
                     const json &requirements) {
  std::string text;
  if (iree)
    text = "IREE in use: " + iree->version.str() + " — " +
           iree->describeSource() + "\n";
  else
    text = "IREE in use: unknown — " + iree.error().message + "\n";
  size_t unchecked = 0;
  for (const json &r : requirements) {
    std::string who = str(r, "package") + " " + str(r, "version");
    std::string req = "requires IREE " + str(r, "requires");
    if (r["ok"].is_null())
      ++unchecked;
    else if (r["ok"].get<bool>())
      text += "ok    " + who + " " + req + "\n";
    else
      text += "FAIL  " + who + " " + req + ", but IREE " + iree->version.str() +
              " is in use (change the IREE, or install a version of " +
              str(r, "package") + " whose manifest's requires.iree accepts " +
              "it)\n";
  }
  if (unchecked)
    text += "skip  the IREE requirements of " + std::to_string(unchecked) +
            (unchecked == 1 ? " package" : " packages") +
            " are not checked: no IREE version is known\n";
  return text;
}

} // namespace

int runDoctor(const Command &, const ParsedArgs &args) {
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  bool jsonOutput = args.flag("json");
  CliReporter reporter(jsonOutput);
  auto state = readInstalledState(prefix->path, reporter);
  if (!state)
    return printFailure(state.error(), jsonOutput);

  json tools = json::array();
  for (const char *name : kToolNames)
    tools.push_back(checkTool(name));

  Platform host = hostPlatform();
  Platform platform = state->platform.empty()
                          ? host
                          : Platform::parse(state->platform).value_or(host);
  std::string probe = findProbe();
  bool probeFound = isExecutableFile(probe);
  double timeout = pluginTimeout();

  // The IREE in use; each installed package's requires.iree against it.
  auto iree = detectIree();
  json requirements = json::array();
  size_t requirementsFailed = 0;

  std::vector<PluginCheck> checks;
  std::deque<Manifest> manifests; // stable addresses for compilerPackages
  std::vector<DoctorPackage> compilerPackages;
  for (const InstalledPackage &package : state->packages) {
    auto manifest = readInstalledManifest(prefix->path, package, reporter);
    if (manifest && manifest->requiresIree) {
      json r = {{"package", package.name},
                {"version", package.version.str()},
                {"requires", manifest->requiresIree->text()}};
      if (iree) {
        bool fits = manifest->requiresIree->set().contains(iree->version);
        requirementsFailed += !fits;
        r["ok"] = fits;
      } else {
        r["ok"] = nullptr; // not checked
      }
      requirements.push_back(std::move(r));
    }
    if (!manifest) {
      PluginCheck c;
      c.package = package.name;
      c.version = package.version.str();
      c.problems.push_back("cannot read the installed manifest: " +
                           manifest.error().message);
      checks.push_back(std::move(c));
      continue;
    }
    std::string dir = packageDir(prefix->path, package.name, package.version);
    manifests.push_back(*manifest);
    compilerPackages.push_back(
        {package.name, package.version, dir, &manifests.back()});
    for (const RuntimePlugin &plugin : manifest->runtimePlugins) {
      PluginCheck c;
      c.package = package.name;
      c.version = package.version.str();
      c.plugin = plugin.name;
      c.format = std::string(runtimeFormatName(plugin.format));
      c.declared = plugin.imports;
      std::sort(c.declared.begin(), c.declared.end());
      std::set<std::string> others = {kUnknownImport};
      for (const RuntimePlugin &other : manifest->runtimePlugins)
        for (const std::string &name : other.imports)
          others.insert(name);
      for (const std::string &name : others)
        if (!std::binary_search(c.declared.begin(), c.declared.end(), name))
          c.probed.push_back(name);
      bool embedded = false;
      std::string rel = runtimeLibraryFor(plugin, platform, embedded, dir);
      if (!rel.empty())
        c.path = dir + "/" + rel;
      if (platform != host) {
        c.skipped = "the prefix targets " + platform.str() +
                    "; only plugins for this host (" + host.str() +
                    ") can be loaded";
      } else if (rel.empty()) {
        c.skipped = "no build for " + platform.str();
      } else if (!fs::exists(fs::path(c.path))) {
        c.problems.push_back("the library " + rel +
                             " is missing from the installed package");
      } else if (!probeFound) {
        c.problems.push_back("could not be checked: the plugin probe " + probe +
                             " was not found (set IREEPKG_PROBE)");
      } else {
        probePlugin(c, plugin, probe, timeout);
      }
      checks.push_back(std::move(c));
    }
  }

  CompilerDoctorTools compilerTools;
  compilerTools.mlirOpt = findTool("mlir-opt-22").path;
  compilerTools.ireeCompile = findTool("iree-compile").path;
  compilerTools.timeoutSeconds = timeout;
  std::vector<CompilerPluginCheck> compilerChecks =
      checkCompilerPlugins(compilerPackages, platform, compilerTools);

  size_t failed = 0, skipped = 0;
  for (const PluginCheck &c : checks) {
    if (!c.problems.empty())
      ++failed;
    else if (!c.skipped.empty())
      ++skipped;
  }
  bool ok = failed == 0 && requirementsFailed == 0;
  for (const CompilerPluginCheck &c : compilerChecks)
    ok = ok && c.problems.empty();
  json ireeJson = {
      {"version", iree ? json(iree->version.str()) : json(nullptr)},
      {"source", iree ? json(iree->describeSource()) : json(nullptr)},
      {"problem", iree ? json(nullptr) : json(iree.error().message)},
      {"requirements", requirements}};
  std::vector<ShadowedImport> shadowed = shadowedImports(prefix->path);

  // --run-tests: the installed packages' own tests (package_test.h).
  json testsJson = nullptr;
  std::string testsText;
  if (args.flag("run-tests")) {
    auto results = runInstalledPackageTests(prefix->path, {},
                                            findPackageTestTools(), reporter);
    if (!results)
      return printFailure(results.error(), jsonOutput);
    testsJson = json::array();
    testsText = "\nPackage tests:\n";
    if (results->empty())
      testsText += "  none installed\n";
    for (const PackageTestResult &r : *results) {
      ok = ok && r.outcome != PackageTestResult::Outcome::Failed;
      testsJson.push_back(json::parse(packageTestResultToJson(r).dump()));
      testsText += formatPackageTestResult(r);
    }
  }

  if (jsonOutput) {
    json plugins = json::array();
    for (const PluginCheck &c : checks)
      plugins.push_back(checkToJson(c));
    json compiler = json::array();
    for (const CompilerPluginCheck &c : compilerChecks)
      compiler.push_back(compilerCheckToJson(c));
    json out = {{"prefix", prefix->path},
                {"platform", platform.str()},
                {"host", host.str()},
                {"probe_path", probe},
                {"timeout_seconds", timeout},
                {"tools", tools},
                {"iree", ireeJson},
                {"plugins", plugins},
                {"compiler_plugins", compiler},
                {"shadowed_imports", shadowedImportsToJson(shadowed)},
                {"ok", ok}};
    if (!testsJson.is_null())
      out["tests"] = testsJson;
    std::printf("%s\n", dumpJson(out).c_str());
    return ok ? kExitOk : kExitFailure;
  }

  std::string text = "IREE tools:\n";
  size_t width = 0;
  for (const char *name : kToolNames)
    width = std::max(width, std::strlen(name));
  for (const json &t : tools) {
    std::string name = str(t, "name");
    std::string line = "  " + name + std::string(width + 2 - name.size(), ' ');
    if (!t.value("found", false)) {
      line += str(t, "problem");
    } else {
      line += str(t, "path") + " — " + str(t, "version");
      if (std::string wheel = str(t, "package"); !wheel.empty())
        line += " (" + wheel + ")";
      if (std::string problem = str(t, "problem"); !problem.empty())
        line += "; " + problem;
    }
    text += line + "\n";
  }
  text += "\n" + ireeText(iree, requirements);
  text +=
      "\nRuntime plugins in " + prefix->path + " (" + platform.str() + "):\n";
  if (checks.empty())
    text += "  none installed\n";
  for (const PluginCheck &c : checks) {
    std::string who = c.package + " " + c.version;
    if (!c.plugin.empty())
      who += " " + c.plugin + " (" + c.format + ")";
    if (!c.problems.empty()) {
      for (const std::string &problem : c.problems)
        text += "FAIL  " + who + ": " + problem + "\n";
    } else if (!c.skipped.empty()) {
      text += "skip  " + who + " — " + c.skipped + "\n";
    } else {
      text += "ok    " + who + " — " +
              (c.declared.empty() ? std::string("no imports declared")
                                  : "resolves " + joinNames(c.declared)) +
              "\n";
    }
    for (const std::string &warning : c.warnings)
      text += "warn  " + who + ": " + warning + "\n";
  }
  if (!checks.empty()) {
    size_t checked = checks.size() - skipped;
    text += "\n" + std::to_string(checked) +
            (checked == 1 ? " plugin" : " plugins") +
            " checked: " + std::to_string(checked - failed) + " ok, " +
            std::to_string(failed) + " with problems";
    if (skipped)
      text += ", " + std::to_string(skipped) + " skipped";
    text += "\n";
    if (checked > 0)
      text += "Undeclared imports are found by name only: each plugin was "
              "asked for the imports the other plugins of its package "
              "declare and for \"" +
              std::string(kUnknownImport) + "\".\n";
  }
  text += compilerChecksText(compilerChecks, prefix->path, platform);
  if (!shadowed.empty())
    text += "\nImports that more than one package provides (IREE resolves "
            "imports in reverse registration order):\n" +
            shadowedImportsText(shadowed);
  text += testsText;
  std::fputs(text.c_str(), stdout);
  return ok ? kExitOk : kExitFailure;
}

} // namespace ireepkg::cli
