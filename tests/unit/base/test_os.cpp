//===- test_os.cpp - The operating-system seam ----------------------------===//
//
// ireepkg/base/os.h: the program's own path, dynamic libraries, read-only
// mappings and the exclusive file lock the prefix and the registry cache
// take (another process sees it held, and by whom).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/os.h"

#include "temp_dir.h"

#include <doctest/doctest.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ireepkg;
using ireepkg::test::TempDir;
using ireepkg::test::writeText;

TEST_CASE("os::executablePath names the running test program") {
  std::string self = os::executablePath();
  CHECK(self.starts_with("/"));
  CHECK(self.ends_with("/ireepkg_unit_tests"));
}

TEST_CASE("os: open a library, find a symbol, close it") {
  std::string why;
  CHECK(os::openLibrary("/nonexistent/libnothing.so", {}, &why) == nullptr);
  CHECK(why.find("/nonexistent/libnothing.so") != std::string::npos);

  // libc is in the process already: onlyIfLoaded finds it.
  void *libc = os::openLibrary("libc.so.6", {.onlyIfLoaded = true}, &why);
  REQUIRE(libc != nullptr);
  void *getpidAddress = os::librarySymbol(libc, "getpid");
  CHECK(getpidAddress == reinterpret_cast<void *>(&::getpid));
  CHECK(os::librarySymbol(libc, "ireepkg_no_such_symbol", &why) == nullptr);
  CHECK(why.find("ireepkg_no_such_symbol") != std::string::npos);
  CHECK(os::libraryContaining(getpidAddress).find("libc.so") !=
        std::string::npos);
  CHECK(os::closeLibrary(libc));
}

TEST_CASE("os::mapReadOnly maps a file's bytes") {
  TempDir dir;
  writeText(dir / "f", "mapped bytes\n");
  int fd = ::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::shared_ptr<const char> map = os::mapReadOnly(fd, 13);
  ::close(fd); // the mapping outlives the descriptor
  REQUIRE(map != nullptr);
  CHECK(std::string_view(map.get(), 13) == "mapped bytes\n");

  errno = 0;
  CHECK(os::mapReadOnly(-1, 13) == nullptr);
  CHECK(errno == EBADF);
}

TEST_CASE("os::lockFile: held here, another process is told who holds it") {
  TempDir dir;
  const std::string path = dir / "lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  CHECK(os::lockFile(fd, /*wait=*/false) == 0);
  const pid_t self = ::getpid();
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int other = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    pid_t holder = 0;
    int rc = os::lockFile(other, /*wait=*/false, &holder);
    ::_exit(rc == EAGAIN && holder == self ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  ::close(fd);
}
