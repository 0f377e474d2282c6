//===- cli/host/find_tool.h - Executables on PATH ---------------*- C++ -*-===//
#ifndef IREEPKG_CLI_FIND_TOOL_H
#define IREEPKG_CLI_FIND_TOOL_H

#include <string>

namespace ireepkg::cli {

/// An executable tool: `name` itself when it holds a '/', else the first
/// on PATH, else in $VIRTUAL_ENV/bin. `path` is absolute, or empty when
/// nothing was found; `source` is "path", "PATH" or "VIRTUAL_ENV".
struct FoundTool {
  std::string path;
  std::string source;
};
FoundTool findTool(const std::string &name);
bool isExecutableFile(const std::string &path);

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_FIND_TOOL_H
