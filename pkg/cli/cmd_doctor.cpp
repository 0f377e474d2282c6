//===- cmd_doctor.cpp - `ireepkg doctor` (in progress) ---------------------------===//
#include "command.h"

namespace ireepkg::cli {

int runDoctor(const Command &, const ParsedArgs &) {
  printError("'doctor' is being written");
  return kExitFailure;
}

} // namespace ireepkg::cli
