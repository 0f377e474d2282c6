//===- cmd_pack.cpp - `ireepkg pack` -------------------------------------===//
#include "output.h"

#include "ireepkg/package.h"

#include <cstdio>

namespace ireepkg::cli {

int runPack(const Command &, const ParsedArgs &args) {
  PackOptions options;
  options.outputDir = args.value("output").value_or(".");
  options.fatelf = args.flag("fatelf");
  auto result = packDirectory(args.positional[0], options);
  if (!result) {
    if (args.flag("json"))
      std::printf("%s\n",
                  nlohmann::json({{"ok", false},
                                  {"error", errorToJson(result.error())}})
                      .dump(2)
                      .c_str());
    printError(result.error());
    return kExitFailure;
  }
  for (const Diagnostic &d : result->warnings)
    CliReporter().warning(d);
  if (args.flag("json")) {
    nlohmann::json files = nlohmann::json::array();
    for (const RecordEntry &e : result->record.files)
      files.push_back({{"path", e.path}, {"sha256", e.sha256}, {"size", e.size}});
    std::printf("%s\n", nlohmann::json({{"ok", true},
                                        {"archive", result->archivePath},
                                        {"name", result->manifest.name},
                                        {"version", result->manifest.version.str()},
                                        {"sha256", result->sha256},
                                        {"size", result->size},
                                        {"files", files},
                                        {"pipeline_check",
                                         toJson(result->pipelineCheck)}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  std::printf("packed %s %s -> %s (%s, %zu files, sha256 %s)\n",
              result->manifest.name.c_str(),
              result->manifest.version.str().c_str(),
              result->archivePath.c_str(), formatBytes(result->size).c_str(),
              result->record.files.size(), result->sha256.c_str());
  return kExitOk;
}

} // namespace ireepkg::cli
