//===- pkg/src/iree/iree_version.cpp - The IREE in use --------------------===//
//
// See ireepkg/iree_version.h.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/base/text.h"
#include "ireepkg/pkg/prefix/install.h"
#include "iree_requirement.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg {

namespace {

constexpr double kVersionTimeoutSeconds = 20;

bool isExecutableFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::string normalized(const fs::path &p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  return (ec ? p : abs).lexically_normal().string();
}

/// The `Name:` and `Version:` of a METADATA file (its header part).
std::optional<PythonDistribution> readMetadata(const fs::path &file) {
  std::ifstream in(file);
  if (!in)
    return std::nullopt;
  PythonDistribution d;
  d.metadata = file.string();
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty())
      break; // the description follows the headers
    auto value = [&](std::string_view key) -> std::optional<std::string> {
      if (line.size() <= key.size() || lower(line.substr(0, key.size())) != key)
        return std::nullopt;
      std::string v = line.substr(key.size());
      size_t b = v.find_first_not_of(" \t");
      return b == std::string::npos ? "" : v.substr(b);
    };
    if (auto v = value("name:"); v && d.name.empty())
      d.name = *v;
    else if (auto v = value("version:"); v && d.version.empty())
      d.version = *v;
  }
  if (d.name.empty() || d.version.empty())
    return std::nullopt;
  return d;
}

/// A distribution in `site` (a site-packages directory) whose name starts
/// with "iree" and whose RECORD lists one of `targets` (normalized paths).
std::optional<PythonDistribution>
findInSite(const fs::path &site, const std::vector<std::string> &targets) {
  std::error_code ec;
  std::vector<fs::path> dists;
  for (const auto &entry : fs::directory_iterator(site, ec)) {
    std::string dir = entry.path().filename().string();
    if (endsWith(dir, ".dist-info") && lower(dir).rfind("iree", 0) == 0)
      dists.push_back(entry.path());
  }
  std::sort(dists.begin(), dists.end());
  for (const fs::path &dist : dists) {
    std::ifstream record(dist / "RECORD");
    std::string line;
    while (std::getline(record, line)) {
      std::string rel = line.substr(0, line.find(','));
      if (rel.empty())
        continue;
      std::string full = (site / rel).lexically_normal().string();
      if (std::find(targets.begin(), targets.end(), full) == targets.end())
        continue;
      return readMetadata(dist / "METADATA");
    }
  }
  return std::nullopt;
}

/// The first token after "version" in `output` that reads as an IREE
/// version ("IREE compiler version 3.13.0rc20261016 @ 89ece87b...").
std::optional<std::pair<Version, std::string>>
versionInOutput(const std::string &output) {
  std::istringstream in(output);
  std::string word;
  bool afterVersion = false;
  while (in >> word) {
    if (afterVersion)
      if (auto v = parseIreeVersion(word))
        return std::pair{*v, word};
    afterVersion = lower(word) == "version";
  }
  return std::nullopt;
}

} // namespace

std::optional<Version> parseIreeVersion(std::string_view text) {
  // Releases print "3.13.0", nightlies "3.13.0rc20261016"; anything after
  // MAJOR.MINOR.PATCH becomes a SemVer pre-release. Matched by hand rather
  // than with std::regex: compiling that pattern cost every lock and sync
  // about 1.8 million instructions at startup, a tenth of a no-op sync.
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  while (!text.empty() && space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && space(text.back()))
    text.remove_suffix(1);
  size_t i = 0;
  std::string core;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (i >= text.size() || text[i] != '.')
        return std::nullopt;
      core += text[i++];
    }
    size_t start = i;
    while (i < text.size() && digit(text[i]))
      ++i;
    if (i == start)
      return std::nullopt;
    core += text.substr(start, i - start);
  }
  std::string rest(text.substr(i));
  for (char c : rest)
    if (!digit(c) && !letter(c) && c != '.' && c != '+' && c != '-')
      return std::nullopt;
  std::string build;
  if (size_t plus = rest.find('+'); plus != std::string::npos) {
    build = rest.substr(plus);
    rest = rest.substr(0, plus);
  }
  while (!rest.empty() && (rest[0] == '-' || rest[0] == '.'))
    rest.erase(0, 1);
  auto v = Version::parse(core + (rest.empty() ? "" : "-" + rest) + build);
  if (!v)
    return std::nullopt;
  return *v;
}

LocatedTool locateTool(const std::string &name) {
  if (name.empty())
    return {};
  if (name.find('/') != std::string::npos)
    return isExecutableFile(name) ? LocatedTool{normalized(name), "path"}
                                  : LocatedTool{};
  if (const char *path = environmentOverride("PATH")) {
    std::string dirs = path;
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos)
        end = dirs.size();
      std::string dir = dirs.substr(start, end - start);
      std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
      if (isExecutableFile(candidate))
        return {normalized(candidate), "PATH"};
      start = end + 1;
    }
  }
  if (const char *venv = environmentOverride("VIRTUAL_ENV"); venv && *venv) {
    std::string candidate = std::string(venv) + "/bin/" + name;
    if (isExecutableFile(candidate))
      return {normalized(candidate), "VIRTUAL_ENV"};
  }
  return {};
}

