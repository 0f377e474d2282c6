//===- fuzz_record.cpp - Fuzzes .ireepkg/RECORD.json ===//
//
// The bytes as a package's RECORD.json (parseRecord); a record that reads
// must write again and read back to the same files.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package/package.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto record = parseRecord(fuzz::bytes(data, size), "RECORD.json");
  if (!record)
    return 0;
  (void)record->totalSize();
  std::string again = serializeRecord(*record);
  auto reread = parseRecord(again, "RECORD.json (rewritten)");
  if (!reread)
    fuzz::invariantFailed("a serialized record does not parse",
                          reread.error().message);
  if (reread->files.size() != record->files.size())
    fuzz::invariantFailed("a serialized record lost files", again);
  return 0;
}
