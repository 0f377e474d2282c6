//===- cli/output/progress.cpp - Progress lines on a terminal -------------===//
#include "output/progress.h"

#include "host/interrupt.h"
#include "output/output.h"

#include "ireepkg/base/environment.h"

#include "ireepkg/pkg/prefix/install.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

namespace ireepkg::cli {

namespace {

int fromEnv(const char *name, int fallback) {
  const char *v = terminalDescription(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  return *end || n <= 0 || n > 100000 ? fallback : static_cast<int>(n);
}

std::string bar(uint64_t done, uint64_t total, int width) {
  int filled =
      total ? static_cast<int>(std::min(done, total) * width / total) : width;
  std::string b(static_cast<size_t>(filled), '=');
  b.resize(static_cast<size_t>(width), ' ');
  return "[" + b + "]";
}

std::string clock(uint64_t s) {
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu",
                  static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60),
                  static_cast<unsigned long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%llu:%02llu",
                  static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  return buf;
}

std::string plural(size_t n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

} // namespace

double monotonicSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int terminalColumns(int fd) {
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return fromEnv("COLUMNS", 80);
}

int terminalRows(int fd) {
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
    return ws.ws_row;
  return fromEnv("LINES", 24);
}

std::string fitToWidth(const std::string &text, size_t columns) {
  // Byte offsets where each code point starts.
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
      starts.push_back(i);
  if (starts.size() <= columns)
    return text;
  if (columns == 0)
    return "";
  return text.substr(0, starts[columns - 1]) + "\xE2\x80\xA6"; // "…"
}

std::string formatDuration(double seconds) {
  char buf[32];
  if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.0fms",
                  std::max(1.0, seconds * 1000));
  else if (seconds < 60)
    std::snprintf(buf, sizeof buf, "%.2fs", seconds);
  else
    std::snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(seconds) / 60,
                  static_cast<int>(seconds) % 60);
  return buf;
}

void ProgressBoard::draw(const std::vector<std::string> &lines) {
  if (lines.empty())
    return clear();
  // One column short of the width: writing the last column leaves some
  // terminals about to wrap, and the next \r would then be on a new row.
  int columns = std::max(terminalColumns(fd_) - 1, 1);
  std::string s = "\r";
  if (drawn_ > 1)
    s += "\033[" + std::to_string(drawn_ - 1) + "A";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i)
      s += "\n\r";
    s += fitToWidth(lines[i], static_cast<size_t>(columns));
    s += "\033[K";
  }
  s += "\033[J";
  std::fputs(s.c_str(), out_);
  std::fflush(out_);
  drawn_ = static_cast<int>(lines.size());
}

void ProgressBoard::clear() {
  if (!drawn_)
    return;
  std::string s = "\r";
  if (drawn_ > 1)
    s += "\033[" + std::to_string(drawn_ - 1) + "A";
  s += "\033[J";
  std::fputs(s.c_str(), out_);
  std::fflush(out_);
  drawn_ = 0;
}

std::vector<std::string> ProgressState::lines(double now,
                                              size_t maxLines) const {
  std::vector<std::string> out;
  bool downloading = downloadStart >= 0;
  size_t reserved = (downloading ? 1 : 0) + (step ? 1 : 0);
  size_t room = maxLines > reserved ? maxLines - reserved : 0;
  size_t shownItems = items.size() <= room ? items.size()
                                           : (room > 0 ? room - 1 : 0);
  for (size_t i = 0; i < shownItems; ++i) {
    const Item &it = items[i];
    out.push_back("  " + it.label + " " + bar(it.done, it.total, 12) + " " +
                  formatBytes(it.done) + " / " + formatBytes(it.total));
  }
  if (shownItems < items.size() && room > 0)
    out.push_back("  ... and " + std::to_string(items.size() - shownItems) +
                  " more");
  if (downloading) {
    double elapsed = now - downloadStart;
    std::string rate = "--", eta = "--:--";
    if (elapsed >= 0.5 && downloadDone > 0) {
      double perSecond = static_cast<double>(downloadDone) / elapsed;
      rate = formatBytes(static_cast<uint64_t>(perSecond)) + "/s";
      eta = clock(static_cast<uint64_t>(
          static_cast<double>(downloadTotal > downloadDone
                                  ? downloadTotal - downloadDone
                                  : 0) /
          perSecond));
    }
    int pct = downloadTotal ? static_cast<int>(std::min(downloadDone,
                                                        downloadTotal) *
                                               100 / downloadTotal)
                            : 100;
    out.push_back("Downloading " + formatBytes(downloadDone) + " / " +
                  formatBytes(downloadTotal) + " " + std::to_string(pct) +
                  "% " + rate + " ETA " + eta);
  }
  if (step) {
    int pct = step->total ? static_cast<int>(std::min(step->done,
                                                      step->total) *
                                             100 / step->total)
                          : 100;
    out.push_back("Installing " + step->label + " " +
                  bar(step->done, step->total, 20) + " " +
                  std::to_string(pct) + "%");
  }
  if (out.size() > maxLines)
    out.resize(maxLines);
  return out;
}

