//===- fuzz_minisign_key.cpp - Fuzzes minisign key files ===//
//
// The bytes as a public key (a .pub file or its base64 line) and as a
// secret key file (parsePublicKey, parseSecretKeyFile). An unencrypted
// secret key is also unlocked (checksum and key pair checks); encrypted
// ones are not, as scrypt with the file's own limits could take seconds.
//
//===----------------------------------------------------------------------===//
#include "fuzz_common.h"

#include "ireepkg/pkg/package/signature.h"

using namespace ireepkg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  if (auto pub = signing::parsePublicKey(text, "fuzz.pub")) {
    auto again = signing::parsePublicKey(signing::serializePublicKey(*pub));
    if (!again || !(*again == *pub))
      fuzz::invariantFailed("a serialized public key reads differently",
                            signing::publicKeyBase64(*pub));
  }
  if (auto file = signing::parseSecretKeyFile(text, "fuzz.key"))
    if (!file->encrypted)
      (void)signing::unlockSecretKey(*file, std::nullopt);
  return 0;
}
