//===- cli/host/interrupt.h - Ctrl-C during a command -----------*- C++ -*-===//
//
// `sync`, `install`, `add` and `rm` catch SIGINT: the first one sets a
// flag that the libraries ask about between steps (Reporter::interrupted)
// and that the HTTP client polls while a request is under way, metadata
// included (FetchOptions::interrupted); they give up before changing
// anything for good, the download client removes its partial files, and
// the command says so and exits 130. A second SIGINT
// ends the process at once (the partial files still go: see
// ireepkg/partial_files.h).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_INTERRUPT_H
#define IREEPKG_CLI_INTERRUPT_H

#include <string>

namespace ireepkg::cli {

/// The exit status of a command stopped by Ctrl-C (128 + SIGINT, as a
/// shell reports a process that SIGINT ended).
constexpr int kExitInterrupted = 130;

/// Catches SIGINT from now on (unless the process ignores it, as under
/// nohup). Call before anything registers a partial file.
void catchInterrupts();

/// True once a caught SIGINT arrived.
bool interruptRequested();

/// Prints `ireepkg: interrupted: nothing was changed in <prefix>` and
/// returns kExitInterrupted.
int reportInterrupted(const std::string &prefix);

} // namespace ireepkg::cli

#endif
