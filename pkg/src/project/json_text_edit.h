//===- pkg/src/project/json_text_edit.h - Editing JSON text in its style --===//
//
// Reading the layout of JSON text that parsed, and writing new values in
// the style of the text around them: the line ending, the indentation
// unit, whether an object has one member per line or all on one line, and
// the spacing around ':' and ','. project.cpp edits plugins.json with it;
// offsets are byte offsets into the text.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PKG_PROJECT_JSON_TEXT_EDIT_H
#define IREEPKG_PKG_PROJECT_JSON_TEXT_EDIT_H

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ireepkg::json_text_edit {

//===----------------------------------------------------------------------===//
// Reading the text
//===----------------------------------------------------------------------===//

/// One past the last byte of the value that starts at `start`. The text is
/// JSON that parsed, so this only has to find the closing quote or bracket.
size_t valueEnd(std::string_view text, size_t start);

/// The blanks that start the line holding `offset`.
std::string indentOf(std::string_view text, size_t offset);

/// True when only blanks precede `offset` on its line.
bool firstOnLine(std::string_view text, size_t offset);

/// True when every character of `s` is one of `allowed` (also when `s` is
/// empty).
bool onlyChars(std::string_view s, std::string_view allowed);

/// The file's indentation unit: a tab if indented lines start with one,
/// else the smallest indentation in spaces, else two spaces.
std::string detectIndentUnit(std::string_view text);

//===----------------------------------------------------------------------===//
// Writing new text
//===----------------------------------------------------------------------===//

/// `s` as a JSON string, UTF-8 kept as it is.
std::string quote(const std::string &s);

/// What holds for the whole file.
struct Layout {
  std::string nl = "\n";
  std::string unit = "  ";
};

/// How an object is written.
struct ObjectStyle {
  bool expanded = true;     ///< one member per line
  std::string colon = ": "; ///< between key and value
  std::string inner = "  "; ///< expanded: member indentation, relative
  std::string open;         ///< compact: after '{'
  std::string close;        ///< compact: before '}'
  std::string sep = ", ";   ///< compact: between members
};

/// An object's members in the order they are written.
using Members = std::vector<std::pair<std::string, nlohmann::json>>;

/// `v` on one line, objects in it spaced as `s` says.
std::string inlineValue(const nlohmann::json &v, const ObjectStyle &s);

/// A member's value: a non-empty object follows the style, everything else
/// stays on one line.
std::string renderValue(const nlohmann::json &v, const ObjectStyle &s,
                        const Layout &l, const std::string &indent);

/// An object whose '{' goes on a line indented by `indent`.
std::string renderObject(const Members &members, const ObjectStyle &s,
                         const Layout &l, const std::string &indent);

} // namespace ireepkg::json_text_edit

#endif // IREEPKG_PKG_PROJECT_JSON_TEXT_EDIT_H
