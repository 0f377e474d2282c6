//===- cli/commands/cmd_info.cpp - `ireepkg info` -------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/manifest_schema/cpu_level.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/runtime_integration/runtime_state.h"

#include <cstdio>
#include <sys/stat.h>

namespace ireepkg::cli {

int runInfo(const Command &, const ParsedArgs &args) {
  const std::string &what = args.positional[0];
  bool json = args.flag("json");
  struct stat st;
  bool isFile = ::stat(what.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (isFile) {
    auto head = readArchiveHead(what);
    if (!head)
      return printFailure(head.error(), json);
    if (json) {
      nlohmann::json j = manifestToJson(head->manifest);
      j["archive"] = what;
      j["archive_size"] = static_cast<uint64_t>(st.st_size);
      j["installed_size"] = head->record.totalSize();
      j["files"] = head->record.files.size();
      std::printf("%s\n", j.dump(2).c_str());
      return kExitOk;
    }
    std::printf("%s %s (archive %s, %s)\n", head->manifest.name.c_str(),
                head->manifest.version.str().c_str(), what.c_str(),
                formatBytes(static_cast<uint64_t>(st.st_size)).c_str());
    std::printf("  unpacked: %s in %zu files\n",
                formatBytes(head->record.totalSize()).c_str(),
                head->record.files.size());
    std::fputs(describeManifest(head->manifest, "  ").c_str(), stdout);
    return kExitOk;
  }
  int code = kExitOk;
  auto opened = readPrefixState(args, json, code);
  if (!opened)
    return code;
  const PrefixLocation *prefix = &opened->prefix;
  InstalledState *state = &opened->state;
  CliReporter reporter(json);
  const InstalledPackage *p = state->find(what);
  if (!p) {
    std::vector<std::string> names;
    for (const InstalledPackage &q : state->packages)
      names.push_back(q.name);
    return printFailure(
        Error(ErrorCode::NotFound,
              "package \"" + what + "\" is not installed in " + prefix->path +
                  didYouMean(what, std::span<const std::string>(names)),
              {}, "see `ireepkg list`, or give an archive path"),
        json);
  }
  auto m = readInstalledManifest(prefix->path, *p, reporter);
  if (!m)
    return printFailure(m.error(), json);
  std::string dir = packageDir(prefix->path, p->name, p->version);
  // What is activated where the prefix is for, which need not be this host.
  const Platform platform =
      Platform::parse(state->platform).value_or(hostPlatform());
  if (!m->runtimePlugins.empty())
    noteOtherPlatform(prefix->path, platform.str(),
                      "info shows what is activated there");
  // Which build of each runtime plugin with builds for CPU levels this
  // machine activates, and why (for a prefix of this host's platform).
  nlohmann::json builds = nlohmann::json::array();
  std::string buildsText;
  std::map<std::pair<std::string, std::string>, HostRuntimeBuild> hostBuilds;
  if (platform == hostPlatform())
    hostBuilds = hostRuntimeBuilds(prefix->path);
  nlohmann::json activation = nlohmann::json::array();
  std::string activationText;
  for (const RuntimePlugin &plugin : m->runtimePlugins) {
    RuntimeLibraryChoice choice = chooseRuntimeLibrary(plugin, platform, dir);
    bool levels = false;
    for (const auto &[key, rel] : plugin.library)
      levels |=
          ireepkg_cpu_parse_key(key.data(), key.size(), false).base_size !=
          key.size();
    auto b = hostBuilds.find({p->name, plugin.name});
    if (levels && b != hostBuilds.end()) {
      const bool baseline = ireepkg_cpu_parse_key(b->second.key.data(),
                                                  b->second.key.size(), false)
                                .base_size == b->second.key.size();
      const std::string why =
          (baseline ? "the baseline build, as this CPU lacks what the others "
                      "need: "
                    : "chosen for this CPU: ") +
          hostCpuDescription();
      builds.push_back({{"plugin", plugin.name},
                        {"library_key", b->second.key},
                        {"path", b->second.path},
                        {"reason", why}});
      buildsText += "  runtime plugin " + plugin.name +
                    " on this machine: " + b->second.key + ", " + why + "\n";
      if (!baseline && plugin.library.count(b->second.key))
        choice.rel = plugin.library.at(b->second.key);
    }
    nlohmann::json a = {{"plugin", plugin.name},
                        {"activated", !choice.rel.empty()}};
    if (!choice.rel.empty()) {
      a["library"] = choice.rel;
      activationText +=
          "    runtime plugin " + plugin.name + ": " + choice.rel + "\n";
    } else {
      a["reason"] = choice.reason;
      activationText +=
          "    runtime plugin " + plugin.name + ": not activated: " +
          (choice.fact ? stoppedPluginNote(*m, plugin, platform, choice, dir)
                       : choice.reason) +
          "\n";
    }
    activation.push_back(std::move(a));
  }
  if (json) {
    nlohmann::json j = manifestToJson(*m);
    if (!builds.empty())
      j["runtime_builds"] = builds;
    j["reason"] = p->explicitlyInstalled ? "explicit" : "dependency";
    j["installed_size"] = p->installedSize;
    j["path"] = dir;
    j["archive_sha256"] = p->archiveSha256;
    j["activation"] = {{"platform", platform.str()},
                       {"runtime_plugins", activation}};
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  std::printf("%s %s (%s)\n", p->name.c_str(), p->version.str().c_str(),
              p->explicitlyInstalled ? "installed explicitly"
                                     : "installed as a dependency");
  std::printf("  location: %s\n  installed size: %s\n", dir.c_str(),
              formatBytes(p->installedSize).c_str());
  std::fputs(describeManifest(*m, "  ").c_str(), stdout);
  if (!activationText.empty())
    std::printf("  activated on %s (the prefix's platform):\n%s",
                platform.str().c_str(), activationText.c_str());
  std::fputs(buildsText.c_str(), stdout);
  return kExitOk;
}

const Command &infoCommand() {
  static const Command command{
      .name = "info",
      .synopsis = "<name|archive> [--prefix DIR] [--json]",
      .summary = "show everything about an installed package or an archive",
      .description =
          "Shows version, platforms, compiler plugins with their options and "
          "defaults, hooks, runtime plugins with formats and imports, "
          "dependencies, installed size and location, and whether it was "
          "installed explicitly or pulled in as a dependency. For an "
          "installed package, also which of its runtime plugins are "
          "activated on the prefix's platform, and why any is not (with a "
          "note on stderr when that platform is not the host's).",
      .options = {kPrefix, kJson},
      .examples = {"ireepkg info simple-mul",
                   "ireepkg info simple-mul-1.2.0.ireepkg"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runInfo,
  };
  return command;
}

} // namespace ireepkg::cli
