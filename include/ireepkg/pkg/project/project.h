//===- ireepkg/pkg/project/project.h - Project files and lockfiles --------===//
//
// Editing plugins.json (init, add, rm) and writing plugins.lock.json.
//
// Edits keep the file as its author wrote it: they are made on the text,
// at the byte positions the JSON parser reports, so every other byte
// (indentation, key order, blank lines, the order of `plugins`) stays as it
// was. New entries copy the indentation of their neighbours.
//
// The lockfile is written deterministically (sorted keys, stable order, no
// timestamps, two-space indentation, a final newline), so that writing the
// same lock twice gives the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PROJECT_H
#define IREEPKG_PROJECT_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg::project {

inline constexpr const char *kProjectFileName = "plugins.json";
inline constexpr const char *kLockFileName = "plugins.lock.json";

struct StarterOptions {
  /// Registries to list (name, url, public key); none: an empty list.
  std::vector<RegistryRef> registries;
  /// Platforms to list; none: the host's.
  std::vector<Platform> platforms;
};

/// The text of a new plugins.json.
std::string starterProjectFile(const StarterOptions &options);

struct AddRequest {
  std::string name;
  /// The version constraint to write; nullopt writes none (any version).
  /// `ireepkg add` passes the caret constraint of the newest version
  /// (`^1.2.0`), as cargo and uv do.
  std::optional<std::string> constraint;
  /// Option flag -> value (typed: numbers and booleans as JSON).
  std::map<std::string, nlohmann::json> options;
  std::string registry; ///< a registry name, or ""
  /// A local package directory (relative to plugins.json, as written);
  /// then no constraint and no registry.
  std::string path;
};

/// plugins.json's text with `request` added at the end of `plugins`, or,
/// when the plugin is listed already, with its version (and the given
/// options) replaced in place. `origin` names the file in errors.
Expected<std::string> addPlugin(std::string_view text,
                                const AddRequest &request,
                                const std::string &origin);

/// plugins.json's text without the entry for `name` (NotFound, with a
/// "did you mean", when there is none). Its options go with it.
Expected<std::string> removePlugin(std::string_view text,
                                   const std::string &name,
                                   const std::string &origin);

/// plugins.json's text with `ref` appended to `registries` (Conflict when
/// a registry of that name is there). Plugins and everything else stay.
Expected<std::string> addRegistry(std::string_view text, const RegistryRef &ref,
                                  const std::string &origin);

/// plugins.json's text without registry `name` (NotFound when it is not
/// there; Conflict when a plugin names it as its "registry").
Expected<std::string> removeRegistry(std::string_view text,
                                     const std::string &name,
                                     const std::string &origin);

/// "sha256:<hex>" over the parts of plugins.json that resolution depends
/// on: registries (name, url, mirrors, key), platforms, and each plugin's
/// name, version, path and registry, in order. Options and `choose` are
/// not part of it: changing them needs no new resolution.
std::string inputHash(const ProjectFile &project);

/// The lockfile's text (formats.md §4).
std::string serializeLockfile(const Lockfile &lock);

/// Checks a project's option values against a plugin's option schema
/// (manifest `options`): unknown options, wrong types, out-of-range values.
/// Each problem names the plugin, the option and the rule, and points at
/// /plugins/<index>/options/<flag> in `projectPath`.
void checkProjectOptions(const ProjectPlugin &plugin, size_t pluginIndex,
                         const Manifest &manifest,
                         const std::string &projectPath,
                         DiagnosticList &diags);

} // namespace ireepkg::project

#endif // IREEPKG_PROJECT_H
