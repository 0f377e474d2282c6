//===- pkg/src/iree/iree_requirement.h - requires.iree at install ---------===//
#ifndef IREEPKG_PKG_IREE_REQUIREMENT_H
#define IREEPKG_PKG_IREE_REQUIREMENT_H

#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <string>
#include <utility>
#include <vector>

namespace ireepkg {

/// Checks the requires.iree of each incoming package (its manifest and the
/// archive it comes from) against `check`. A package that excludes the
/// IREE in use is an error naming the manifest field to change, or, with
/// check.ignore, a warning; when no IREE is known and some package has a
/// requirement, one warning says that nothing was checked.
Status checkIreeRequirements(
    const IreeRequirementCheck &check,
    const std::vector<std::pair<const Manifest *, std::string>> &incoming,
    Reporter &reporter);

} // namespace ireepkg

#endif
