//===- cmd_signature.cpp - key generate, sign, signature verify (in progress)
#include "command.h"
namespace ireepkg::cli {
int runKeyGenerate(const Command &, const ParsedArgs &) { printError("'key generate' is being written"); return kExitFailure; }
int runSign(const Command &, const ParsedArgs &) { printError("'sign' is being written"); return kExitFailure; }
int runSignatureVerify(const Command &, const ParsedArgs &) { printError("'signature verify' is being written"); return kExitFailure; }
} // namespace ireepkg::cli