std::optional<PythonDistribution>
ireeDistributionOf(const std::string &toolPath) {
  // The path as found and, if it is a link, where it leads.
  std::vector<std::string> targets = {normalized(toolPath)};
  std::error_code ec;
  fs::path real = fs::canonical(toolPath, ec);
  if (!ec && real.string() != targets[0])
    targets.push_back(real.string());
  std::vector<fs::path> sites;
  for (const std::string &t : targets) {
    fs::path p(t);
    // A console script: <env>/bin/<tool>, with
    // <env>/lib*/python*/site-packages.
    fs::path env = p.parent_path().parent_path();
    for (const char *lib : {"lib", "lib64"})
      for (const auto &python : fs::directory_iterator(env / lib, ec))
        if (python.path().filename().string().rfind("python", 0) == 0)
          sites.push_back(python.path() / "site-packages");
    // A native binary inside site-packages: a directory above it.
    for (fs::path d = p.parent_path(); !d.empty() && d != d.root_path();
         d = d.parent_path())
      if (d.filename() == "site-packages" || d.filename() == "dist-packages")
        sites.push_back(d);
  }
  for (const fs::path &site : sites)
    if (auto d = findInSite(site, targets))
      return d;
  return std::nullopt;
}

std::string IreeInstallation::describeSource() const {
  if (distribution)
    return distribution->name + " " + distribution->version + " (" + tool + ")";
  return "`" + tool + " --version`";
}

Expected<IreeInstallation> ireeToolVersion(const std::string &toolPath,
                                           const std::string &toolSource) {
  IreeInstallation out;
  out.tool = normalized(toolPath);
  out.toolSource = toolSource;
  if (auto dist = ireeDistributionOf(out.tool)) {
    auto v = parseIreeVersion(dist->version);
    if (!v)
      return makeError(ErrorCode::Invalid,
                       "the version \"" + dist->version + "\" of " +
                           dist->name + " is not a version ireepkg can read",
                       Location::inFile(dist->metadata));
    out.version = *v;
    out.versionText = dist->version;
    out.distribution = std::move(*dist);
    return out;
  }
  ChildOptions options;
  options.argv = {out.tool, "--version"};
  options.timeoutSeconds = kVersionTimeoutSeconds;
  options.ownProcessGroup = true;
  options.maxOut = options.maxErr = 1 << 16;
  auto r = runChild(options);
  if (!r)
    return Unexpected(r.error());
  if (r->spawnError)
    return makeError(ErrorCode::Io, "cannot run " + out.tool + ": " +
                                        std::strerror(r->spawnError));
  if (r->timedOut)
    return makeError(ErrorCode::Io,
                     "`" + out.tool + " --version` did not finish within " +
                         std::to_string(int(kVersionTimeoutSeconds)) + " s");
  auto found = versionInOutput(r->out + "\n" + r->err);
  if (!found)
    return makeError(ErrorCode::Invalid,
                     "`" + out.tool + " --version` prints no IREE version", {},
                     "install IREE from the pip wheels (iree-base-compiler, "
                     "iree-base-runtime), or pass --iree-version where the "
                     "command has it");
  out.version = found->first;
  out.versionText = found->second;
  return out;
}

Expected<IreeInstallation> detectIree(const std::vector<std::string> &tools) {
  const std::vector<std::string> &names =
      tools.empty() ? defaultIreeTools() : tools;
  std::optional<Error> firstProblem;
  for (const std::string &name : names) {
    LocatedTool t = locateTool(name);
    if (t.path.empty())
      continue;
    auto v = ireeToolVersion(t.path, t.source);
    if (v)
      return v;
    if (!firstProblem)
      firstProblem = v.error();
  }
  if (firstProblem)
    return Unexpected(*firstProblem);
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " nor " : ", ") + names[i];
  return makeError(
      ErrorCode::NotFound,
      "no IREE found: " +
          (names.size() == 1 ? names[0] + " is" : "neither " + list + " is") +
          " on PATH or in $VIRTUAL_ENV/bin",
      {},
      "install IREE (pip install iree-base-compiler "
      "iree-base-runtime) or activate its virtual environment");
}

} // namespace ireepkg

//===----------------------------------------------------------------------===//
// requires.iree at install and sync
//===----------------------------------------------------------------------===//

namespace ireepkg {

Status checkIreeRequirements(
    const IreeRequirementCheck &check,
    const std::vector<std::pair<const Manifest *, std::string>> &incoming,
    Reporter &reporter) {
  std::vector<std::string> unchecked;
  DiagnosticList problems;
  for (const auto &[m, archive] : incoming) {
    if (!m->requiresIree)
      continue;
    std::string who = m->name + " " + m->version.str();
    if (!check.version) {
      unchecked.push_back(who + " (" + m->requiresIree->text() + ")");
      continue;
    }
    if (m->requiresIree->set().contains(*check.version))
      continue;
    Location where{
        check.nameArchives ? archive : "", 0, 0, "/requires/iree", m->name,
        std::string(kManifestName)};
    std::string message = who + " requires IREE " + m->requiresIree->text() +
                          ", but IREE " + check.version->str() + " is in use" +
                          (check.source.empty() ? "" : ": " + check.source);
    if (check.ignore) {
      reporter.warning(Diagnostic{Severity::Warning, where,
                                  message + "; installing it anyway "
                                            "(--ignore-iree-version)",
                                  ""});
      continue;
    }
    problems.error(where, message,
                   "the IREE versions " + m->name +
                       " works with are \"requires.iree\" in its manifest (" +
                       kManifestName + " of " + m->name +
                       "): use an IREE it accepts, or a version of " + m->name +
                       " made for IREE " + check.version->str() +
                       "; --ignore-iree-version installs it anyway");
  }
  if (problems.hasErrors())
    return makeError(ErrorCode::Conflict, problems);
  if (!unchecked.empty() && !check.problem.empty()) {
    std::string list;
    for (const std::string &u : unchecked)
      list += (list.empty() ? "" : ", ") + u;
    reporter.warning(Diagnostic{
        Severity::Warning,
        {},
        check.problem + "; the IREE requirements of " + list +
            " are not checked",
        "put the IREE tools on PATH (or activate their virtual environment), "
        "or give the IREE version with --iree-version"});
  }
  return ok();
}

} // namespace ireepkg
