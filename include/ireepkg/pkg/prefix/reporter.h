//===- ireepkg/pkg/prefix/reporter.h - What long operations tell *- C++ -*-===//
//
// The Reporter a long operation (install, sync, fetching from registries)
// tells what a person should hear: lock waits, recovery, warnings,
// progress, details for --verbose; and whether the person asked it to stop.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_REPORTER_H
#define IREEPKG_PKG_REPORTER_H

#include "ireepkg/base/error.h"

#include <cstdint>
#include <string>

namespace ireepkg {

/// Receives what long operations want to tell a person. The CLI prints;
/// tests record. Every method has a do-nothing default.
class Reporter {
public:
  virtual ~Reporter();
  /// Another process holds the prefix lock; called once before waiting.
  virtual void waitingForLock(const std::string &prefix,
                              const std::string &holder);
  /// A journal from an interrupted command was completed or rolled back.
  virtual void recovered(const std::string &prefix, const std::string &what);
  virtual void warning(const Diagnostic &diagnostic);
  /// Bytes extracted so far of the current archive; for "downloading",
  /// bytes downloaded so far of every download under way together.
  virtual void progress(const std::string &label, uint64_t done,
                        uint64_t total);
  /// One download of several under way at once, named by `label`
  /// ("simple-mul 1.2.0"); called with done == total once it is complete.
  virtual void itemProgress(const std::string &label, uint64_t done,
                            uint64_t total);
  /// True once the person asked the command to stop (Ctrl-C). Long
  /// operations ask between steps and, before they change anything for
  /// good, give up with ErrorCode::Interrupted (see interruptedError).
  virtual bool interrupted();
  /// What is being done, for `--verbose`: where a registry's files come
  /// from, cache hits, downloads. `level` 1 is shown with -v, 2 with -vv.
  virtual void detail(int level, const std::string &message);
};

/// The error of an operation given up because `reporter.interrupted()`:
/// ErrorCode::Interrupted, "interrupted while <what>".
Error interruptedError(const std::string &what);

} // namespace ireepkg

#endif // IREEPKG_PKG_REPORTER_H
