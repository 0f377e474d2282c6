//===- fuzz_bundle.cpp - Fuzzes an offline bundle's bundle.json ===//
//
// The bytes as the bundle.json of an offline bundle: the target packs them
// into a bundle file (a zstd tar, as `bundle create` writes) and asks
// `install <name>` to use that bundle, which extracts it into the cache,
// reads bundle.json (its registries and their directories) and opens the
// registry it names. Nothing is installed: the bundle holds no registry
// files, and the prefix does not exist.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package.h"
#include "ireepkg/registry/workflow.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &dir = fuzz::scratchDir();
  std::string bundle = dir + "/fuzz.ireebundle";
  ArchiveMember member;
  member.path = "bundle.json";
  member.content = std::string(fuzz::bytes(data, size));
  if (!writeArchive(bundle, {member}))
    return 0;
  workflow::InstallByNameRequest request;
  request.packages.push_back({"simple-mul", Constraint::any()});
  request.prefix = dir + "/no-prefix";
  workflow::Environment env;
  env.bundle = bundle;
  env.client.cacheRoot = dir + "/cache";
  env.client.offline = true;
  env.ignoreIree = true;
  Reporter reporter;
  (void)workflow::installByName(request, env, reporter);
  fuzz::removeScratch("cache");
  fuzz::removeScratch("no-prefix");
  return 0;
}
