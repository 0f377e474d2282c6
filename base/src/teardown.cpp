//===- base/src/teardown.cpp - Skipping frees at exit --------------===//
#include "ireepkg/base/teardown.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace ireepkg {

namespace {
std::atomic<bool> skipping{false};
std::mutex keptMutex;
/// Never destroyed, so what it holds stays reachable through exit.
std::vector<void *> *kept = nullptr;
} // namespace

void setSkipFreesAtExit(bool skip) { skipping = skip; }
bool skipFreesAtExit() { return skipping; }

void detail::keepUntilExit(void *object) {
  std::lock_guard<std::mutex> lock(keptMutex);
  if (!kept)
    kept = new std::vector<void *>();
  kept->push_back(object);
}

} // namespace ireepkg
