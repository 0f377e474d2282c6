//===- pkg/src/project/scaffold.cpp - New projects (`ireepkg new`) --------===//
#include "ireepkg/pkg/project/scaffold.h"
#include "ireepkg/manifest_schema/names.h"

#include "ireepkg/base/file_util.h"

#include "ireepkg/manifest_schema/platform.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <system_error>

namespace fs = std::filesystem;

namespace ireepkg {

std::vector<std::string> scaffoldKinds() {
  std::set<std::string> kinds;
  for (const ScaffoldFile &f : scaffoldFiles()) {
    std::string_view p = f.path;
    kinds.insert(std::string(p.substr(0, p.find('/'))));
  }
  return {kinds.begin(), kinds.end()};
}

static std::string substitute(std::string_view text, const std::string &name,
                              const std::string &ident,
                              const std::string &identUpper) {
  static const std::pair<std::string_view, int> kKeys[] = {
      {"@NAME@", 0}, {"@IDENT_UPPER@", 2}, {"@IDENT@", 1}};
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (text[i] == '@') {
      for (const auto &[key, which] : kKeys) {
        if (text.substr(i, key.size()) == key) {
          out += which == 0 ? name : which == 1 ? ident : identUpper;
          i += key.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced)
      out += text[i++];
  }
  return out;
}

Expected<std::vector<std::string>> writeScaffold(const std::string &dir,
                                                 const std::string &kind,
                                                 const std::string &name) {
  std::vector<std::string> kinds = scaffoldKinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    std::string list;
    for (const std::string &k : kinds)
      list += (list.empty() ? "" : ", ") + k;
    return makeError(ErrorCode::Usage,
                     "\"" + kind + "\" is not a kind of package project", {},
                     "use one of: " + list);
  }
  if (!isValidPackageName(name))
    return makeError(ErrorCode::Usage,
                     "\"" + name + "\" is not a valid package name", {},
                     std::string(kPackageNameRule) + "; give one with --name");
  std::error_code ec;
  if (fs::exists(dir, ec) &&
      (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)))
    return makeError(ErrorCode::Conflict,
                     dir + " already exists and is not an empty directory", {},
                     "give a new directory");
  std::string ident = name;
  for (char &c : ident)
    if (c == '-' || c == '.')
      c = '_';
  if (std::isdigit(static_cast<unsigned char>(ident[0])))
    ident = "p_" + ident;
  std::string identUpper = ident;
  for (char &c : identUpper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  std::vector<std::string> written;
  std::string prefix = kind + "/";
  for (const ScaffoldFile &f : scaffoldFiles()) {
    std::string_view p = f.path;
    if (p.substr(0, prefix.size()) != prefix)
      continue;
    std::string rel =
        substitute(p.substr(prefix.size()), name, ident, identUpper);
    fs::path target = fs::path(dir) / rel;
    if (Status s = fsutil::makeDirs(target.parent_path().string()); !s)
      return Unexpected(s.error());
    if (Status s = fsutil::writeFileAtomic(
            target.string(), substitute(f.content, name, ident, identUpper));
        !s)
      return Unexpected(s.error());
    written.push_back(rel);
  }
  std::sort(written.begin(), written.end());
  return written;
}

} // namespace ireepkg
