//===- workflow.cpp - Lock, sync, install by name, bundles ---------------===//
//
// See ireepkg/workflow.h. Every operation checks all it can before it
// changes anything: resolution, option values, signatures and hashes come
// first; the prefix is changed in one transaction at the end, and the
// lockfile is written atomically.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/workflow.h"

#include "file_util.h"
#include "ireepkg/cache.h"
#include "ireepkg/compiler_config.h"
#include "ireepkg/hash.h"
#include "ireepkg/iree_version.h"
#include "ireepkg/json_document.h"
#include "ireepkg/package.h"
#include "ireepkg/project.h"
#include "registry_util.h"
#include "state.h"

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

Expected<Project> loadProject(const std::string &projectFile) {
  Project p;
  p.file = fsutil::absolutePath(projectFile);
  p.dir = fs::path(p.file).parent_path().string();
  p.lockPath = p.dir + "/" + project::kLockFileName;
  auto doc = JsonDocument::load(p.file);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ParseOptions po;
  po.strict = true;
  p.parsed = parseProjectFile(*doc, po, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return p;
}

namespace {

/// A registry URL as plugins.json gives it, made usable from anywhere:
/// relative directories are relative to the project.
std::string absoluteUrl(const std::string &url, const std::string &baseDir) {
  if (net::isHttpUrl(url) || url.rfind("file://", 0) == 0 ||
      url.find("://") != std::string::npos || url.empty() ||
      url[0] == '/')
    return url;
  return fs::weakly_canonical(fs::path(baseDir) / url).string();
}

} // namespace

std::vector<RegistrySpec> projectRegistries(const Project &project) {
  std::vector<RegistrySpec> out;
  for (const RegistryRef &r : project.parsed.registries) {
    RegistrySpec s;
    s.name = r.name;
    s.url = absoluteUrl(r.url, project.dir);
    for (const std::string &m : r.mirrors)
      s.mirrors.push_back(absoluteUrl(m, project.dir));
    if (!r.publicKey.empty())
      s.publicKeys.push_back(r.publicKey);
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

/// An offline bundle, extracted once into the cache: registry URL (as the
/// lock names it) -> directory holding that registry's files.
struct OpenedBundle {
  std::string file;
  std::map<std::string, std::string> registries;
  /// Where it was extracted, and whether this command extracted it (and so
  /// removes it again unless a registry in it proved genuine).
  std::string dir;
  bool fresh = false;
};

Expected<OpenedBundle> openBundle(const std::string &bundle,
                                  const std::string &cacheRoot) {
  OpenedBundle out;
  out.file = fsutil::absolutePath(bundle);
  std::error_code ec;
  if (!fs::is_regular_file(out.file, ec))
    return makeError(ErrorCode::NotFound, "no such bundle file",
                     Location{bundle, 0, 0, "", "", ""},
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

/// The registries a command works with, opened on first use, and the
/// PackageSource the resolver sees: path packages, then registries.
class Sources : public PackageSource {
public:
  Sources(std::vector<RegistrySpec> specs, const Environment &env,
          Reporter &reporter)
      : specs_(std::move(specs)), env_(env), reporter_(reporter),
        clients_(specs_.size()) {
    // Without a cache location, opening a registry reports it.
    if (auto root = registry::detail::cacheRootFor(env.client))
      cacheRoot_ = *root;
  }

  /// A bundle this command extracted but whose signatures never verified
  /// (a wrong key, a forged or broken bundle) does not stay in the cache.
  ~Sources() override {
    if (bundle_ && bundle_->fresh && !bundleTrusted_)
      (void)fsutil::removeTree(bundle_->dir);
  }

  Status useBundle() {
    if (env_.bundle.empty())
      return ok();
    if (cacheRoot_.empty())
      return Unexpected(registry::detail::cacheRootFor(env_.client).error());
    auto b = openBundle(env_.bundle, cacheRoot_);
    if (!b)
      return Unexpected(b.error());
    bundle_ = std::move(*b);
    return ok();
  }

  /// A local package directory standing in for `name`.
  void addPath(const std::string &name, Manifest manifest, std::string dir) {
    paths_[name] = {std::move(manifest), std::move(dir)};
  }

  /// plugins.json ties `name` to the registry named `registryName`.
  Status pin(const std::string &name, const std::string &registryName,
             const std::string &projectFile, size_t pluginIndex) {
    for (size_t i = 0; i < specs_.size(); ++i)
      if (specs_[i].name == registryName) {
        pinned_[name] = i;
        return ok();
      }
    return makeError(
        ErrorCode::NotFound,
        "plugin \"" + name + "\" names registry \"" + registryName +
            "\", which plugins.json does not list",
        Location{projectFile, 0, 0,
                 "/plugins/" + std::to_string(pluginIndex) + "/registry", name,
                 ""},
        "add it to \"registries\", or remove \"registry\"");
  }

  const std::string &cacheRoot() const { return cacheRoot_; }
  const std::vector<RegistrySpec> &specs() const { return specs_; }
  bool isPath(const std::string &name) const { return paths_.count(name); }
  const std::pair<Manifest, std::string> *path(const std::string &name) const {
    auto it = paths_.find(name);
    return it == paths_.end() ? nullptr : &it->second;
  }

  Expected<RegistryClient *> client(size_t i) {
    if (clients_[i])
      return clients_[i].get();
    RegistrySpec spec = specs_[i];
    registry::ClientOptions options = env_.client;
    options.cacheRoot = cacheRoot_;
    if (bundle_) {
      auto it = bundle_->registries.find(spec.url);
      if (spec.url.empty()) { // no registry named: the bundle's only one
        if (bundle_->registries.size() != 1)
          return makeError(ErrorCode::Usage,
                           "the bundle holds " +
                               std::to_string(bundle_->registries.size()) +
                               " registries; say which with --registry URL",
                           Location{bundle_->file, 0, 0, "", "", ""});
        it = bundle_->registries.begin();
      }
      if (it == bundle_->registries.end()) {
        // A bundle made from a project names registries as that project
        // did; match on the URL as plugins.json wrote it too.
        for (const auto &[url, dir] : bundle_->registries)
          if (url == rawUrls_[spec.url])
            it = bundle_->registries.find(url);
      }
      if (it == bundle_->registries.end()) {
        if (bundle_->registries.size() == 1 && specs_.size() == 1)
          it = bundle_->registries.begin();
        else
          return makeError(ErrorCode::NotFound,
                           "the bundle holds no packages of registry " +
                               spec.url,
                           Location{bundle_->file, 0, 0, "", "", ""},
                           "make the bundle from this project's lockfile");
      }
      spec.url = it->second;
      spec.mirrors.clear();
      options.bundle = true;
    }
    auto c = RegistryClient::open(spec, options, reporter_);
    if (c && bundle_)
      bundleTrusted_ = true; // its signed snapshot verified
    if (!c) {
      Error e = c.error();
      // "Not found" here is about the registry's files (or an offline
      // cache miss), never "no such package": the resolver must not
      // explain it away as a missing package.
      if (e.code == ErrorCode::NotFound)
        e.code = ErrorCode::Io;
      if (e.where.package.empty() && !specs_[i].name.empty() &&
          e.message.find(specs_[i].name) == std::string::npos)
        e.message = "registry \"" + specs_[i].name + "\": " + e.message;
      return Unexpected(std::move(e));
    }
    clients_[i] = std::move(*c);
    return clients_[i].get();
  }

  /// The registry `name` comes from: pinned, else the first listing it.
  Expected<std::optional<size_t>> registryOf(const std::string &name) {
    if (auto it = pinned_.find(name); it != pinned_.end())
      return std::optional<size_t>(it->second);
    for (size_t i = 0; i < specs_.size(); ++i) {
      auto c = client(i);
      if (!c)
        return Unexpected(c.error());
      const auto &names = (*c)->snapshot().index;
      if (names.count(name))
        return std::optional<size_t>(i);
    }
    return std::optional<size_t>();
  }

  Expected<std::vector<CandidateVersion>>
  versions(const std::string &name) override {
    if (auto it = paths_.find(name); it != paths_.end()) {
      const Manifest &m = it->second.first;
      CandidateVersion cv;
      cv.version = m.version;
      cv.dependencies = m.dependencies;
      cv.requiresIree = m.requiresIree;
      return std::vector<CandidateVersion>{cv};
    }
    std::vector<CandidateVersion> out;
    if (auto it = installed_.find(name); it != installed_.end())
      out.push_back(it->second);
    if (specs_.empty()) {
      if (out.empty())
        return makeError(ErrorCode::NotFound, "no registry is configured");
      return out;
    }
    auto r = registryOf(name);
    if (!r)
      return Unexpected(r.error());
    if (!*r) {
      if (!out.empty())
        return out;
      return makeError(ErrorCode::NotFound,
                       "no registry has a package \"" + name + "\"");
    }
    auto c = client(**r);
    if (!c)
      return Unexpected(c.error());
    auto v = (*c)->versions(name);
    if (!v) {
      if (v.error().code == ErrorCode::NotFound && !out.empty())
        return out;
      return v;
    }
    for (CandidateVersion &cv : *v) {
      bool dup = false;
      for (const CandidateVersion &o : out)
        dup |= o.version.identical(cv.version);
      if (!dup)
        out.push_back(std::move(cv));
    }
    return out;
  }

  /// An installed package that stays a candidate even if no registry has
  /// it (install by name into a prefix that has packages from files).
  void addInstalled(const std::string &name, CandidateVersion cv) {
    installed_[name] = std::move(cv);
  }

  void rememberRawUrl(const std::string &absolute, const std::string &raw) {
    rawUrls_[absolute] = raw;
  }

private:
  std::vector<RegistrySpec> specs_;
  const Environment &env_;
  Reporter &reporter_;
  std::vector<std::unique_ptr<RegistryClient>> clients_;
  std::string cacheRoot_;
  std::optional<OpenedBundle> bundle_;
  bool bundleTrusted_ = false;
  std::map<std::string, std::pair<Manifest, std::string>> paths_;
  std::map<std::string, size_t> pinned_;
  std::map<std::string, CandidateVersion> installed_;
  std::map<std::string, std::string> rawUrls_;
};

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

/// Reads the existing lockfile, if any (a broken one is reported).
Expected<std::optional<Lockfile>> readLock(const std::string &path) {
  if (!fsutil::exists(path))
    return std::optional<Lockfile>();
  auto doc = JsonDocument::load(path);
  if (!doc)
    return Unexpected(doc.error());
  DiagnosticList diags;
  ParseOptions po;
  po.strict = false;
  Lockfile lock = parseLockfile(*doc, po, diags);
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  return std::optional<Lockfile>(std::move(lock));
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

} // namespace

//===----------------------------------------------------------------------===//
// lock
//===----------------------------------------------------------------------===//

namespace {

/// No IREE was found: said once, and what it means for the resolution.
void warnIreeUnknown(const Error &problem, Reporter &reporter) {
  reporter.warning(Diagnostic{
      Severity::Warning, problem.where,
      problem.message + "; resolving without checking the packages' "
                        "IREE requirements (requires.iree)",
      "put the IREE tools on PATH (or activate their virtual environment), "
      "or give the IREE version with --iree-version"});
}

Expected<LockResult> lockWith(const Project &project, Sources &src,
                              const LockRequest &request,
                              const Environment &env, Reporter &reporter) {
  LockResult result;
  std::string ireeSource;
  std::optional<Error> ireeProblem;
  result.ireeVersion = ireeVersionFor(env, &ireeSource, &ireeProblem);
  if (ireeProblem)
    warnIreeUnknown(*ireeProblem, reporter);

  auto old = readLock(project.lockPath);
  if (!old)
    return Unexpected(old.error());

  ResolveRequest rr;
  rr.rootName = "plugins.json";
  rr.ireeVersion = result.ireeVersion;
  rr.platforms = projectPlatforms(project);
  rr.upgrade = request.upgrade;
  rr.upgradeAll = request.upgradeAll;
  for (const ProjectPlugin &p : project.parsed.plugins)
    rr.roots.push_back({p.name, p.version.value_or(Constraint::any())});
  if (*old)
    for (const LockedPackage &lp : (*old)->packages)
      rr.preferred[lp.name] = lp.version;

  auto res = resolve(rr, src);
  if (!res) {
    Error e = res.error();
    if (e.code == ErrorCode::Conflict) {
      // The resolver's hint, when an IREE requirement is to blame, names
      // the manifests that hold it.
      if (e.hint.empty())
        e.hint = "change the version constraints in plugins.json";
      if (result.ireeVersion)
        e.hint += " (resolving for IREE " + result.ireeVersion->str() +
                  " from " + ireeSource + "; --iree-version picks another)";
    }
    if (e.where.file.empty())
      e.where.file = project.file;
    return Unexpected(std::move(e));
  }

  Lockfile lock;
  lock.inputHash = project::inputHash(project.parsed);
  lock.platforms = rr.platforms;
  lock.ireeVersion = result.ireeVersion;
  // Fill each package from where it came from.
  std::map<std::string, const ProjectPlugin *> byName;
  for (const ProjectPlugin &p : project.parsed.plugins)
    byName[p.name] = &p;
  std::vector<std::pair<std::string, Version>> toFetch;
  std::vector<size_t> toFetchRegistry;
  for (const auto &[name, version] : res->versions) {
    LockedPackage lp;
    lp.name = name;
    lp.version = version;
    for (const std::string &d : res->dependencies.at(name))
      lp.dependencies.push_back({d, res->versions.at(d)});
    if (const auto *path = src.path(name)) {
      lp.sourceKind = LockedPackage::SourceKind::Path;
      lp.source = byName.count(name) ? byName[name]->path : path->second;
    } else {
      auto r = src.registryOf(name);
      if (!r)
        return Unexpected(r.error());
      if (!*r)
        return makeError(ErrorCode::Internal,
                         "resolved package \"" + name + "\" has no registry");
      auto c = src.client(**r);
      if (!c)
        return Unexpected(c.error());
      auto entry = (*c)->entry(name, version);
      if (!entry)
        return Unexpected(entry.error());
      lp.sourceKind = LockedPackage::SourceKind::Registry;
      // The URL as plugins.json wrote it, so the lock stays portable.
      lp.source = project.parsed.registries[**r].url;
      lp.archive = (*entry)->archive;
      lp.sha256 = (*entry)->sha256;
      lp.size = (*entry)->size;
      lp.signedBy = (*c)->signedBy();
      lp.platforms = (*entry)->platforms;
      if (auto it = byName.find(name);
          it != byName.end() && !it->second->options.empty()) {
        toFetch.push_back({name, version});
        toFetchRegistry.push_back(**r);
      }
    }
    lock.packages.push_back(std::move(lp));
  }
  std::vector<std::string> order;
  for (const ProjectPlugin &p : project.parsed.plugins)
    order.push_back(p.name);
  lock.activation = activationFor(order, res->dependencies);

  // Option values are checked against each plugin's own option schema,
  // which lives in its manifest.
  DiagnosticList optionProblems;
  std::map<std::string, Manifest> manifests;
  for (size_t i = 0; i < toFetch.size(); ++i) {
    auto c = src.client(toFetchRegistry[i]);
    if (!c)
      return Unexpected(c.error());
    auto paths = (*c)->fetchArchives({toFetch[i]}, reporter);
    if (!paths)
      return Unexpected(paths.error());
    auto head = readArchiveHead(paths->front());
    if (!head)
      return Unexpected(head.error());
    manifests[toFetch[i].first] = std::move(head->manifest);
  }
  const auto &plugins = project.parsed.plugins;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (plugins[i].options.empty())
      continue;
    const Manifest *m = nullptr;
    if (const auto *path = src.path(plugins[i].name))
      m = &path->first;
    else if (auto it = manifests.find(plugins[i].name); it != manifests.end())
      m = &it->second;
    if (m)
      project::checkProjectOptions(plugins[i], i, *m, project.file,
                                   optionProblems);
  }
  if (optionProblems.hasErrors()) {
    Error e = makeError(ErrorCode::Invalid, optionProblems).error();
    e.hint = "fix the option values in plugins.json (see `ireepkg info "
             "<package>` for each plugin's options)";
    return Unexpected(std::move(e));
  }

  result.text = project::serializeLockfile(lock);
  // What changed, for the report.
  std::map<std::string, std::string> before, after;
  if (*old)
    for (const LockedPackage &lp : (*old)->packages)
      before[lp.name] = lp.version.str();
  for (const LockedPackage &lp : lock.packages)
    after[lp.name] = lp.version.str();
  for (const auto &[n, v] : after)
    if (!before.count(n) || before[n] != v)
      result.changes.push_back({n, before.count(n) ? before[n] : "", v});
  for (const auto &[n, v] : before)
    if (!after.count(n))
      result.changes.push_back({n, v, ""});
  result.lock = std::move(lock);

  auto existing = fsutil::exists(project.lockPath)
                      ? fsutil::readFile(project.lockPath, 64ull << 20)
                      : Expected<std::string>(std::string());
  bool same = existing && *existing == result.text;
  if (request.check) {
    if (!same)
      return makeError(
          ErrorCode::Conflict,
          fsutil::exists(project.lockPath) ? "plugins.lock.json is out of date"
                                           : "there is no plugins.lock.json",
          Location{project.lockPath, 0, 0, "", "", ""}, "run `ireepkg lock`");
    return result;
  }
  if (!same) {
    if (Status s = fsutil::writeFileAtomic(project.lockPath, result.text); !s)
      return Unexpected(s.error());
    result.written = true;
  }
  return result;
}

} // namespace

Expected<LockResult> lockProject(const Project &project,
                                 const LockRequest &request,
                                 const Environment &env, Reporter &reporter) {
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());
  return lockWith(project, **src, request, env, reporter);
}

//===----------------------------------------------------------------------===//
// sync
//===----------------------------------------------------------------------===//

Expected<SyncResult> syncProject(const Project &project,
                                 const SyncRequest &request,
                                 const Environment &env, Reporter &reporter) {
  SyncResult result;
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());

  auto lockRead = readLock(project.lockPath);
  if (!lockRead)
    return Unexpected(lockRead.error());
  std::optional<Lockfile> lock = std::move(*lockRead);
  std::string hash = project::inputHash(project.parsed);
  bool stale = !lock || lock->inputHash != hash;
  if (request.frozen) {
    if (!lock)
      return makeError(ErrorCode::NotFound, "there is no plugins.lock.json",
                       Location{project.lockPath, 0, 0, "", "", ""},
                       "run `ireepkg lock` first (--frozen installs exactly "
                       "the lockfile)");
  } else if (stale) {
    if (request.locked)
      return makeError(
          ErrorCode::Conflict,
          lock ? "plugins.lock.json is out of date: plugins.json changed "
                 "since it was written"
               : "there is no plugins.lock.json",
          Location{project.lockPath, 0, 0, lock ? "/input_hash" : "", "", ""},
          "run `ireepkg lock` and commit the lockfile (--locked refuses to "
          "change it)");
    auto relocked = lockWith(project, **src, LockRequest{}, env, reporter);
    if (!relocked)
      return Unexpected(relocked.error());
    lock = relocked->lock;
    result.relocked = std::move(*relocked);
  }

  Platform platform = request.platform.value_or(hostPlatform());
  if (!request.platform) {
    DiagnosticList ignored;
    if (fsutil::exists(request.prefix + "/state/installed.json")) {
      auto text = fsutil::readFile(request.prefix + "/state/installed.json",
                                   64ull << 20);
      if (text)
        if (auto st = parseInstalled(*text, "installed.json", ignored);
            st && !st->platform.empty())
          if (auto p = Platform::parse(st->platform))
            platform = *p;
    }
  }
  if (!lock->platforms.empty() &&
      std::find(lock->platforms.begin(), lock->platforms.end(), platform) ==
          lock->platforms.end()) {
    std::string have;
    for (const Platform &p : lock->platforms)
      have += (have.empty() ? "" : ", ") + p.str();
    return makeError(ErrorCode::Unsupported,
                     "plugins.lock.json was resolved for " + have + ", not " +
                         platform.str(),
                     Location{project.lockPath, 0, 0, "/platforms", "", ""},
                     "add \"" + platform.str() +
                         "\" to \"platforms\" in plugins.json and run "
                         "`ireepkg lock`");
  }

  // Every archive, verified: from the download cache when it holds the
  // locked bytes, else from its registry (or bundle).
  std::vector<std::string> archives(lock->packages.size());
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> wanted;
  std::map<size_t, std::vector<std::pair<std::string, Version>>> fetchFrom;
  std::vector<std::string> tempDirs;
  auto cleanup = [&] {
    for (const std::string &d : tempDirs)
      (void)fsutil::removeTree(d);
  };
  std::vector<std::string> missingOffline;
  for (size_t i = 0; i < lock->packages.size(); ++i) {
    const LockedPackage &lp = lock->packages[i];
    if (lp.sourceKind == LockedPackage::SourceKind::Path) {
      std::string dir = fs::path(lp.source).is_absolute()
                            ? lp.source
                            : (fs::path(project.dir) / lp.source).string();
      std::string tmp = fs::temp_directory_path().string() + "/ireepkg-path-" +
                        std::to_string(::getpid()) + "-" + std::to_string(i);
      (void)fsutil::removeTree(tmp);
      tempDirs.push_back(tmp);
      PackOptions po;
      po.outputDir = tmp;
      auto packed = packDirectory(dir, po);
      if (!packed) {
        cleanup();
        Error e = packed.error();
        e.where.package = lp.name;
        return Unexpected(std::move(e));
      }
      if (!packed->manifest.version.identical(lp.version)) {
        cleanup();
        return makeError(ErrorCode::Conflict,
                         "local package \"" + lp.name + "\" in " + dir +
                             " is version " + packed->manifest.version.str() +
                             ", the lock says " + lp.version.str(),
                         Location{project.lockPath, 0, 0, "", lp.name, ""},
                         "run `ireepkg lock`");
      }
      archives[i] = packed->archivePath;
      continue;
    }
    const std::string &root = src->get()->cacheRoot();
    std::string cached =
        root.empty() ? ""
                     : registry::detail::downloadCachePath(root, lp.sha256);
    if (!cached.empty() &&
        registry::detail::fileHasContent(cached, lp.size, lp.sha256)) {
      archives[i] = cached;
      continue;
    }
    // Its registry, by the URL the lock names.
    std::optional<size_t> reg;
    for (size_t r = 0; r < project.parsed.registries.size(); ++r)
      if (project.parsed.registries[r].url == lp.source)
        reg = r;
    if (!reg) {
      cleanup();
      return makeError(ErrorCode::Conflict,
                       "package \"" + lp.name + "\" is locked to registry " +
                           lp.source + ", which plugins.json no longer lists",
                       Location{project.lockPath, 0, 0, "", lp.name, ""},
                       "run `ireepkg lock`");
    }
    if (env.client.offline && env.bundle.empty()) {
      missingOffline.push_back(lp.name + " " + lp.version.str());
      continue;
    }
    fetchFrom[*reg].push_back({lp.name, lp.version});
    wanted[lp.name].push_back({*reg, i});
  }
  if (!missingOffline.empty()) {
    cleanup();
    std::string list;
    for (const std::string &m : missingOffline)
      list += "\n  " + m;
    return makeError(ErrorCode::NotFound,
                     "--offline: " + std::to_string(missingOffline.size()) +
                         " locked package" +
                         (missingOffline.size() == 1 ? " is" : "s are") +
                         " not in the download cache:" + list,
                     Location{project.lockPath, 0, 0, "", "", ""},
                     "run `ireepkg sync` once with network access, or use "
                     "an offline bundle (`ireepkg sync --bundle FILE`)");
  }
  for (const auto &[reg, which] : fetchFrom) {
    auto c = src->get()->client(reg);
    if (!c) {
      cleanup();
      return Unexpected(c.error());
    }
    // The registry must still publish exactly the locked bytes.
    for (const auto &[name, version] : which) {
      auto entry = (*c)->entry(name, version);
      if (!entry) {
        cleanup();
        Error e = entry.error();
        e.hint = "the registry no longer has the locked version; run "
                 "`ireepkg lock` to choose another";
        return Unexpected(std::move(e));
      }
      for (const auto &[r, i] : wanted[name]) {
        const LockedPackage &lp = lock->packages[i];
        if ((*entry)->sha256 != lp.sha256 || (*entry)->size != lp.size) {
          cleanup();
          return makeError(
              ErrorCode::Integrity,
              "the registry's archive of " + name + " " + version.str() +
                  " (sha256 " + (*entry)->sha256 +
                  ") is not the one the lock pins (sha256 " + lp.sha256 + ")",
              Location{project.lockPath, 0, 0, "", name, ""},
              "a published version must never change; if the change is "
              "expected, run `ireepkg lock --upgrade-package " +
                  name + "`");
        }
      }
    }
    auto paths = (*c)->fetchArchives(which, reporter);
    if (!paths) {
      cleanup();
      return Unexpected(paths.error());
    }
    for (size_t k = 0; k < which.size(); ++k)
      for (const auto &[r, i] : wanted[which[k].first])
        archives[i] = (*paths)[k];
  }

  // Install exactly the lock, in its activation order, in one transaction.
  InstallOptions io;
  io.lock = request.lock;
  // Every package's requires.iree against the IREE in use (a lock may have
  // been resolved for another IREE, or on another machine). Relocking has
  // already said when no IREE is found.
  io.iree = ireeCheckFor(env);
  io.iree->nameArchives = false;
  if (result.relocked || request.noIreeReported)
    io.iree->problem.clear();
  io.platform = platform;
  io.exact = true;
  io.preferredOrder = lock->activation;
  std::set<std::string> explicitNames;
  for (const ProjectPlugin &p : project.parsed.plugins)
    explicitNames.insert(p.name);
  for (const LockedPackage &lp : lock->packages)
    if (!explicitNames.count(lp.name))
      io.asDependency.insert(lp.name);
  ProjectSettings settings;
  for (const ProjectPlugin &p : project.parsed.plugins)
    if (!p.options.empty())
      settings.values[p.name] = p.options;
  settings.choose = project.parsed.choose;
  io.project = settings;
  auto report = installArchives(request.prefix, archives, io, reporter);
  cleanup();
  if (!report)
    return Unexpected(report.error());
  result.install = std::move(*report);
  return result;
}

//===----------------------------------------------------------------------===//
// install by name
//===----------------------------------------------------------------------===//

Expected<NameRequest> parseNameRequest(const std::string &text) {
  NameRequest r;
  size_t at = text.find('@');
  r.name = text.substr(0, at);
  if (!isValidPackageName(r.name))
    return makeError(ErrorCode::Usage,
                     "\"" + text + "\" is not a package name or file", {},
                     "give a name (simple-mul), a name and a version "
                     "constraint (simple-mul@^1.2), or an .ireepkg file");
  if (at != std::string::npos) {
    auto c = Constraint::parse(text.substr(at + 1));
    if (!c) {
      Error e = c.error();
      e.code = ErrorCode::Usage;
      e.message = "\"" + text + "\": " + e.message;
      return Unexpected(std::move(e));
    }
    r.constraint = *c;
  }
  return r;
}

Expected<InstallReport> installByName(const InstallByNameRequest &request,
                                      const Environment &env,
                                      Reporter &reporter) {
  if (request.registries.empty() && env.bundle.empty())
    return makeError(ErrorCode::Usage, "no registry to install from", {},
                     "pass --registry URL --registry-key KEY, set "
                     "IREEPKG_REGISTRY and IREEPKG_REGISTRY_KEY, or run in a "
                     "project whose plugins.json lists registries");
  Sources src(request.registries, env, reporter);
  if (Status s = src.useBundle(); !s)
    return Unexpected(s.error());

  auto state = readInstalledState(request.prefix, reporter);
  if (!state)
    return Unexpected(state.error());
  ResolveRequest rr;
  rr.rootName = "the command line";
  std::optional<Error> ireeProblem;
  // --ignore-iree-version: resolve for any IREE; the install then warns
  // about each package that excludes the IREE in use.
  if (!env.ignoreIreeRequirements)
    rr.ireeVersion = ireeVersionFor(env, nullptr, &ireeProblem);
  if (ireeProblem)
    warnIreeUnknown(*ireeProblem, reporter);
  Platform platform = request.install.platform.value_or(
      Platform::parse(state->platform).value_or(hostPlatform()));
  rr.platforms = {platform};
  std::set<std::string> requested;
  for (const NameRequest &n : request.packages) {
    rr.roots.push_back({n.name, n.constraint});
    requested.insert(n.name);
  }
  // What the prefix has stays, unless a request needs another version.
  for (const InstalledPackage &p : state->packages) {
    auto m = readInstalledManifest(request.prefix, p, reporter);
    if (!m)
      return Unexpected(m.error());
    CandidateVersion cv;
    cv.version = p.version;
    cv.dependencies = m->dependencies;
    cv.requiresIree = m->requiresIree;
    src.addInstalled(p.name, cv);
    rr.preferred[p.name] = p.version;
    if (p.explicitlyInstalled && !requested.count(p.name))
      rr.roots.push_back({p.name, Constraint::any()});
  }
  auto res = resolve(rr, src);
  if (!res)
    return Unexpected(res.error());

  std::map<size_t, std::vector<std::pair<std::string, Version>>> fetchFrom;
  for (const auto &[name, version] : res->versions) {
    const InstalledPackage *have = state->find(name);
    // Installed already: nothing to do, unless it was installed for a
    // dependency and is now asked for by name (it becomes explicit; its
    // archive is normally still in the download cache).
    if (have && have->version.identical(version) &&
        (have->explicitlyInstalled || !requested.count(name)))
      continue;
    auto r = src.registryOf(name);
    if (!r)
      return Unexpected(r.error());
    if (!*r)
      return makeError(ErrorCode::NotFound,
                       "no registry has " + name + " " + version.str());
    fetchFrom[**r].push_back({name, version});
  }
  std::vector<std::string> archives;
  InstallOptions io = request.install;
  if (env.ignoreIreeRequirements) {
    io.iree = ireeCheckFor(env);
    io.iree->nameArchives = false; // downloads, not the user's files
  }
  for (const auto &[reg, which] : fetchFrom) {
    auto c = src.client(reg);
    if (!c)
      return Unexpected(c.error());
    auto paths = (*c)->fetchArchives(which, reporter);
    if (!paths)
      return Unexpected(paths.error());
    for (size_t k = 0; k < which.size(); ++k) {
      archives.push_back((*paths)[k]);
      const InstalledPackage *have = state->find(which[k].first);
      if (!requested.count(which[k].first) &&
          !(have && have->explicitlyInstalled))
        io.asDependency.insert(which[k].first);
    }
  }
  InstallReport report;
  report.prefix = request.prefix;
  if (archives.empty()) {
    for (const NameRequest &n : request.packages)
      if (const InstalledPackage *p = state->find(n.name))
        report.unchanged.push_back(p->name + " " + p->version.str());
    return report;
  }
  return installArchives(request.prefix, archives, io, reporter);
}

//===----------------------------------------------------------------------===//
// outdated and search
//===----------------------------------------------------------------------===//

namespace {

/// The newest version that is not yanked; releases before pre-releases.
const IndexEntry *newestEntry(const RegistryIndex &index) {
  const IndexEntry *best = nullptr;
  for (const IndexEntry &e : index.versions) {
    if (e.yanked)
      continue;
    if (!best || (best->version.isPrerelease() && !e.version.isPrerelease()) ||
        (best->version.isPrerelease() == e.version.isPrerelease() &&
         best->version < e.version))
      best = &e;
  }
  return best;
}

} // namespace

Expected<std::vector<OutdatedEntry>>
outdated(const Project &project, const Environment &env, Reporter &reporter) {
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());
  auto lock = readLock(project.lockPath);
  if (!lock)
    return Unexpected(lock.error());
  // wanted: what `update` would choose.
  ResolveRequest rr;
  rr.ireeVersion = ireeVersionFor(env);
  rr.platforms = projectPlatforms(project);
  rr.upgradeAll = true;
  for (const ProjectPlugin &p : project.parsed.plugins)
    rr.roots.push_back({p.name, p.version.value_or(Constraint::any())});
  auto res = resolve(rr, **src);
  if (!res)
    return Unexpected(res.error());
  std::map<std::string, std::string> locked;
  if (*lock)
    for (const LockedPackage &lp : (*lock)->packages)
      locked[lp.name] = lp.version.str();
  std::vector<OutdatedEntry> out;
  for (const auto &[name, version] : res->versions) {
    OutdatedEntry e;
    e.name = name;
    e.locked = locked.count(name) ? locked[name] : "";
    e.wanted = version.str();
    e.latest = e.wanted;
    if ((*src)->isPath(name)) {
      e.registry = "path";
    } else {
      auto r = (*src)->registryOf(name);
      if (!r)
        return Unexpected(r.error());
      if (*r) {
        auto c = (*src)->client(**r);
        if (!c)
          return Unexpected(c.error());
        e.registry = project.parsed.registries[**r].name;
        auto idx = (*c)->index(name);
        if (!idx)
          return Unexpected(idx.error());
        if (const IndexEntry *n = newestEntry(**idx))
          e.latest = n->version.str();
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

Expected<Version> newestVersion(const Project &project, const std::string &name,
                                const std::string &registryName,
                                const Environment &env, Reporter &reporter) {
  auto src = projectSources(project, env, reporter);
  if (!src)
    return Unexpected(src.error());
  if (!registryName.empty())
    if (Status s = (*src)->pin(name, registryName, project.file,
                               project.parsed.plugins.size());
        !s)
      return Unexpected(s.error());
  if ((*src)->specs().empty())
    return makeError(
        ErrorCode::Invalid,
        "plugins.json lists no registry to find \"" + name + "\" in",
        Location{project.file, 0, 0, "/registries", name, ""},
        "add a registry, or give the version: `ireepkg add " + name + "@^1.0`");
  auto r = (*src)->registryOf(name);
  if (!r)
    return Unexpected(r.error());
  if (!*r) {
    // Suggest a close name from the registries' snapshots.
    std::vector<std::string> names;
    for (size_t i = 0; i < (*src)->specs().size(); ++i)
      if (auto c = (*src)->client(i))
        for (const std::string &n : (*c)->packageNames())
          names.push_back(n);
    std::string close = suggestClosest(name, names);
    return makeError(
        ErrorCode::NotFound,
        "no registry of plugins.json has a package \"" + name + "\"" +
            (close.empty() ? "" : "; did you mean \"" + close + "\"?"),
        Location{project.file, 0, 0, "/registries", name, ""},
        "see `ireepkg search`");
  }
  auto c = (*src)->client(**r);
  if (!c)
    return Unexpected(c.error());
  auto idx = (*c)->index(name);
  if (!idx)
    return Unexpected(idx.error());
  const IndexEntry *n = newestEntry(**idx);
  if (!n)
    return makeError(
        ErrorCode::NotFound, "every version of \"" + name + "\" is yanked",
        Location{project.file, 0, 0, "", name, ""},
        "give a version explicitly: `ireepkg add " + name + "@=<version>`");
  return n->version;
}

Expected<std::vector<SearchHit>>
search(const std::vector<RegistrySpec> &registries, const std::string &text,
       const Environment &env, Reporter &reporter) {
  if (registries.empty())
    return makeError(ErrorCode::Usage, "no registry to search", {},
                     "pass --registry URL --registry-key KEY, or run in a "
                     "project whose plugins.json lists registries");
  Sources src(registries, env, reporter);
  if (Status s = src.useBundle(); !s)
    return Unexpected(s.error());
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  std::string needle = lower(text);
  std::vector<SearchHit> hits;
  std::set<std::string> seen;
  for (size_t i = 0; i < registries.size(); ++i) {
    auto c = src.client(i);
    if (!c)
      return Unexpected(c.error());
    for (const std::string &name : (*c)->packageNames()) {
      if (seen.count(name) || lower(name).find(needle) == std::string::npos)
        continue;
      seen.insert(name);
      auto idx = (*c)->index(name);
      if (!idx)
        return Unexpected(idx.error());
      SearchHit h;
      h.name = name;
      h.registry = registries[i].url;
      const IndexEntry *n = newestEntry(**idx);
      if (!n && !(*idx)->versions.empty()) {
        h.yanked = true;
        n = &(*idx)->versions.back();
      }
      if (n) {
        h.latest = n->version.str();
        h.summary = n->summary;
      }
      hits.push_back(std::move(h));
    }
  }
  std::sort(hits.begin(), hits.end(),
            [&](const SearchHit &a, const SearchHit &b) {
              // Exact matches first, then names that start with the text.
              auto rank = [&](const SearchHit &h) {
                std::string n = lower(h.name);
                return n == needle ? 0 : n.rfind(needle, 0) == 0 ? 1 : 2;
              };
              if (rank(a) != rank(b))
                return rank(a) < rank(b);
              return a.name < b.name;
            });
  return hits;
}

//===----------------------------------------------------------------------===//
// bundles
//===----------------------------------------------------------------------===//

Expected<BundleResult> createBundle(const Project &project,
                                    const Lockfile &lock,
                                    const BundleRequest &request,
                                    const Environment &env,
                                    Reporter &reporter) {
  for (const Platform &p : request.platforms)
    if (std::find(lock.platforms.begin(), lock.platforms.end(), p) ==
        lock.platforms.end())
      return makeError(ErrorCode::Unsupported,
                       "the lock was not resolved for " + p.str(),
                       Location{project.lockPath, 0, 0, "/platforms", "", ""},
                       "add it to \"platforms\" in plugins.json and run "
                       "`ireepkg lock`");
  Environment online = env;
  online.bundle.clear();
  auto src = projectSources(project, online, reporter);
  if (!src)
    return Unexpected(src.error());
  std::string out = fsutil::absolutePath(request.output);
  std::string stage = out + ".stage-" + std::to_string(::getpid());
  (void)fsutil::removeTree(stage);
  auto fail = [&](Error e) -> Expected<BundleResult> {
    (void)fsutil::removeTree(stage);
    return Unexpected(std::move(e));
  };

  // Group the locked registry packages by registry.
  std::map<size_t, std::vector<const LockedPackage *>> byRegistry;
  for (const LockedPackage &lp : lock.packages) {
    if (lp.sourceKind == LockedPackage::SourceKind::Path)
      return fail(Error(ErrorCode::Unsupported,
                        "package \"" + lp.name + "\" is a local path (" +
                            lp.source + "), which a bundle cannot hold",
                        Location{project.lockPath, 0, 0, "", lp.name, ""},
                        "publish it to a registry, or copy its directory "
                        "along with the bundle"));
    std::optional<size_t> reg;
    for (size_t r = 0; r < project.parsed.registries.size(); ++r)
      if (project.parsed.registries[r].url == lp.source)
        reg = r;
    if (!reg)
      return fail(Error(ErrorCode::Conflict,
                        "package \"" + lp.name + "\" is locked to registry " +
                            lp.source + ", which plugins.json does not list",
                        Location{project.lockPath, 0, 0, "", lp.name, ""},
                        "run `ireepkg lock`"));
    byRegistry[*reg].push_back(&lp);
  }

  nlohmann::json manifest = {{"bundle_version", 1},
                             {"registries", nlohmann::json::array()}};
  std::vector<ArchiveMember> members;
  size_t count = 0;
  for (const auto &[reg, pkgs] : byRegistry) {
    std::string sub = "registries/" + std::to_string(reg);
    std::string dir = stage + "/" + sub;
    RegistrySpec spec = (*src)->specs()[reg];
    auto transport = registry::openTransport(spec, env.client);
    if (!transport)
      return fail(transport.error());
    auto client = (*src)->client(reg);
    if (!client)
      return fail(client.error());
    // The registry's own signed files, byte for byte.
    std::vector<std::string> files = {"config.json", "snapshot.json",
                                      "snapshot.json.minisig"};
    std::vector<std::pair<std::string, Version>> which;
    for (const LockedPackage *lp : pkgs) {
      files.push_back("index/" + lp->name + ".json");
      which.push_back({lp->name, lp->version});
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    for (const std::string &f : files) {
      auto body = (*transport)->fetch(f, 64ull << 20);
      if (!body)
        return fail(body.error());
      if (Status s = fsutil::makeDirs(fs::path(dir + "/" + f).parent_path());
          !s)
        return fail(s.error());
      if (Status s = fsutil::writeFileAtomic(dir + "/" + f, body->body); !s)
        return fail(s.error());
    }
    auto paths = (*client)->fetchArchives(which, reporter);
    if (!paths)
      return fail(paths.error());
    for (size_t k = 0; k < pkgs.size(); ++k) {
      const LockedPackage *lp = pkgs[k];
      auto entry = (*client)->entry(lp->name, lp->version);
      if (!entry)
        return fail(entry.error());
      if ((*entry)->sha256 != lp->sha256)
        return fail(Error(ErrorCode::Integrity,
                          "the registry's archive of " + lp->name + " " +
                              lp->version.str() +
                              " is not the one the lock pins",
                          Location{project.lockPath, 0, 0, "", lp->name, ""},
                          "run `ireepkg lock`"));
      std::string rel = (*entry)->archive;
      if (Status s = fsutil::makeDirs(fs::path(dir + "/" + rel).parent_path());
          !s)
        return fail(s.error());
      std::error_code ec;
      fs::copy_file((*paths)[k], dir + "/" + rel,
                    fs::copy_options::overwrite_existing, ec);
      if (ec)
        return fail(fsutil::ioError("cannot copy", (*paths)[k], ec.value()));
      members.push_back({sub + "/" + rel, "", dir + "/" + rel, false});
      // The archive's own signature travels with it when it has one.
      if (auto sig = (*transport)->fetch(rel + ".minisig", 1 << 16)) {
        if (Status s = fsutil::writeFileAtomic(dir + "/" + rel + ".minisig",
                                               sig->body);
            !s)
          return fail(s.error());
        members.push_back({sub + "/" + rel + ".minisig", "",
                           dir + "/" + rel + ".minisig", false});
      }
      ++count;
    }
    for (const std::string &f : files)
      members.push_back({sub + "/" + f, "", dir + "/" + f, false});
    manifest["registries"].push_back(
        {{"url", project.parsed.registries[reg].url}, {"dir", sub}});

    // Check the staged registry exactly as `sync --bundle` will.
    RegistrySpec staged = spec;
    staged.url = dir;
    staged.mirrors.clear();
    registry::ClientOptions co = env.client;
    co.bundle = true;
    co.cacheRoot = stage + "/verify-cache";
    auto check = RegistryClient::open(staged, co, reporter);
    if (!check)
      return fail(check.error());
    auto verified = (*check)->fetchArchives(which, reporter);
    if (!verified)
      return fail(verified.error());
  }
  std::string bundleJson = manifest.dump(2) + "\n";
  members.insert(members.begin(), {"bundle.json", bundleJson, "", false});
  std::sort(members.begin() + 1, members.end(),
            [](const ArchiveMember &a, const ArchiveMember &b) {
              return a.path < b.path;
            });
  std::string tmpOut = out + ".part-" + std::to_string(::getpid());
  if (Status s = writeArchive(tmpOut, members); !s) {
    (void)fsutil::removeTree(tmpOut);
    return fail(s.error());
  }
  if (Status s = fsutil::renameDurable(tmpOut, out); !s) {
    (void)fsutil::removeTree(tmpOut);
    return fail(s.error());
  }
  (void)fsutil::removeTree(stage);
  BundleResult r;
  r.path = out;
  auto sha = sha256File(out);
  if (!sha)
    return Unexpected(sha.error());
  r.sha256 = *sha;
  std::error_code ec;
  r.size = fs::file_size(out, ec);
  r.packages = count;
  return r;
}

} // namespace ireepkg::workflow
