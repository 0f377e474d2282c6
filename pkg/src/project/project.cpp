//===- pkg/src/project/project.cpp - Editing plugins.json, the input hash -===//
//
// `add` and `rm` change plugins.json as text. The file is parsed (which
// gives the byte offset where every key and value starts), each change is
// one splice of the text, and the text is parsed again before the next
// change. New text copies the style of what is around it: the line ending,
// the indentation unit, whether entries are one object per line or spread
// over several lines, and the spacing around ':' and ',' (json_text_edit.h
// reads and writes it). The result is checked with parseProjectFile before
// it is returned, so a broken file is never handed back.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/manifest_schema/names.h"
#include "ireepkg/manifest_schema/suggest.h"

#include "ireepkg/base/file_util.h"

#include "ireepkg/base/hash.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "json_text_edit.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace ireepkg::project {

using json = nlohmann::json;
using json_text_edit::detectIndentUnit;
using json_text_edit::firstOnLine;
using json_text_edit::indentOf;
using json_text_edit::inlineValue;
using json_text_edit::Layout;
using json_text_edit::Members;
using json_text_edit::ObjectStyle;
using json_text_edit::onlyChars;
using json_text_edit::quote;
using json_text_edit::renderObject;
using json_text_edit::renderValue;
using json_text_edit::valueEnd;

namespace {

//===----------------------------------------------------------------------===//
// The text being edited
//===----------------------------------------------------------------------===//

struct Member {
  std::string key;
  size_t keyStart = 0, keyEnd = 0, valueStart = 0, valueEnd = 0;
};

Unexpected internalError(const std::string &origin, const std::string &what) {
  return makeError(ErrorCode::Internal,
                   "editing the project file went wrong (" + what +
                       "); the file was left unchanged",
                   Location::inFile(origin),
                   "this is a bug in ireepkg; please report it with the "
                   "file and the command");
}

/// Parses plugins.json text: JSON syntax, then every rule of the format.
Expected<std::pair<JsonDocument, ProjectFile>>
parseProject(std::string_view text, const std::string &origin) {
  auto doc = JsonDocument::parse(text, origin);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ProjectFile project = parseProjectFile(*doc, ParseOptions{}, diags);
  if (diags.hasErrors()) {
    Error e = makeError(ErrorCode::Invalid, diags).error();
    if (e.hint.empty())
      e.hint = "fix " + origin +
               " first; `ireepkg manifest check` lists "
               "every problem";
    return Unexpected(std::move(e));
  }
  return std::pair{std::move(*doc), std::move(project)};
}

class Session {
public:
  Session(std::string text, std::string origin, JsonDocument doc)
      : text(std::move(text)), origin(std::move(origin)), doc(std::move(doc)) {
    layout.nl = this->text.find("\r\n") != std::string::npos ? "\r\n" : "\n";
    layout.unit = detectIndentUnit(this->text);
  }

  std::string text;
  std::string origin;
  JsonDocument doc;
  Layout layout;

  const json &at(const std::string &ptr) const {
    return doc.root().at(json::json_pointer(ptr));
  }
  bool has(const std::string &ptr) const {
    return doc.root().contains(json::json_pointer(ptr));
  }
  size_t start(const std::string &ptr) const {
    return doc.valueOffset(ptr).value_or(0);
  }
  size_t end(const std::string &ptr) const {
    return valueEnd(text, start(ptr));
  }

  /// The members of the object at `ptr`, in the order of the text.
  std::vector<Member> members(const std::string &ptr) const {
    std::vector<Member> out;
    const json &obj = at(ptr);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      std::string p = ptr + "/" + jsonPointerEscape(it.key());
      Member m;
      m.key = it.key();
      m.keyStart = doc.keyOffset(p).value_or(0);
      m.keyEnd = valueEnd(text, m.keyStart);
      m.valueStart = start(p);
      m.valueEnd = valueEnd(text, m.valueStart);
      out.push_back(std::move(m));
    }
    std::sort(out.begin(), out.end(), [](const Member &a, const Member &b) {
      return a.keyStart < b.keyStart;
    });
    return out;
  }

