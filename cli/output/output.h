//===- cli/output/output.h - What a command needs to print ------*- C++ -*-===//
//
// Only includes: the command files include this one header for the CLI's
// side of reporting, which lives in one file per concern:
//   color.h        the --color choice and the styles
//   messages.h     errors, warnings, verbose lines (and errors as JSON)
//   hints.h        hints fitted to the flags of the running command
//   reporter.h     CliReporter, the Reporter handed to the libraries
//   prefix_args.h  the prefix a command acts on, --lock-timeout
//   find_tool.h    executables on PATH or in the virtualenv
//   describe.h     manifests, shadowed imports and byte counts, shown
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_OUTPUT_H
#define IREEPKG_CLI_OUTPUT_H

#include "args/global_options.h"
#include "args/prefix_args.h"
#include "commands/command.h"
#include "host/find_tool.h"
#include "output/color.h"
#include "output/describe.h"
#include "output/hints.h"
#include "output/messages.h"
#include "output/progress.h"
#include "output/reporter.h"

#endif
