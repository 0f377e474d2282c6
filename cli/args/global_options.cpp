//===- global_options.cpp - The process's global options -----------------===//
#include "args/global_options.h"

namespace ireepkg::cli {

GlobalOptions &globalOptions() {
  static GlobalOptions options;
  return options;
}

} // namespace ireepkg::cli