  /// [start, end) of each element of the array at `ptr`.
  std::vector<std::pair<size_t, size_t>>
  elements(const std::string &ptr) const {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t i = 0; i < at(ptr).size(); ++i) {
      size_t b = start(ptr + "/" + std::to_string(i));
      out.emplace_back(b, valueEnd(text, b));
    }
    return out;
  }

  /// The style of the object at `ptr`, read from its text.
  ObjectStyle styleOf(const std::string &ptr) const {
    ObjectStyle s;
    s.inner = layout.unit;
    size_t b = start(ptr), e = end(ptr);
    size_t nl = text.find('\n', b);
    s.expanded = nl != std::string::npos && nl < e;
    std::vector<Member> ms = members(ptr);
    if (ms.empty())
      return s;
    std::string_view view(text);
    std::string_view colon =
        view.substr(ms[0].keyEnd, ms[0].valueStart - ms[0].keyEnd);
    if (onlyChars(colon, " \t:") &&
        std::count(colon.begin(), colon.end(), ':') == 1)
      s.colon = colon;
    if (s.expanded) {
      if (firstOnLine(text, ms[0].keyStart)) {
        std::string member = indentOf(text, ms[0].keyStart);
        std::string outer = indentOf(text, b);
        if (member.size() > outer.size() && member.starts_with(outer))
          s.inner = member.substr(outer.size());
      }
      return s;
    }
    std::string_view open = view.substr(b + 1, ms[0].keyStart - b - 1);
    if (onlyChars(open, " \t"))
      s.open = open;
    std::string_view close =
        view.substr(ms.back().valueEnd, e - 1 - ms.back().valueEnd);
    if (onlyChars(close, " \t"))
      s.close = close;
    if (ms.size() >= 2) {
      std::string_view sep =
          view.substr(ms[0].valueEnd, ms[1].keyStart - ms[0].valueEnd);
      if (onlyChars(sep, ", \t") &&
          std::count(sep.begin(), sep.end(), ',') == 1)
        s.sep = sep;
    }
    return s;
  }

  /// Replaces [from, to) and parses the text again.
  Status splice(size_t from, size_t to, const std::string &with) {
    text.replace(from, to - from, with);
    auto reparsed = JsonDocument::parse(text, origin);
    if (!reparsed)
      return internalError(origin, "the edited text is not JSON: " +
                                       reparsed.error().message);
    doc = std::move(*reparsed);
    return ok();
  }

  /// Adds `key: value` after the member `after` ("" or absent: the last)
  /// of the non-empty object at `ptr`.
  Status insertMember(const std::string &ptr, const std::string &after,
                      const std::string &key, const json &value) {
    std::vector<Member> ms = members(ptr);
    if (ms.empty())
      return internalError(origin, "no member to insert after");
    const Member *m = &ms.back();
    for (const Member &x : ms)
      if (x.key == after)
        m = &x;
    ObjectStyle s = styleOf(ptr);
    std::string ins;
    if (s.expanded && firstOnLine(text, m->keyStart)) {
      std::string indent = indentOf(text, m->keyStart);
      ins = "," + layout.nl + indent + quote(key) + s.colon +
            renderValue(value, s, layout, indent);
    } else {
      ins = s.sep + quote(key) + s.colon + inlineValue(value, s);
    }
    return splice(m->valueEnd, m->valueEnd, ins);
  }

  /// Sets `key` of the object at `ptr`: replaces its value in place, or
  /// inserts it after the first of `after` that is there.
  Status setMember(const std::string &ptr, const std::string &key,
                   const json &value,
                   std::initializer_list<const char *> after) {
    std::string p = ptr + "/" + jsonPointerEscape(key);
    if (has(p))
      return splice(start(p), end(p), inlineValue(value, styleOf(ptr)));
    std::string anchor;
    for (const char *a : after)
      if (anchor.empty() && at(ptr).contains(a))
        anchor = a;
    return insertMember(ptr, anchor, key, value);
  }

  /// The style a new plugin entry gets: that of the last plugin, else of
  /// the last registry, else one member per line (one line when the whole
  /// file is one line).
  ObjectStyle newEntryStyle(const char *first = "plugins",
                            const char *second = "registries") const {
    const json &root = doc.root();
    auto lastOf = [&](const char *key) -> std::optional<std::string> {
      auto it = root.find(key);
      if (it == root.end() || !it->is_array() || it->empty() ||
          !it->back().is_object() || it->back().empty())
        return std::nullopt;
      return std::string("/") + key + "/" + std::to_string(it->size() - 1);
    };
    if (auto p = lastOf(first))
      return styleOf(*p);
    if (auto p = lastOf(second))
      return styleOf(*p);
    ObjectStyle rootStyle = styleOf("");
    if (!rootStyle.expanded)
      return rootStyle;
    ObjectStyle s;
    s.inner = layout.unit;
    s.colon = rootStyle.colon;
    return s;
  }

  /// Appends an entry to `plugins` (creating the member when it is not
  /// there).
  Status appendPlugin(const Members &entry) {
    return appendEntry("plugins", entry, newEntryStyle());
  }

  /// Appends an entry to the array `key` of the root (creating the member
  /// when it is not there).
  Status appendEntry(const std::string &key, const Members &entry,
                     const ObjectStyle &entryStyle) {
    const json &root = doc.root();
    ObjectStyle rootStyle = styleOf("");
    const std::string ptr = "/" + key;
    auto it = root.find(key);
    if (it == root.end()) {
      std::vector<Member> ms = members("");
      const Member &last = ms.back();
      std::string ins;
      if (rootStyle.expanded) {
        std::string memberIndent = firstOnLine(text, last.keyStart)
                                       ? indentOf(text, last.keyStart)
                                       : rootStyle.inner;
        std::string elementIndent = memberIndent + layout.unit;
        ins = "," + layout.nl + memberIndent + quote(key) +
              rootStyle.colon + "[" + layout.nl + elementIndent +
              renderObject(entry, entryStyle, layout, elementIndent) +
              layout.nl + memberIndent + "]";
      } else {
        ins = rootStyle.sep + quote(key) + rootStyle.colon + "[" +
              renderObject(entry, entryStyle, layout, "") + "]";
      }
      return splice(last.valueEnd, last.valueEnd, ins);
    }
    if (it->empty()) {
      size_t b = start(ptr), e = end(ptr);
      if (!rootStyle.expanded)
        return splice(b, e,
                      "[" + renderObject(entry, entryStyle, layout, "") + "]");
      std::string memberIndent =
          indentOf(text, doc.keyOffset(ptr).value_or(b));
      std::string elementIndent = memberIndent + layout.unit;
      return splice(b, e,
                    "[" + layout.nl + elementIndent +
                        renderObject(entry, entryStyle, layout, elementIndent) +
                        layout.nl + memberIndent + "]");
    }
    auto els = elements(ptr);
    auto [lastStart, lastEnd] = els.back();
    std::string sep;
    if (els.size() >= 2) {
      std::string_view between = std::string_view(text).substr(
          els[els.size() - 2].second, lastStart - els[els.size() - 2].second);
      if (onlyChars(between, ", \t\r\n") &&
          std::count(between.begin(), between.end(), ',') == 1)
        sep = between;
    }
    if (sep.empty())
      sep = firstOnLine(text, lastStart)
                ? "," + layout.nl + indentOf(text, lastStart)
                : std::string(", ");
    return splice(lastEnd, lastEnd,
                  sep + renderObject(entry, entryStyle, layout,
                                     indentOf(text, lastStart)));
  }

  /// Removes element `index` of the array at `ptr`, with its comma.
  Status removeElement(const std::string &ptr, size_t index) {
    auto els = elements(ptr);
    if (els.size() == 1) {
      size_t b = start(ptr), e = end(ptr);
      return splice(b + 1, e - 1, "");
    }
    if (index + 1 < els.size())
      return splice(els[index].first, els[index + 1].first, "");
    return splice(els[index - 1].second, els[index].second, "");
  }
};

