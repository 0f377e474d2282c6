//===- pkg/src/project/user_config.cpp - config.toml ----------------------===//
//
// Read with toml++ (Debian's libtomlplusplus-dev), compiled into this file
// alone (header-only mode), so that nothing else sees its headers and the
// tool links no further shared library.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/project/user_config.h"
#include "ireepkg/manifest_schema/suggest.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/platform.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <sys/stat.h>

#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

namespace fs = std::filesystem;

namespace ireepkg::config {

const std::vector<KeySpec> &keys() {
  static const std::vector<KeySpec> table = {
      {"registry", ValueType::String, "IREEPKG_REGISTRY", "--registry",
       "the registry for commands that take --registry (install, search) "
       "when neither --registry, IREEPKG_REGISTRY nor a project names one"},
      {"registry-key", ValueType::String, "IREEPKG_REGISTRY_KEY",
       "--registry-key",
       "the minisign public key (base64, or a .pub file) that registry is "
       "signed with"},
      {"cache-dir", ValueType::Path, "IREEPKG_CACHE_DIR", "",
       "the download and package cache (default: $XDG_CACHE_HOME/ireepkg, "
       "else ~/.cache/ireepkg)"},
      {"prefix", ValueType::Path, "IREEPKG_PREFIX", "--prefix",
       "the prefix outside projects (default: $XDG_DATA_HOME/ireepkg, else "
       "~/.local/share/ireepkg); a project's own prefix still wins"},
      {"parallel-downloads", ValueType::Integer, "IREEPKG_PARALLEL_DOWNLOADS",
       "", "archive downloads in flight at once (1 to 256; default 50)"},
      {"color", ValueType::Color, "NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE",
       "--color", "auto, always or never (default auto)"},
      {"offline", ValueType::Bool, "IREEPKG_OFFLINE", "--offline",
       "true: never open a network connection (default false)"},
      {"load-checks", ValueType::Bool, "IREEPKG_LOAD_CHECKS",
       "--no-load-checks",
       "false: install, sync, add, update and pack load no package code to "
       "check it (MLIR plugins, runtime plugins' imports) (default true)"},
  };
  return table;
}

const KeySpec *findKey(const std::string &name) {
  for (const KeySpec &k : keys())
    if (k.name == name)
      return &k;
  return nullptr;
}

Expected<std::string> userConfigPath() {
  if (const char *f = environmentOverride("IREEPKG_CONFIG_FILE"); f && *f)
    return std::string(f);
  if (const char *x = environmentOverride("XDG_CONFIG_HOME"); x && x[0] == '/')
    return std::string(x) + "/ireepkg/config.toml";
  auto home = homeDirectory();
  if (!home)
    return makeError(ErrorCode::NotFound,
                     "no user configuration file: HOME is not set", {},
                     "set IREEPKG_CONFIG_FILE to the file to use");
  return *home + "/.config/ireepkg/config.toml";
}

std::vector<std::string> configPaths() {
  std::vector<std::string> out = {kSystemConfigPath};
  if (runningPrivileged())
    return out;
  if (auto user = userConfigPath())
    out.push_back(*user);
  return out;
}

namespace {

Location at(const std::string &path, const toml::source_region &r) {
  return Location{path, static_cast<uint32_t>(r.begin.line),
                  static_cast<uint32_t>(r.begin.column), "", "", ""};
}

const char *typeName(ValueType t) {
  switch (t) {
  case ValueType::String:
    return "a string";
  case ValueType::Path:
    return "a path (a string)";
  case ValueType::Bool:
    return "true or false";
  case ValueType::Integer:
    return "a whole number from 1 to 256";
  case ValueType::Color:
    return "\"auto\", \"always\" or \"never\"";
  }
  return "";
}

/// The value as text, or nullopt when it is not of the key's type.
std::optional<std::string> textOf(const KeySpec &k, const toml::node &n) {
  switch (k.type) {
  case ValueType::String:
  case ValueType::Path:
    if (auto s = n.value<std::string>(); s && !s->empty())
      return *s;
    return std::nullopt;
  case ValueType::Color:
    if (auto s = n.value<std::string>();
        s && (*s == "auto" || *s == "always" || *s == "never"))
      return *s;
    return std::nullopt;
  case ValueType::Bool:
    if (n.is_boolean())
      return *n.value<bool>() ? "true" : "false";
    return std::nullopt;
  case ValueType::Integer:
    if (n.is_integer()) {
      int64_t v = *n.value<int64_t>();
      if (v >= 1 && v <= 256)
        return std::to_string(v);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

const std::vector<std::string> &keyNameList() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const KeySpec &k : keys())
      n.push_back(k.name);
    return n;
  }();
  return names;
}

std::string keyNames() {
  std::string out;
  for (const KeySpec &k : keys())
    out += (out.empty() ? "" : ", ") + k.name;
  return out;
}

} // namespace

namespace {

/// Reads `text`, the content of the file `path`, as readConfigFile does.
Expected<ConfigFile> parseConfigText(const std::string &text,
                                     const std::string &path) {
  ConfigFile out;
  out.path = path;
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error &e) {
    std::string what(e.description());
    for (size_t i = 0; (i = what.find('\n', i)) != std::string::npos;)
      what.replace(i, 1, "\\n");
    return makeError(ErrorCode::Parse, "not a valid TOML file: " + what,
                     at(path, e.source()),
                     "fix the file, or see `ireepkg config list` for the keys");
  }
  for (const auto &[name, node] : table) {
    std::string key(name.str());
    const KeySpec *spec = findKey(key);
    if (!spec)
      return makeError(ErrorCode::Invalid,
                       "unknown key \"" + key + "\"" +
                           didYouMean(key, std::span<const std::string>(
                                               keyNameList())),
                       at(path, name.source()),
                       "the keys are " + keyNames() +
                           " (each at the top of the file, before any table)");
    auto value = textOf(*spec, node);
    if (!value)
      return makeError(ErrorCode::Invalid,
                       "\"" + key + "\" must be " + typeName(spec->type),
                       at(path, node.source()), spec->help);
    // A relative path is relative to the file's directory.
    if (spec->type == ValueType::Path && (*value)[0] != '/')
      value = (fs::absolute(path).parent_path() / *value)
                  .lexically_normal()
                  .string();
    out.settings.push_back(Setting{key, *value, at(path, node.source())});
  }
  return out;
}

} // namespace

