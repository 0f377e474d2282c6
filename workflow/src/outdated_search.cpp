//===- workflow/src/outdated_search.cpp -----------------------------------===//
//
// Newer versions and searching registries.
//
// What the project's registries have beyond its lockfile (outdated, the
// newest version of a package) and searching them by name and summary.
//
//===----------------------------------------------------------------------===//
#include "sources.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/text.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "ireepkg/pkg/prefix/state.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace ireepkg::workflow {

using namespace detail;

/// The newest version that is not yanked; releases before pre-releases.
const IndexEntry *newestEntry(const RegistryIndex &index) {
  const IndexEntry *best = nullptr;
  for (const IndexEntry &e : index.versions) {
    if (e.yanked)
      continue;
    if (!best || (best->version.isPrerelease() && !e.version.isPrerelease()) ||
        (best->version.isPrerelease() == e.version.isPrerelease() &&
         best->version < e.version))
      best = &e;
  }
  return best;
}

Expected<std::vector<OutdatedEntry>>
outdated(const Project &project, const Environment &env, Reporter &reporter) {
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());
  auto lock = readLockfile(project.lockPath);
  if (!lock)
    return Unexpected(lock.error());
  // wanted: what `update` would choose.
  ResolveRequest rr;
  rr.ireeVersion = ireeVersionFor(env);
  rr.platforms = projectPlatforms(project);
  rr.upgradeAll = true;
  for (const ProjectPlugin &p : project.parsed.plugins)
    rr.roots.push_back({p.name, p.version.value_or(Constraint::any())});
  auto res = resolve(rr, **src);
  if (!res)
    return Unexpected(res.error());
  std::map<std::string, std::string> locked;
  if (*lock)
    for (const LockedPackage &lp : (*lock)->packages)
      locked[lp.name] = lp.version.str();
  std::vector<OutdatedEntry> out;
  for (const auto &[name, version] : res->versions) {
    OutdatedEntry e;
    e.name = name;
    e.locked = locked.count(name) ? locked[name] : "";
    e.wanted = version.str();
    e.latest = e.wanted;
    if ((*src)->isPath(name)) {
      e.registry = "path";
    } else {
      auto r = (*src)->registryOf(name);
      if (!r)
        return Unexpected(r.error());
      if (*r) {
        auto c = (*src)->client(**r);
        if (!c)
          return Unexpected(c.error());
        e.registry = project.parsed.registries[**r].name;
        auto idx = (*c)->index(name);
        if (!idx)
          return Unexpected(idx.error());
        if (const IndexEntry *n = newestEntry(**idx))
          e.latest = n->version.str();
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

Expected<Version> newestVersion(const Project &project, const std::string &name,
                                const std::string &registryName,
                                const Environment &env, Reporter &reporter,
                                const Constraint *within) {
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());
  if (!registryName.empty())
    if (Status s = (*src)->pin(name, registryName, project.file,
                               project.parsed.plugins.size());
        !s)
      return Unexpected(s.error());
  if ((*src)->specs().empty())
    return makeError(
        ErrorCode::Invalid,
        "plugins.json lists no registry to find \"" + name + "\" in",
        Location{project.file, 0, 0, "/registries", name, ""},
        "add a registry, or give the version: `ireepkg add " + name + "@^1.0`");
  auto r = (*src)->registryOf(name);
  if (!r)
    return Unexpected(r.error());
  if (!*r) {
    // Suggest a close name from the registries' snapshots.
    std::vector<std::string> names;
    for (size_t i = 0; i < (*src)->specs().size(); ++i)
      if (auto c = (*src)->client(i))
        for (const std::string &n : (*c)->packageNames())
          names.push_back(n);
    std::string close = suggestClosest(name, names);
    return makeError(
        ErrorCode::NotFound,
        "no registry of plugins.json has a package \"" + name + "\"" +
            (close.empty() ? "" : "; did you mean \"" + close + "\"?"),
        Location{project.file, 0, 0, "/registries", name, ""},
        "see `ireepkg search`");
  }
  auto c = (*src)->client(**r);
  if (!c)
    return Unexpected(c.error());
  auto idx = (*c)->index(name);
  if (!idx)
    return Unexpected(idx.error());
  if (within) {
    // Releases before pre-releases, as newestEntry.
    const IndexEntry *best = nullptr;
    std::vector<const IndexEntry *> all;
    for (const IndexEntry &e : (*idx)->versions) {
      all.push_back(&e);
      if (e.yanked || !within->matches(e.version))
        continue;
      if (!best ||
          (best->version.isPrerelease() && !e.version.isPrerelease()) ||
          (best->version.isPrerelease() == e.version.isPrerelease() &&
           best->version < e.version))
        best = &e;
    }
    if (best)
      return best->version;
    std::sort(all.begin(), all.end(),
              [](const IndexEntry *a, const IndexEntry *b) {
                return a->version < b->version;
              });
    std::string have, yanked;
    for (const IndexEntry *e : all) {
      std::string &list = e->yanked ? yanked : have;
      list += (list.empty() ? "" : ", ") + e->version.str();
    }
    const IndexEntry *n = newestEntry(**idx);
    return makeError(
        ErrorCode::NotFound,
        "no version of \"" + name + "\" matches " + within->text() +
            " in registry \"" + (*src)->specs()[**r].name + "\"; it has " +
            (have.empty() ? "no version that is not yanked" : have) +
            (yanked.empty() ? "" : " (yanked: " + yanked + ")"),
        Location::inFile(project.file),
        n ? "e.g. `ireepkg add " + name + "@^" + n->version.str() +
                "`, or leave out the version for the newest"
          : "every version is yanked");
  }
  const IndexEntry *n = newestEntry(**idx);
  if (!n)
    return makeError(
        ErrorCode::NotFound, "every version of \"" + name + "\" is yanked",
        Location{project.file, 0, 0, "", name, ""},
        "give a version explicitly: `ireepkg add " + name + "@=<version>`");
  return n->version;
}

Expected<std::vector<SearchHit>>
search(const std::vector<RegistrySpec> &registries, const std::string &text,
       const Environment &env, Reporter &reporter) {
  if (registries.empty())
    return makeError(ErrorCode::Usage, "no registry to search", {},
                     "pass --registry URL --registry-key KEY, or run in a "
                     "project whose plugins.json lists registries");
  Sources src(registries, env, reporter);
  if (Status s = src.useBundle(); !s)
    return Unexpected(s.error());
  std::string needle = lower(text);
  std::vector<SearchHit> hits;
  std::set<std::string> seen;
  for (size_t i = 0; i < registries.size(); ++i) {
    auto c = src.client(i);
    if (!c)
      return Unexpected(c.error());
    for (const std::string &name : (*c)->packageNames()) {
      if (seen.count(name) || lower(name).find(needle) == std::string::npos)
        continue;
      seen.insert(name);
      auto idx = (*c)->index(name);
      if (!idx)
        return Unexpected(idx.error());
      SearchHit h;
      h.name = name;
      h.registry = registries[i].url;
      const IndexEntry *n = newestEntry(**idx);
      if (!n && !(*idx)->versions.empty()) {
        h.yanked = true;
        n = &(*idx)->versions.back();
      }
      if (n) {
        h.latest = n->version.str();
        h.summary = n->summary;
      }
      hits.push_back(std::move(h));
    }
  }
  std::sort(hits.begin(), hits.end(),
            [&](const SearchHit &a, const SearchHit &b) {
              // Exact matches first, then names that start with the text.
              auto rank = [&](const SearchHit &h) {
                std::string n = lower(h.name);
                return n == needle ? 0 : n.rfind(needle, 0) == 0 ? 1 : 2;
              };
              if (rank(a) != rank(b))
                return rank(a) < rank(b);
              return a.name < b.name;
            });
  return hits;
}

} // namespace ireepkg::workflow
