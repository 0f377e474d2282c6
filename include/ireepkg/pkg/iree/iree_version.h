//===- ireepkg/pkg/iree/iree_version.h - The IREE in use --------*- C++ -*-===//
//
// One definition of "the IREE in use", shared by lock, install, sync,
// doctor and exec:
//
//  1. the first of the IREE tools (iree-compile, then iree-run-module)
//     found on PATH, then in $VIRTUAL_ENV/bin (or the tool given);
//  2. when that tool was installed by a Python distribution (the pip wheels
//     iree-base-compiler / iree-base-runtime), the version of that
//     distribution, from the `Version:` of its
//     `site-packages/<dist>-<version>.dist-info/METADATA`: the version users
//     installed and `pip list` shows. (The wheels' `iree-compile --version`
//     prints the release candidate the release was promoted from, e.g.
//     3.13.0rc20261016 for 3.13.0, which SemVer orders before 3.13.0.)
//  3. otherwise the version `<tool> --version` prints.
//
// A tool belongs to a distribution when that distribution's RECORD lists
// it: a console script as `../../../bin/<tool>`, a native binary by its
// path under site-packages.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_IREE_VERSION_H
#define IREEPKG_IREE_VERSION_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/semver.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

/// "3.13.0" -> 3.13.0; "3.13.0rc20261016" (a nightly or release candidate)
/// -> 3.13.0-rc20261016: anything after MAJOR.MINOR.PATCH becomes a SemVer
/// pre-release. nullopt when `text` is not such a version.
std::optional<Version> parseIreeVersion(std::string_view text);

/// An executable found by name.
struct LocatedTool {
  std::string path;   ///< absolute; "" when not found
  std::string source; ///< "PATH", "VIRTUAL_ENV" or "path" (a name with '/')
};

/// Finds `name` as a shell would: on PATH, then in $VIRTUAL_ENV/bin. A name
/// containing '/' is a path and is only checked.
LocatedTool locateTool(const std::string &name);

/// The Python distribution that installed a file, read from its dist-info.
struct PythonDistribution {
  std::string name;     ///< as METADATA's Name: says, e.g. iree-base-compiler
  std::string version;  ///< METADATA's Version:, e.g. 3.13.0
  std::string metadata; ///< path of the METADATA file
};

/// The IREE distribution (a dist-info whose name starts with "iree") whose
/// RECORD lists `toolPath`; nullopt when the tool does not come from one.
std::optional<PythonDistribution>
ireeDistributionOf(const std::string &toolPath);

/// What one IREE tool says about its version.
struct IreeInstallation {
  std::string tool;       ///< absolute path of the tool
  std::string toolSource; ///< how it was found (see LocatedTool::source)
  Version version;
  std::string versionText; ///< as read: "3.13.0", "3.13.0rc20261016"
  /// The distribution it comes from; nullopt: the version is the tool's
  /// `--version`.
  std::optional<PythonDistribution> distribution;

  /// Where the version was read, for messages: "iree-base-compiler 3.13.0
  /// (<path>/iree-compile)" or "`<path>/iree-compile --version`".
  std::string describeSource() const;
};

/// The version of the IREE tool at `toolPath` (steps 2 and 3 above).
/// Errors: the tool cannot be run, or says no version ireepkg can read.
Expected<IreeInstallation> ireeToolVersion(const std::string &toolPath,
                                           const std::string &toolSource = "");

/// The tools looked for, in order, when none is given.
inline const std::vector<std::string> &defaultIreeTools() {
  static const std::vector<std::string> tools = {"iree-compile",
                                                 "iree-run-module"};
  return tools;
}

/// The IREE in use: the version of the first of `tools` (names or paths;
/// empty: defaultIreeTools()) that is found and says one. Errors:
/// ErrorCode::NotFound when none of them is found ("no IREE found ..."),
/// otherwise why the version of the tools found is unknown.
Expected<IreeInstallation>
detectIree(const std::vector<std::string> &tools = {});

} // namespace ireepkg

#endif // IREEPKG_IREE_VERSION_H
