//===- cmd_verify.cpp - `ireepkg verify` ---------------------------------===//
#include "output.h"

#include "ireepkg/pkg/prefix/install.h"

#include <cstdio>

namespace ireepkg::cli {

int printFailure(const Error &e, bool json);

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

} // namespace ireepkg::cli
