//===- cmd_flags.cpp - `ireepkg flags` (in progress) ---------------------------===//
#include "command.h"

namespace ireepkg::cli {

int runFlags(const Command &, const ParsedArgs &) {
  printError("'flags' is being written");
  return kExitFailure;
}

} // namespace ireepkg::cli
