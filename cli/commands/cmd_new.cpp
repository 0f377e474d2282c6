//===- cli/commands/cmd_new.cpp - `ireepkg new` ---------------------------===//
//
// Writes a new package project from the templates compiled into ireepkg
// (ireepkg/pkg/project/scaffold.h).
//
//===----------------------------------------------------------------------===//
#include "output/output.h"

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

const Command &newCommand() {
  static const Command command{
      .name = "new",
      .synopsis = "<dir> --kind KIND [--name NAME]",
      .summary = "start a new plugin package project",
      .description =
          "Writes a complete package project into <dir> (which must not "
          "exist, or be empty): the plugin's sources, a CMakeLists.txt using "
          "ireepkg's CMake helpers (find_package(ireepkg CONFIG)), "
          "ireeplugin.json with a test, the test program, and a README.md "
          "with the commands that build, test and pack it. Kinds: runtime "
          "(an IREE executable plugin in C, built as embedded ELF files for "
          "x86_64 and aarch64 and a system library; its test runs a program "
          "with iree-run-module), mlir-passes and mlir-dialect (MLIR plugins "
          "in C++ for Debian's MLIR 22; their tests run mlir-opt), "
          "compiler-config (a compiler configuration with no native code; "
          "its test compiles and runs a program). The package name is "
          "<dir>'s name unless --name gives one.",
      .options = {{"kind", 0, "KIND",
                   "runtime, mlir-passes, mlir-dialect or compiler-config"},
                  {"name", 0, "NAME",
                   "the package name (default: <dir>'s name)"}},
      .examples = {"ireepkg new my-kernels --kind runtime",
                   "ireepkg new tag-passes --kind mlir-passes"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runNew,
  };
  return command;
}

} // namespace ireepkg::cli
