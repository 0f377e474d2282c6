//===- registry/src/site/site_model.h - What the registry site shows ------===//
//
// The verified data the site is rendered from (site.cpp gathers it through
// RegistryClient; site_pages.cpp renders it). Private to registry/.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_SITE_MODEL_H
#define IREEPKG_SITE_MODEL_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg::registry::site {

struct Package {
  std::string name;
  /// Every version, oldest first: the entries of the index file the
  /// client verified (and keeps) for the whole run.
  std::vector<const IndexEntry *> versions;
  /// The version shown first: the newest one not yanked, else the newest.
  size_t latest = 0;
  /// The latest version's manifest, from its verified archive.
  std::optional<Manifest> manifest;
  /// Its README rendered to safe HTML; empty when it has none.
  std::string readmeHtml;
  std::string readmeName;
  /// Why the manifest is missing (the archive could not be read).
  std::string detailsProblem;
  /// Packages whose latest version depends on this one.
  std::vector<std::string> dependents;
  /// "runtime: embedded ELF", "compiler: iree-static", "hook: ...".
  std::vector<std::string> kinds;

  const IndexEntry &latestEntry() const { return *versions[latest]; }
};

struct Model {
  std::string registryName;
  std::string description;
  std::string url; ///< the registry's public URL
  std::vector<std::string> mirrors;
  std::string publicKey; ///< the trusted key that verified the snapshot
  std::string keyId;
  int64_t snapshotVersion = 0;
  std::string expires;
  std::vector<Package> packages; ///< sorted by name
};

/// Writes one file of the site (a path relative to its root).
using WriteFile =
    std::function<Status(const std::string &path, const std::string &text)>;

/// Renders index.html, all.html, assets/search-index.js and
/// packages/<name>.html, handing each to `write` as it is made.
Status renderSite(const Model &model, const WriteFile &write);

/// The kind labels of a manifest (Package::kinds).
std::vector<std::string> manifestKinds(const Manifest &m);

} // namespace ireepkg::registry::site

#endif // IREEPKG_SITE_MODEL_H
