//===- workflow/src/bundle_create.cpp - Offline bundles -------------------===//
//
// An offline bundle: a project's locked packages and the signed registry
// files they came from, in one archive that `sync --bundle` installs from
// without a network.
//
//===----------------------------------------------------------------------===//
#include "sources.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/registry/client/registry_cache.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace ireepkg::workflow {

using namespace detail;

Expected<BundleResult> createBundle(const Project &project,
                                    const Lockfile &lock,
                                    const BundleRequest &request,
                                    const Environment &env,
                                    Reporter &reporter) {
  for (const Platform &p : request.platforms)
    if (std::find(lock.platforms.begin(), lock.platforms.end(), p) ==
        lock.platforms.end())
      return makeError(ErrorCode::Unsupported,
                       "the lock was not resolved for " + p.str(),
                       Location{project.lockPath, 0, 0, "/platforms", "", ""},
                       "add it to \"platforms\" in plugins.json and run "
                       "`ireepkg lock`");
  Environment online = env;
  online.bundle.clear();
  auto src = projectSources(project, online, reporter);
  if (!src)
    return Unexpected(src.error());
  std::string out = fsutil::absolutePath(request.output);
  std::string stage = out + ".stage-" + std::to_string(::getpid());
  (void)fsutil::removeTree(stage);
  auto fail = [&](Error e) -> Expected<BundleResult> {
    (void)fsutil::removeTree(stage);
    return Unexpected(std::move(e));
  };

  // Group the locked registry packages by registry.
  std::map<size_t, std::vector<const LockedPackage *>> byRegistry;
  for (const LockedPackage &lp : lock.packages) {
    if (lp.sourceKind == LockedPackage::SourceKind::Path)
      return fail(Error(ErrorCode::Unsupported,
                        "package \"" + lp.name + "\" is a local path (" +
                            lp.source + "), which a bundle cannot hold",
                        Location{project.lockPath, 0, 0, "", lp.name, ""},
                        "publish it to a registry, or copy its directory "
                        "along with the bundle"));
    std::optional<size_t> reg;
    for (size_t r = 0; r < project.parsed.registries.size(); ++r)
      if (project.parsed.registries[r].url == lp.source)
        reg = r;
    if (!reg)
      return fail(Error(ErrorCode::Conflict,
                        "package \"" + lp.name + "\" is locked to registry " +
                            lp.source + ", which plugins.json does not list",
                        Location{project.lockPath, 0, 0, "", lp.name, ""},
                        "run `ireepkg lock`"));
    byRegistry[*reg].push_back(&lp);
  }

  nlohmann::json manifest = {{"bundle_version", 1},
                             {"registries", nlohmann::json::array()}};
  std::vector<ArchiveMember> members;
  size_t count = 0;
  for (const auto &[reg, pkgs] : byRegistry) {
    std::string sub = "registries/" + std::to_string(reg);
    std::string dir = stage + "/" + sub;
    RegistrySpec spec = (*src)->specs()[reg];
    auto transport = registry::openTransport(spec, env.client);
    if (!transport)
      return fail(transport.error());
    auto client = (*src)->client(reg);
    if (!client)
      return fail(client.error());
    // The registry's own signed files, byte for byte.
    std::vector<std::string> files = {"config.json", "snapshot.json",
                                      "snapshot.json.minisig"};
    std::vector<std::pair<std::string, Version>> which;
    for (const LockedPackage *lp : pkgs) {
      files.push_back("index/" + lp->name + ".json");
      which.push_back({lp->name, lp->version});
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    if (Status s = registry::cache::copyMetadataFiles(**transport, files, dir);
        !s)
      return fail(s.error());
    auto paths = (*client)->fetchArchives(which, reporter);
    if (!paths)
      return fail(paths.error());
    for (size_t k = 0; k < pkgs.size(); ++k) {
      const LockedPackage *lp = pkgs[k];
      auto entry = (*client)->entry(lp->name, lp->version);
      if (!entry)
        return fail(entry.error());
      if ((*entry)->sha256 != lp->sha256)
        return fail(Error(ErrorCode::Integrity,
                          "the registry's archive of " + lp->name + " " +
                              lp->version.str() +
                              " is not the one the lock pins",
                          Location{project.lockPath, 0, 0, "", lp->name, ""},
                          "run `ireepkg lock`"));
      std::string rel = (*entry)->archive;
      if (Status s = fsutil::makeDirs(fs::path(dir + "/" + rel).parent_path());
          !s)
        return fail(s.error());
      std::error_code ec;
      fs::copy_file((*paths)[k], dir + "/" + rel,
                    fs::copy_options::overwrite_existing, ec);
      if (ec)
        return fail(fsutil::ioError("cannot copy", (*paths)[k], ec.value()));
      members.push_back({sub + "/" + rel, "", dir + "/" + rel, false});
      // The archive's own signature travels with it when it has one.
      if (auto sig = (*transport)->fetch(rel + ".minisig", 1 << 16)) {
        if (Status s = fsutil::writeFileAtomic(dir + "/" + rel + ".minisig",
                                               sig->body);
            !s)
          return fail(s.error());
        members.push_back({sub + "/" + rel + ".minisig", "",
                           dir + "/" + rel + ".minisig", false});
      }
      ++count;
    }
    for (const std::string &f : files)
      members.push_back({sub + "/" + f, "", dir + "/" + f, false});
    manifest["registries"].push_back(
        {{"url", project.parsed.registries[reg].url}, {"dir", sub}});

    // Check the staged registry exactly as `sync --bundle` will.
    RegistrySpec staged = spec;
    staged.url = dir;
    staged.mirrors.clear();
    registry::ClientOptions co = env.client;
    co.bundle = true;
    co.cacheRoot = stage + "/verify-cache";
    auto check = RegistryClient::open(staged, co, reporter);
    if (!check)
      return fail(check.error());
    auto verified = (*check)->fetchArchives(which, reporter);
    if (!verified)
      return fail(verified.error());
  }
  std::string bundleJson = manifest.dump(2) + "\n";
  members.insert(members.begin(), {"bundle.json", bundleJson, "", false});
  std::sort(members.begin() + 1, members.end(),
            [](const ArchiveMember &a, const ArchiveMember &b) {
              return a.path < b.path;
            });
  std::string tmpOut = out + ".part-" + std::to_string(::getpid());
  if (Status s = writeArchive(tmpOut, members); !s) {
    (void)fsutil::removeTree(tmpOut);
    return fail(s.error());
  }
  if (Status s = fsutil::renameDurable(tmpOut, out); !s) {
    (void)fsutil::removeTree(tmpOut);
    return fail(s.error());
  }
  (void)fsutil::removeTree(stage);
  BundleResult r;
  r.path = out;
  auto sha = sha256File(out);
  if (!sha)
    return Unexpected(sha.error());
  r.sha256 = *sha;
  std::error_code ec;
  r.size = fs::file_size(out, ec);
  r.packages = count;
  return r;
}

} // namespace ireepkg::workflow
