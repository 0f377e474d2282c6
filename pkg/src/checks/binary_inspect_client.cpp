//===- pkg/src/checks/binary_inspect_client.cpp - Running ireepkg-inspect -===//
//
// ireepkg reads native libraries through the `ireepkg-inspect` tool (LLVM's
// Object library), run as a child process: ireepkg itself links no LLVM, and
// a file that crashes the reader cannot take ireepkg down. This file finds
// the tool, runs it (see child_process.h) on batches of paths, and
// parses the JSON it prints into BinaryInfo records.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/checks/binary_info.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/programs.h"
#include "ireepkg/manifest_schema/json_document.h"

#include "ireepkg/base/child_process.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>
#include <unistd.h>

namespace ireepkg {

bool BinaryInfo::exportsSymbol(std::string_view name) const {
  return std::find(exports.begin(), exports.end(), name) != exports.end();
}

namespace {

using nlohmann::json;

/// Paths per run of the tool, to keep command lines well below ARG_MAX.
constexpr size_t kBatchSize = 200;
/// How much of the tool's stderr is kept for error messages.
constexpr size_t kMaxStderr = 64 * 1024;

const char *const kToolName = "ireepkg-inspect";

bool isExecutableFile(const std::string &path) {
  return ::access(path.c_str(), X_OK) == 0;
}

Expected<std::string> findTool() {
  if (const char *env = environmentOverride("IREEPKG_INSPECT"); env && *env) {
    if (!isExecutableFile(env))
      return makeError(ErrorCode::NotFound,
                       std::string("IREEPKG_INSPECT names '") + env +
                           "', which is not an executable file",
                       {},
                       "point IREEPKG_INSPECT at the ireepkg-inspect tool, or "
                       "unset it to use the one beside ireepkg");
    return std::string(env);
  }
  if (std::string exeDir = executableDir(); !exeDir.empty()) {
    std::string dir = exeDir + "/";
    std::string tool = dir + kToolName;
    if (isExecutableFile(tool))
      return tool;
    return makeError(ErrorCode::NotFound,
                     std::string("cannot find ") + kToolName + " in " + dir, {},
                     "it is built and installed beside ireepkg; or set "
                     "IREEPKG_INSPECT to its path");
  }
  return makeError(ErrorCode::NotFound,
                   std::string("cannot find ") + kToolName +
                       ": the running executable's directory is unknown",
                   {}, "set IREEPKG_INSPECT to the path of ireepkg-inspect");
}

/// Runs `tool -- paths...` with stdin from /dev/null and collects its
/// stdout and (the start of) its stderr.
Expected<ChildResult> runTool(const std::string &tool,
                              std::span<const std::string> paths) {
  ChildOptions options;
  options.argv = {tool, "--"};
  options.argv.insert(options.argv.end(), paths.begin(), paths.end());
  options.name = kToolName;
  options.maxErr = kMaxStderr;
  options.hintIfNotStarted =
      "set IREEPKG_INSPECT to the path of ireepkg-inspect";
  Expected<ChildResult> result = runChild(options);
  if (result && !result->readError.empty() && result->exited &&
      result->exitCode == 0)
    return makeError(ErrorCode::Io, result->readError);
  return result;
}

/// Reads one file's object; returns a problem, or "" if it is well formed.
/// Fields other than "path" and "format" may be absent (defaults apply);
/// present fields must have the right type; unknown fields are ignored.
/// A FatELF image's or a Mach-O slice's object (`image`) has no "path".
std::string readEntry(const json &j, BinaryInfo &info, bool image = false) {
  if (!j.is_object())
    return std::string("must be an object, not ") + describeJsonType(j);
  auto readString = [&](const char *key, std::string &out,
                        bool required) -> std::string {
    auto it = j.find(key);
    if (it == j.end())
      return required ? std::string("/") + key + ": missing" : "";
    if (!it->is_string())
      return std::string("/") + key + ": must be a string, not " +
             describeJsonType(*it);
    out = it->get<std::string>();
    return "";
  };
  auto readBool = [&](const char *key, bool &out) -> std::string {
    auto it = j.find(key);
    if (it == j.end())
      return "";
    if (!it->is_boolean())
      return std::string("/") + key + ": must be a boolean, not " +
             describeJsonType(*it);
    out = it->get<bool>();
    return "";
  };
  auto readStrings = [&](const char *key,
                         std::vector<std::string> &out) -> std::string {
    auto it = j.find(key);
    if (it == j.end())
      return "";
    if (!it->is_array())
      return std::string("/") + key + ": must be an array, not " +
             describeJsonType(*it);
    for (size_t i = 0; i < it->size(); ++i) {
      const json &e = (*it)[i];
      if (!e.is_string())
        return std::string("/") + key + "/" + std::to_string(i) +
               ": must be a string, not " + describeJsonType(e);
      out.push_back(e.get<std::string>());
    }
    return "";
  };
  // An architecture name or null; names that are not ours read as "none".
  auto readArch = [&](const json &e, std::optional<Arch> &out,
                      const std::string &where) -> std::string {
    if (e.is_null()) {
      out.reset();
      return "";
    }
    if (!e.is_string())
      return where + ": must be a string or null, not " + describeJsonType(e);
    out = parseArch(e.get<std::string>());
    return "";
  };

  std::string problem;
  auto check = [&](std::string p) {
    if (problem.empty())
      problem = std::move(p);
  };
  check(readString("path", info.path, !image));
  check(readString("format", info.format, true));
  if (auto it = j.find("arch"); it != j.end())
    check(readArch(*it, info.arch, "/arch"));
  check(readString("machine", info.machine, false));
  check(readString("os", info.os, false));
  check(readBool("is64", info.is64));
  check(readBool("little_endian", info.littleEndian));
  check(readString("type", info.type, false));
  check(readStrings("needed", info.needed));
  check(readString("interpreter", info.interpreter, false));
  check(readStrings("exports", info.exports));
  check(readBool("code_signature", info.codeSignature));
  check(readBool("cpu_scanned", info.cpuScanned));
  if (auto it = j.find("cpu_uses"); it != j.end()) {
    if (!it->is_array()) {
      check(std::string("/cpu_uses: must be an array, not ") +
            describeJsonType(*it));
    } else {
      for (size_t i = 0; i < it->size() && problem.empty(); ++i) {
        const json &e = (*it)[i];
        std::string where = "/cpu_uses/" + std::to_string(i);
        if (!e.is_object()) {
          check(where + ": must be an object, not " + describeJsonType(e));
          break;
        }
        CpuUse u;
        for (auto [key, out] :
             {std::pair<const char *, std::string *>{"feature", &u.feature},
              {"section", &u.section},
              {"symbol", &u.symbol},
              {"mnemonic", &u.mnemonic}}) {
          auto f = e.find(key);
          if (f != e.end() && f->is_string())
            *out = f->get<std::string>();
          else if (f != e.end() || std::string(key) == "feature")
            check(where + "/" + key +
                  (f == e.end()
                       ? std::string(": missing")
                       : ": must be a string, not " + describeJsonType(*f)));
        }
        for (auto [key, out] :
             {std::pair<const char *, uint64_t *>{"address", &u.address},
              {"offset", &u.offset}}) {
          auto f = e.find(key);
          if (f != e.end() && f->is_number_unsigned())
            *out = f->get<uint64_t>();
          else if (f != e.end())
            check(where + "/" + key + ": must be an unsigned integer, not " +
                  describeJsonType(*f));
        }
        info.cpuUses.push_back(std::move(u));
      }
    }
  }
  if (auto it = j.find("fat_archs"); it != j.end()) {
    if (!it->is_array()) {
      check(std::string("/fat_archs: must be an array, not ") + describeJsonType(*it));
    } else {
      for (size_t i = 0; i < it->size(); ++i) {
        std::optional<Arch> a;
        check(readArch((*it)[i], a, "/fat_archs/" + std::to_string(i)));
        if (a) // records of other machines are not represented
          info.fatArchs.push_back(*a);
      }
    }
  }
  if (auto it = j.find("fat_images"); it != j.end() && !image) {
    if (!it->is_array()) {
      check(std::string("/fat_images: must be an array, not ") +
            describeJsonType(*it));
    } else {
      for (size_t i = 0; i < it->size() && problem.empty(); ++i) {
        const json &e = (*it)[i];
        std::string where = "/fat_images/" + std::to_string(i);
        if (!e.is_object()) {
          check(where + ": must be an object, not " + describeJsonType(e));
          break;
        }
        FatElfImage f;
        auto number = [&](const char *key, auto &out) {
          auto n = e.find(key);
          if (n == e.end())
            return;
          if (!n->is_number_unsigned())
            check(where + "/" + key + ": must be an unsigned integer, not " +
                  describeJsonType(*n));
          else
            out = n->get<std::remove_reference_t<decltype(out)>>();
        };
        auto flag = [&](const char *key, bool &out) {
          auto n = e.find(key);
          if (n == e.end())
            return;
          if (!n->is_boolean())
            check(where + "/" + key + ": must be a boolean, not " +
                  describeJsonType(*n));
          else
            out = n->get<bool>();
        };
        number("record", f.record);
        number("osabi", f.osabi);
        flag("is64", f.is64);
        flag("little_endian", f.littleEndian);
        if (auto a = e.find("arch"); a != e.end())
          check(readArch(*a, f.arch, where + "/arch"));
        if (auto m = e.find("machine"); m != e.end()) {
          if (m->is_string())
            f.machine = m->get<std::string>();
          else
            check(where + "/machine: must be a string, not " +
                  describeJsonType(*m));
        }
        auto img = e.find("image");
        if (img == e.end()) {
          check(where + "/image: missing");
        } else {
          std::string p = readEntry(*img, f.image, /*image=*/true);
          if (!p.empty())
            check(where + "/image" + (p[0] == '/' ? p : ": " + p));
        }
        info.fatImages.push_back(std::move(f));
      }
    }
  }
  if (auto it = j.find("slices"); it != j.end() && !image) {
    if (!it->is_array()) {
      check(std::string("/slices: must be an array, not ") +
            describeJsonType(*it));
    } else {
      for (size_t i = 0; i < it->size() && problem.empty(); ++i) {
        BinaryInfo slice;
        std::string p = readEntry((*it)[i], slice, /*image=*/true);
        if (!p.empty())
          check("/slices/" + std::to_string(i) + (p[0] == '/' ? p : ": " + p));
        info.slices.push_back(std::move(slice));
      }
    }
  }
  check(readString("error", info.error, false));
  std::sort(info.exports.begin(), info.exports.end());
  info.exports.erase(std::unique(info.exports.begin(), info.exports.end()),
                     info.exports.end());
  return problem;
}

} // namespace

Expected<std::vector<BinaryInfo>> parseInspectOutput(std::string_view text) {
  const std::string hint = std::string("is ") + kToolName +
                           " from the same build as ireepkg? (check "
                           "IREEPKG_INSPECT)";
  json doc = parseJsonOrDiscarded(text);
  if (doc.is_discarded())
    return makeError(ErrorCode::Internal,
                     std::string(kToolName) + " printed malformed JSON", {},
                     hint);
  if (!doc.is_object())
    return makeError(ErrorCode::Internal,
                     std::string(kToolName) +
                         " output: /: must be an object, not " + describeJsonType(doc),
                     {}, hint);
  auto files = doc.find("files");
  if (files == doc.end() || !files->is_array())
    return makeError(
        ErrorCode::Internal,
        std::string(kToolName) + " output: /files: must be an array" +
            (files == doc.end() ? std::string(", but is missing")
                                : std::string(", not ") + describeJsonType(*files)),
        {}, hint);
  std::vector<BinaryInfo> result;
  result.reserve(files->size());
  for (size_t i = 0; i < files->size(); ++i) {
    BinaryInfo info;
    std::string problem;
    try {
      problem = readEntry((*files)[i], info);
    } catch (const json::exception &e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      if (problem[0] != '/')
        problem = ": " + problem;
      return makeError(ErrorCode::Internal,
                       std::string(kToolName) + " output: /files/" +
                           std::to_string(i) + problem,
                       {}, hint);
    }
    result.push_back(std::move(info));
  }
  return result;
}

Expected<std::vector<BinaryInfo>>
inspectBinaries(const std::vector<std::string> &paths) {
  std::vector<BinaryInfo> result;
  if (paths.empty())
    return result;
  Expected<std::string> tool = findTool();
  if (!tool)
    return Unexpected(tool.error());
  result.reserve(paths.size());
  for (size_t start = 0; start < paths.size(); start += kBatchSize) {
    std::span<const std::string> batch(
        paths.data() + start, std::min(kBatchSize, paths.size() - start));
    Expected<ChildResult> child = runTool(*tool, batch);
    if (!child)
      return Unexpected(child.error());
    std::string which = batch.size() == 1
                            ? "'" + batch[0] + "'"
                            : std::to_string(batch.size()) + " files, from '" +
                                  batch.front() + "' to '" + batch.back() + "'";
    if (child->signal) {
      int sig = child->signal;
      const char *name = strsignal(sig);
      return makeError(
          ErrorCode::Internal,
          std::string(kToolName) + " was killed by signal " +
              std::to_string(sig) +
              (name ? std::string(" (") + name + ")" : "") + " while reading " +
              which,
          {},
          "a malformed file may have crashed it: run `" + *tool +
              " FILE` on each file to find which, and please report it");
    }
    if (!child->exited || child->exitCode != 0) {
      std::string detail = firstOutputLine(child->err);
      return makeError(ErrorCode::Internal,
                       std::string(kToolName) + " failed with exit status " +
                           std::to_string(child->exitCode) + " while reading " +
                           which + (detail.empty() ? "" : ": " + detail));
    }
    Expected<std::vector<BinaryInfo>> infos = parseInspectOutput(child->out);
    if (!infos)
      return Unexpected(infos.error());
    if (infos->size() != batch.size())
      return makeError(ErrorCode::Internal,
                       std::string(kToolName) + " described " +
                           std::to_string(infos->size()) + " files, not " +
                           std::to_string(batch.size()));
    for (size_t i = 0; i < batch.size(); ++i) {
      // The tool echoes paths as UTF-8; keep the caller's exact bytes.
      (*infos)[i].path = batch[i];
      result.push_back(std::move((*infos)[i]));
    }
  }
  return result;
}

} // namespace ireepkg
