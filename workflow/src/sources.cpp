//===- workflow/src/sources.cpp - Projects, bundles and package sources ---===//
//
// See sources.h and ireepkg/workflow/workflow.h: the IREE version a command
// checks against, loading a project, opening an offline bundle, and the
// sources (registries, path packages) a resolution reads.
//
//===----------------------------------------------------------------------===//
#include "sources.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/iree/iree_version.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/project/project.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/pkg/prefix/install.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace ireepkg::workflow {

using registry::RegistryClient;
using registry::RegistrySpec;

//===----------------------------------------------------------------------===//
// IREE version
//===----------------------------------------------------------------------===//

std::optional<Version> ireeVersionFor(const Environment &env,
                                      std::string *source,
                                      std::optional<Error> *problem) {
  if (env.ireeVersion) {
    if (source)
      *source = "--iree-version";
    return env.ireeVersion;
  }
  if (env.ignoreIree)
    return std::nullopt;
  std::vector<std::string> tools;
  if (!env.ireeCompile.empty())
    tools.push_back(env.ireeCompile);
  auto iree = detectIree(tools);
  if (!iree) {
    if (problem)
      *problem = iree.error();
    return std::nullopt;
  }
  if (source)
    *source = iree->describeSource();
  return iree->version;
}

IreeRequirementCheck ireeCheckFor(const Environment &env) {
  IreeRequirementCheck check;
  std::optional<Error> problem;
  check.version = ireeVersionFor(env, &check.source, &problem);
  if (problem)
    check.problem = problem->message;
  check.ignore = env.ignoreIreeRequirements;
  return check;
}

//===----------------------------------------------------------------------===//
// Projects
//===----------------------------------------------------------------------===//


namespace detail {

std::string absoluteUrl(const std::string &url, const std::string &baseDir) {
  if (net::isHttpUrl(url) || url.rfind("file://", 0) == 0 ||
      url.find("://") != std::string::npos || url.empty() ||
      url[0] == '/')
    return url;
  return fs::weakly_canonical(fs::path(baseDir) / url).string();
}

} // namespace detail

std::vector<RegistrySpec> projectRegistries(const Project &project) {
  std::vector<RegistrySpec> out;
  for (const RegistryRef &r : project.parsed.registries) {
    RegistrySpec s;
    s.name = r.name;
    s.url = detail::absoluteUrl(r.url, project.dir);
    for (const std::string &m : r.mirrors)
      s.mirrors.push_back(detail::absoluteUrl(m, project.dir));
    if (!r.publicKey.empty())
      s.publicKeys.push_back(r.publicKey);
    out.push_back(std::move(s));
  }
  return out;
}

