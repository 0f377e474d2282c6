//===- project_file.cpp - plugins.json for init, add and rm --------------===//
#include "project_file.h"

#include "file_util.h"
#include "output.h"
#include "registry_args.h"

#include "ireepkg/prefix.h"
#include "ireepkg/project.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::cli {

Expected<std::string> currentDirectory() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec)
    return makeError(ErrorCode::Io,
                     "cannot read the current directory: " + ec.message());
  return cwd.string();
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
  verboseLine(1, "project file: " + out.path);
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

} // namespace ireepkg::cli
