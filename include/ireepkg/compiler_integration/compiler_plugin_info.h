//===- ireepkg/compiler_integration/compiler_plugin_info.h - Plugin info --===//
//
// What a dynamic IREE compiler plugin (iree-dynamic) says about itself:
// read from the library by calling iree_get_compiler_plugin_info in
// ireepkg-plugin-probe, a child process with the package-code environment
// and its limits (never in ireepkg), in the layout of the IREE version in
// question (compiler_plugin_abi.h). `pack` checks a package's plugins with
// it; activation compares a plugin with the compiler that would load it.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_COMPILER_PLUGIN_INFO_H
#define IREEPKG_PKG_COMPILER_PLUGIN_INFO_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/checks/compiler_plugin_abi.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

struct CompilerPluginInfo {
  CompilerPluginLayout layout = CompilerPluginLayout::Hash64;
  std::optional<uint32_t> apiVersion; ///< api-version layouts only
  std::string abiHash;                ///< hex, as the compiler prints it
  std::string pluginId;
  std::string pluginVersion;
  bool hasRegister = false;
};

/// The row of kCompilerPluginAbis that holds for IREE `version` (the
/// newest row not newer than its major.minor.patch; "3.13.0rc20261016"
/// counts as 3.13.0), or nullptr for a version older than every row or
/// not a version at all.
const CompilerPluginAbi *compilerPluginAbiFor(std::string_view version);

/// The hash the table knows for exactly IREE `version` ("" if none).
std::string knownCompilerPluginHash(std::string_view version);

/// Calls iree_get_compiler_plugin_info of `library` in ireepkg-plugin-probe
/// and reads the result in `layout`. Errors say what went wrong: the probe
/// is missing or crashed, the library does not load (dlerror), does not
/// export the function, or returns no info.
Expected<CompilerPluginInfo>
readCompilerPluginInfo(const std::string &library, CompilerPluginLayout layout);

/// Pack: reads the info of every iree-dynamic plugin of `m` that this host
/// can load, in the layout of the IREE versions its requires_iree admits,
/// and reports into `diags` (located in `doc`): an id other than the
/// manifest's, a hash other than the manifest's abi_hash or than every
/// hash the table knows for those versions (both hashes named), a library
/// whose info cannot be read, a requires_iree admitting two layouts.
void checkDynamicCompilerPlugins(
    const Manifest &m, const JsonDocument &doc,
    const std::function<std::string(const std::string &)> &fileOf,
    DiagnosticList &diags);

} // namespace ireepkg

#endif // IREEPKG_PKG_COMPILER_PLUGIN_INFO_H
