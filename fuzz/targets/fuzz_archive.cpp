//===- fuzz_archive.cpp - Fuzzes package archives ===//
//
// The bytes as a .ireepkg file (zstd-compressed tar): readArchiveHead reads
// and checks its ireeplugin.json and RECORD.json (what `info` and every
// install start with), and extractArchive unpacks it under every member
// rule, with small limits so that no input can fill the disk.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package/package.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path =
      fuzz::writeScratchFile("fuzz.ireepkg", fuzz::bytes(data, size));
  if (!readArchiveHead(path))
    return 0;
  ArchiveLimits limits;
  limits.maxUnpackedBytes = 1 << 20;
  limits.maxMembers = 64;
  fuzz::removeScratch("extracted");
  (void)extractArchive(path, fuzz::scratchDir() + "/extracted", limits);
  fuzz::removeScratch("extracted");
  return 0;
}
