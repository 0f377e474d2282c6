//===- base/src/partial_files.cpp - Partial files and signals ------===//
#include "ireepkg/base/partial_files.h"

#include <atomic>
#include <climits>
#include <csignal>
#include <cstring>
#include <mutex>
#include <unistd.h>

namespace ireepkg {

namespace {

constexpr int kSlots = 64;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

struct Slot {
  std::atomic<int> state{0}; ///< 0 free, 1 being filled, 2 registered
  char path[PATH_MAX] = {};
};
// Initialized as the program is loaded, like any zeroed data: no code at
// startup that would write (and so fault in) its 256 KiB in every command.
constinit Slot gSlots[kSlots];
struct sigaction gPrevious[3];
std::once_flag gInstalled;

void onSignal(int sig) {
  int saved = errno;
  for (Slot &s : gSlots)
    if (s.state.load() == 2)
      ::unlink(s.path);
  errno = saved;
  for (size_t i = 0; i < 3; ++i) {
    if (kSignals[i] != sig)
      continue;
    const struct sigaction &prev = gPrevious[i];
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL &&
        prev.sa_handler != SIG_IGN) {
      prev.sa_handler(sig);
      return;
    }
    if (prev.sa_handler == SIG_IGN && !(prev.sa_flags & SA_SIGINFO))
      return;
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

void installHandlers() {
  for (size_t i = 0; i < 3; ++i) {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(kSignals[i], &sa, &gPrevious[i]);
    // A signal the process ignores (nohup) stays ignored.
    if (gPrevious[i].sa_handler == SIG_IGN &&
        !(gPrevious[i].sa_flags & SA_SIGINFO))
      ::sigaction(kSignals[i], &gPrevious[i], nullptr);
  }
}

} // namespace

PartialFileGuard::PartialFileGuard(const std::string &path) {
  if (path.size() >= PATH_MAX)
    return;
  std::call_once(gInstalled, installHandlers);
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (gSlots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(gSlots[i].path, path.c_str(), path.size() + 1);
      gSlots[i].state.store(2);
      slot_ = i;
      return;
    }
  }
}

void PartialFileGuard::release() {
  if (slot_ >= 0)
    gSlots[slot_].state.store(0);
  slot_ = -1;
}

PartialFileGuard::~PartialFileGuard() { release(); }

PartialFileGuard::PartialFileGuard(PartialFileGuard &&other) noexcept
    : slot_(other.slot_) {
  other.slot_ = -1;
}

PartialFileGuard &
PartialFileGuard::operator=(PartialFileGuard &&other) noexcept {
  if (this != &other) {
    release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

} // namespace ireepkg
