//===- manifest_schema/src/project.cpp ------------------------------------===//
//
// plugins.json and plugins.lock.json.
//
// Parses and checks the project file (formats.md §3) and the lockfile (§4).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/manifest_schema/suggest.h"
#include "checker.h"

#include <map>
#include <set>

namespace ireepkg {

using namespace detail;

bool isMinisignPublicKey(std::string_view key);
bool isSha256Hex(std::string_view s);

static std::vector<Platform> readPlatforms(Checker &checker, ObjectReader &r,
                                           const std::string &key, Need need) {
  std::vector<Platform> out;
  auto names = r.stringArray(key, need);
  if (!names)
    return out;
  for (size_t i = 0; i < names->size(); ++i) {
    const std::string &n = (*names)[i];
    if (auto p = Platform::parse(n))
      out.push_back(*p);
    else
      checker.error(r.child(key) + "/" + std::to_string(i),
                    "\"" + n + "\" is not a platform" +
                        didYouMean(n, platformNames()),
                    "platforms are <os>-<arch>, e.g. linux-x86_64");
  }
  return out;
}

ProjectFile parseProjectFile(const JsonDocument &doc,
                             const ParseOptions &options,
                             DiagnosticList &diags) {
  ProjectFile pf;
  Checker checker(doc, options, diags);
  ObjectReader r(checker, doc.root(), "");
  if (!r.valid())
    return pf;
  if (const json *v = r.any("schema_version", Need::Required))
    checker.schemaVersion(*v, r.child("schema_version"), "schema_version");

  std::set<std::string> registryNames;
  if (const json *regs = r.array("registries")) {
    for (size_t i = 0; i < regs->size(); ++i) {
      std::string p = r.child("registries") + "/" + std::to_string(i);
      ObjectReader rr(checker, (*regs)[i], p);
      if (!rr.valid())
        continue;
      RegistryRef ref;
      if (auto n = rr.string("name", Need::Required);
          n && checker.packageName(*n, rr.child("name"))) {
        ref.name = *n;
        if (!registryNames.insert(*n).second)
          checker.error(rr.child("name"),
                        "registry \"" + *n + "\" is defined more than once");
      }
      if (auto u = rr.string("url", Need::Required))
        ref.url = *u;
      if (auto m = rr.stringArray("mirrors"))
        ref.mirrors = *m;
      if (auto k = rr.string("public_key")) {
        if (isMinisignPublicKey(*k))
          ref.publicKey = *k;
        else
          checker.error(rr.child("public_key"),
                        "\"" + *k + "\" is not a minisign public key",
                        "a minisign public key is the 56-character base64 "
                        "line starting with \"RW\" in the .pub file");
      }
      rr.finish();
      pf.registries.push_back(std::move(ref));
    }
  }
  pf.platforms = readPlatforms(checker, r, "platforms", Need::Optional);
  {
    std::set<Platform> seen;
    for (size_t i = 0; i < pf.platforms.size(); ++i)
      if (!seen.insert(pf.platforms[i]).second)
        checker.error(r.child("platforms") + "/" + std::to_string(i),
                      "\"" + pf.platforms[i].str() +
                          "\" is listed more than once");
  }
  std::set<std::string> pluginNames;
  if (const json *plugins = r.array("plugins")) {
    for (size_t i = 0; i < plugins->size(); ++i) {
      std::string p = r.child("plugins") + "/" + std::to_string(i);
      ObjectReader pr(checker, (*plugins)[i], p);
      if (!pr.valid())
        continue;
      ProjectPlugin plugin;
      if (auto n = pr.string("name", Need::Required);
          n && checker.packageName(*n, pr.child("name"))) {
        plugin.name = *n;
        if (!pluginNames.insert(*n).second)
          checker.error(pr.child("name"),
                        "plugin \"" + *n + "\" is listed more than once",
                        "list each plugin once; its position is its "
                        "activation order");
      }
      if (const json *v = pr.any("version"))
        plugin.version = checker.constraint(*v, pr.child("version"));
      if (auto path = pr.string("path"))
        plugin.path = *path;
      if (pr.has("version") && pr.has("path"))
        checker.error(pr.child("path"),
                      "a plugin takes \"version\" (from a registry) or "
                      "\"path\" (a local package), not both");
      if (auto reg = pr.string("registry")) {
        plugin.registry = *reg;
        if (!registryNames.count(*reg)) {
          std::vector<std::string> known(registryNames.begin(),
                                         registryNames.end());
          checker.error(pr.child("registry"),
                        "registry \"" + *reg + "\" is not defined" +
                            didYouMean(*reg, std::span<const std::string>(known)),
                        "define it under \"registries\"");
        }
      }
      if (const json *opts = pr.object("options"))
        for (auto it = opts->begin(); it != opts->end(); ++it)
          if (checker.optionFlagName(it.key(), pr.child("options"),
                                     pr.child("options") + "/" +
                                         jsonPointerEscape(it.key())))
            plugin.options.emplace(it.key(), *it);
      pr.finish();
      pf.plugins.push_back(std::move(plugin));
    }
  }
  if (const json *choose = r.object("choose")) {
    std::string mapPtr = r.child("choose");
    std::vector<std::string_view> single;
    for (auto n : hookPointNames())
      if (isSingleValued(*parseHookPoint(n)))
        single.push_back(n);
    for (auto it = choose->begin(); it != choose->end(); ++it) {
      std::string p = mapPtr + "/" + jsonPointerEscape(it.key());
      auto point = parseHookPoint(it.key());
      if (!point || !isSingleValued(*point)) {
        std::string msg =
            point ? "\"" + it.key() +
                        "\" is not a single-valued hook point; every active "
                        "package contributes to it"
                  : "\"" + it.key() + "\" is not a single-valued hook point" +
                        didYouMean(it.key(),
                                   std::span<const std::string_view>(single));
        checker.errorAtKey(p, mapPtr, msg,
                           "choose applies to transform-spec, pdl-spec, "
                           "tuning-spec, transform-library and input-type");
        continue;
      }
      if (!it->is_string()) {
        checker.error(p, "must be a string, not " + describeType(*it));
        continue;
      }
      std::string pkg = it->get<std::string>();
      if (checker.packageName(pkg, p))
        pf.choose.emplace(it.key(), pkg);
    }
  }
  r.finish();
  return pf;
}

/// `name@version`
static std::optional<std::pair<std::string, Version>>
parseNameAtVersion(Checker &checker, const std::string &text,
                   const std::string &ptr) {
  size_t at = text.find('@');
  if (at == std::string::npos) {
    checker.error(ptr, "\"" + text + "\" is not of the form name@version");
    return std::nullopt;
  }
  std::string name = text.substr(0, at);
  if (!checker.packageName(name, ptr))
    return std::nullopt;
  auto v = Version::parse(text.substr(at + 1));
  if (!v) {
    checker.error(ptr, v.error().message, v.error().hint);
    return std::nullopt;
  }
  return std::pair{name, *v};
}

Lockfile parseLockfile(const JsonDocument &doc, const ParseOptions &options,
                       DiagnosticList &diags) {
  Lockfile lf;
  Checker checker(doc, options, diags);
  ObjectReader r(checker, doc.root(), "");
  if (!r.valid())
    return lf;
  if (const json *v = r.any("lock_version", Need::Required))
    checker.schemaVersion(*v, r.child("lock_version"), "lock_version");
  if (auto h = r.string("input_hash", Need::Required)) {
    if (h->rfind("sha256:", 0) == 0 && isSha256Hex(h->substr(7)))
      lf.inputHash = *h;
    else
      checker.error(r.child("input_hash"),
                    "\"" + *h + "\" is not a sha256:<64 hex digits> hash",
                    "run `ireepkg lock` to rewrite the lockfile");
  }
  lf.platforms = readPlatforms(checker, r, "platforms", Need::Required);
  if (const json *v = r.any("iree_version"))
    if (auto ver = checker.version(*v, r.child("iree_version")))
      lf.ireeVersion = *ver;

  std::map<std::string, size_t> index; // name -> position in lf.packages
  std::vector<std::string> pointers;
  if (const json *pkgs = r.array("packages", Need::Required)) {
    for (size_t i = 0; i < pkgs->size(); ++i) {
      std::string p = r.child("packages") + "/" + std::to_string(i);
      ObjectReader pr(checker, (*pkgs)[i], p);
      if (!pr.valid())
        continue;
      LockedPackage lp;
      if (auto n = pr.string("name", Need::Required);
          n && checker.packageName(*n, pr.child("name")))
        lp.name = *n;
      if (const json *v = pr.any("version", Need::Required))
        if (auto ver = checker.version(*v, pr.child("version")))
          lp.version = *ver;
      bool needsArchive = false;
      if (const json *src = pr.object("source", Need::Required)) {
        ObjectReader sr(checker, *src, pr.child("source"));
        auto reg = sr.string("registry");
        auto path = sr.string("path");
        auto bundle = sr.string("bundle");
        if (sr.has("registry") + sr.has("path") + sr.has("bundle") != 1)
          checker.error(pr.child("source"),
                        "a source is exactly one of \"registry\", \"path\" "
                        "or \"bundle\"");
        if (reg) {
          lp.sourceKind = LockedPackage::SourceKind::Registry;
          lp.source = *reg;
        } else if (path) {
          lp.sourceKind = LockedPackage::SourceKind::Path;
          lp.source = *path;
        } else if (bundle) {
          lp.sourceKind = LockedPackage::SourceKind::Bundle;
          lp.source = *bundle;
        }
        needsArchive = reg || bundle;
        sr.finish();
      }
      Need archiveNeed = needsArchive ? Need::Required : Need::Optional;
      if (auto a = pr.string("archive", archiveNeed);
          a && checker.packagePath(*a, pr.child("archive")))
        lp.archive = *a;
      if (auto s = pr.string("sha256", archiveNeed)) {
        if (isSha256Hex(*s))
          lp.sha256 = *s;
        else
          checker.error(pr.child("sha256"),
                        "\"" + *s + "\" is not 64 lowercase hex digits");
      }
      if (auto sz = pr.integer("size", archiveNeed)) {
        if (*sz < 0)
          checker.error(pr.child("size"), "must not be negative");
        else
          lp.size = static_cast<uint64_t>(*sz);
      }
      if (auto s = pr.string("signed_by"))
        lp.signedBy = *s;
      if (auto deps = pr.stringArray("dependencies", Need::Required))
        for (size_t d = 0; d < deps->size(); ++d)
          if (auto nv = parseNameAtVersion(
                  checker, (*deps)[d],
                  pr.child("dependencies") + "/" + std::to_string(d)))
            lp.dependencies.push_back(*nv);
      lp.platforms = readPlatforms(checker, pr, "platforms", Need::Optional);
      pr.finish();
      if (!lp.name.empty()) {
        if (index.count(lp.name))
          checker.error(pr.child("name"), "package \"" + lp.name +
                                              "\" is locked more than once");
        else
          index.emplace(lp.name, lf.packages.size());
      }
      pointers.push_back(p);
      lf.packages.push_back(std::move(lp));
    }
  }
  // Every dependency names a locked package at its locked version.
  for (size_t i = 0; i < lf.packages.size(); ++i) {
    const LockedPackage &lp = lf.packages[i];
    for (size_t d = 0; d < lp.dependencies.size(); ++d) {
      const auto &[name, version] = lp.dependencies[d];
      std::string p = pointers[i] + "/dependencies/" + std::to_string(d);
      auto it = index.find(name);
      if (name == lp.name)
        checker.error(p, "package \"" + lp.name + "\" depends on itself",
                      "run `ireepkg lock` to rewrite the lockfile");
      else if (it == index.end())
        checker.error(p, "dependency \"" + name + "@" + version.str() +
                             "\" is not in the lock",
                      "run `ireepkg lock` to rewrite the lockfile");
      else if (!lf.packages[it->second].version.identical(version))
        checker.error(p, "dependency \"" + name + "@" + version.str() +
                             "\" does not match the locked " + name + " " +
                             lf.packages[it->second].version.str(),
                      "run `ireepkg lock` to rewrite the lockfile");
    }
  }
  if (auto act = r.stringArray("activation", Need::Required)) {
    std::map<std::string, size_t> position;
    for (size_t i = 0; i < act->size(); ++i) {
      const std::string &n = (*act)[i];
      std::string p = r.child("activation") + "/" + std::to_string(i);
      if (!index.count(n)) {
        checker.error(p, "\"" + n + "\" is not a locked package");
        continue;
      }
      position.emplace(n, i);
    }
    lf.activation = *act;
    for (size_t i = 0; i < lf.packages.size(); ++i) {
      const LockedPackage &lp = lf.packages[i];
      if (lp.name.empty())
        continue;
      auto self = position.find(lp.name);
      if (self == position.end()) {
        checker.error(r.child("activation"),
                      "package \"" + lp.name + "\" is missing from activation",
                      "every locked package appears once in activation");
        continue;
      }
      for (const auto &[dep, version] : lp.dependencies) {
        auto d = position.find(dep);
        if (d != position.end() && d->second > self->second)
          checker.error(r.child("activation") + "/" +
                            std::to_string(self->second),
                        "\"" + lp.name + "\" is activated before its "
                        "dependency \"" + dep + "\"",
                        "dependencies come before the packages that need "
                        "them");
      }
    }
  }
  r.finish();
  return lf;
}

} // namespace ireepkg
