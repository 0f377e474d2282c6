//===- ireepkg/registry/site/site.h - A registry's static web site --*- C++ -*-===//
//
// `ireepkg registry site` writes a self-contained static web site for a
// registry: an index page with client-side search and filters over a
// prebuilt search index, one page per package, and the stylesheet and
// scripts it needs (no server-side code, nothing loaded from elsewhere; it
// works from file:// as well as over HTTP).
//
// Everything the site shows comes through the verifying client
// (RegistryClient): the snapshot's signature against a trusted key, its
// expiry, each index file's hash against the snapshot, and, for the
// details that only a package's manifest holds (compiler plugin options,
// hooks, runtime plugins, README), the archive's size and SHA-256 against
// its index entry. Text taken from packages is always escaped; a README is
// rendered from Markdown with raw HTML and unsafe links dropped.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_SITE_H
#define IREEPKG_REGISTRY_SITE_H

#include "ireepkg/base/error.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ireepkg::registry {

struct SiteOptions {
  /// The registry to read (its url, trusted keys and mirrors). For a
  /// directory without trusted keys, the keys of its config.json are used,
  /// as the publisher does (the directory is the operator's own); a URL
  /// needs a trusted key.
  RegistrySpec spec;
  ClientOptions client;
  /// Where the site goes. It must be absent, empty, or a site written
  /// before (it holds .ireepkg-site). It is updated in place: files that
  /// differ are replaced (each atomically), other files removed.
  std::string outputDir;
  /// The URL users reach the registry at, for the install snippets and the
  /// archive links. Default: spec.url (a directory as a file:// URL).
  std::string publicUrl;
  /// Read the newest version's archive of each package for the manifest
  /// details and README (a directory registry's archives in place, a
  /// remote registry's through the download cache). Without it, the site
  /// shows what the index files hold.
  bool readArchives = true;
};

struct SiteResult {
  std::string outputDir;
  std::string registryName;
  int64_t snapshotVersion = 0;
  std::string expires;
  std::string signedBy; ///< key id
  size_t packages = 0;
  size_t versions = 0;
  size_t files = 0;   ///< files of the site
  uint64_t bytes = 0; ///< their total size
  size_t written = 0; ///< files that were new or changed
  double seconds = 0; ///< how long it took
  /// Packages whose details could not be read (an archive missing from a
  /// directory registry, for example); their pages show the index only.
  std::vector<Diagnostic> warnings;
};

/// Reads the registry through the verifying client and writes its site.
Expected<SiteResult> generateSite(const SiteOptions &options,
                                  Reporter &reporter);

/// Escapes text for HTML element content and attribute values
/// (& < > " ').
std::string htmlEscape(std::string_view text);

/// Renders a package's Markdown README as HTML with cmark, safely: raw
/// HTML in the Markdown is dropped (replaced by a comment) and links or
/// images with javascript:, vbscript:, file: or data: URLs lose them.
std::string renderMarkdown(std::string_view markdown);

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_SITE_H
