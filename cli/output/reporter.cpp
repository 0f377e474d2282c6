//===- cli/output/reporter.cpp - CliReporter: what the libraries report ---===//
//
// Its messages; its progress lines and summary are in progress.cpp.
//
//===----------------------------------------------------------------------===//
#include "output/reporter.h"

#include "args/global_options.h"
#include "output/color.h"
#include "output/hints.h"
#include "output/messages.h"

#include <cstdio>
#include <unistd.h>

namespace ireepkg::cli {

CliReporter::CliReporter(bool quiet)
    : quiet_(quiet || globalOptions().quiet),
      tty_(::isatty(STDERR_FILENO) == 1), board_(stderr, STDERR_FILENO) {
  state_.commandStart = monotonicSeconds();
}

void CliReporter::detail(int level, const std::string &message) {
  if (globalOptions().quiet || globalOptions().verbose < level)
    return;
  clearProgress();
  verboseLine(level, message);
}

CliReporter::~CliReporter() { clearProgress(); }

void CliReporter::waitingForLock(const std::string &prefix,
                                 const std::string &holder) {
  clearProgress();
  std::fprintf(stderr, "ireepkg: waiting for %s to finish with prefix %s ...\n",
               holder.c_str(), prefix.c_str());
}

void CliReporter::recovered(const std::string &prefix,
                            const std::string &what) {
  clearProgress();
  std::fprintf(stderr, "ireepkg: %s %s in %s\n",
               paint(Style::Note, "note:", OutStream::Err).c_str(),
               what.c_str(), prefix.c_str());
}

void CliReporter::warning(const Diagnostic &d) {
  if (quiet_)
    return;
  clearProgress();
  std::string text = d.format();
  const std::string w = "warning: ";
  if (size_t pos = text.find(w); pos != std::string::npos)
    text.erase(pos, w.size());
  std::fprintf(stderr, "ireepkg: %s %s\n",
               paint(Style::Warning, "warning:", OutStream::Err).c_str(),
               text.c_str());
  if (!d.hint.empty())
    std::fprintf(stderr, "%s %s\n", hintLabel().c_str(),
                 fitHint(d.hint).c_str());
}

} // namespace ireepkg::cli
