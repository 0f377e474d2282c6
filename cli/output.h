//===- output.h - What a command needs to print ----------------*- C++ -*-===//
//
// Only includes: the command files include this one header for the CLI's
// side of reporting, which lives in one file per concern:
//   color.h        the --color choice and the styles
//   messages.h     errors, warnings, verbose lines (and errors as JSON)
//   reporter.h     CliReporter, the Reporter handed to the libraries
//   prefix_args.h  the prefix a command acts on, --lock-timeout
//   find_tool.h    executables on PATH or in the virtualenv
//   describe.h     manifests, shadowed imports and byte counts, shown
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_CLI_OUTPUT_H
#define IREEPKG_CLI_OUTPUT_H

#include "color.h"
#include "command.h"
#include "describe.h"
#include "find_tool.h"
#include "global_options.h"
#include "messages.h"
#include "prefix_args.h"
#include "progress.h"
#include "reporter.h"

#endif
