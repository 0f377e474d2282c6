//===- cli/host/memory.h - How the tool's heap is backed --------*- C++ -*-===//
#ifndef IREEPKG_CLI_MEMORY_H
#define IREEPKG_CLI_MEMORY_H

namespace ireepkg::cli {

/// Asks the kernel to back the heap with transparent huge pages where it
/// allows them on request (THP "madvise" mode, Debian's default). A warm
/// `ireepkg lock` of 980 packages builds about 40 MB of small objects:
/// with 4 KiB pages a fifth of its time went to page faults (~7,900), with
/// 2 MiB pages to ~1,600. glibc does the same when started with
/// GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which a program cannot set for
/// itself. Does nothing where the heap is not glibc's (sanitizers).
void preferHugePagesForHeap();

} // namespace ireepkg::cli

#endif // IREEPKG_CLI_MEMORY_H
