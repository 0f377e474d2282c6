//===- sanitize_canary.cpp - Proves the sanitizers are on -----------------===//
//
// `ireepkg_sanitize_canary address` overflows a heap buffer and
// `ireepkg_sanitize_canary undefined` overflows a signed integer. Built with
// the options of every other target of a sanitizer build, it must be
// stopped with a report (tests/sanitize.cmake): if it is not, the build
// does not instrument what the tests run.
//
//===----------------------------------------------------------------------===//
#include <climits>
#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "address") == 0) {
    char *p = new char[4];
    volatile int i = 4;
    p[i] = 1;
    int value = p[0];
    delete[] p;
    return value;
  }
  if (argc == 2 && std::strcmp(argv[1], "undefined") == 0) {
    volatile int big = INT_MAX;
    int sum = big + argc;
    std::printf("%d\n", sum);
    return 0;
  }
  std::fputs("usage: ireepkg_sanitize_canary address|undefined\n", stderr);
  return 2;
}