namespace detail {

Expected<OpenedBundle> openBundle(const std::string &bundle,
                                  const std::string &cacheRoot) {
  OpenedBundle out;
  out.file = fsutil::absolutePath(bundle);
  std::error_code ec;
  if (!fs::is_regular_file(out.file, ec))
    return makeError(ErrorCode::NotFound, "no such bundle file",
                     Location::inFile(bundle),
                     "bundles are made by `ireepkg bundle create`");
  // Identify it by content: the same bytes are extracted once.
  auto sha = sha256File(out.file);
  if (!sha)
    return Unexpected(sha.error());
  std::string dir = cacheRoot + "/bundles/" + *sha;
  out.dir = dir;
  if (!fsutil::isDirectory(dir)) {
    out.fresh = true;
    std::string tmp = dir + ".tmp-" + std::to_string(::getpid());
    (void)fsutil::removeTree(tmp);
    if (Status s = fsutil::makeDirs(cacheRoot + "/bundles"); !s)
      return Unexpected(s.error());
    auto n = extractFiles(out.file, tmp);
    if (!n) {
      Error e = n.error();
      e.message = "not a valid bundle: " + e.message;
      return Unexpected(std::move(e));
    }
    if (Status s = fsutil::renameDurable(tmp, dir); !s) {
      (void)fsutil::removeTree(tmp);
      if (!fsutil::isDirectory(dir)) // another process may have won
        return Unexpected(s.error());
    }
  }
  auto doc = JsonDocument::load(dir + "/bundle.json");
  if (!doc)
    return makeError(ErrorCode::Invalid,
                     "not a valid bundle: it has no readable bundle.json",
                     Location{bundle, 0, 0, "", "", "bundle.json"},
                     "bundles are made by `ireepkg bundle create`");
  const nlohmann::json &j = doc->root();
  if (!j.is_object() || !j.contains("registries") ||
      !j["registries"].is_array())
    return makeError(ErrorCode::Invalid,
                     "not a valid bundle: bundle.json lists no registries",
                     Location{bundle, 0, 0, "/registries", "", "bundle.json"});
  for (const auto &r : j["registries"]) {
    if (!r.is_object() || !r.contains("url") || !r["url"].is_string() ||
        !r.contains("dir") || !r["dir"].is_string())
      return makeError(
          ErrorCode::Invalid,
          "not a valid bundle: a registry entry lacks url or dir",
          Location{bundle, 0, 0, "/registries", "", "bundle.json"});
    std::string sub = r["dir"].get<std::string>();
    if (sub.find("..") != std::string::npos || sub.empty() || sub[0] == '/')
      return makeError(
          ErrorCode::Invalid,
          "not a valid bundle: unsafe registry directory \"" + sub + "\"",
          Location{bundle, 0, 0, "/registries", "", "bundle.json"});
    out.registries[r["url"].get<std::string>()] = dir + "/" + sub;
  }
  return out;
}

/// Reads a local package directory's manifest.
Expected<Manifest> readPathManifest(const std::string &dir,
                                    const std::string &projectFile,
                                    size_t index) {
  std::string file = dir + "/ireeplugin.json";
  auto doc = JsonDocument::load(file);
  if (!doc) {
    Error e = doc.error();
    e.hint = "plugins.json /plugins/" + std::to_string(index) + "/path names " +
             dir + ", which must be a package directory";
    return Unexpected(std::move(e));
  }
  DiagnosticList diags;
  Manifest m = parseManifest(*doc, ParseOptions{}, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return m;
}

/// Sets up the sources of a project: registries, pins and path packages.
Expected<std::unique_ptr<Sources>> projectSources(const Project &project,
                                                  const Environment &env,
                                                  Reporter &reporter) {
  auto src =
      std::make_unique<Sources>(projectRegistries(project), env, reporter);
  for (const RegistryRef &r : project.parsed.registries)
    src->rememberRawUrl(absoluteUrl(r.url, project.dir), r.url);
  if (Status s = src->useBundle(); !s)
    return Unexpected(s.error());
  const auto &plugins = project.parsed.plugins;
  for (size_t i = 0; i < plugins.size(); ++i) {
    const ProjectPlugin &p = plugins[i];
    if (!p.path.empty()) {
      std::string dir = fs::path(p.path).is_absolute()
                            ? p.path
                            : (fs::path(project.dir) / p.path).string();
      auto m = readPathManifest(dir, project.file, i);
      if (!m)
        return Unexpected(m.error());
      if (m->name != p.name)
        return makeError(ErrorCode::Conflict,
                         "plugin \"" + p.name + "\" points at " + dir +
                             ", which holds package \"" + m->name + "\"",
                         Location{project.file, 0, 0,
                                  "/plugins/" + std::to_string(i) + "/path",
                                  p.name, ""},
                         "fix the name or the path");
      src->addPath(p.name, std::move(*m), fs::weakly_canonical(dir).string());
    } else if (!p.registry.empty()) {
      if (Status s = src->pin(p.name, p.registry, project.file, i); !s)
        return Unexpected(s.error());
    }
  }
  if (project.parsed.registries.empty())
    for (const ProjectPlugin &p : plugins)
      if (p.path.empty())
        return makeError(
            ErrorCode::Invalid,
            "plugin \"" + p.name +
                "\" comes from a registry, but plugins.json "
                "lists none",
            Location{project.file, 0, 0, "/registries", p.name, ""},
            "add a registry with its public_key to "
            "\"registries\" (see `ireepkg init --help`)");
  return src;
}

std::vector<Platform> projectPlatforms(const Project &project) {
  std::vector<Platform> out = project.parsed.platforms;
  if (out.empty())
    out.push_back(hostPlatform());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}


/// Activation order of a resolution: the project's order, each package
/// after its dependencies (dependencies in name order).
std::vector<std::string>
activationFor(const std::vector<std::string> &projectOrder,
              const std::map<std::string, std::vector<std::string>> &deps) {
  std::vector<std::string> out;
  std::set<std::string> done, active;
  std::function<void(const std::string &)> visit = [&](const std::string &n) {
    if (done.count(n) || active.count(n))
      return;
    active.insert(n);
    if (auto it = deps.find(n); it != deps.end())
      for (const std::string &d : it->second)
        visit(d);
    active.erase(n);
    done.insert(n);
    out.push_back(n);
  };
  for (const std::string &n : projectOrder)
    if (deps.count(n))
      visit(n);
  for (const auto &[n, d] : deps)
    visit(n);
  return out;
}

/// No IREE was found: said once, and what it means for the resolution.
void warnIreeUnknown(const Error &problem, Reporter &reporter) {
  reporter.warning(Diagnostic{
      Severity::Warning, problem.where,
      problem.message + "; resolving without checking the packages' "
                        "IREE requirements (requires.iree)",
      "put the IREE tools on PATH (or activate their virtual environment), "
      "or give the IREE version with --iree-version"});
}

} // namespace detail

} // namespace ireepkg::workflow
