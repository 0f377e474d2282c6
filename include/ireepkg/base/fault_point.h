//===- ireepkg/base/fault_point.h - Where tests stop or kill -------===//
//
// Named points where a test can kill the process (IREEPKG_FAULT=<point>)
// or stop it (IREEPKG_FAULT=<point>:stop, until SIGCONT), to check what an
// interruption there leaves behind. Nothing happens unless the variable
// names the point.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_FAULT_POINT_H
#define IREEPKG_BASE_FAULT_POINT_H

namespace ireepkg {

/// Kills or stops the process if IREEPKG_FAULT names `point` (tests only).
void faultPoint(const char *point);

} // namespace ireepkg

#endif
