//===- cmd_cache.cpp - `ireepkg cache dir|clean|prune` --------------------===//
#include "output.h"
#include "report.h"

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

} // namespace ireepkg::cli
