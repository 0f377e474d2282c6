//===- ireepkg/runtime_integration/runtime_doctor.h - `doctor`, runtime ---===//
//
// What `ireepkg doctor` checks about the IREE tools and the installed runtime
// plugins. Every plugin is loaded in ireepkg-plugin-probe (probe/), a
// child process with its own process group and a time limit, so that a
// plugin that crashes, hangs, leaks or calls exit() is reported as that
// plugin's problem; the probe's report is read here.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_RUNTIME_DOCTOR_H
#define IREEPKG_PKG_RUNTIME_DOCTOR_H

#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/checks/integration_checks.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg {

/// The IREE tools doctor looks for, in the order it reports them.
inline constexpr const char *kDoctorToolNames[] = {
    "iree-compile", "iree-run-module", "iree-benchmark-module"};

/// An import name no plugin should resolve: doctor asks each plugin for it
/// to see how it answers an unknown import.
inline constexpr const char *kDoctorUnknownImport =
    "ireepkg_doctor_unknown_import";

/// One IREE tool: found where, its version, the wheel that installed it, or
/// the problem ({"name", "found", "path", "source", "version", "package",
/// "problem"}).
nlohmann::ordered_json checkIreeTool(const std::string &name);

/// What doctor found about one runtime plugin.
struct RuntimePluginCheck {
  std::string package, version, plugin, format;
  std::string path;    ///< the installed library (absolute); "" if none
  std::string image;   ///< for a FatELF file: the architecture extracted
  std::string skipped; ///< why it was not checked ("" = checked)
  /// The build for a CPU level this machine uses ("x86_64_v3") and why;
  /// "" for the plain build.
  std::string build;
  std::vector<std::string> declared, probed;
  std::vector<std::string> problems;
  std::vector<std::string> warnings; ///< worth knowing; IREE still runs it
  nlohmann::ordered_json probe = nullptr;   ///< the probe's report
  nlohmann::ordered_json process = nullptr; ///< how the probe process ended
};

/// Runs the probe (`probe`, a path) on `plugin`, whose library is
/// `check.path`, and records what it found in `check`: the host image of a
/// FatELF file is extracted to a temporary file first.
void probeRuntimePlugin(RuntimePluginCheck &check, const RuntimePlugin &plugin,
                        const std::string &probe, double timeoutSeconds);

/// The time limit per plugin: $IREEPKG_DOCTOR_TIMEOUT seconds, else 30. A
/// value that is not a number of seconds gives 30 and a warning in
/// `warning`.
double pluginTimeoutSeconds(std::string &warning);

/// "%g" seconds, as doctor's messages give them.
std::string formatSeconds(double seconds);

} // namespace ireepkg

#endif // IREEPKG_PKG_RUNTIME_DOCTOR_H
