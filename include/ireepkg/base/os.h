//===- ireepkg/base/os.h - The operating-system seam ------------*- C++ -*-===//
//
// What differs between operating systems, behind one small interface, so
// that a port of the CLI to Windows or macOS has one place to go: dynamic
// libraries, file mappings, file locks and the running program's own path.
// base/src/os_posix.cpp implements it for Linux (and mostly POSIX); the
// modules above call these instead of dlopen, mmap or fcntl locks.
//
// Files and processes have their one place already, in this module:
// file_util.h (fsutil: reading, writing atomically, directories) and
// child_process.h (spawning, pipes, time limits). They are written against
// POSIX; a port replaces their implementation files, not their callers.
//
// Left outside on purpose, each saying why where it is: the C runtime
// library (runtime_integration/src/runtime.c, C and standalone, with its
// own os_* layer), and the helper programs that must load a library exactly
// as IREE's loaders do (pkg/probe) or as MLIR's tools do (the MLIR check,
// through llvm::sys::DynamicLibrary).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_BASE_OS_H
#define IREEPKG_BASE_OS_H

#include <cstddef>
#include <memory>
#include <string>

#include <sys/types.h>

namespace ireepkg::os {

//===----------------------------------------------------------------------===//
// The running program
//===----------------------------------------------------------------------===//

/// The path of the running program's executable (Linux: /proc/self/exe),
/// or "" when it cannot be told.
std::string executablePath();

//===----------------------------------------------------------------------===//
// Dynamic libraries
//===----------------------------------------------------------------------===//

/// How openLibrary opens. Always: every symbol bound at once, none made
/// visible to libraries loaded later (RTLD_NOW | RTLD_LOCAL).
struct LibraryOptions {
  /// Never unloaded, even when closed (RTLD_NODELETE).
  bool keepLoaded = false;
  /// Only when the library is in the process already; nothing is loaded
  /// (RTLD_NOLOAD).
  bool onlyIfLoaded = false;
};

/// Opens the library at `path`; nullptr when it cannot, with the loader's
/// reason in `why` (empty when it gave none).
void *openLibrary(const std::string &path, LibraryOptions options = {},
                  std::string *why = nullptr);

/// The address of `name` in `library`; nullptr when it has no such symbol,
/// with the loader's reason in `why` (empty when it gave none).
void *librarySymbol(void *library, const char *name,
                    std::string *why = nullptr);

/// The path of the loaded library (or program) that holds `address`, or ""
/// when the loader cannot tell.
std::string libraryContaining(const void *address);

/// Drops a reference openLibrary returned; false when the loader failed,
/// with its reason in `why`.
bool closeLibrary(void *library, std::string *why = nullptr);

//===----------------------------------------------------------------------===//
// File mappings
//===----------------------------------------------------------------------===//

/// The first `size` (> 0) bytes of the open file `fd`, mapped read-only and
/// private, pages read in at once; unmapped when the last copy of the
/// pointer goes. nullptr with errno set when the file cannot be mapped.
std::shared_ptr<const char> mapReadOnly(int fd, size_t size);

//===----------------------------------------------------------------------===//
// File locks
//===----------------------------------------------------------------------===//

/// Takes the exclusive lock on the whole open file `fd` (a POSIX record
/// lock: released when the process closes any descriptor of the file or
/// exits). With `wait`, waits for it. Returns 0; EAGAIN when another
/// process holds it (and `wait` is false), setting `*holder` to its pid when
/// the system tells (else 0); EINTR when a signal interrupted the wait; or
/// another errno.
int lockFile(int fd, bool wait, pid_t *holder = nullptr);

} // namespace ireepkg::os

#endif // IREEPKG_BASE_OS_H
