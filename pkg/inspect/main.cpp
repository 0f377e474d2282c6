//===- pkg/inspect/main.cpp -----------------------------------------------===//
//
// ireepkg-inspect: describe native libraries as JSON.
//
// `ireepkg-inspect [--] <file>...` prints one JSON document on stdout,
// `{"files": [...]}`, with one object per file, in order, carrying the
// fields of ireepkg::BinaryInfo. Problems with a file go in its "error"
// field; the exit status is 0 whenever the tool itself worked, 2 on a usage
// error. ireepkg runs this tool as a child process (pack, verify), so that
// the ireepkg binary links no LLVM and a malformed file cannot take it down.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/environment.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace ireepkg::inspect {
// binary_inspect.cpp
nlohmann::ordered_json inspectFile(const std::string &path);
} // namespace ireepkg::inspect

namespace {

const char *const kUsage =
    "usage: ireepkg-inspect [--] <file>...\n"
    "Prints a JSON document {\"files\": [...]} describing each file: format,\n"
    "arch, machine, os, is64, little_endian, type, needed, interpreter,\n"
    "exports, code_signature (Mach-O), fat_archs, fat_images (each FatELF\n"
    "record and its image), slices (each slice of a universal Mach-O file),\n"
    "cpu_scanned and cpu_uses (for x86-64 ELF code: the first instruction\n"
    "needing each CPU feature) and error.\n";

} // namespace

int main(int argc, char **argv) {
  if (std::string refusal = ireepkg::privilegedRunReport("ireepkg-inspect");
      !refusal.empty())
    return std::fputs(refusal.c_str(), stderr), 1;
  std::vector<std::string> paths;
  bool options = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (options && arg == "--") {
      options = false;
      continue;
    }
    if (options && (arg == "--help" || arg == "-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (options && arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "ireepkg-inspect: error: unknown option '%s'\n%s",
                   arg.c_str(), kUsage);
      return 2;
    }
    paths.push_back(std::move(arg));
  }
  if (paths.empty()) {
    std::fprintf(stderr, "ireepkg-inspect: error: no files given\n%s", kUsage);
    return 2;
  }
  nlohmann::ordered_json doc = {{"files", nlohmann::ordered_json::array()}};
  for (const std::string &path : paths)
    doc["files"].push_back(ireepkg::inspect::inspectFile(path));
  // Names read from files need not be UTF-8: replace what is not.
  std::string text =
      doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    std::fprintf(stderr,
                 "ireepkg-inspect: error: cannot write the report: "
                 "%s\n",
                 std::strerror(errno));
    return 1;
  }
  return 0;
}
