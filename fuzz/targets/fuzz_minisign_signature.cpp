//===- fuzz_minisign_signature.cpp - Fuzzes .minisig files ===//
//
// The bytes as a signature file (parseSignature); one that parses is
// verified against a fixed key and data (it must fail, quietly), and
// written back and read again.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package/signature.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const signing::KeyPair pair = signing::generateKeyPair();
  auto sig = signing::parseSignature(fuzz::bytes(data, size), "fuzz.minisig");
  if (!sig)
    return 0;
  (void)signing::verifyBuffer(pair.publicKey, "data", *sig, "data",
                              "fuzz.minisig");
  signing::VerifyOptions prehashedOnly;
  prehashedOnly.requirePrehashed = true;
  (void)signing::verifyBuffer(pair.publicKey, "data", *sig, "data",
                              "fuzz.minisig", prehashedOnly);
  std::string text = signing::serializeSignature(*sig);
  auto again = signing::parseSignature(text, "fuzz.minisig (rewritten)");
  if (!again)
    fuzz::invariantFailed("a serialized signature does not parse",
                          again.error().message);
  return 0;
}
