//===- pkg/src/project/json_text_edit.cpp - Editing JSON text in its style ===//
#include "json_text_edit.h"

namespace ireepkg::json_text_edit {

using json = nlohmann::json;

namespace {

size_t lineStartOf(std::string_view text, size_t offset) {
  if (offset == 0)
    return 0;
  size_t nl = text.rfind('\n', offset - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

/// JSON text of a value, UTF-8 kept as it is. Requests are checked for
/// valid UTF-8 first (checkRequest); the replacing handler only makes sure
/// that nothing here can throw.
std::string dumpScalar(const json &v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

size_t valueEnd(std::string_view text, size_t start) {
  size_t i = start;
  if (i >= text.size())
    return text.size();
  char c = text[i];
  if (c == '"') {
    for (++i; i < text.size(); ++i) {
      if (text[i] == '\\')
        ++i;
      else if (text[i] == '"')
        return i + 1;
    }
    return text.size();
  }
  if (c == '{' || c == '[') {
    int depth = 0;
    for (; i < text.size(); ++i) {
      char d = text[i];
      if (d == '"') {
        i = valueEnd(text, i) - 1;
      } else if (d == '{' || d == '[') {
        ++depth;
      } else if (d == '}' || d == ']') {
        if (--depth == 0)
          return i + 1;
      }
    }
    return text.size();
  }
  static constexpr std::string_view kStop = ",]} \t\r\n";
  while (i < text.size() && kStop.find(text[i]) == std::string_view::npos)
    ++i;
  return i;
}

std::string indentOf(std::string_view text, size_t offset) {
  size_t b = lineStartOf(text, offset), e = b;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t'))
    ++e;
  return std::string(text.substr(b, e - b));
}

bool firstOnLine(std::string_view text, size_t offset) {
  for (size_t i = lineStartOf(text, offset); i < offset; ++i)
    if (text[i] != ' ' && text[i] != '\t')
      return false;
  return true;
}

bool onlyChars(std::string_view s, std::string_view allowed) {
  return s.find_first_not_of(allowed) == std::string_view::npos;
}

std::string detectIndentUnit(std::string_view text) {
  size_t smallest = 0;
  for (size_t b = 0; b < text.size();) {
    size_t e = b;
    while (e < text.size() && (text[e] == ' ' || text[e] == '\t'))
      ++e;
    bool blankLine = e >= text.size() || text[e] == '\n' || text[e] == '\r';
    if (e > b && !blankLine) {
      if (text[b] == '\t')
        return "\t";
      if (smallest == 0 || e - b < smallest)
        smallest = e - b;
    }
    size_t nl = text.find('\n', b);
    if (nl == std::string_view::npos)
      break;
    b = nl + 1;
  }
  return smallest ? std::string(smallest, ' ') : std::string("  ");
}

std::string quote(const std::string &s) { return dumpScalar(json(s)); }

std::string inlineValue(const json &v, const ObjectStyle &s) {
  std::string sep = s.sep == "," ? "," : ", ";
  if (v.is_array()) {
    if (v.empty())
      return "[]";
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? sep : "") + inlineValue(v[i], s);
    return out + "]";
  }
  if (v.is_object()) {
    if (v.empty())
      return "{}";
    std::string out = "{" + s.open;
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += (first ? "" : s.sep) + quote(it.key()) + s.colon +
             inlineValue(*it, s);
      first = false;
    }
    return out + s.close + "}";
  }
  return dumpScalar(v);
}

std::string renderValue(const json &v, const ObjectStyle &s, const Layout &l,
                        const std::string &indent) {
  if (v.is_object() && !v.empty() && s.expanded) {
    Members m;
    for (auto it = v.begin(); it != v.end(); ++it)
      m.emplace_back(it.key(), *it);
    return renderObject(m, s, l, indent);
  }
  return inlineValue(v, s);
}

std::string renderObject(const Members &members, const ObjectStyle &s,
                         const Layout &l, const std::string &indent) {
  if (members.empty())
    return "{}";
  std::string out = "{";
  if (!s.expanded) {
    out += s.open;
    for (size_t i = 0; i < members.size(); ++i)
      out += (i ? s.sep : "") + quote(members[i].first) + s.colon +
             inlineValue(members[i].second, s);
    return out + s.close + "}";
  }
  std::string memberIndent = indent + s.inner;
  for (size_t i = 0; i < members.size(); ++i)
    out += (i ? "," : "") + l.nl + memberIndent + quote(members[i].first) +
           s.colon + renderValue(members[i].second, s, l, memberIndent);
  return out + l.nl + indent + "}";
}

} // namespace ireepkg::json_text_edit
