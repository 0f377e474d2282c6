//===- cli/args/registry_args.cpp - Registry, project and network options -===//
#include "args/registry_args.h"
#include "host/interrupt.h"

#include "args/cli_config.h"
#include "output/output.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/pkg/project/project_file.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace ireepkg::cli {

const OptionSpec kOptRegistry{
    "registry", 0, "URL",
    "the registry to use (https://, http://, file:// or a directory; "
    "default: $IREEPKG_REGISTRY, else the project's registries)"};
const OptionSpec kOptRegistryKey{
    "registry-key", 0, "KEY",
    "the minisign public key the registry must be signed with (base64 or a "
    ".pub file; default: $IREEPKG_REGISTRY_KEY)",
    true};
const OptionSpec kOptOffline{
    "offline", 0, "",
    "never open a network connection: use only cached metadata and "
    "archives (also IREEPKG_OFFLINE=1)"};
const OptionSpec kOptIreeVersion{
    "iree-version", 0, "VERSION",
    "use this IREE version (default: the IREE in use: the version of the "
    "IREE wheel that installed iree-compile, else iree-run-module, found on "
    "PATH or in the virtual environment, else the tool's --version)"};
const OptionSpec kOptIgnoreIreeVersion{
    "ignore-iree-version", 0, "",
    "install packages whose requires.iree excludes the IREE in use, with a "
    "warning"};
const OptionSpec kOptProject{
    "project", 0, "FILE",
    "the project file, or a directory holding plugins.json (default: the "
    "plugins.json found upward from here)"};

bool networkSettingsFromEnvironment(net::FetchOptions &fetch) {
  struct Setting {
    const char *name;
    double *value;
    const char *what;
  };
  double lowSpeed = static_cast<double>(fetch.lowSpeedBytesPerSecond);
  const Setting settings[] = {
      {"IREEPKG_LOW_SPEED_LIMIT", &lowSpeed, "bytes per second"},
      {"IREEPKG_LOW_SPEED_TIME", &fetch.readTimeoutSeconds, "seconds"},
      {"IREEPKG_DOWNLOAD_TIMEOUT", &fetch.fileDeadlineSeconds,
       "seconds (0: no deadline)"},
      {"IREEPKG_RETRY_AFTER_MAX", &fetch.maxRetryAfterSeconds, "seconds"}};
  for (const Setting &s : settings) {
    const char *text = environmentOverride(s.name);
    if (!text || !*text)
      continue;
    char *end = nullptr;
    double v = std::strtod(text, &end);
    if (*end || !(v >= 0) || v > 1e9) {
      setSetupFailure(kExitUsage);
      printError(std::string(s.name) + "=\"" + text + "\" is not a number of " +
                     s.what,
                 std::string("set it to a number such as ") +
                     (s.value == &lowSpeed ? "1024" : "30") + ", or unset it");
      return false;
    }
    *s.value = v;
  }
  fetch.lowSpeedBytesPerSecond = static_cast<uint64_t>(lowSpeed);
  return true;
}

std::optional<workflow::Environment> environmentFrom(const ParsedArgs &args) {
  setSetupFailure(kExitFailure);
  workflow::Environment env;
  const char *off = environmentOverride("IREEPKG_OFFLINE");
  // --offline, else IREEPKG_OFFLINE (0 means online), else config.toml.
  if (args.flag("offline") || globalOptions().offline)
    env.client.offline = true;
  else if (off && *off)
    env.client.offline = std::string(off) != "0";
  else if (const config::Setting *c = configSetting("offline"))
    env.client.offline = c->value == "true";
  // IREEPKG_PARALLEL_DOWNLOADS, else config.toml, else the built-in 50.
  if (const char *p = environmentOverride("IREEPKG_PARALLEL_DOWNLOADS");
      p && *p) {
    char *end = nullptr;
    long n = std::strtol(p, &end, 10);
    if (*end || n < 1 || n > 256) {
      setSetupFailure(kExitUsage);
      printError(std::string("IREEPKG_PARALLEL_DOWNLOADS=\"") + p +
                     "\" is not a number from 1 to 256",
                 "set it to a number such as 8, or unset it");
      return std::nullopt;
    }
    env.client.fetch.parallel = static_cast<int>(n);
  } else if (const config::Setting *c = configSetting("parallel-downloads")) {
    env.client.fetch.parallel = std::stoi(c->value);
  }
  env.client.fetch.offline = env.client.offline;
  // Ctrl-C (once the command catches it) stops a request under way.
  env.client.fetch.interrupted = &interruptRequested;
  if (!networkSettingsFromEnvironment(env.client.fetch))
    return std::nullopt;
  if (auto v = args.value("iree-version")) {
    auto parsed = workflow::parseIreeVersion(*v);
    if (!parsed) {
      setSetupFailure(kExitUsage);
      printError("--iree-version: \"" + *v + "\" is not a version",
                 "give a version such as 3.13.0");
      return std::nullopt;
    }
    env.ireeVersion = *parsed;
  }
  env.ignoreIreeRequirements = args.flag("ignore-iree-version");
  if (auto b = args.value("bundle"))
    env.bundle = *b;
  return env;
}

