//===- cli/args/prefix_args.cpp - The prefix a command acts on ------------===//
#include "args/prefix_args.h"

#include "args/cli_config.h"
#include "args/global_options.h"
#include "output/messages.h"
#include "output/report.h"
#include "output/reporter.h"

#include "ireepkg/manifest_schema/cpu_level.h"
#include <ireepkg/runtime.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace ireepkg::cli {

namespace {
int gSetupFailure = kExitFailure;
}
int setupFailure() { return gSetupFailure; }
void setSetupFailure(int code) { gSetupFailure = code; }

std::optional<PrefixLocation> choosePrefix(const ParsedArgs &args) {
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) {
    printError("cannot read the current directory");
    setSetupFailure(kExitFailure);
    return std::nullopt;
  }
  auto loc = locatePrefix(args.value("prefix"), cwd);
  if (!loc) {
    printError(loc.error());
    setSetupFailure(loc.error().code == ErrorCode::Usage ? kExitUsage
                                                         : kExitFailure);
    return std::nullopt;
  }
  // config.toml's prefix: below --prefix, IREEPKG_PREFIX and the project.
  if (loc->reason == "XDG_DATA_HOME" || loc->reason == "default")
    if (const config::Setting *p = configSetting("prefix")) {
      auto configured = locatePrefix(p->value, cwd);
      if (!configured) {
        printError(configured.error());
        setSetupFailure(kExitFailure);
        return std::nullopt;
      }
      loc = std::move(configured);
      loc->reason = settingWhere(*p);
    }
  verboseLine(1, "prefix: " + loc->path + " (from " + loc->reason + ")");
  followMovedPrefix(args, loc->path);
  return *loc;
}

namespace {
/// Where the runtime index says `prefix` was written, when it has moved
/// since ("" when not, or without an index): the index's header names the
/// prefix, and libireepkg_runtime compares it with where it is now.
std::string indexMovedFrom(const std::string &prefix) {
  ireepkg_runtime_index_t *index = nullptr;
  if (ireepkg_runtime_open(prefix.c_str(), 0, &index, nullptr) !=
      IREEPKG_RUNTIME_OK)
    return "";
  const char *moved = ireepkg_runtime_index_moved_from(index);
  std::string from = moved ? moved : "";
  ireepkg_runtime_close(index);
  return from;
}
} // namespace

void followMovedPrefix(const ParsedArgs &args, const std::string &prefix) {
  // The cheap test first, at every command (indexMovedFrom).
  const std::string from = indexMovedFrom(prefix);
  if (from.empty())
    return;
  const std::string flagfile = prefix + "/state/runtime.flags";
  if (args.flag("dry-run")) {
    if (!globalOptions().quiet)
      std::fprintf(stderr,
                   "ireepkg: note: the prefix %s was moved or copied from %s; "
                   "without --dry-run its state files are written again for "
                   "where it is now\n",
                   prefix.c_str(), from.c_str());
    return;
  }
  CliReporter reporter(false);
  LockOptions lock;
  lockOptions(args, lock);
  auto rewritten = rewriteMovedPrefix(prefix, lock, reporter);
  if (!rewritten) {
    printWarning("the prefix " + prefix + " was moved or copied from " +
                 from + ", and its state files cannot be written again "
                 "here (" + rewritten.error().message + "): ireepkg, Python's "
                 "ireepkg and libireepkg_runtime find its files where it is "
                 "now, but IREE's --flagfile=" + flagfile + " still names " +
                 from + "; run any ireepkg command on the prefix where it can "
                 "be written, or give IREE the plugins with `ireepkg exec`");
    return;
  }
  if (*rewritten && !globalOptions().quiet)
    std::fprintf(stderr,
                 "ireepkg: note: the prefix %s was moved or copied from %s: "
                 "its state files, %s among them, were written again for "
                 "where it is now\n",
                 prefix.c_str(), (*rewritten)->c_str(), flagfile.c_str());
}

bool flagfilesAreStale(const std::string &prefix) {
  return !indexMovedFrom(prefix).empty();
}

