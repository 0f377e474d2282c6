//===- ireepkg/base/environment.h - Environment overrides -------*- C++ -*-===//
//
// Every environment variable ireepkg's C++ code reads goes through here
// (libireepkg_runtime, the C library, applies the same rule itself: see
// below). A process
// that runs with privileges its caller does not have (a set-user-ID or
// set-group-ID copy of ireepkg, or one with file capabilities) ignores
// every environment override, as the Vulkan loader does: otherwise the
// caller could point it at a library to load (IREEPKG_HTTP_MODULE), a
// prefix to write, or a tool to run.
//
// The ireepkg command and its helper programs go further: they refuse to
// run at all with such privileges (privilegedRunRefusal), since installing
// a package, checking it or running a tool under `exec` runs code the
// caller chose. Only libireepkg_runtime, which set-user-ID applications may
// link, runs privileged; it then ignores every override too (runtime.c's
// trusted_getenv, a C copy of this rule, since it links nothing of ireepkg).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_ENVIRONMENT_H
#define IREEPKG_BASE_ENVIRONMENT_H

#include <optional>
#include <string>

namespace ireepkg {

/// True when the process runs with privileges its caller does not have:
/// effective and real user or group ids differ, or the kernel marked the
/// exec as secure (AT_SECURE: set-id bits or file capabilities).
bool runningPrivileged();

/// Why a tool may not run: empty when the process runs with the
/// privileges of the user who started it; otherwise one sentence naming
/// the ids that differ (or the secure-exec mark), to be printed as
/// `<tool>: error: <sentence>` with privilegedRunHint() before the tool
/// does anything else.
std::string privilegedRunRefusal();

/// What to do about a privileged run, for the hint line.
std::string privilegedRunHint();

/// For the helper programs: `<tool>: error: <refusal>\n  hint: <hint>\n`,
/// or empty when the run is not privileged. The tool's main prints it and
/// exits with status 1.
std::string privilegedRunReport(const char *tool);

/// The value of environment variable `name`, or nullptr when it is unset,
/// or when the process runs privileged (then every override is ignored).
/// Every variable is an override (IREEPKG_*, HOME, PATH, TMPDIR, the
/// container tools' REGISTRY_AUTH_FILE, ...) unless it is one of the few
/// that terminalDescription reads.
const char *environmentOverride(const char *name);

/// The value of a variable that only describes the terminal the output goes
/// to (TERM, COLUMNS, LINES), or nullptr when it is unset. Read even in a
/// privileged run: it changes how output looks (colours, line width), never
/// what ireepkg reads, loads, runs or writes. Any other name is read as
/// environmentOverride reads it.
const char *terminalDescription(const char *name);

/// Seconds from environment variable `name` (through environmentOverride):
/// `fallback` when it is unset or empty, or when it is not a number of
/// seconds (more than 0, at most a day); then `invalid` is its text, for
/// the caller's warning (else it is left as it was).
double environmentSeconds(const char *name, double fallback,
                          std::string &invalid);

/// The invoking user's home directory: $HOME, or, when privileged or unset,
/// the real user's entry in the password database.
std::optional<std::string> homeDirectory();

} // namespace ireepkg

#endif // IREEPKG_BASE_ENVIRONMENT_H
