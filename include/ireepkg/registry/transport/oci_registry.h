//===- ireepkg/registry/transport/oci_registry.h - OCI registries --------*- C++ -*-===//
//
// A registry can be kept in an OCI registry (GHCR, Harbor, Artifactory,
// ECR, the CNCF distribution registry): oci://HOST[:PORT]/NAMESPACE, or
// oci+http:// for one served over plain HTTP. Every package version is an
// OCI artifact in NAMESPACE/<name>, tagged with its version, and the signed
// metadata are artifacts of NAMESPACE (docs/registries.md gives the exact
// layout and media types).
//
// Such a URL is accepted wherever a registry is: the client reads it
// through its own Transport (openTransport), and initRegistry,
// publishArchive, yankVersion and resignRegistry (registry.h) take it in
// place of a directory.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_OCI_REGISTRY_H
#define IREEPKG_REGISTRY_OCI_REGISTRY_H

#include "ireepkg/base/error.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <string>

namespace ireepkg::registry {

/// True for oci:// and oci+http:// URLs.
bool isOciRegistryUrl(const std::string &url);

/// Copies the registry's config.json, snapshot.json, snapshot.json.minisig
/// and index files, as they are now, into the directory `dir` (which must
/// exist). Nothing is verified: for showing what a command just wrote.
Status pullOciRegistryMetadata(const std::string &url, const std::string &dir,
                               Reporter *reporter = nullptr);

/// Adds to the registry's signed metadata a package version that another
/// OCI client pushed as NAMESPACE/<name>:<version> (an artifact whose layer
/// of media type application/vnd.ireepkg.archive.v1 is the archive): the
/// archive is downloaded, checked as `publish` checks a file (it must be
/// that name and version), and published; the artifact stays as it was.
Expected<PublishResult> addExistingOciArtifact(const std::string &url,
                                               const std::string &name,
                                               const Version &version,
                                               const SigningOptions &options);

} // namespace ireepkg::registry

#endif // IREEPKG_REGISTRY_OCI_REGISTRY_H
