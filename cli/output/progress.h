//===- cli/output/progress.h - Progress lines on a terminal -----*- C++ -*-===//
//
// What CliReporter shows while downloads and installs are under way: on a
// terminal, one line per download in flight, one for all downloads together
// (bytes, speed, ETA) and one for the package being installed, redrawn in
// place and never wider than the terminal; nothing while piped. When the
// command is done it prints a summary (`Installed 3 packages in 12ms`),
// piped or not.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_PROGRESS_H
#define IREEPKG_CLI_PROGRESS_H

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace ireepkg::cli {

/// The terminal's width in columns: TIOCGWINSZ on `fd`, else $COLUMNS,
/// else 80. Asked at every redraw, so a resized terminal is followed.
int terminalColumns(int fd);
/// Its height in rows (TIOCGWINSZ, else $LINES, else 24).
int terminalRows(int fd);

/// `text` cut to at most `columns` characters (UTF-8 code points), ending
/// in "…" when something was cut.
std::string fitToWidth(const std::string &text, size_t columns);

/// "12ms", "1.25s", "2m 05s".
std::string formatDuration(double seconds);

/// Lines redrawn in place at the bottom of a terminal: each draw moves the
/// cursor back to the first line drawn before, rewrites every line (erasing
/// what was there) and erases anything below.
class ProgressBoard {
public:
  ProgressBoard(std::FILE *out, int fd) : out_(out), fd_(fd) {}
  void draw(const std::vector<std::string> &lines);
  /// Erases every line; the cursor is left where the first one began.
  void clear();
  bool shown() const { return drawn_ > 0; }

private:
  std::FILE *out_;
  int fd_;
  int drawn_ = 0;
};

/// What is under way, for the progress lines and the summary.
struct ProgressState {
  struct Item {
    std::string label;
    uint64_t done = 0, total = 0;
  };
  double commandStart = 0;
  // All downloads together (start < 0: none under way).
  double downloadStart = -1;
  uint64_t downloadDone = 0, downloadTotal = 0;
  std::vector<Item> items; ///< downloads in flight, in order of starting
  std::optional<Item> step; ///< the package being installed
  double lastDraw = -1;
  // For the summary.
  size_t filesDownloaded = 0;
  uint64_t bytesDownloaded = 0;
  double downloadSeconds = 0;
  double lastDownloadEnd = -1;

  /// The lines to show now, at most `maxLines`.
  std::vector<std::string> lines(double now, size_t maxLines) const;
};

/// Monotonic seconds.
double monotonicSeconds();

} // namespace ireepkg::cli

#endif
