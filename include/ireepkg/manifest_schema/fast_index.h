//===- ireepkg/manifest_schema/fast_index.h -------------------------------===//
//
// Registry index files, fast path.
//
// A cold `ireepkg lock` reads hundreds of registry index files that are, in
// practice, always valid. Parsing each with positions (JsonDocument) and
// then checking it (parseRegistryIndex) costs most of that run, for
// positions that are only ever needed to report an error. This parser
// reads an index file straight into a RegistryIndex, without positions,
// and applies the same rules as parseRegistryIndex; it accepts only a file
// the checking parser would read with no diagnostic at all (no error and
// no warning), and gives exactly the RegistryIndex that parser gives. For
// anything else -- invalid JSON, a broken rule, an unknown field, or only
// something it does not handle itself (\u escapes, a byte order mark, a
// NUL byte) --
// it returns nullopt, and the caller parses the file again with
// JsonDocument and parseRegistryIndex, which report the problem precisely
// (file, line:column, JSON pointer).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_FAST_INDEX_H
#define IREEPKG_FAST_INDEX_H

#include "ireepkg/manifest_schema/formats.h"

#include <optional>
#include <string_view>

namespace ireepkg {

/// Whether `text` is one the fast parsers below leave to the checking
/// parser whatever it holds: a \u escape (lone surrogates are refused by
/// nlohmann's lexer, not necessarily by simdjson's), a byte order mark
/// (which nlohmann skips), a NUL byte (where nlohmann's lexer sees the end
/// of the input), or more bytes than JsonDocument reads.
bool leftToCheckingParser(std::string_view text);

/// See the file comment. Thread-safe (one parser per thread).
std::optional<RegistryIndex> parseCleanRegistryIndex(std::string_view text);

/// The same for a registry's snapshot.json (parseRegistrySnapshot's rules),
/// which a run parses whenever the registry changed: 10,000 packages make
/// it about 1 MB.
std::optional<RegistrySnapshot>
parseCleanRegistrySnapshot(std::string_view text);

} // namespace ireepkg

#endif // IREEPKG_FAST_INDEX_H
