//===- cli/host/interrupt.cpp - Ctrl-C during a command -------------------===//
#include "host/interrupt.h"

#include <csignal>
#include <cstdio>

namespace ireepkg::cli {

namespace {

volatile std::sig_atomic_t gInterrupted = 0;

void onInterrupt(int sig) {
  if (gInterrupted) {
    // The second Ctrl-C: the person means it.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  gInterrupted = 1;
}

} // namespace

void catchInterrupts() {
  struct sigaction sa {}, old{};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &old);
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
    ::sigaction(SIGINT, &old, nullptr); // nohup: stays ignored
}

bool interruptRequested() { return gInterrupted != 0; }

int reportInterrupted(const std::string &prefix) {
  std::fprintf(stderr, "ireepkg: interrupted: nothing was changed in %s\n",
               prefix.c_str());
  return kExitInterrupted;
}

} // namespace ireepkg::cli
