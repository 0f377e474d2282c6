//===- cmd_registry_site.cpp - registry site ------------------------------===//
//
// `ireepkg registry site`: writes a registry's static web site (the work is
// in ireepkg/registry/site.h). publish, yank and registry resign call
// updateSiteAfterWrite for their --site DIR.
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "registry_args.h"
#include "report.h"
#include "shared.h"

#include "ireepkg/registry/site.h"

#include <cstdio>
#include <string>

namespace ireepkg::cli {

namespace {

nlohmann::json siteJson(const registry::SiteResult &r) {
  nlohmann::json warnings = nlohmann::json::array();
  for (const Diagnostic &d : r.warnings)
    warnings.push_back(d.message);
  return {{"site", r.outputDir},
          {"registry_name", r.registryName},
          {"snapshot_version", r.snapshotVersion},
          {"expires", r.expires},
          {"signed_by", r.signedBy},
          {"packages", r.packages},
          {"versions", r.versions},
          {"files", r.files},
          {"written", r.written},
          {"bytes", r.bytes},
          {"seconds", r.seconds},
          {"warnings", warnings}};
}

void printSite(const registry::SiteResult &r) {
  printSummary("wrote the site of registry \"%s\" to %s: %zu package%s, %zu "
               "version%s, %zu files, %s, %zu new or changed (snapshot "
               "version %lld, signed by %s, expires %s)\n",
               r.registryName.c_str(), r.outputDir.c_str(), r.packages,
               r.packages == 1 ? "" : "s", r.versions,
               r.versions == 1 ? "" : "s", r.files,
               formatBytes(r.bytes).c_str(), r.written,
               static_cast<long long>(r.snapshotVersion), r.signedBy.c_str(),
               r.expires.c_str());
}

} // namespace

/// After publish, yank or resign with --site DIR: writes the site again.
/// Returns false (after printing the error) when that failed.
bool updateSiteAfterWrite(const ParsedArgs &args, const std::string &dir,
                          bool json) {
  auto out = args.value("site");
  if (!out)
    return true;
  registry::SiteOptions options;
  options.spec.name.clear();
  options.spec.url = dir;
  options.outputDir = *out;
  options.publicUrl = args.value("site-url").value_or("");
  CliReporter reporter(json);
  auto r = registry::generateSite(options, reporter);
  if (!r) {
    printError(r.error());
    return false;
  }
  for (const Diagnostic &d : r->warnings)
    reporter.warning(d);
  if (!json)
    printSite(*r);
  return true;
}

int runRegistrySite(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  registry::SiteOptions options;
  options.spec = standaloneRegistry(
      args, args.positional.empty() ? "." : args.positional[0]);
  options.client.offline = args.flag("offline");
  options.outputDir = args.value("output").value_or("");
  if (options.outputDir.empty()) {
    printError("'registry site' needs -o DIR, the directory to write the "
               "site to",
               "see `ireepkg registry site --help`");
    return kExitUsage;
  }
  options.publicUrl = args.value("url").value_or("");
  options.readArchives = !args.flag("index-only");
  if (!networkSettingsFromEnvironment(options.client.fetch))
    return kExitUsage;
  CliReporter reporter(json);
  auto r = registry::generateSite(options, reporter);
  reporter.clearProgress();
  if (!r)
    return printFailure(r.error(), json);
  for (const Diagnostic &d : r->warnings)
    reporter.warning(d);
  if (json) {
    nlohmann::json j = siteJson(*r);
    j["ok"] = true;
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  printSite(*r);
  return kExitOk;
}

} // namespace ireepkg::cli
