//===- ireepkg/pkg/project/project_file.h - plugins.json and the lockfile -===//
//
// Finding, loading, reading and atomically replacing a project's
// plugins.json, and reading its lockfile: what every command that works on
// a project shares (parsing is the formats layer's, editing the text is
// project.h's).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_PROJECT_FILE_H
#define IREEPKG_PKG_PROJECT_FILE_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"

#include <optional>

#include <string>

namespace ireepkg {

/// The current directory, or an Io error.
Expected<std::string> currentDirectory();

/// The plugins.json in `cwd` or the nearest directory above it; "" if none.
std::string findProjectFile(const std::string &cwd);

/// Checks a project's prefix, `<project>/.iree-plugins`, before it is used
/// without the user naming it (--prefix, IREEPKG_PREFIX). Whoever made the
/// checkout chose what is there, so it is refused when it is a symlink (it
/// could point at another prefix, which `sync` would then change) or when
/// the directory it is in may be written by another user (one not the
/// current user's or root's, or group- or world-writable without the
/// sticky bit), who could put such a link there at any time.
Status checkProjectPrefix(const std::string &prefix);

struct ProjectText {
  std::string path; ///< absolute; a symlink is followed to its target
  std::string text;
};

/// The project file --project names: FILE itself, or DIR/plugins.json for a
/// directory (NotFound when it holds none; Usage when the text is empty).
Expected<std::string> projectFileArgument(const std::string &given);

/// Reads `explicitFile` (--project: a file, or a directory holding
/// plugins.json) when given, else the plugins.json of the current directory
/// or the nearest one above it (NotFound, with a hint to run `ireepkg init`,
/// when there is none).
Expected<ProjectText>
readNearestProject(const std::optional<std::string> &explicitFile = {});

/// A project: its plugins.json, parsed, and where its lockfile goes.
struct Project {
  std::string file; ///< absolute path of plugins.json
  std::string dir;  ///< its directory
  ProjectFile parsed;
  std::string lockPath; ///< <dir>/plugins.lock.json
};

/// Reads and checks (strictly) a plugins.json.
Expected<Project> loadProject(const std::string &projectFile);

/// Reads the lockfile at `path` leniently, if there is one (nullopt when
/// not; a broken one is an error).
Expected<std::optional<Lockfile>> readLockfile(const std::string &path);
/// Parses a lockfile's text leniently, as readLockfile does; `path` names
/// it in errors.
Expected<Lockfile> parseLockfileText(std::string_view text,
                                     const std::string &path);

/// Replaces `path` with `text` atomically (temporary file, fsync, rename),
/// keeping the file's permissions; on failure the old file is untouched.
Status writeProjectFile(const std::string &path, const std::string &text);

} // namespace ireepkg

#endif // IREEPKG_PKG_PROJECT_FILE_H
