//===- pkg/src/project/lockfile_text.cpp - Writing plugins.lock.json ------===//
//
// serializeLockfile: the lockfile's text, written directly (see LockWriter).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/project/project.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace ireepkg::project {

using json = nlohmann::json;

namespace {

/// The lockfile's text, written directly rather than through a json tree:
/// for a thousand packages the tree took 2-3 ms and megabytes of fresh
/// memory in every lock that writes one. The text is what
/// json::dump(2, ' ', false, replace) gives for the same document, byte
/// for byte (tests/unit/pkg/test_project.cpp compares the two on random
/// lockfiles): keys in sorted order, two-space indents, `[]` for an empty
/// list.
class LockWriter {
public:
  std::string out;

  /// A string as nlohmann writes it: printable ASCII as it is, anything
  /// else (escapes, UTF-8, invalid bytes replaced) by nlohmann itself.
  void string(std::string_view s) {
    for (unsigned char c : s)
      if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
        out += json(std::string(s))
                   .dump(-1, ' ', false, json::error_handler_t::replace);
        return;
      }
    out += '"';
    out += s;
    out += '"';
  }
  void indent(int depth) { out.append(size_t(depth) * 2, ' '); }
  /// `"key": ` at `depth`, after a comma unless it is the first.
  void key(std::string_view k, int depth, bool &first) {
    out += first ? "\n" : ",\n";
    first = false;
    indent(depth);
    string(k);
    out += ": ";
  }
  void close(char bracket, int depth) {
    out += '\n';
    indent(depth);
    out += bracket;
  }
  void strings(const std::vector<std::string> &list, int depth) {
    if (list.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    bool first = true;
    for (const std::string &item : list) {
      out += first ? "\n" : ",\n";
      first = false;
      indent(depth + 1);
      string(item);
    }
    close(']', depth);
  }
};

/// Each platform's name once, sorted.
std::vector<std::string> platformNames(const std::vector<Platform> &platforms) {
  std::set<std::string> names;
  for (const Platform &p : platforms)
    names.insert(p.str());
  return {names.begin(), names.end()};
}

} // namespace

std::string serializeLockfile(const Lockfile &lock) {
  std::vector<const LockedPackage *> packages;
  for (const LockedPackage &p : lock.packages)
    packages.push_back(&p);
  std::stable_sort(packages.begin(), packages.end(),
                   [](const LockedPackage *a, const LockedPackage *b) {
                     return a->name < b->name;
                   });
  LockWriter w;
  w.out.reserve(512 + 512 * packages.size());
  w.out += '{';
  bool first = true;
  w.key("activation", 1, first);
  w.strings(lock.activation, 1);
  w.key("input_hash", 1, first);
  w.string(lock.inputHash);
  if (lock.ireeVersion) {
    w.key("iree_version", 1, first);
    w.string(lock.ireeVersion->str());
  }
  w.key("lock_version", 1, first);
  w.out += std::to_string(lock.lockVersion);
  w.key("packages", 1, first);
  if (packages.empty()) {
    w.out += "[]";
  } else {
    w.out += '[';
    bool firstPackage = true;
    for (const LockedPackage *p : packages) {
      w.out += firstPackage ? "\n" : ",\n";
      firstPackage = false;
      w.indent(2);
      w.out += '{';
      bool firstKey = true;
      // Registry and bundle packages always name their archive; a local
      // package may (when it was packed).
      bool archived = p->sourceKind != LockedPackage::SourceKind::Path;
      if (archived || !p->archive.empty()) {
        w.key("archive", 3, firstKey);
        w.string(p->archive);
      }
      std::vector<std::string> deps;
      deps.reserve(p->dependencies.size());
      for (const auto &[name, version] : p->dependencies)
        deps.push_back(name + "@" + version.str());
      std::sort(deps.begin(), deps.end());
      w.key("dependencies", 3, firstKey);
      w.strings(deps, 3);
      w.key("name", 3, firstKey);
      w.string(p->name);
      if (!p->platforms.empty()) {
        w.key("platforms", 3, firstKey);
        w.strings(platformNames(p->platforms), 3);
      }
      if (archived || !p->sha256.empty()) {
        w.key("sha256", 3, firstKey);
        w.string(p->sha256);
      }
      if (!p->signedBy.empty()) {
        w.key("signed_by", 3, firstKey);
        w.string(p->signedBy);
      }
      if (archived || p->size != 0) {
        w.key("size", 3, firstKey);
        w.out += std::to_string(p->size);
      }
      const char *kind = "registry";
      if (p->sourceKind == LockedPackage::SourceKind::Path)
        kind = "path";
      else if (p->sourceKind == LockedPackage::SourceKind::Bundle)
        kind = "bundle";
      w.key("source", 3, firstKey);
      w.out += '{';
      bool firstSource = true;
      w.key(kind, 4, firstSource);
      w.string(p->source);
      w.close('}', 3);
      w.key("version", 3, firstKey);
      w.string(p->version.str());
      w.close('}', 2);
    }
    w.close(']', 1);
  }
  w.key("platforms", 1, first);
  w.strings(platformNames(lock.platforms), 1);
  w.close('}', 0);
  w.out += '\n';
  return std::move(w.out);
}

} // namespace ireepkg::project