Expected<ConfigFile> readConfigFile(const std::string &path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return ConfigFile{path, {}};
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 &&
      !fsutil::onlyOwnerWrites(st, /*orRoot=*/true)) {
    ConfigFile out;
    out.path = path;
    out.ignored = "another user may change it (it must belong to you or to "
                  "root, and neither its group nor others may write it)";
    return out;
  }
  auto text = fsutil::readFile(path, 1u << 20);
  if (!text)
    return Unexpected(text.error());
  return parseConfigText(*text, path);
}

Expected<std::vector<ConfigFile>> readConfig() {
  std::vector<ConfigFile> out;
  for (const std::string &p : configPaths()) {
    auto f = readConfigFile(p);
    if (!f)
      return Unexpected(f.error());
    out.push_back(std::move(*f));
  }
  return out;
}

const Setting *lookup(const std::vector<ConfigFile> &files,
                      const std::string &key) {
  const Setting *found = nullptr;
  for (const ConfigFile &f : files)
    for (const Setting &s : f.settings)
      if (s.key == key)
        found = &s;
  return found;
}

Expected<std::string> tomlValue(const std::string &key,
                                const std::string &value) {
  const KeySpec *spec = findKey(key);
  if (!spec)
    return makeError(ErrorCode::Usage, "unknown key \"" + key + "\"", {},
                     "the keys are " + keyNames());
  // One line of the file, whatever the type: a newline would start
  // another key ("true\ncache-dir = ..."), and no value needs any other
  // control character either.
  for (char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return makeError(ErrorCode::Usage,
                       "\"" + key +
                           "\" may not hold control characters (newlines, "
                           "tabs, ...)",
                       {}, spec->help);
  // Read the value as TOML would hold it, then check it like a file's.
  std::string literal;
  switch (spec->type) {
  case ValueType::Bool:
  case ValueType::Integer:
    literal = value;
    break;
  default: {
    literal = "\"";
    for (char c : value) {
      if (c == '"' || c == '\\')
        literal += '\\';
      literal += c;
    }
    literal += "\"";
  }
  }
  try {
    // Exactly the one key, of the key's type; true, false and numbers are
    // written as textOf reads them ("true # x" is true, written "true").
    toml::table t = toml::parse("v = " + literal);
    if (const toml::node *n = t.get("v"); n && t.size() == 1)
      if (auto text = textOf(*spec, *n))
        return spec->type == ValueType::Bool || spec->type == ValueType::Integer
                   ? *text
                   : literal;
  } catch (const toml::parse_error &) {
  }
  return makeError(ErrorCode::Usage,
                   "\"" + key + "\" must be " + typeName(spec->type) +
                       ", not \"" + value + "\"",
                   {}, spec->help);
}

namespace {

/// Index of the line that sets `key` at the top level, or -1; `firstTable`
/// gets the index of the first [table] line (or the line count).
long findLine(const std::vector<std::string> &lines, const std::string &key,
              size_t &firstTable) {
  firstTable = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string l = lines[i];
    size_t s = l.find_first_not_of(" \t");
    if (s == std::string::npos || l[s] == '#')
      continue;
    if (l[s] == '[') {
      firstTable = i;
      return -1;
    }
    size_t e = l.find_first_of(" \t=", s);
    std::string k = l.substr(s, e - s);
    if (k.size() >= 2 && (k.front() == '"' || k.front() == '\''))
      k = k.substr(1, k.size() - 2);
    if (k == key)
      return static_cast<long>(i);
  }
  return -1;
}

/// The settings of `f` other than `key`'s, in order.
std::vector<std::pair<std::string, std::string>>
settingsBut(const ConfigFile &f, const std::string &key) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Setting &s : f.settings)
    if (s.key != key)
      out.emplace_back(s.key, s.value);
  return out;
}

