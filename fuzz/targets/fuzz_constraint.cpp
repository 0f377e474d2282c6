//===- fuzz_constraint.cpp - Fuzzes version constraints ===//
//
// The bytes as a constraint (Constraint::parse) and as a `name@constraint`
// request (workflow::parseNameRequest). A parsed constraint's canonical text
// parses back to the same set, except where semver.h says it does not
// ("<empty>" and the "-\u221E" bound); set algebra on it stays consistent.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/manifest_schema/semver.h"
#include "ireepkg/workflow/workflow.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  (void)workflow::parseNameRequest(std::string("fuzz@") + std::string(text));
  (void)workflow::parseNameRequest(std::string(text));
  auto c = Constraint::parse(text);
  if (!c)
    return 0;
  const VersionSet &set = c->set();
  std::string printed = c->str();
  if (printed != "<empty>" && printed.find("\xE2\x88\x9E") == std::string::npos) {
    auto again = Constraint::parse(printed);
    if (!again)
      fuzz::invariantFailed("a constraint's canonical text does not parse",
                            printed + " (from " + std::string(text) + ")");
    if (!(again->set() == set))
      fuzz::invariantFailed("a constraint's canonical text is another set",
                            printed + " -> " + again->str());
  }
  VersionSet complement = set.complement();
  if (!set.intersect(complement).isEmpty() ||
      !set.unionWith(complement).isAny())
    fuzz::invariantFailed("a set and its complement", printed);
  if (!(set.difference(set).isEmpty()) || !set.subsetOf(set))
    fuzz::invariantFailed("a set minus itself", printed);
  for (const char *probe : {"0.0.0", "1.2.3", "1.2.3-rc.1", "2.0.0"})
    (void)c->matches(*Version::parse(probe));
  (void)c->intersect(Constraint::any());
  return 0;
}