std::vector<std::string> runtimeFlagsOf(const std::string &prefix) {
  std::vector<std::string> out;
  ireepkg_runtime_index_t *index = nullptr;
  if (ireepkg_runtime_open(prefix.c_str(), 0, &index, nullptr) !=
      IREEPKG_RUNTIME_OK)
    return out;
  ireepkg_runtime_plugin_list_t *list = nullptr;
  if (ireepkg_runtime_list_plugins(index, ireepkg_runtime_index_platform(index),
                                   0, &list, nullptr) == IREEPKG_RUNTIME_OK) {
    for (size_t i = 0; i < list->count; ++i)
      out.push_back(std::string("--executable_plugin=") +
                    list->plugins[i].spec);
    ireepkg_runtime_free_plugin_list(list);
  }
  ireepkg_runtime_close(index);
  return out;
}

std::string prefixPlatform(const std::string &prefix) {
  ireepkg_runtime_index_t *index = nullptr;
  if (ireepkg_runtime_open(prefix.c_str(), 0, &index, nullptr) !=
      IREEPKG_RUNTIME_OK)
    return hostPlatform().str();
  std::string platform = ireepkg_runtime_index_platform(index);
  ireepkg_runtime_close(index);
  return platform;
}

void noteOtherPlatform(const std::string &prefix, const std::string &platform,
                       const std::string &what) {
  const std::string host = hostPlatform().str();
  if (platform == host || globalOptions().quiet)
    return;
  std::fprintf(stderr,
               "ireepkg: note: %s is a prefix for %s, not this host (%s): "
               "%s\n",
               prefix.c_str(), platform.c_str(), host.c_str(), what.c_str());
}


std::optional<PrefixState> readPrefixState(const ParsedArgs &args, bool json,
                                           int &exitCode) {
  auto prefix = choosePrefix(args);
  if (!prefix) {
    exitCode = setupFailure();
    return std::nullopt;
  }
  CliReporter reporter(json);
  auto state = readInstalledState(prefix->path, reporter);
  if (!state) {
    exitCode = printFailure(state.error(), json);
    return std::nullopt;
  }
  return PrefixState{std::move(*prefix), std::move(*state)};
}

bool lockOptions(const ParsedArgs &args, LockOptions &out) {
  auto v = args.value("lock-timeout");
  if (!v)
    return true;
  char *end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end || d < 0 || d > 86400 * 7) {
    printError("--lock-timeout takes a number of seconds, not '" + *v + "'");
    return false;
  }
  out.timeoutSeconds = d;
  return true;
}

Expected<std::string> cpuLevelTarget(const std::string &target,
                                     const std::string &level) {
  const std::string platform =
      target == "host" ? ireepkg_runtime_host_platform() : target;
  const size_t dash = platform.find('-');
  const std::string arch =
      dash == std::string::npos ? platform : platform.substr(dash + 1);
  const ireepkg_cpu_key_t k =
      ireepkg_cpu_parse_key(level.data(), level.size(), /*allow_v1=*/true);
  if (k.problem == IREEPKG_CPU_KEY_OK &&
      level.compare(0, k.base_size, arch) == 0 && k.base_size == arch.size() &&
      k.base_size < level.size())
    return (dash == std::string::npos ? "" : platform.substr(0, dash + 1)) +
           level;
  return makeError(ErrorCode::Usage,
                   "\"" + level + "\" is not a CPU level of " + platform, {},
                   arch == "x86_64"
                       ? "CPU levels are x86_64_v1 (the baseline) to "
                         "x86_64_v4, or x86_64+<feature>..., e.g. "
                         "x86_64+avx512f"
                       : "give " + arch + "+<feature>..., e.g. " + arch +
                             (arch == "aarch64" ? "+sve" : "+<feature>"));
}

std::optional<std::string> cpuLevelOption(const std::string &target,
                                          const std::string &level) {
  if (level == "host")
    return std::string();
  auto t = cpuLevelTarget(target, level);
  if (!t) {
    printError(t.error().message, t.error().hint);
    return std::nullopt;
  }
  return level;
}

} // namespace ireepkg::cli