/// Edits the line of `key` (an edit of text, so that comments and the
/// order stay). Nothing is written unless the edited text, read back, holds
/// exactly the settings the file held with `key` changed as asked (a line
/// edit cannot see, for instance, a multi-line string that holds a line
/// like "key = ..."); the new file replaces the old one by a rename, with
/// the old file's permissions.
Status rewrite(const std::string &path, const std::string &key,
               const std::optional<std::string> &literal) {
  std::string text;
  std::optional<ConfigFile> before;
  std::optional<mode_t> mode;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto t = fsutil::readFile(path, 1u << 20);
    if (!t)
      return Unexpected(t.error());
    text = std::move(*t);
    // The file must be valid before it is edited: never guess around a
    // broken one.
    auto f = parseConfigText(text, path);
    if (!f)
      return Unexpected(f.error());
    before = std::move(*f);
    struct stat st;
    if (::stat(path.c_str(), &st) == 0)
      mode = st.st_mode & 07777;
  }
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  size_t firstTable = 0;
  long at = findLine(lines, key, firstTable);
  if (literal) {
    std::string line = key + " = " + *literal;
    if (at >= 0)
      lines[static_cast<size_t>(at)] = line;
    else
      lines.insert(lines.begin() + static_cast<long>(firstTable), line);
  } else {
    if (at < 0)
      return ok();
    lines.erase(lines.begin() + at);
  }
  std::string out;
  for (const std::string &l : lines)
    out += l + "\n";
  auto after = parseConfigText(out, path);
  bool same = after && settingsBut(*after, key) ==
                           settingsBut(before.value_or(ConfigFile{}), key);
  if (same) {
    const Setting *now = nullptr;
    for (const Setting &st : after->settings)
      if (st.key == key)
        now = &st;
    if (literal) {
      auto want = parseConfigText(key + " = " + *literal + "\n", path);
      same = now && want && want->settings.size() == 1 &&
             want->settings[0].value == now->value;
    } else {
      same = now == nullptr;
    }
  }
  if (!same)
    return makeError(ErrorCode::Invalid,
                     "cannot change \"" + key +
                         "\" here without changing more of the file (a "
                         "value over several lines?); the file was left as it "
                         "was",
                     Location::inFile(path),
                     "edit the file by hand, or keep each value on one line");
  if (Status s = fsutil::makeDirs(fs::path(path).parent_path().string()); !s)
    return s;
  // Created 0644 unless it was there; the umask may take bits away, which
  // are then given back (the new file is never more open than the old).
  if (Status s = fsutil::writeFileAtomic(path, out, mode.value_or(0644)); !s)
    return s;
  struct stat st;
  if (mode && ::stat(path.c_str(), &st) == 0 && (st.st_mode & 07777) != *mode)
    (void)::chmod(path.c_str(), *mode);
  return ok();
}

} // namespace

Status setValue(const std::string &path, const std::string &key,
                const std::string &value) {
  auto literal = tomlValue(key, value);
  if (!literal)
    return Unexpected(literal.error());
  return rewrite(path, key, *literal);
}

Status unsetValue(const std::string &path, const std::string &key) {
  if (!findKey(key))
    return makeError(ErrorCode::Usage, "unknown key \"" + key + "\"", {},
                     "the keys are " + keyNames());
  return rewrite(path, key, std::nullopt);
}

} // namespace ireepkg::config
