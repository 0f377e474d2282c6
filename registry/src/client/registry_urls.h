//===- registry/src/client/registry_urls.h - Registry URLs ------*- C++ -*-===//
//
// Registry URLs and directories (private to registry/): file:// URLs and
// plain paths, joining, and (in registry.h) normalizing and ids.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_REGISTRY_URLS_H
#define IREEPKG_REGISTRY_REGISTRY_URLS_H

#include <string>

namespace ireepkg::registry::detail {

/// A directory path for a plain path or a file:// URL (percent-decoded).
std::string directoryOf(const std::string &url);

/// True for file:// URLs and plain paths.
bool isDirectoryUrl(const std::string &url);

/// `base` + "/" + `rel` with exactly one slash between.
std::string joinUrl(const std::string &base, const std::string &rel);

} // namespace ireepkg::registry::detail

#endif // IREEPKG_REGISTRY_REGISTRY_URLS_H
