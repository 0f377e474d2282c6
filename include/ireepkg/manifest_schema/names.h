//===- ireepkg/manifest_schema/names.h - Names ------------------*- C++ -*-===//
//
// What a name may be: a package's, a C identifier, and a path of a file
// inside a package (portable to every file system the packages go to).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_MANIFEST_SCHEMA_NAMES_H
#define IREEPKG_MANIFEST_SCHEMA_NAMES_H

#include <string>
#include <string_view>

namespace ireepkg {

/// `^[a-z0-9][a-z0-9._-]{0,63}$`
bool isValidPackageName(std::string_view name);
extern const char *const kPackageNameRule;

/// A C identifier: `^[A-Za-z_][A-Za-z0-9_]*$`.
bool isCIdentifier(std::string_view name);

/// Why `path` cannot name a file inside a package ("" if it can): must be
/// relative, `/`-separated, without `.`/`..`/empty segments or backslashes.
std::string packagePathProblem(std::string_view path);

} // namespace ireepkg

#endif // IREEPKG_MANIFEST_SCHEMA_NAMES_H
