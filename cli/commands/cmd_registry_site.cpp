//===- cli/commands/cmd_registry_site.cpp - registry site -----------------===//
//
// `ireepkg registry site`: writes a registry's static web site (the work is
// in ireepkg/registry/site/site.h). publish, yank and registry resign call
// updateSiteAfterWrite for their --site DIR.
//
//===----------------------------------------------------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"
#include "commands/shared.h"

#include "ireepkg/registry/site/site.h"

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

const Command &registrySiteCommand() {
  static const Command command{
      .name = "registry site",
      .synopsis = "[<dir|url>] -o DIR [--registry-key KEY]... [--url URL] "
                  "[--index-only] [--json]",
      .summary =
          "write a registry's static web site (search, one page per package)",
      .description =
          "Reads the registry the way every client does (the snapshot's "
          "signature, expiry and version, every index file's hash) and "
          "writes a self-contained static web site into DIR: index.html with "
          "search and filters (platform, kind, IREE version) over a prebuilt "
          "index, all.html, and packages/<name>.html with every version "
          "(yanked ones marked), dependencies and dependents, requires.iree, "
          "each compiler plugin's options, hooks, runtime plugins and their "
          "imports, size, SHA-256, the signing key, install snippets and the "
          "package's README. No server-side code and nothing loaded from "
          "elsewhere: it works from file:// and from any web server.\n\n"
          "The details only a manifest holds come from the newest version's "
          "archive, checked against the size and SHA-256 of its index entry "
          "(a remote registry's archives are downloaded into the cache). "
          "Text from packages is escaped; a README is rendered from Markdown "
          "without raw HTML. <dir|url> defaults to the current directory; a "
          "directory given without --registry-key is checked with the keys "
          "of its own config.json, as publish does. DIR must be new, empty, "
          "or a site written before: it is updated in place (files that "
          "differ are replaced, each atomically; other files removed).",
      .options =
          {{"output", 'o', "DIR", "the directory to write the site to"},
           {"registry-key", 0, "KEY",
            "trust this minisign public key (the RW... line, or a .pub "
            "file)",
            true},
           {"mirror", 0, "URL", "another URL of the same registry", true},
           {"url", 0, "URL",
            "the URL users reach the registry at, for install snippets and "
            "archive links (default: the registry as given; a directory as "
            "a file:// URL)"},
           {"index-only", 0, "",
            "read no archive: show only what the index files hold"},
           {"offline", 0, "",
            "open no network connection (a remote registry's archives must "
            "be in the cache)"},
           kJson},
      .examples = {"ireepkg registry site ./registry -o ./registry/site --url "
                   "https://plugins.example.org/iree",
                   "ireepkg registry site https://plugins.example.org/iree "
                   "--registry-key RWQ... -o site"},
      .maxPositional = 1,
      .run = runRegistrySite,
  };
  return command;
}

} // namespace ireepkg::cli
