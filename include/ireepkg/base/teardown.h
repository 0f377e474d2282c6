//===- ireepkg/base/teardown.h - Skipping frees at exit --*- C++ -*-===//
//
// A command that is about to exit need not free what it built: the kernel
// reclaims the whole address space at once. Freeing the solver's and the
// registry clients' many small allocations one by one costs about a tenth
// of a warm `ireepkg lock` (the way compilers skip freeing their syntax
// trees at exit). The command-line tool turns this on; libraries hand the
// large structures they are done with to discard(), which frees them as
// usual unless it is on.
//
// Discarded objects stay reachable from a process-wide list, so leak
// checkers do not report them.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_TEARDOWN_H
#define IREEPKG_BASE_TEARDOWN_H

#include <memory>

namespace ireepkg {

/// On: discard() keeps objects until the process exits. Off by default.
void setSkipFreesAtExit(bool skip);
bool skipFreesAtExit();

namespace detail {
/// Keeps `object` reachable until exit; `destroy` is never called.
void keepUntilExit(void *object);
} // namespace detail

/// Frees `object` now, or, when skipFreesAtExit(), never.
template <typename T> void discard(std::unique_ptr<T> object) {
  if (object && skipFreesAtExit())
    detail::keepUntilExit(object.release());
}

} // namespace ireepkg

#endif // IREEPKG_BASE_TEARDOWN_H
