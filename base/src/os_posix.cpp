//===- base/src/os_posix.cpp ----------------------------------------------===//
//
// The operating-system seam on Linux and POSIX.
//
// ireepkg/base/os.h. The only place of the libraries that calls dlopen,
// mmap or fcntl's record locks.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/os.h"

#include <cerrno>
#include <climits>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace ireepkg::os {

namespace {

/// The loader's last error, into `why` when asked for.
void loaderError(std::string *why) {
  const char *e = ::dlerror();
  if (why)
    *why = e ? e : "";
}

} // namespace

std::string executablePath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return {};
  return std::string(buf, static_cast<size_t>(n));
}

void *openLibrary(const std::string &path, LibraryOptions options,
                  std::string *why) {
  int flags = RTLD_NOW | RTLD_LOCAL;
  if (options.keepLoaded)
    flags |= RTLD_NODELETE;
  if (options.onlyIfLoaded)
    flags |= RTLD_NOLOAD;
  ::dlerror();
  void *library = ::dlopen(path.c_str(), flags);
  if (!library)
    loaderError(why);
  return library;
}

void *librarySymbol(void *library, const char *name, std::string *why) {
  ::dlerror();
  void *symbol = ::dlsym(library, name);
  if (!symbol)
    loaderError(why);
  return symbol;
}

std::string libraryContaining(const void *address) {
  Dl_info info{};
  if (::dladdr(address, &info) && info.dli_fname)
    return info.dli_fname;
  return {};
}

bool closeLibrary(void *library, std::string *why) {
  ::dlerror();
  if (::dlclose(library) == 0)
    return true;
  loaderError(why);
  return false;
}

std::shared_ptr<const char> mapReadOnly(int fd, size_t size) {
  void *at =
      ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (at == MAP_FAILED)
    return nullptr;
  return std::shared_ptr<const char>(
      static_cast<const char *>(at),
      [size](const char *p) { ::munmap(const_cast<char *>(p), size); });
}

int lockFile(int fd, bool wait, pid_t *holder) {
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl) == 0)
    return 0;
  int e = errno;
  if (e == EACCES)
    e = EAGAIN;
  if (e == EAGAIN && holder) {
    struct flock probe = {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    *holder = ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK
                  ? probe.l_pid
                  : 0;
  }
  return e;
}

} // namespace ireepkg::os
