//===- workflow/src/sources.h - A command's package sources (private) -----===//
//
// What the workflow operations share (private to the registry module):
// the registries and path packages a command resolves from, the project's
// platforms, its lockfile, and the activation order of a resolution.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_SOURCES_H
#define IREEPKG_REGISTRY_SOURCES_H

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/workflow/workflow.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace ireepkg::workflow::detail {

using registry::RegistryClient;
using registry::RegistrySpec;

/// An offline bundle, extracted once into the cache: registry URL (as the
/// lock names it) -> directory holding that registry's files.
struct OpenedBundle {
  std::string file;
  std::map<std::string, std::string> registries;
  /// Where it was extracted, and whether this command extracted it (and so
  /// removes it again unless a registry in it proved genuine).
  std::string dir;
  bool fresh = false;
};

Expected<OpenedBundle> openBundle(const std::string &bundle,
                                  const std::string &cacheRoot);

/// A registry URL as plugins.json gives it, made usable from anywhere:
/// relative directories are relative to the project.
std::string absoluteUrl(const std::string &url, const std::string &baseDir);

/// The registries a command works with, opened on first use, and the
/// PackageSource the resolver sees: path packages, then registries.
class Sources : public PackageSource {
public:
  Sources(std::vector<RegistrySpec> specs, const Environment &env,
          Reporter &reporter)
      : specs_(std::move(specs)), env_(env), reporter_(reporter),
        clients_(specs_.size()), openErrors_(specs_.size()) {
    // Without a cache location, opening a registry reports it.
    if (auto root = registry::cache::cacheRootFor(env.client))
      cacheRoot_ = *root;
  }

  /// A bundle this command extracted but whose signatures never verified
  /// (a wrong key, a forged or broken bundle) does not stay in the cache.
  ~Sources() override {
    if (bundle_ && bundle_->fresh && !bundleTrusted_)
      (void)fsutil::removeTree(bundle_->dir);
  }

  Status useBundle() {
    if (env_.bundle.empty())
      return ok();
    if (cacheRoot_.empty())
      return Unexpected(registry::cache::cacheRootFor(env_.client).error());
    auto b = openBundle(env_.bundle, cacheRoot_);
    if (!b)
      return Unexpected(b.error());
    bundle_ = std::move(*b);
    return ok();
  }

  /// A local package directory standing in for `name`.
  void addPath(const std::string &name, Manifest manifest, std::string dir) {
    paths_[name] = {std::move(manifest), std::move(dir)};
  }

  /// plugins.json ties `name` to the registry named `registryName`.
  Status pin(const std::string &name, const std::string &registryName,
             const std::string &projectFile, size_t pluginIndex) {
    for (size_t i = 0; i < specs_.size(); ++i)
      if (specs_[i].name == registryName) {
        pinned_[name] = i;
        return ok();
      }
    return makeError(
        ErrorCode::NotFound,
        "plugin \"" + name + "\" names registry \"" + registryName +
            "\", which plugins.json does not list",
        Location{projectFile, 0, 0,
                 "/plugins/" + std::to_string(pluginIndex) + "/registry", name,
                 ""},
        "add it to \"registries\", or remove \"registry\"");
  }

  const std::string &cacheRoot() const { return cacheRoot_; }
  const std::vector<RegistrySpec> &specs() const { return specs_; }
  bool isPath(const std::string &name) const { return paths_.count(name); }
  const std::pair<Manifest, std::string> *path(const std::string &name) const {
    auto it = paths_.find(name);
    return it == paths_.end() ? nullptr : &it->second;
  }

  Expected<RegistryClient *> client(size_t i) {
    if (clients_[i])
      return clients_[i].get();
    // A registry that could not be opened is not tried again (nor its
    // warnings given twice) for each package asked for.
    if (openErrors_[i])
      return Unexpected(*openErrors_[i]);
    RegistrySpec spec = specs_[i];
    registry::ClientOptions options = env_.client;
    options.cacheRoot = cacheRoot_;
    if (bundle_) {
      auto it = bundle_->registries.find(spec.url);
      if (spec.url.empty()) { // no registry named: the bundle's only one
        if (bundle_->registries.size() != 1)
          return makeError(ErrorCode::Usage,
                           "the bundle holds " +
                               std::to_string(bundle_->registries.size()) +
                               " registries; say which with --registry URL",
                           Location::inFile(bundle_->file));
        it = bundle_->registries.begin();
      }
      if (it == bundle_->registries.end()) {
        // A bundle made from a project names registries as that project
        // did; match on the URL as plugins.json wrote it too.
        for (const auto &[url, dir] : bundle_->registries)
          if (url == rawUrls_[spec.url])
            it = bundle_->registries.find(url);
      }
      if (it == bundle_->registries.end()) {
        if (bundle_->registries.size() == 1 && specs_.size() == 1)
          it = bundle_->registries.begin();
        else
          return makeError(ErrorCode::NotFound,
                           "the bundle holds no packages of registry " +
                               spec.url,
                           Location::inFile(bundle_->file),
                           "make the bundle from this project's lockfile");
      }
      spec.url = it->second;
      spec.mirrors.clear();
      options.bundle = true;
    }
    auto c = RegistryClient::open(spec, options, reporter_);
    if (c && bundle_)
      bundleTrusted_ = true; // its signed snapshot verified
    if (!c) {
      Error e = c.error();
      // "Not found" here is about the registry's files (or an offline
      // cache miss), never "no such package": the resolver must not
      // explain it away as a missing package.
      if (e.code == ErrorCode::NotFound)
        e.code = ErrorCode::Io;
      if (e.where.package.empty() && !specs_[i].name.empty() &&
          e.message.find(specs_[i].name) == std::string::npos)
        e.message = "registry \"" + specs_[i].name + "\": " + e.message;
      openErrors_[i] = e;
      return Unexpected(std::move(e));
    }
    clients_[i] = std::move(*c);
    return clients_[i].get();
  }

  /// The registry `name` comes from: pinned, else the first listing it.
  /// With `open` false, registries not opened yet are not opened: nullopt
  /// then also means that the ones opened do not list it.
  Expected<std::optional<size_t>> registryOf(const std::string &name,
                                             bool open = true) {
    if (auto it = pinned_.find(name); it != pinned_.end())
      return std::optional<size_t>(it->second);
    for (size_t i = 0; i < specs_.size(); ++i) {
      if (!open && !clients_[i])
        break;
      auto c = client(i);
      if (!c)
        return Unexpected(c.error());
      if ((*c)->hasPackage(name))
        return std::optional<size_t>(i);
    }
    return std::optional<size_t>();
  }

  Expected<std::vector<CandidateVersion>>
  versions(const std::string &name) override {
    if (auto it = paths_.find(name); it != paths_.end()) {
      const Manifest &m = it->second.first;
      CandidateVersion cv;
      cv.version = m.version;
      cv.setRequirements(m.dependencies, m.requiresIree);
      return std::vector<CandidateVersion>{cv};
    }
    std::vector<CandidateVersion> out;
    if (auto it = installed_.find(name); it != installed_.end())
      out.push_back(it->second);
    if (specs_.empty()) {
      if (out.empty())
        return makeError(ErrorCode::NotFound, "no registry is configured");
      return out;
    }
    auto r = registryOf(name);
    if (!r)
      return Unexpected(r.error());
    if (!*r) {
      if (!out.empty())
        return out;
      return makeError(ErrorCode::NotFound,
                       "no registry has a package \"" + name + "\"");
    }
    auto c = client(**r);
    if (!c)
      return Unexpected(c.error());
    auto v = (*c)->versions(name);
    if (!v) {
      if (v.error().code == ErrorCode::NotFound && !out.empty())
        return out;
      return v;
    }
    if (out.empty())
      return v; // an index lists each version once
    for (CandidateVersion &cv : *v) {
      bool dup = false;
      for (const CandidateVersion &o : out)
        dup |= o.version.identical(cv.version);
      if (!dup)
        out.push_back(std::move(cv));
    }
    return out;
  }

  /// Passes the hint on to the registry each package comes from. A hint
  /// opens a registry only when versions() is sure to open it anyway (the
  /// project's only registry, the first time a package from a registry is
  /// asked for); otherwise it goes to those opened already, and what
  /// opening one reports is reported when versions() opens it.
  void prefetch(const std::vector<std::string> &names) override {
    std::vector<std::vector<std::string>> byRegistry(specs_.size());
    if (specs_.size() == 1 && !clients_[0]) {
      bool any = false;
      for (const std::string &name : names)
        any |= !paths_.count(name);
      if (!any || !client(0))
        return;
    }
    for (const std::string &name : names) {
      if (paths_.count(name))
        continue;
      if (auto r = registryOf(name, false); r && *r && clients_[**r])
        byRegistry[**r].push_back(name);
    }
    for (size_t i = 0; i < byRegistry.size(); ++i)
      if (!byRegistry[i].empty())
        clients_[i]->prefetch(byRegistry[i]);
  }

  /// Writes what the registry clients opened so far parsed to the cache
  /// (before the sources are discarded rather than destroyed).
  void saveCaches() {
    for (const auto &c : clients_)
      if (c)
        c->saveCache();
  }

  /// An installed package that stays a candidate even if no registry has
  /// it (install by name into a prefix that has packages from files).
  void addInstalled(const std::string &name, CandidateVersion cv) {
    installed_[name] = std::move(cv);
  }

  void rememberRawUrl(const std::string &absolute, const std::string &raw) {
    rawUrls_[absolute] = raw;
  }

private:
  std::vector<RegistrySpec> specs_;
  const Environment &env_;
  Reporter &reporter_;
  std::vector<std::unique_ptr<RegistryClient>> clients_;
  std::vector<std::optional<Error>> openErrors_; ///< by registry
  std::string cacheRoot_;
  std::optional<OpenedBundle> bundle_;
  bool bundleTrusted_ = false;
  std::map<std::string, std::pair<Manifest, std::string>> paths_;
  std::map<std::string, size_t> pinned_;
  std::map<std::string, CandidateVersion> installed_;
  std::map<std::string, std::string> rawUrls_;
};

/// Reads a local package directory's manifest.
Expected<Manifest> readPathManifest(const std::string &dir,
                                    const std::string &projectFile,
                                    size_t index);

/// Sets up the sources of a project: registries, pins and path packages.
Expected<std::unique_ptr<Sources>> projectSources(const Project &project,
                                                  const Environment &env,
                                                  Reporter &reporter);

/// The platforms a project resolves for (the host when it names none).
std::vector<Platform> projectPlatforms(const Project &project);

/// Activation order of a resolution: the project's order, each package
/// after its dependencies (dependencies in name order).
std::vector<std::string>
activationFor(const std::vector<std::string> &projectOrder,
              const std::map<std::string, std::vector<std::string>> &deps);

/// No IREE was found: said once, and what it means for the resolution.
void warnIreeUnknown(const Error &problem, Reporter &reporter);

/// Resolves `project` from `src` and writes its lockfile (lock.cpp).
Expected<LockResult> lockWith(const Project &project, Sources &src,
                              const LockRequest &request,
                              const Environment &env, Reporter &reporter);

} // namespace ireepkg::workflow::detail

#endif