bool isFlagName(std::string_view s) {
  if (s.empty() || !(std::islower(static_cast<unsigned char>(s[0])) ||
                     std::isdigit(static_cast<unsigned char>(s[0]))))
    return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '-'))
      return false;
  return true;
}

/// False when a string inside `v` is not UTF-8.
bool isUtf8Json(const json &v) {
  try {
    (void)v.dump();
    return true;
  } catch (const json::exception &) {
    return false;
  }
}

/// The request's own mistakes, before the file is looked at.
Status checkRequest(const AddRequest &request) {
  if (!isValidPackageName(request.name))
    return makeError(ErrorCode::Invalid,
                     "\"" + request.name + "\" is not a valid package name", {},
                     kPackageNameRule);
  if (request.constraint) {
    auto c = Constraint::parse(*request.constraint);
    if (!c)
      return makeError(ErrorCode::Invalid,
                       "version constraint of " + request.name + ": " +
                           c.error().message,
                       {}, c.error().hint);
  }
  if (!request.path.empty() && (request.constraint || !request.registry.empty()))
    return makeError(ErrorCode::Usage,
                     request.name + ": a local package (path) takes no "
                                    "version and no registry");
  if (!request.registry.empty() && !isValidPackageName(request.registry))
    return makeError(ErrorCode::Invalid,
                     "\"" + request.registry +
                         "\" is not a valid registry name",
                     {}, kPackageNameRule);
  for (const auto &[flag, value] : request.options) {
    if (!isFlagName(flag))
      return makeError(
          ErrorCode::Invalid, "\"" + flag + "\" is not an option flag name", {},
          flag.starts_with("-")
              ? "write the flag without its leading dashes, e.g. " +
                    flag.substr(flag.find_first_not_of('-') == std::string::npos
                                    ? flag.size()
                                    : flag.find_first_not_of('-'))
              : "flag names are lower-case letters, digits, '.', '_' and "
                "'-', starting with a letter or digit");
    if (!isUtf8Json(value))
      return makeError(ErrorCode::Invalid, "the value of option \"" + flag +
                                               "\" is not valid UTF-8 text");
  }
  return ok();
}

