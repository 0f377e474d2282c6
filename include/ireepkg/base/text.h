//===- ireepkg/base/text.h - Small text helpers -----*- C++ -*-===//
//
// The few string helpers every layer needs, written once. Header-only and
// C++17, so that the tools built apart from the libraries
// (ireepkg-mlir-check) use the same ones.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_TEXT_H
#define IREEPKG_BASE_TEXT_H

#include <csignal>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

/// ASCII white space: space, tab, line feed, carriage return, vertical tab,
/// form feed.
inline constexpr std::string_view kWhitespace = " \t\n\r\v\f";

/// `text` without the characters of `chars` at either end.
inline std::string_view trim(std::string_view text,
                             std::string_view chars = kWhitespace) {
  size_t b = text.find_first_not_of(chars);
  if (b == std::string_view::npos)
    return {};
  size_t e = text.find_last_not_of(chars);
  return text.substr(b, e - b + 1);
}

/// `trim` as a std::string, for callers that keep the result.
inline std::string trimmed(std::string_view text,
                           std::string_view chars = kWhitespace) {
  return std::string(trim(text, chars));
}

/// Whether `text` begins with `prefix` (std::string_view::starts_with for
/// the tools built as C++17).
inline bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// Whether `text` ends with `suffix`.
inline bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

/// `text` with ASCII letters in lower case; other bytes as they are.
inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char &c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// The lines of `text`, split at '\n' as std::getline reads them: a final
/// '\n' ends the last line rather than starting an empty one, and '\r' is
/// kept. The views point into `text`.
inline std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos)
      nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

/// "SIGSEGV", or "signal 42" for one without a well-known name.
inline std::string signalName(int sig) {
  switch (sig) {
  case SIGHUP: return "SIGHUP";
  case SIGINT: return "SIGINT";
  case SIGQUIT: return "SIGQUIT";
  case SIGILL: return "SIGILL";
  case SIGTRAP: return "SIGTRAP";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGKILL: return "SIGKILL";
  case SIGUSR1: return "SIGUSR1";
  case SIGSEGV: return "SIGSEGV";
  case SIGUSR2: return "SIGUSR2";
  case SIGPIPE: return "SIGPIPE";
  case SIGALRM: return "SIGALRM";
  case SIGTERM: return "SIGTERM";
  case SIGXCPU: return "SIGXCPU";
  case SIGXFSZ: return "SIGXFSZ";
  case SIGSYS: return "SIGSYS";
  default: return "signal " + std::to_string(sig);
  }
}

} // namespace ireepkg

#endif // IREEPKG_BASE_TEXT_H
