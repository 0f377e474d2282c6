//===- ireepkg/manifest_schema/suggest.h - Suggestions ----------*- C++ -*-===//
//
// The "did you mean" of diagnostics: the closest candidate to a word that
// is close enough to be a plausible typo.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_MANIFEST_SCHEMA_SUGGEST_H
#define IREEPKG_MANIFEST_SCHEMA_SUGGEST_H

#include <span>
#include <string>
#include <string_view>

namespace ireepkg {

/// The candidate closest to `word` if it is close enough to be a plausible
/// typo (edit distance, ignoring case and `-`/`_` differences), else "".
std::string suggestClosest(std::string_view word,
                           std::span<const std::string_view> candidates);
std::string suggestClosest(std::string_view word,
                           std::span<const std::string> candidates);

/// ` (did you mean "x"?)` or "" when there is no suggestion.
std::string didYouMean(std::string_view word,
                       std::span<const std::string_view> candidates);
std::string didYouMean(std::string_view word,
                       std::span<const std::string> candidates);

} // namespace ireepkg

#endif // IREEPKG_MANIFEST_SCHEMA_SUGGEST_H
