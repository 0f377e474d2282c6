//===- cmd_new.cpp - `ireepkg new` ---------------------------------------===//
//
// Writes a new package project from the templates compiled into ireepkg
// (pkg/src/scaffold.h).
//
//===----------------------------------------------------------------------===//
#include "output.h"

#include "ireepkg/pkg/project/scaffold.h"

#include <cstdio>
#include <filesystem>

namespace ireepkg::cli {

int runNew(const Command &, const ParsedArgs &args) {
  const std::string &dir = args.positional[0];
  auto kind = args.value("kind");
  if (!kind) {
    std::string list;
    for (const std::string &k : scaffoldKinds())
      list += (list.empty() ? "" : ", ") + k;
    printError("missing --kind", "give the kind of package: " + list);
    return kExitUsage;
  }
  std::string name = args.value("name").value_or(
      std::filesystem::path(dir).lexically_normal().filename().string());
  if (name.empty() || name == "." || name == "..")
    name = std::filesystem::absolute(dir)
               .lexically_normal()
               .parent_path()
               .filename()
               .string();
  auto written = writeScaffold(dir, *kind, name);
  if (!written) {
    printError(written.error());
    return written.error().code == ErrorCode::Usage ? kExitUsage : kExitFailure;
  }
  std::string text = "created the " + *kind + " package project " + name +
                     " in " + dir + ":\n";
  for (const std::string &f : *written)
    text += "  " + f + "\n";
  text += "\nNext (README.md says more):\n"
          "  cd " +
          dir +
          "\n"
          "  cmake -S . -B build\n"
          "  cmake --build build\n"
          "  ctest --test-dir build --output-on-failure\n";
  printSummary("%s", text.c_str());
  return kExitOk;
}

} // namespace ireepkg::cli
