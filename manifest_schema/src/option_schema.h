//===- manifest_schema/src/option_schema.h --------------------------------===//
// Checking option schemas (private).
#ifndef IREEPKG_MANIFEST_SCHEMA_OPTION_SCHEMA_H
#define IREEPKG_MANIFEST_SCHEMA_OPTION_SCHEMA_H

#include "checker.h"

namespace ireepkg::detail {

/// Checks that `schema` (at `ptr`) is a sound option schema whose default
/// satisfies it.
void checkOptionSchema(Checker &checker, const nlohmann::json &schema,
                       const std::string &ptr);

} // namespace ireepkg::detail

#endif
