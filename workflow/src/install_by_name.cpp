//===- workflow/src/install_by_name.cpp -----------------------------------===//
//
// Installing packages by name from registries.
//
// Every operation checks all it can before it changes anything:
// resolution, option values, signatures and hashes come first; the prefix is
// changed in one transaction at the end, and the lockfile is written
// atomically (see ireepkg/workflow/workflow.h).
//
//===----------------------------------------------------------------------===//
#include "sources.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "ireepkg/pkg/prefix/install.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace ireepkg::workflow {

using namespace detail;

Expected<NameRequest> parseNameRequest(const std::string &text) {
  NameRequest r;
  size_t at = text.find('@');
  r.name = text.substr(0, at);
  if (!isValidPackageName(r.name))
    return makeError(ErrorCode::Usage,
                     "\"" + text + "\" is not a package name or file", {},
                     "give a name (simple-mul), a name and a version "
                     "constraint (simple-mul@^1.2), or an .ireepkg file");
  if (at != std::string::npos) {
    auto c = Constraint::parse(text.substr(at + 1));
    if (!c) {
      Error e = c.error();
      e.code = ErrorCode::Usage;
      e.message = "\"" + text + "\": " + e.message;
      return Unexpected(std::move(e));
    }
    r.constraint = *c;
  }
  return r;
}

Expected<InstallReport> installByName(const InstallByNameRequest &request,
                                      const Environment &env,
                                      Reporter &reporter) {
  if (request.registries.empty() && env.bundle.empty())
    return makeError(ErrorCode::Usage, "no registry to install from", {},
                     "pass --registry URL --registry-key KEY, set "
                     "IREEPKG_REGISTRY and IREEPKG_REGISTRY_KEY, or run in a "
                     "project whose plugins.json lists registries");
  Sources src(request.registries, env, reporter);
  if (Status s = src.useBundle(); !s)
    return Unexpected(s.error());

  auto state = readInstalledState(request.prefix, reporter);
  if (!state)
    return Unexpected(state.error());
  ResolveRequest rr;
  rr.rootName = "the command line";
  std::optional<Error> ireeProblem;
  // --ignore-iree-version: resolve for any IREE; the install then warns
  // about each package that excludes the IREE in use.
  if (!env.ignoreIreeRequirements)
    rr.ireeVersion = ireeVersionFor(env, nullptr, &ireeProblem);
  if (ireeProblem)
    warnIreeUnknown(*ireeProblem, reporter);
  Platform platform = request.install.platform.value_or(
      Platform::parse(state->platform).value_or(hostPlatform()));
  rr.platforms = {platform};
  std::set<std::string> requested;
  for (const NameRequest &n : request.packages) {
    rr.roots.push_back({n.name, n.constraint});
    requested.insert(n.name);
  }
  // What the prefix has stays, unless a request needs another version.
  for (const InstalledPackage &p : state->packages) {
    auto m = readInstalledManifest(request.prefix, p, reporter);
    if (!m)
      return Unexpected(m.error());
    CandidateVersion cv;
    cv.version = p.version;
    cv.setRequirements(m->dependencies, m->requiresIree);
    src.addInstalled(p.name, cv);
    rr.preferred[p.name] = p.version;
    if (p.explicitlyInstalled && !requested.count(p.name))
      rr.roots.push_back({p.name, Constraint::any()});
  }
  auto res = resolve(rr, src);
  if (!res)
    return Unexpected(res.error());

  std::map<size_t, std::vector<std::pair<std::string, Version>>> fetchFrom;
  for (const auto &[name, version] : res->versions) {
    const InstalledPackage *have = state->find(name);
    // Installed already: nothing to do, unless it was installed for a
    // dependency and is now asked for by name (it becomes explicit; its
    // archive is normally still in the download cache).
    if (have && have->version.identical(version) &&
        (have->explicitlyInstalled || !requested.count(name)))
      continue;
    auto r = src.registryOf(name);
    if (!r)
      return Unexpected(r.error());
    if (!*r)
      return makeError(ErrorCode::NotFound,
                       "no registry has " + name + " " + version.str());
    fetchFrom[**r].push_back({name, version});
  }
  if (request.install.dryRun) {
    // What would change, by name and version, without fetching an archive.
    InstallReport plan;
    plan.prefix = request.prefix;
    for (const auto &[reg, which] : fetchFrom)
      for (const auto &[name, version] : which) {
        const InstalledPackage *have = state->find(name);
        if (have && have->version.identical(version))
          plan.unchanged.push_back(name + " " + version.str());
        else
          plan.changes.push_back(
              {name, have ? have->version.str() : "", version.str()});
      }
    if (fetchFrom.empty())
      for (const NameRequest &n : request.packages)
        if (const InstalledPackage *p = state->find(n.name))
          plan.unchanged.push_back(p->name + " " + p->version.str());
    return plan;
  }
  std::vector<std::string> archives;
  InstallOptions io = request.install;
  if (env.ignoreIreeRequirements) {
    io.iree = ireeCheckFor(env);
    io.iree->nameArchives = false; // downloads, not the user's files
  }
  for (const auto &[reg, which] : fetchFrom) {
    auto c = src.client(reg);
    if (!c)
      return Unexpected(c.error());
    auto paths = (*c)->fetchArchives(which, reporter);
    if (!paths)
      return Unexpected(paths.error());
    for (size_t k = 0; k < which.size(); ++k) {
      archives.push_back((*paths)[k]);
      const InstalledPackage *have = state->find(which[k].first);
      if (!requested.count(which[k].first) &&
          !(have && have->explicitlyInstalled))
        io.asDependency.insert(which[k].first);
    }
  }
  InstallReport report;
  report.prefix = request.prefix;
  if (archives.empty()) {
    for (const NameRequest &n : request.packages)
      if (const InstalledPackage *p = state->find(n.name))
        report.unchanged.push_back(p->name + " " + p->version.str());
    return report;
  }
  return installArchives(request.prefix, archives, io, reporter);
}

} // namespace ireepkg::workflow
