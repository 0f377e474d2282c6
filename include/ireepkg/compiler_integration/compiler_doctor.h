//===- ireepkg/compiler_integration/compiler_doctor.h ---------------------===//
//
// `doctor` for compiler plugins.
//
// What `ireepkg doctor` checks about the installed compiler plugins, each
// in child processes (a plugin that crashes or hangs cannot take doctor
// down):
//
//  - mlir-pass-plugin / mlir-dialect-plugin: loaded into each MLIR tool
//    the plugin names ("tools"; by default mlir-opt, run as the real
//    mlir-opt-22 when it is there) with --load-pass-plugin= /
//    --load-dialect-plugin= on an empty input: mlir-opt only prints
//    "Failed to load ... Request ignored." and exits 0 for a plugin it
//    cannot load, so its output is read; a tool that fails with it loaded
//    is named, with what it printed (a tool that registers the plugin's
//    dialect itself aborts). A named tool that is not found is a warning.
//    Every plugin is also loaded by ireepkg-mlir-check (the same libMLIR),
//    which says why one does not load and what it registers;
//  - iree-static: the id must be one that `iree-compile --iree-list-plugins`
//    lists;
//  - iree-dynamic: loaded by the real compiler (`iree-compile
//    --iree-load-plugin=<library> --iree-list-plugins`) when it can load
//    plugins; its id must then be listed.
//
// Only plugins for the host are loaded; the others are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_COMPILER_DOCTOR_H
#define IREEPKG_PKG_COMPILER_DOCTOR_H

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/semver.h"

#include <functional>
#include <string>
#include <vector>

namespace ireepkg {

/// One installed package, as doctor sees it.
struct DoctorPackage {
  std::string name;
  Version version;
  std::string dir; ///< its installed directory
  const Manifest *manifest = nullptr;
};

struct CompilerPluginCheck {
  std::string package, version, plugin, kind;
  std::string path;    ///< the installed library; "" for iree-static
  std::string skipped; ///< why it was not checked ("" = checked)
  std::string checkedWith; ///< "mlir-opt-22 at ...", "iree-compile at ..."
  std::string details; ///< what loading found (name, passes, dialects)
  std::vector<std::string> problems;
  /// What was not checked though it should be (a named tool not found).
  std::vector<std::string> warnings;
};

struct CompilerDoctorTools {
  std::string mlirOpt;     ///< mlir-opt-22, or "" when there is none
  std::string ireeCompile; ///< iree-compile, or ""
  /// Finds the other MLIR tools plugins name ("" when not found).
  std::function<std::string(const std::string &name)> findTool;
  double timeoutSeconds = 30;
};

/// Checks every compiler plugin of `packages` (in order) for `platform`.
std::vector<CompilerPluginCheck>
checkCompilerPlugins(const std::vector<DoctorPackage> &packages,
                     const Platform &platform,
                     const CompilerDoctorTools &tools);

} // namespace ireepkg

#endif // IREEPKG_PKG_COMPILER_DOCTOR_H
