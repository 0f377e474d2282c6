//===- cli/output/describe.h - Manifests and imports, shown -----*- C++ -*-===//
//
// The text and the --json forms in which info, list, install and doctor
// show a manifest and the imports several packages provide, and byte
// counts.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_DESCRIBE_H
#define IREEPKG_CLI_DESCRIBE_H

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/prefix/shadowing.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ireepkg::cli {

/// Imports more than one package provides (install, list, doctor): one
/// line each, "" when there are none; and the same as JSON.
std::string shadowedImportsText(const std::vector<ShadowedImport> &imports);
nlohmann::json
shadowedImportsToJson(const std::vector<ShadowedImport> &imports);

/// Human-readable byte counts ("1.2 MiB").
std::string formatBytes(uint64_t bytes);

/// Everything `info` and `list --json` say about a manifest.
nlohmann::json manifestToJson(const Manifest &m);
/// The human-readable form of the same.
std::string describeManifest(const Manifest &m, const std::string &indent);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_DESCRIBE_H