//===----------------------------------------------------------------------===//
// CliReporter's progress
//===----------------------------------------------------------------------===//

void CliReporter::clearProgress() { board_.clear(); }

bool CliReporter::interrupted() { return interruptRequested(); }

void CliReporter::redraw(bool force) {
  if (quiet_ || !tty_)
    return;
  double now = monotonicSeconds();
  if (!force && board_.shown() && now - state_.lastDraw < 0.1)
    return;
  state_.lastDraw = now;
  int rows = terminalRows(STDERR_FILENO);
  size_t maxLines = static_cast<size_t>(std::clamp(rows - 2, 1, 10));
  board_.draw(state_.lines(now, maxLines));
}

void CliReporter::progress(const std::string &label, uint64_t done,
                           uint64_t total) {
  double now = monotonicSeconds();
  if (label == "downloading") {
    bool finished = done >= total;
    if (state_.downloadStart < 0) {
      if (finished)
        return; // nothing under way: nothing to finish
      state_.downloadStart = now;
    }
    state_.downloadDone = done;
    state_.downloadTotal = total;
    if (finished) {
      state_.downloadSeconds += now - state_.downloadStart;
      state_.lastDownloadEnd = now;
      state_.downloadStart = -1;
      state_.items.clear();
      redraw(true);
      return;
    }
    return redraw(done == 0);
  }
  bool finished = done >= total;
  if (finished) {
    bool was = state_.step.has_value();
    state_.step.reset();
    if (was)
      redraw(true);
    return;
  }
  bool fresh = !state_.step || state_.step->label != label;
  state_.step = ProgressState::Item{label, done, total};
  redraw(fresh);
}

void CliReporter::itemProgress(const std::string &label, uint64_t done,
                               uint64_t total) {
  auto it = std::find_if(state_.items.begin(), state_.items.end(),
                         [&](const auto &i) { return i.label == label; });
  if (done >= total) {
    ++state_.filesDownloaded;
    state_.bytesDownloaded += total;
    if (it != state_.items.end()) {
      state_.items.erase(it);
      redraw(true);
    }
    return;
  }
  if (it == state_.items.end()) {
    state_.items.push_back({label, done, total});
    return redraw(true);
  }
  it->done = done;
  it->total = total;
  redraw(false);
}

void CliReporter::printSummary(const InstallReport &report) {
  clearProgress();
  size_t installed = 0, removed = 0;
  for (const InstallReport::Change &c : report.changes)
    ++(c.to.empty() ? removed : installed);
  if (quiet_)
    return;
  double now = monotonicSeconds();
  if (state_.filesDownloaded > 0)
    std::fprintf(stderr, "Downloaded %s (%s) in %s\n",
                 plural(state_.filesDownloaded, "package").c_str(),
                 formatBytes(state_.bytesDownloaded).c_str(),
                 formatDuration(state_.downloadSeconds).c_str());
  double since = state_.lastDownloadEnd >= 0 ? state_.lastDownloadEnd
                                             : state_.commandStart;
  std::string took = formatDuration(now - since);
  if (installed && removed)
    std::fprintf(stderr, "Installed %s and removed %zu in %s\n",
                 plural(installed, "package").c_str(), removed, took.c_str());
  else if (installed)
    std::fprintf(stderr, "Installed %s in %s\n",
                 plural(installed, "package").c_str(), took.c_str());
  else if (removed)
    std::fprintf(stderr, "Removed %s in %s\n",
                 plural(removed, "package").c_str(), took.c_str());
}

} // namespace ireepkg::cli
