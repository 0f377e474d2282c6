//===- test_shadowing.cpp - Imports more than one package provides --------===//
//
// shadowedImports reads only the "runtime" array of a prefix's
// state/activation.json: the package activated last provides an import,
// the others are shadowed; within a package its last plugin stands for
// it; fields in any order; entries of another shape are skipped; a file
// that does not parse says nothing.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/pkg/prefix/shadowing.h"
#include "ireepkg/pkg/prefix/state.h"

#include <doctest/doctest.h>

#include <fstream>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

void writeActivation(const TempDir &tmp, const std::string &text) {
  std::filesystem::create_directories(tmp.path() + "/state");
  std::ofstream(tmp.path() + "/state/" + kActivationFile,
                std::ios::binary | std::ios::trunc)
      << text;
}

std::string describe(const std::vector<ShadowedImport> &all) {
  std::string out;
  for (const ShadowedImport &s : all) {
    out += s.import + ": " + s.used.package + "/" + s.used.plugin;
    for (const RuntimePluginRef &r : s.shadowed)
      out += " > " + r.package + "/" + r.plugin;
    out += "\n";
  }
  return out;
}

} // namespace

TEST_CASE("shadowed imports: the package activated last provides an import") {
  TempDir tmp("shadow");
  CHECK(shadowedImports(tmp.path()).empty()); // no activation.json
  // "packages" first, as ireepkg writes it, and long; fields in any order;
  // entries of another shape skipped.
  std::string packages = "[";
  for (int i = 0; i < 500; ++i)
    packages += std::string(i ? "," : "") + "{\"name\": \"pkg-" +
                std::to_string(i) + "\", \"imports\": [\"x\"]}";
  packages += "]";
  const std::string good =
      "{\"packages\": " + packages +
      ", \"runtime\": [\n"
      "  {\"package\": \"alpha\", \"name\": \"elf\", \"imports\": "
      "[\"mul\", \"add\"]},\n"
      "  {\"imports\": [\"mul\"], \"name\": \"so\", \"package\": \"alpha\"},\n"
      "  42, {\"package\": \"nothing\"}, {\"package\": \"odd\", \"imports\": "
      "{\"mul\": 1}},\n"
      "  {\"name\": \"k\", \"package\": \"beta\", \"imports\": [\"mul\", 7, "
      "\"sub\"]},\n"
      "  {\"package\": \"gamma\", \"name\": \"k\", \"imports\": [\"add\"], "
      "\"extra\": {\"a\": [1, 2]}}\n"
      "]}\n";
  writeActivation(tmp, good);
  CHECK(describe(shadowedImports(tmp.path())) == "add: gamma/k > alpha/elf\n"
                                                 "mul: beta/k > alpha/so\n");

  // A file that does not parse says nothing, wherever it breaks.
  for (size_t cut : {good.size() / 3, good.size() - 40, good.size() - 3}) {
    CAPTURE(cut);
    writeActivation(tmp, good.substr(0, cut));
    CHECK(shadowedImports(tmp.path()).empty());
  }
  writeActivation(tmp, "{\"runtime\": {}}");
  CHECK(shadowedImports(tmp.path()).empty());
  writeActivation(tmp, "");
  CHECK(shadowedImports(tmp.path()).empty());
}
