//===- fuzz_inspect.cpp - Fuzzes ireepkg-inspect's reading of binaries ===//
//
// The bytes as a native library given to `pack` and `verify`: the code of
// ireepkg-inspect (pkg/inspect/binary_inspect.cpp, LLVM's Object library)
// describes the file as JSON, and ireepkg reads that JSON back
// (parseInspectOutput, include/ireepkg/pkg/checks/binary_info.h), as the two
// processes do.
//
// binary_inspect.cpp has no header of its own; its entry point is declared
// here as the tool's main.cpp declares it.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/checks/binary_info.h"

#include <nlohmann/json.hpp>

namespace ireepkg::inspect {
nlohmann::ordered_json inspectFile(const std::string &path);
} // namespace ireepkg::inspect

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::writeScratchFile("lib.so", fuzz::bytes(data, size));
  nlohmann::ordered_json doc = {{"files", nlohmann::ordered_json::array()}};
  doc["files"].push_back(inspect::inspectFile(path));
  std::string text =
      doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto infos = parseInspectOutput(text);
  if (!infos)
    fuzz::invariantFailed("ireepkg cannot read ireepkg-inspect's report",
                          infos.error().message + "\n" + text);
  return 0;
}
