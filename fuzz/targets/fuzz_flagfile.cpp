//===- fuzz_flagfile.cpp - Fuzzes compiler flag text ===//
//
// The bytes as a flagfile: each line that is not a comment is parsed as a
// compiler flag the way the embedded compiler takes them
// (parseCompilerFlag: "--name=value", "-name=value", "--name"), and its
// name is classified (process-global or per session).
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/compiler_integration/compiler_embedding.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string line(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    if (line.empty() || line[0] == '#')
      continue;
    CompilerFlag flag = parseCompilerFlag(line);
    if (flag.global != isGlobalCompilerFlag(flag.name))
      fuzz::invariantFailed("parseCompilerFlag's global", line);
  }
  return 0;
}
