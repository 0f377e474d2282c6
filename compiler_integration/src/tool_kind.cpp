//===- compiler_integration/src/tool_kind.cpp -----------------------------===//
//
// What kind of tool `exec` runs.
//
// See ireepkg/tool_kind.h.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/tool_kind.h"
#include "ireepkg/manifest_schema/json_document.h"

#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/file_util.h"

#include "ireepkg/base/child_process.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ireepkg {

namespace {

constexpr std::array<std::string_view, 4> kNames = {"runtime", "compiler",
                                                     "mlir", "python"};

bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

std::string cacheFile() {
  auto cache = PackageCache::openDefault();
  return cache ? cache->root() + "/tools.json" : "";
}

/// "<path>:<size>:<mtime>", or "" when the file cannot be stat'ed.
std::string identity(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return "";
  return path + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

} // namespace

std::span<const std::string_view> toolKindNames() { return kNames; }

std::string_view toolKindName(ToolKind kind) {
  return kNames[static_cast<size_t>(kind)];
}

std::optional<ToolKind> parseToolKind(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name)
      return static_cast<ToolKind>(i);
  return std::nullopt;
}

std::optional<ToolKind> toolKindFromHelp(std::string_view help) {
  // IREE's compiler drivers (iree-compile, iree-opt) are LLVM tools with
  // IREE's options; iree-opt also has MLIR's plugin flags, so IREE first.
  if (contains(help, "--iree-"))
    return ToolKind::Compiler;
  // Every MlirOptMain tool has these, whatever it is called.
  if (contains(help, "--load-pass-plugin") && contains(help, "--pass-pipeline"))
    return ToolKind::Mlir;
  // IREE's runtime tools print their flags as a flagfile.
  if (contains(help, "--executable_plugin") ||
      (contains(help, "IREE") && contains(help, "--flagfile")))
    return ToolKind::Runtime;
  // CPython's usage line.
  if (contains(help, "[-c cmd | -m mod | file | -]"))
    return ToolKind::Python;
  return std::nullopt;
}

std::optional<ToolKind> toolKindFromShebang(std::string_view firstLine) {
  if (firstLine.substr(0, 2) != "#!")
    return std::nullopt;
  auto words = [&] {
    std::vector<std::string_view> out;
    size_t i = 2;
    while (i < firstLine.size()) {
      size_t start = firstLine.find_first_not_of(" \t\r", i);
      if (start == std::string_view::npos)
        break;
      size_t end = firstLine.find_first_of(" \t\r", start);
      if (end == std::string_view::npos)
        end = firstLine.size();
      out.push_back(firstLine.substr(start, end - start));
      i = end;
    }
    return out;
  }();
  auto base = [](std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
  };
  std::string_view interpreter;
  for (size_t i = 0; i < words.size(); ++i) {
    // `#!/usr/bin/env [-S] python3`: the first word that is not an option
    // or an assignment after env.
    if (i == 0 && base(words[0]) == "env")
      continue;
    if (i > 0 && base(words[0]) == "env" &&
        (words[i][0] == '-' || words[i].find('=') != std::string_view::npos))
      continue;
    interpreter = base(words[i]);
    break;
  }
  if (interpreter.rfind("python", 0) == 0 || interpreter.rfind("pypy", 0) == 0)
    return ToolKind::Python;
  return std::nullopt;
}

Expected<ToolKind> probeToolKind(const std::string &toolPath,
                                 double timeoutSeconds) {
  std::string key = identity(toolPath);
  std::string file = key.empty() ? "" : cacheFile();
  nlohmann::json cached = nlohmann::json::object();
  if (!file.empty()) {
    // Trusted as it is: only the user's own (readOwnCacheFile).
    auto text = fsutil::readOwnCacheFile(file, 1 << 20);
    cached = parseJsonOrDiscarded(text ? *text : std::string());
    if (!cached.is_object())
      cached = nlohmann::json::object();
    if (auto it = cached.find(key); it != cached.end() && it->is_string())
      if (auto kind = parseToolKind(it->get<std::string>()))
        return *kind;
  }
  std::string hint = "say what it is with --tool-kind (runtime, compiler, "
                     "mlir or python)";
  ChildOptions options;
  options.argv = {toolPath, "--help"};
  options.timeoutSeconds = timeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = options.maxErr = 4u << 20;
  options.hintIfNotStarted = hint;
  auto r = runChild(options);
  if (!r)
    return Unexpected(r.error());
  if (r->timedOut)
    return makeError(ErrorCode::Unsupported,
                     "cannot tell what kind of tool " + toolPath +
                         " is: `--help` did not finish within " +
                         std::to_string(static_cast<int>(timeoutSeconds)) +
                         " s",
                     {}, hint);
  auto kind = toolKindFromHelp(r->out + "\n" + r->err);
  if (!kind) {
    // A script run by Python (pytest, a console script, ./run.py) whose
    // --help is its own: what runs is Python, with iree.runtime inside.
    std::ifstream script(toolPath, std::ios::binary);
    std::string first(256, '\0');
    script.read(first.data(), static_cast<std::streamsize>(first.size()));
    first.resize(static_cast<size_t>(script.gcount()));
    kind = toolKindFromShebang(first.substr(0, first.find('\n')));
  }
  if (!kind) {
    std::string said = firstOutputLine(r->err.empty() ? r->out : r->err);
    return makeError(ErrorCode::Unsupported,
                     "cannot tell what kind of tool " + toolPath +
                         " is: its --help output is not that of an IREE "
                         "runtime or compiler tool, an MLIR tool or Python" +
                         (said.empty() ? "" : " (it printed: " + said + ")"),
                     {}, hint);
  }
  if (!file.empty()) {
    cached[key] = std::string(toolKindName(*kind));
    std::string dir = file.substr(0, file.rfind('/'));
    ::mkdir(dir.c_str(), 0755);
    std::string tmp = file + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      out << cached.dump(1) << "\n";
    }
    if (::rename(tmp.c_str(), file.c_str()) != 0)
      ::unlink(tmp.c_str());
  }
  return *kind;
}

} // namespace ireepkg