/// The edited text, once it reads back as a valid project file in which
/// `amiss` (given the file as edited) finds nothing wrong: it returns what
/// is wrong, "" when the edit did what was asked and nothing else.
template <class Check>
Expected<std::string> checkedResult(Session &s, Check amiss) {
  auto after = parseProject(s.text, s.origin);
  if (!after)
    return internalError(s.origin, "the result would not be valid: " +
                                       after.error().format());
  if (std::string what = amiss(after->second); !what.empty())
    return internalError(s.origin, what);
  return std::move(s.text);
}

std::optional<size_t> findPlugin(const ProjectFile &project,
                                 const std::string &name) {
  for (size_t i = 0; i < project.plugins.size(); ++i)
    if (project.plugins[i].name == name)
      return i;
  return std::nullopt;
}

std::vector<std::string> sortedPlatformNames(std::vector<Platform> platforms) {
  std::vector<std::string> out;
  for (const Platform &p : platforms)
    out.push_back(p.str());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// init, add, rm
//===----------------------------------------------------------------------===//

std::string starterProjectFile(const StarterOptions &options) {
  std::string out = "{\n  \"schema_version\": 1,\n  \"registries\": [";
  for (size_t i = 0; i < options.registries.size(); ++i) {
    const RegistryRef &r = options.registries[i];
    out += std::string(i ? "," : "") +
           "\n    {\n      \"name\": " + quote(r.name) +
           ",\n      \"url\": " + quote(r.url);
    if (!r.mirrors.empty())
      out += ",\n      \"mirrors\": " + inlineValue(json(r.mirrors), {});
    if (!r.publicKey.empty())
      out += ",\n      \"public_key\": " + quote(r.publicKey);
    out += "\n    }";
  }
  out += options.registries.empty() ? "],\n" : "\n  ],\n";
  std::vector<Platform> platforms = options.platforms;
  if (platforms.empty())
    platforms.push_back(hostPlatform());
  json names = json::array();
  for (const Platform &p : platforms)
    names.push_back(p.str());
  out += "  \"platforms\": " + inlineValue(names, {}) + ",\n";
  out += "  \"plugins\": []\n}\n";
  return out;
}

Expected<std::string> addPlugin(std::string_view text,
                                const AddRequest &request,
                                const std::string &origin) {
  if (Status s = checkRequest(request); !s)
    return Unexpected(s.error());
  auto parsed = parseProject(text, origin);
  if (!parsed)
    return Unexpected(parsed.error());
  const ProjectFile &before = parsed->second;
  if (!request.registry.empty()) {
    std::vector<std::string> known;
    for (const RegistryRef &r : before.registries)
      known.push_back(r.name);
    if (std::find(known.begin(), known.end(), request.registry) ==
        known.end()) {
      std::string list;
      for (const std::string &k : known)
        list += (list.empty() ? "" : ", ") + k;
      return makeError(
          ErrorCode::NotFound,
          "registry \"" + request.registry + "\" is not defined" +
              didYouMean(request.registry, std::span<const std::string>(known)),
          Location{origin, 0, 0, "/registries", "", ""},
          known.empty() ? "the file defines no registries; add one under "
                          "\"registries\""
                        : "its registries: " + list);
    }
  }

  Session s(std::string(text), origin, std::move(parsed->first));
  std::optional<size_t> index = findPlugin(before, request.name);
  if (!index) {
    Members entry{{"name", request.name}};
    if (!request.path.empty())
      entry.emplace_back("path", request.path);
    if (request.constraint)
      entry.emplace_back("version", *request.constraint);
    if (!request.registry.empty())
      entry.emplace_back("registry", request.registry);
    if (!request.options.empty())
      entry.emplace_back("options", json(request.options));
    if (Status st = s.appendPlugin(entry); !st)
      return Unexpected(st.error());
  } else {
    const ProjectPlugin &existing = before.plugins[*index];
    std::string ptr = "/plugins/" + std::to_string(*index);
    if (!request.path.empty() && request.path != existing.path)
      return makeError(
          ErrorCode::Conflict,
          "plugin \"" + request.name + "\" is listed already" +
              (existing.path.empty() ? std::string(", from a registry")
                                     : ", from \"" + existing.path + "\""),
          s.doc.locate(ptr),
          "to take it from " + request.path + " instead, run `ireepkg rm " +
              request.name + "` and add it again");
    if (request.constraint && !existing.path.empty())
      return makeError(
          ErrorCode::Conflict,
          "plugin \"" + request.name + "\" is a local package (\"path\": \"" +
              existing.path + "\"); a version applies to registry packages",
          s.doc.locate(ptr + "/path"),
          "to take it from a registry instead, run `ireepkg rm " +
              request.name + "` and add it again");
    if (request.constraint)
      if (Status st =
              s.setMember(ptr, "version", *request.constraint, {"name"});
          !st)
        return Unexpected(st.error());
    if (!request.registry.empty())
      if (Status st = s.setMember(ptr, "registry", request.registry,
                                  {"version", "path", "name"});
          !st)
        return Unexpected(st.error());
    if (!request.options.empty()) {
      std::string opts = ptr + "/options";
      Status st = ok();
      if (!s.has(opts)) {
        st = s.insertMember(ptr, "", "options", json(request.options));
      } else if (s.at(opts).empty()) {
        // "options": {} takes the style of the entry around it.
        ObjectStyle entryStyle = s.styleOf(ptr);
        Members m(request.options.begin(), request.options.end());
        size_t b = s.start(opts);
        st = s.splice(
            b, s.end(opts),
            renderObject(m, entryStyle, s.layout,
                         indentOf(s.text, s.doc.keyOffset(opts).value_or(b))));
      } else {
        for (const auto &[flag, value] : request.options)
          if (st = s.setMember(opts, flag, value, {}); !st)
            break;
      }
      if (!st)
        return Unexpected(st.error());
    }
  }

  // The result must be a valid project file that says what was asked.
  return checkedResult(s, [&](const ProjectFile &after) -> std::string {
    std::optional<size_t> at = findPlugin(after, request.name);
    if (!at)
      return "the new entry is missing";
    const ProjectPlugin &added = after.plugins[*at];
    if (request.constraint &&
        (!added.version || added.version->text() != *request.constraint))
      return "the version was not written";
    if (!request.path.empty() && added.path != request.path)
      return "the path was not written";
    if (!request.registry.empty() && added.registry != request.registry)
      return "the registry was not written";
    for (const auto &[flag, value] : request.options) {
      auto o = added.options.find(flag);
      if (o == added.options.end() || o->second != value)
        return "option " + flag + " was not written";
    }
    if (after.plugins.size() != before.plugins.size() + (index ? 0 : 1))
      return "the number of plugins is wrong";
    return "";
  });
}

Expected<std::string> removePlugin(std::string_view text,
                                   const std::string &name,
                                   const std::string &origin) {
  auto parsed = parseProject(text, origin);
  if (!parsed)
    return Unexpected(parsed.error());
  const ProjectFile &before = parsed->second;
  std::optional<size_t> index = findPlugin(before, name);
  if (!index) {
    std::vector<std::string> names;
    std::string list;
    for (const ProjectPlugin &p : before.plugins) {
      names.push_back(p.name);
      list += (list.empty() ? "" : ", ") + p.name;
    }
    return makeError(ErrorCode::NotFound,
                     "plugin \"" + name + "\" is not listed" +
                         didYouMean(name, std::span<const std::string>(names)),
                     Location{origin, 0, 0, "/plugins", "", ""},
                     names.empty() ? "the file lists no plugins"
                                   : "it lists: " + list);
  }
  Session s(std::string(text), origin, std::move(parsed->first));
  if (Status st = s.removeElement("/plugins", *index); !st)
    return Unexpected(st.error());

  return checkedResult(s, [&](const ProjectFile &after) -> std::string {
    std::vector<std::string> expected, got;
    for (const ProjectPlugin &p : before.plugins)
      if (p.name != name)
        expected.push_back(p.name);
    for (const ProjectPlugin &p : after.plugins)
      got.push_back(p.name);
    return expected != got ? "the wrong entry was removed" : "";
  });
}

//===----------------------------------------------------------------------===//
// Registries
//===----------------------------------------------------------------------===//

Expected<std::string> addRegistry(std::string_view text, const RegistryRef &ref,
                                  const std::string &origin) {
  if (!isValidPackageName(ref.name))
    return makeError(ErrorCode::Usage,
                     "\"" + ref.name + "\" is not a valid registry name", {},
                     kPackageNameRule);
  if (ref.url.empty())
    return makeError(ErrorCode::Usage,
                     "registry \"" + ref.name + "\" needs a URL or a path");
  auto parsed = parseProject(text, origin);
  if (!parsed)
    return Unexpected(parsed.error());
  const ProjectFile &before = parsed->second;
  for (size_t i = 0; i < before.registries.size(); ++i)
    if (before.registries[i].name == ref.name)
      return makeError(ErrorCode::Conflict,
                       "registry \"" + ref.name + "\" is defined already (" +
                           before.registries[i].url + ")",
                       parsed->first.locate("/registries/" + std::to_string(i)),
                       "to change it, run `ireepkg registry remove " +
                           ref.name + "` and add it again");
  Session s(std::string(text), origin, std::move(parsed->first));
  Members entry{{"name", ref.name}, {"url", ref.url}};
  if (!ref.mirrors.empty())
    entry.emplace_back("mirrors", json(ref.mirrors));
  if (!ref.publicKey.empty())
    entry.emplace_back("public_key", ref.publicKey);
  if (Status st = s.appendEntry("registries", entry,
                                s.newEntryStyle("registries", "plugins"));
      !st)
    return Unexpected(st.error());
  return checkedResult(s, [&](const ProjectFile &after) -> std::string {
    bool asAsked = after.registries.size() == before.registries.size() + 1 &&
                   after.registries.back().name == ref.name &&
                   after.registries.back().url == ref.url &&
                   after.registries.back().publicKey == ref.publicKey &&
                   after.plugins.size() == before.plugins.size();
    return asAsked ? "" : "the registry was not written as asked";
  });
}

Expected<std::string> removeRegistry(std::string_view text,
                                     const std::string &name,
                                     const std::string &origin) {
  auto parsed = parseProject(text, origin);
  if (!parsed)
    return Unexpected(parsed.error());
  const ProjectFile &before = parsed->second;
  std::optional<size_t> index;
  std::vector<std::string> names;
  for (size_t i = 0; i < before.registries.size(); ++i) {
    names.push_back(before.registries[i].name);
    if (before.registries[i].name == name)
      index = i;
  }
  if (!index)
    return makeError(ErrorCode::NotFound,
                     "registry \"" + name + "\" is not defined" +
                         didYouMean(name, std::span<const std::string>(names)),
                     Location{origin, 0, 0, "/registries", "", ""},
                     names.empty() ? "the file defines no registries"
                                   : "its registries: " + [&] {
                                       std::string l;
                                       for (const std::string &n : names)
                                         l += (l.empty() ? "" : ", ") + n;
                                       return l;
                                     }());
  for (size_t i = 0; i < before.plugins.size(); ++i)
    if (before.plugins[i].registry == name)
      return makeError(ErrorCode::Conflict,
                       "plugin \"" + before.plugins[i].name +
                           "\" takes its packages from registry \"" + name +
                           "\"",
                       parsed->first.locate("/plugins/" + std::to_string(i) +
                                            "/registry"),
                       "remove the plugin first (`ireepkg rm " +
                           before.plugins[i].name +
                           "`), or add it again from another registry");
  Session s(std::string(text), origin, std::move(parsed->first));
  if (Status st = s.removeElement("/registries", *index); !st)
    return Unexpected(st.error());
  return checkedResult(s, [&](const ProjectFile &after) -> std::string {
    bool removed = after.registries.size() + 1 == before.registries.size() &&
                   after.plugins.size() == before.plugins.size();
    return removed ? "" : "the wrong entry was removed";
  });
}

//===----------------------------------------------------------------------===//
// The input hash and the lockfile
//===----------------------------------------------------------------------===//

std::string inputHash(const ProjectFile &project) {
  // Canonical JSON: nlohmann's objects keep their keys sorted, and dump()
  // without indentation writes no whitespace.
  json registries = json::array();
  for (const RegistryRef &r : project.registries)
    registries.push_back({{"name", r.name},
                          {"url", r.url},
                          {"mirrors", r.mirrors},
                          {"public_key", r.publicKey}});
  json plugins = json::array();
  for (const ProjectPlugin &p : project.plugins)
    plugins.push_back(
        {{"name", p.name},
         {"version", p.version ? json(p.version->text()) : json(nullptr)},
         {"path", p.path},
         {"registry", p.registry}});
  json canonical = {{"schema_version", project.schemaVersion},
                    {"registries", std::move(registries)},
                    {"platforms", sortedPlatformNames(project.platforms)},
                    {"plugins", std::move(plugins)}};
  return "sha256:" + Sha256::hex(canonical.dump(
                         -1, ' ', false, json::error_handler_t::replace));
}

//===----------------------------------------------------------------------===//
// Option values
//===----------------------------------------------------------------------===//

void checkProjectOptions(const ProjectPlugin &plugin, size_t pluginIndex,
                         const Manifest &manifest,
                         const std::string &projectPath,
                         DiagnosticList &diags) {
  std::map<std::string, const json *> schemas;
  for (const CompilerPlugin &cp : manifest.compilerPlugins)
    for (const auto &[flag, schema] : cp.options)
      schemas.emplace(flag, &schema);
  std::vector<std::string> known;
  for (const auto &[flag, schema] : schemas)
    known.push_back(flag);
  std::string knownList;
  for (const std::string &k : known)
    knownList += (knownList.empty() ? "" : ", ") + k;

  // Positions come from the file itself, read only when there is a problem.
  std::optional<Expected<JsonDocument>> doc;
  auto where = [&](const std::string &ptr, bool key) {
    if (!doc)
      doc.emplace(JsonDocument::load(projectPath));
    Location loc{projectPath, 0, 0, ptr, "", ""};
    if (*doc) {
      const JsonDocument &d = **doc;
      if (d.root().contains(json::json_pointer(ptr))) {
        Location found = key ? d.locateKey(ptr) : d.locate(ptr);
        loc.line = found.line;
        loc.column = found.column;
      }
    }
    return loc;
  };

  std::string who = "plugin \"" + plugin.name + "\"";
  std::string what = plugin.name + " " + manifest.version.str();
  for (const auto &[flag, value] : plugin.options) {
    std::string ptr = "/plugins/" + std::to_string(pluginIndex) + "/options/" +
                      jsonPointerEscape(flag);
    auto schema = schemas.find(flag);
    if (schema == schemas.end()) {
      diags.error(where(ptr, true),
                  who + " has no option \"" + flag + "\"" +
                      didYouMean(flag, std::span<const std::string>(known)),
                  known.empty() ? what +
                                      " declares no options; remove "
                                      "\"" +
                                      flag + "\""
                                : what + " declares: " + knownList);
      continue;
    }
    std::string problem = optionValueProblem(*schema->second, value);
    if (problem.empty())
      continue;
    json rule = *schema->second;
    rule.erase("description");
    rule.erase("default");
    std::string hint =
        "its schema: " +
        rule.dump(-1, ' ', false, json::error_handler_t::replace);
    if (auto d = schema->second->find("description");
        d != schema->second->end() && d->is_string())
      hint += " (" + d->get<std::string>() + ")";
    diags.error(where(ptr, false), who + " option \"" + flag + "\": " + problem,
                hint);
  }
}

} // namespace ireepkg::project
