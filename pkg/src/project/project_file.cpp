//===- pkg/src/project/project_file.cpp - plugins.json and the lockfile ---===//
#include "ireepkg/pkg/project/project_file.h"

#include "ireepkg/base/file_util.h"

#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/project/project.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

Expected<std::string> currentDirectory() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec)
    return makeError(ErrorCode::Io,
                     "cannot read the current directory: " + ec.message());
  return cwd.string();
}

Expected<std::string> projectFileArgument(const std::string &given) {
  std::error_code ec;
  if (given.empty())
    return makeError(ErrorCode::Usage, "--project is empty", {},
                     "give the project file (plugins.json) or its directory");
  fs::file_status st = fs::status(given, ec);
  if (fs::is_directory(st)) {
    std::string file = (fs::path(given) / project::kProjectFileName).string();
    if (!fs::exists(file, ec))
      return makeError(
          ErrorCode::NotFound,
          "--project " + given + ": the directory holds no plugins.json", {},
          "give the project file itself, or run `ireepkg init` "
          "in that directory to start a project");
    return file;
  }
  if (!fs::exists(st))
    return makeError(ErrorCode::NotFound,
                     "--project " + given + ": no such file", {},
                     "give the project file (plugins.json) or its directory");
  if (!fs::is_regular_file(st))
    return makeError(ErrorCode::Invalid,
                     "--project " + given + ": not a regular file", {},
                     "give the project file (plugins.json) or its directory");
  return given;
}

Expected<ProjectText>
readNearestProject(const std::optional<std::string> &explicitFile) {
  auto cwd = currentDirectory();
  if (!cwd)
    return Unexpected(cwd.error());
  std::optional<std::string> found;
  if (explicitFile) {
    auto resolved = projectFileArgument(*explicitFile);
    if (!resolved)
      return Unexpected(resolved.error());
    found = fs::absolute(*resolved).string();
  } else if (std::string f = findProjectFile(*cwd); !f.empty()) {
    found = f;
  }
  if (!found)
    return makeError(ErrorCode::NotFound,
                     std::string("no ") + project::kProjectFileName + " in " +
                         *cwd + " or any directory above it",
                     {}, "run `ireepkg init` to start a project here");
  ProjectText out;
  // A symlinked plugins.json is edited where it really is, so that the
  // rename replaces the file and not the link.
  out.path = *found;
  std::error_code ec;
  if (fs::is_symlink(*found, ec)) {
    fs::path real = fs::canonical(*found, ec);
    if (!ec)
      out.path = real.string();
  }
  auto text = fsutil::readFile(out.path, 64u << 20);
  if (!text)
    return Unexpected(text.error());
  out.text = std::move(*text);
  return out;
}

Status writeProjectFile(const std::string &path, const std::string &text) {
  mode_t mode = 0644;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    mode = st.st_mode & 07777;
  if (Status s = fsutil::writeFileAtomic(path, text, mode); !s)
    return s;
  // The file was created through the umask; give it the old permissions.
  ::chmod(path.c_str(), mode);
  return ok();
}

Expected<Project> loadProject(const std::string &projectFile) {
  Project p;
  p.file = fsutil::absolutePath(projectFile);
  p.dir = fs::path(p.file).parent_path().string();
  p.lockPath = p.dir + "/" + project::kLockFileName;
  auto doc = JsonDocument::load(p.file);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ParseOptions po;
  po.strict = true;
  p.parsed = parseProjectFile(*doc, po, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return p;
}

namespace {
/// A lockfile, checked leniently (fields of a newer ireepkg are warnings).
Expected<Lockfile> parsedLockfile(const JsonDocument &doc) {
  DiagnosticList diags;
  ParseOptions po;
  po.strict = false;
  Lockfile lock = parseLockfile(doc, po, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return lock;
}
} // namespace

Expected<std::optional<Lockfile>> readLockfile(const std::string &path) {
  if (!fsutil::exists(path))
    return std::optional<Lockfile>();
  auto doc = JsonDocument::load(path);
  if (!doc)
    return Unexpected(doc.error());
  auto lock = parsedLockfile(*doc);
  if (!lock)
    return Unexpected(lock.error());
  return std::optional<Lockfile>(std::move(*lock));
}

Expected<Lockfile> parseLockfileText(std::string_view text,
                                     const std::string &path) {
  auto doc = JsonDocument::parse(text, path);
  if (!doc)
    return Unexpected(doc.error());
  return parsedLockfile(*doc);
}

} // namespace ireepkg
