//===- cli/commands/cmd_cache.cpp - `ireepkg cache dir|clean|prune` -------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/pkg/cache/cache_maintenance.h"

#include <cstdio>

namespace ireepkg::cli {

static std::optional<PackageCache> openCache() {
  auto cache = PackageCache::openDefault();
  if (!cache)
    printError("no cache directory: neither IREEPKG_CACHE_DIR, "
               "XDG_CACHE_HOME nor HOME is set",
               "set IREEPKG_CACHE_DIR to a writable directory");
  return cache;
}

static std::string filesText(uint64_t n) {
  return std::to_string(n) + (n == 1 ? " file" : " files");
}

static int report(const std::string &root, const CacheRemoval &r, bool json) {
  if (json) {
    nlohmann::json parts = nlohmann::json::object();
    for (const CacheRemoval::Part &p : r.parts)
      parts[p.kind] = {{"files", p.files}, {"bytes", p.bytes}};
    nlohmann::json out = {{"cache", root},
                          {"removed_files", r.files},
                          {"removed_bytes", r.bytes},
                          {"by_kind", parts}};
    if (!r.archives.empty())
      out["archives"] = r.archives;
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  for (const std::string &a : r.archives)
    printSummary("removed the downloaded archive of %s\n", a.c_str());
  printSummary("removed %s, %s from %s\n", filesText(r.files).c_str(),
               formatBytes(r.bytes).c_str(), root.c_str());
  for (const CacheRemoval::Part &p : r.parts)
    printSummary("  %-10s %s, %s\n", p.kind.c_str(), filesText(p.files).c_str(),
                 formatBytes(p.bytes).c_str());
  return kExitOk;
}

int runCacheDir(const Command &, const ParsedArgs &args) {
  auto cache = openCache();
  if (!cache)
    return kExitFailure;
  if (!args.flag("json")) {
    std::printf("%s\n", cache->root().c_str());
    return kExitOk;
  }
  auto usage = cacheUsage(cache->root());
  if (!usage)
    return printFailure(usage.error(), true);
  nlohmann::json parts = nlohmann::json::object();
  for (const CacheRemoval::Part &p : usage->parts)
    parts[p.kind] = {{"files", p.files}, {"bytes", p.bytes}};
  std::printf("%s\n", nlohmann::json({{"cache", cache->root()},
                                      {"files", usage->files},
                                      {"bytes", usage->bytes},
                                      {"by_kind", parts}})
                          .dump(2)
                          .c_str());
  return kExitOk;
}

int runCacheClean(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto cache = openCache();
  if (!cache)
    return kExitFailure;
  auto removed = args.positional.empty()
                     ? cleanCache(cache->root())
                     : cleanCachedPackages(cache->root(), args.positional);
  if (!removed)
    return printFailure(removed.error(), json);
  return report(cache->root(), *removed, json);
}

int runCachePrune(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto cache = openCache();
  if (!cache)
    return kExitFailure;
  auto removed = pruneCache(cache->root());
  if (!removed)
    return printFailure(removed.error(), json);
  return report(cache->root(), *removed, json);
}

const Command &cacheDirCommand() {
  static const Command command{
      .name = "cache dir",
      .synopsis = "[--json]",
      .summary = "print where the package cache is",
      .description =
          "Prints the cache directory: $IREEPKG_CACHE_DIR, else "
          "$XDG_CACHE_HOME/ireepkg, else ~/.cache/ireepkg. With --json, also "
          "the number of files and bytes in each of its parts.",
      .options = {kJson},
      .examples = {"ireepkg cache dir"},
      .maxPositional = 0,
      .run = runCacheDir,
  };
  return command;
}

const Command &cacheCleanCommand() {
  static const Command command{
      .name = "cache clean",
      .synopsis = "[<name>...] [--json]",
      .summary =
          "empty the package cache, or drop packages' downloaded archives",
      .description =
          "Without names, removes everything in the cache: installed-file "
          "blobs, archives seen before, downloaded archives, registry "
          "metadata, extracted bundles, inspection results. With names, "
          "removes only the downloaded archives of those packages (every "
          "version). Prints the number of files and bytes removed. Installed "
          "prefixes are not affected: their files are links or copies; the "
          "next install or sync fetches or extracts again what it needs. "
          "Only the cache's own files go: a directory that holds anything "
          "else at its top level (a home directory given by mistake) is "
          "refused, and nothing is removed.",
      .options = {kJson},
      .examples = {"ireepkg cache clean", "ireepkg cache clean simple-mul"},
      .run = runCacheClean,
  };
  return command;
}

const Command &cachePruneCommand() {
  static const Command command{
      .name = "cache prune",
      .synopsis = "[--json]",
      .summary = "remove what nothing uses from the package cache",
      .description =
          "Removes every partial download or staging file whose process is "
          "gone (`*.part-<pid>-*`, `*.tmp-<pid>` in downloads/, "
          "registries/<id>/http/ and bundles/; a `*.part-<random>` without "
          "a process id once it is an hour old); every installed-file blob "
          "that no prefix hard-links (its link count is 1), with its "
          "\"verified\" markers, and markers of blobs that changed; and, when "
          "blobs were removed, the records of archives seen before (they "
          "promise blobs that may be gone). Where the cache places files by "
          "reflink or copy, the link count cannot tell, and every blob goes: "
          "the next install of such a package extracts its archive again. "
          "Downloaded archives, registry metadata and extracted bundles are "
          "kept (a lockfile may need them offline; `cache clean` removes "
          "them). Prints the number of files and bytes removed. Refuses a "
          "directory that is not an ireepkg cache, as `cache clean` does.",
      .options = {kJson},
      .examples = {"ireepkg cache prune"},
      .maxPositional = 0,
      .run = runCachePrune,
  };
  return command;
}

} // namespace ireepkg::cli
