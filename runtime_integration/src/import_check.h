//===- runtime_integration/src/import_check.h - Declared imports ----------===//
#ifndef IREEPKG_PKG_IMPORT_CHECK_H
#define IREEPKG_PKG_IMPORT_CHECK_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/json_document.h"

#include <functional>
#include <optional>
#include <string>

namespace ireepkg {

/// Loads each runtime plugin of `m` that this host can load (a system
/// library for the host platform; an embedded ELF, or the host's image of
/// a FatELF, for the host architecture) in ireepkg-plugin-probe, the child
/// process `doctor` uses, and asks it for the plugin's declared imports.
/// Each declared import it does not resolve is an error at the import's
/// place in the manifest (`doc`). A plugin that cannot be checked (it
/// crashes, fails to load, the probe is missing) is a warning: the native
/// library checks report what is wrong with the library itself.
/// `fileOf` maps a manifest path to the file to load.
void checkDeclaredImports(
    const Manifest &m, const JsonDocument &doc,
    const std::function<std::string(const std::string &)> &fileOf,
    DiagnosticList &diags);

} // namespace ireepkg

#endif
