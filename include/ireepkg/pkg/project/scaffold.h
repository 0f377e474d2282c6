//===- ireepkg/pkg/project/scaffold.h - New projects (`ireepkg new`) ------===//
//
// The project templates of templates/<kind>/ are compiled into ireepkg
// (pkg/CMakeLists.txt generates scaffold_templates.cpp from them).
// writeScaffold writes one kind's files into a new directory, replacing
// @NAME@ (the package name), @IDENT@ (the name as a C identifier: '-' and
// '.' become '_') and @IDENT_UPPER@ (the same in capitals), in file
// contents and in file names.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_SCAFFOLD_H
#define IREEPKG_PKG_SCAFFOLD_H

#include "ireepkg/base/error.h"

#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

struct ScaffoldFile {
  const char *path; ///< "<kind>/<path in the project>"
  const char *content;
};

/// Every template file (generated).
const std::vector<ScaffoldFile> &scaffoldFiles();

/// The kinds there are templates for, sorted.
std::vector<std::string> scaffoldKinds();

/// Writes the project of `kind` for package `name` into `dir`, which must
/// not exist or be empty. Returns the paths written (relative to `dir`).
Expected<std::vector<std::string>> writeScaffold(const std::string &dir,
                                                 const std::string &kind,
                                                 const std::string &name);

} // namespace ireepkg

#endif // IREEPKG_PKG_SCAFFOLD_H
