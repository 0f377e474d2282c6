//===- cli/commands/cmd_verify.cpp - `ireepkg verify` ---------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "output/report.h"

#include "ireepkg/pkg/prefix/install.h"

#include <cstdio>

namespace ireepkg::cli {

int runVerify(const Command &, const ParsedArgs &args) {
  auto prefix = choosePrefix(args);
  if (!prefix)
    return setupFailure();
  bool json = args.flag("json");
  CliReporter reporter(json);
  auto report = verifyPrefix(prefix->path, args.positional, reporter);
  if (!report)
    return printFailure(report.error(), json);
  if (json) {
    auto toJson = [](const std::vector<VerifyProblem> &list) {
      nlohmann::json out = nlohmann::json::array();
      for (const VerifyProblem &p : list)
        out.push_back({{"package", p.package},
                       {"path", p.path},
                       {"kind", p.kind},
                       {"detail", p.detail}});
      return out;
    };
    std::printf("%s\n", nlohmann::json({{"ok", report->problems.empty()},
                                        {"prefix", prefix->path},
                                        {"packages", report->checkedPackages},
                                        {"files", report->checkedFiles},
                                        {"problems", toJson(report->problems)},
                                        {"outdated", toJson(report->outdated)}})
                            .dump(2)
                            .c_str());
  } else {
    // Problems, then state files another ireepkg wrote (not problems).
    for (const auto *list : {&report->problems, &report->outdated})
      for (const VerifyProblem &p : *list)
        std::printf("%s: %s%s%s: %s\n", p.kind.c_str(),
                    p.package.empty() ? "" : p.package.c_str(),
                    p.package.empty() || p.path.empty() ? "" : "/",
                    p.path.c_str(), p.detail.c_str());
    printSummary("verified %zu package(s), %llu file(s): %s\n",
                 report->checkedPackages.size(),
                 static_cast<unsigned long long>(report->checkedFiles),
                 report->problems.empty()
                     ? "ok"
                     : (std::to_string(report->problems.size()) + " problem(s)")
                           .c_str());
  }
  return report->problems.empty() ? kExitOk : kExitFailure;
}

const Command &verifyCommand() {
  static const Command command{
      .name = "verify",
      .synopsis = "[<name>...] [--prefix DIR] [--json]",
      .summary = "re-hash installed files and check the prefix's state",
      .description =
          "Re-hashes every installed file against its package's RECORD and "
          "checks the prefix's state files; reports every modified, missing "
          "or extra file. Exit status 1 if anything is off. A state file an "
          "older ireepkg wrote differently is listed as outdated, which is "
          "not a failure: the next change to the prefix rewrites it.",
      .options = {kPrefix, kJson},
      .examples = {"ireepkg verify", "ireepkg verify simple-mul --json"},
      .run = runVerify,
  };
  return command;
}

} // namespace ireepkg::cli
