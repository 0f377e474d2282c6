//===- test_programs.cpp - Programs beside this one, seconds --------------===//
//
// ireepkg/base/programs.h: the directory of the running executable and a
// file beside it; ireepkg/base/environment.h: environmentSeconds, the time
// limits that IREEPKG_MLIR_CHECK_TIMEOUT and IREEPKG_DOCTOR_TIMEOUT give.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/environment.h"
#include "ireepkg/base/os.h"
#include "ireepkg/base/programs.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

using namespace ireepkg;

namespace {

constexpr const char *kVar = "IREEPKG_TEST_SECONDS";

/// Sets kVar (unset for nullptr) and unsets it at the end of the scope.
struct Var {
  explicit Var(const char *value) {
    if (value)
      ::setenv(kVar, value, 1);
    else
      ::unsetenv(kVar);
  }
  ~Var() { ::unsetenv(kVar); }
};

} // namespace

TEST_CASE("executableDir is the directory of the running test program") {
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  CHECK(os::executablePath() == self.string());
  std::string expected = self.parent_path().string();
  CHECK(executableDir() == expected);
  CHECK(executableDir().back() != '/');
  CHECK(besideExecutable("ireepkg-inspect") == expected + "/ireepkg-inspect");
  CHECK(besideExecutable("../lib/x.so") == expected + "/../lib/x.so");
}

TEST_CASE("environmentSeconds: unset or empty gives the fallback silently") {
  for (const char *value : {static_cast<const char *>(nullptr), ""}) {
    Var v(value);
    std::string invalid = "untouched";
    CHECK(environmentSeconds(kVar, 30, invalid) == 30);
    CHECK(invalid == "untouched");
  }
}

TEST_CASE("environmentSeconds: a number of seconds is taken") {
  for (auto [text, seconds] :
       {std::pair{"2.5", 2.5}, std::pair{"86400", 86400.},
        std::pair{"1e1", 10.}, std::pair{" 7", 7.}}) {
    Var v(text);
    std::string invalid;
    CHECK(environmentSeconds(kVar, 30, invalid) == seconds);
    CHECK(invalid.empty());
  }
}

TEST_CASE("environmentSeconds: anything else gives the fallback and its text") {
  for (const char *text :
       {"abc", "5s", "0", "-1", "86401", "inf", "nan", "1e400", "3 "}) {
    Var v(text);
    std::string invalid;
    CHECK(environmentSeconds(kVar, 60, invalid) == 60);
    CHECK(invalid == text);
  }
}
