//===- ireepkg/base/programs.h - Programs beside this one -------*- C++ -*-===//
//
// Where the running executable is, for the helper programs and libraries
// installed beside it (ireepkg-inspect, ireepkg-mlir-check,
// ireepkg-plugin-probe, lib/ireepkg/...). Each caller keeps its own
// environment override (read with environmentOverride) and its own message
// when the program is not there. The executable's own path comes from the
// operating-system seam (os::executablePath in os.h).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_PROGRAMS_H
#define IREEPKG_BASE_PROGRAMS_H

#include <string>
#include <string_view>

namespace ireepkg {

/// The directory of the running executable (absolute, no trailing slash),
/// or "" when the system does not say.
std::string executableDir();

/// `relative` (a file name, or a path such as "../lib/x.so") in the
/// directory of the running executable, or "" when that is unknown.
std::string besideExecutable(std::string_view relative);

} // namespace ireepkg

#endif // IREEPKG_BASE_PROGRAMS_H
