//===- fuzz_version.cpp - Fuzzes SemVer versions ===//
//
// The bytes as a version (Version::parse) and as `iree-compile --version`'s
// version text (workflow::parseIreeVersion). A version that parses prints
// back to text that parses to an identical version (semver.h).
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/semver.h"
#include "ireepkg/workflow/workflow.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  (void)workflow::parseIreeVersion(text);
  auto v = Version::parse(text);
  if (!v)
    return 0;
  std::string printed = v->str();
  auto again = Version::parse(printed);
  if (!again || !again->identical(*v))
    fuzz::invariantFailed("Version::parse(v.str()) is not v", printed);
  if (compare(*v, *again) != 0)
    fuzz::invariantFailed("a version does not equal itself", printed);
  // Its neighbourhood as sets.
  VersionSet at = VersionSet::exactly(*v);
  if (!at.contains(*v) || VersionSet::lessThan(*v).contains(*v) ||
      !VersionSet::atLeast(*v).contains(*v))
    fuzz::invariantFailed("set membership of a version", printed);
  return 0;
}