std::optional<workflow::Project> projectFrom(const ParsedArgs &args) {
  std::string file;
  setSetupFailure(kExitFailure);
  if (auto p = args.value("project")) {
    auto resolved = projectFileArgument(*p);
    if (!resolved) {
      if (resolved.error().code == ErrorCode::Usage)
        setSetupFailure(kExitUsage);
      printError(resolved.error());
      return std::nullopt;
    }
    file = *resolved;
  } else {
    file = findProjectFile(fs::current_path().string());
    if (file.empty()) {
      printError("no plugins.json here or in any directory above",
                 "run `ireepkg init` to start a project, or pass --project");
      return std::nullopt;
    }
  }
  verboseLine(1, "project file: " + file);
  auto project = workflow::loadProject(file);
  if (!project) {
    printError(project.error());
    return std::nullopt;
  }
  return std::move(*project);
}

std::optional<ProjectContext> projectContext(const ParsedArgs &args) {
  auto project = projectFrom(args);
  if (!project)
    return std::nullopt;
  auto env = environmentFrom(args);
  if (!env)
    return std::nullopt;
  return ProjectContext{std::move(*project), std::move(*env)};
}

std::optional<std::string> projectPrefix(const ParsedArgs &args,
                                         const workflow::Project &project) {
  const char *env = environmentOverride("IREEPKG_PREFIX");
  if (args.value("prefix") || (env && *env)) {
    auto p = choosePrefix(args);
    if (!p)
      return std::nullopt;
    return p->path;
  }
  const std::string prefix = project.dir + "/.iree-plugins";
  if (Status s = checkProjectPrefix(prefix); !s) {
    printError(s.error());
    return std::nullopt;
  }
  verboseLine(1, "prefix: " + prefix + " (the project's)");
  followMovedPrefix(args, prefix);
  return prefix;
}

std::vector<registry::RegistrySpec>
registriesFrom(const ParsedArgs &args, const workflow::Project *project) {
  std::vector<std::string> keys = args.all("registry-key");
  if (keys.empty())
    if (const char *k = environmentOverride("IREEPKG_REGISTRY_KEY"); k && *k)
      keys.push_back(k);
  std::string url;
  if (auto r = args.value("registry"))
    url = *r;
  else if (const char *r = environmentOverride("IREEPKG_REGISTRY"); r && *r)
    url = r;
  if (!url.empty()) {
    registry::RegistrySpec spec;
    spec.name = "default";
    spec.url = (net::isHttpUrl(url) || url.rfind("file://", 0) == 0 ||
                url.rfind("oci://", 0) == 0 || url.rfind("oci+http://", 0) == 0)
                   ? url
                   : fs::absolute(url).lexically_normal().string();
    spec.publicKeys = keys;
    return {spec};
  }
  if (project) {
    auto specs = workflow::projectRegistries(*project);
    if (!keys.empty())
      for (auto &s : specs)
        if (s.publicKeys.empty())
          s.publicKeys = keys;
    if (!specs.empty())
      return specs;
  }
  // config.toml's registry: below the flags, the environment and the
  // project.
  if (const config::Setting *r = configSetting("registry")) {
    registry::RegistrySpec spec;
    spec.name = "default";
    spec.url = (net::isHttpUrl(r->value) || r->value.rfind("file://", 0) == 0)
                   ? r->value
                   : (fs::path(r->where.file).parent_path() / r->value)
                         .lexically_normal()
                         .string();
    if (keys.empty())
      if (const config::Setting *k = configSetting("registry-key"))
        keys.push_back(k->value);
    spec.publicKeys = keys;
    verboseLine(1, "registry " + spec.url + " (from " + settingWhere(*r) + ")");
    return {spec};
  }
  return {};
}

void printLockChanges(const std::vector<workflow::LockChange> &changes) {
  for (const workflow::LockChange &c : changes) {
    if (c.from.empty())
      std::printf("  %s\n",
                  paint(Style::Added, "+ " + c.name + " " + c.to).c_str());
    else if (c.to.empty())
      std::printf("  %s\n",
                  paint(Style::Removed, "- " + c.name + " " + c.from).c_str());
    else
      std::printf("  %s\n", paint(Style::Changed,
                                  "~ " + c.name + " " + c.from + " -> " + c.to)
                                .c_str());
  }
}

nlohmann::json lockChangesToJson(const std::vector<workflow::LockChange> &c) {
  nlohmann::json out = nlohmann::json::array();
  for (const workflow::LockChange &x : c)
    out.push_back(
        {{"name", x.name},
         {"from", x.from.empty() ? nlohmann::json() : nlohmann::json(x.from)},
         {"to", x.to.empty() ? nlohmann::json() : nlohmann::json(x.to)}});
  return out;
}

registry::RegistrySpec standaloneRegistry(const ParsedArgs &args,
                                          const std::string &url) {
  registry::RegistrySpec spec;
  spec.name.clear(); // no project names it
  spec.url = url;
  spec.publicKeys = args.all("registry-key");
  spec.mirrors = args.all("mirror");
  return spec;
}

} // namespace ireepkg::cli
