//===- fuzz_common.h - Helpers shared by the fuzz targets -------*- C++ -*-===//
//
// Most targets hand the fuzzer's bytes straight to a parser. The readers
// that only take a path (archives, bundles, native libraries, the runtime
// index) get the bytes in a file under one scratch directory per process,
// made on first use and removed at exit: in $TMPDIR when it is set, else in
// /dev/shm when there is one (a tmpfs: the fsync calls of the code under
// test return at once, where on a disk each one waits for the device and
// the bundle target spends most of its time waiting), else in /tmp.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_FUZZ_COMMON_H
#define IREEPKG_FUZZ_COMMON_H

#include "ireepkg/base/environment.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <unistd.h>

namespace ireepkg::fuzz {

inline std::string_view bytes(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// This process's scratch directory (removed at exit).
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    const char *tmp = ireepkg::environmentOverride("TMPDIR");
    std::error_code ec;
    std::string base = tmp && *tmp ? tmp
                       : std::filesystem::is_directory("/dev/shm", ec) &&
                               ::access("/dev/shm", W_OK | X_OK) == 0
                           ? "/dev/shm"
                           : "/tmp";
    std::string templ = base + "/ireepkg-fuzz-XXXXXX";
    if (!::mkdtemp(templ.data())) {
      std::perror("ireepkg fuzz: mkdtemp");
      std::abort();
    }
    static std::string removeAtExit = templ;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(removeAtExit, ec);
    });
    return templ;
  }();
  return dir;
}

/// Writes `content` to <scratch>/<name> and returns the path.
inline std::string writeScratchFile(const std::string &name,
                                    std::string_view content) {
  std::string path = scratchDir() + "/" + name;
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror("ireepkg fuzz: fopen");
    std::abort();
  }
  if (!content.empty() &&
      std::fwrite(content.data(), 1, content.size(), f) != content.size()) {
    std::perror("ireepkg fuzz: fwrite");
    std::abort();
  }
  std::fclose(f);
  return path;
}

/// Removes <scratch>/<name> (a file or a tree), if present.
inline void removeScratch(const std::string &name) {
  std::error_code ec;
  std::filesystem::remove_all(scratchDir() + "/" + name, ec);
}

/// Aborts with a message: an invariant the library documents does not hold.
[[noreturn]] inline void invariantFailed(const char *what,
                                         std::string_view detail) {
  std::fprintf(stderr, "ireepkg fuzz: invariant failed: %s: %.*s\n", what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

} // namespace ireepkg::fuzz

#endif
