//===- cli/host/memory.cpp - How the tool's heap is backed ----------------===//
#include "host/memory.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace ireepkg::cli {

namespace {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

/// Address space the heap reserves ahead of use: only pages touched are
/// ever backed, so this costs nothing but keeps the commands' whole
/// working set inside the region given huge pages.
constexpr size_t kReserve = size_t(64) << 20;
constexpr uintptr_t kHugePage = uintptr_t(2) << 20;
} // namespace

void preferHugePagesForHeap() {
  if (!kGlibcHeap)
    return;
  // Grow the main heap (brk) by the reservation at its next extension,
  // and force that extension now with a block too big for what is left
  // and too small to be mapped on its own.
  if (mallopt(M_TOP_PAD, static_cast<int>(kReserve)) != 1)
    return;
  void *probe = std::malloc(64 << 10);
  if (!probe)
    return;
  auto from = reinterpret_cast<uintptr_t>(probe);
  auto to = reinterpret_cast<uintptr_t>(::sbrk(0));
  from = (from + kHugePage - 1) & ~(kHugePage - 1);
  to &= ~(kHugePage - 1);
  // Only the heap just grown: the block must lie below the break.
  if (to > from && to - from <= 2 * kReserve)
    (void)::madvise(reinterpret_cast<void *>(from), to - from, MADV_HUGEPAGE);
  std::free(probe);
}

} // namespace ireepkg::cli
