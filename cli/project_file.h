//===- project_file.h - plugins.json for init, add and rm ------*- C++ -*-===//
//
// Finding, reading and atomically replacing the project file, shared by the
// commands that edit it.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_PROJECT_FILE_H
#define IREEPKG_CLI_PROJECT_FILE_H

#include "ireepkg/error.h"

#include <optional>
#include <string>

namespace ireepkg::cli {

/// The current directory, or an Io error.
Expected<std::string> currentDirectory();

struct ProjectText {
  std::string path; ///< absolute; a symlink is followed to its target
  std::string text;
};

/// Reads `explicitFile` (--project: a file, or a directory holding
/// plugins.json) when given, else the plugins.json of the current directory
/// or the nearest one above it (NotFound, with a hint to run `ireepkg init`,
/// when there is none).
Expected<ProjectText>
readNearestProject(const std::optional<std::string> &explicitFile = {});

/// Replaces `path` with `text` atomically (temporary file, fsync, rename),
/// keeping the file's permissions; on failure the old file is untouched.
Status writeProjectFile(const std::string &path, const std::string &text);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_PROJECT_FILE_H
