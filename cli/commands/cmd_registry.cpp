//===- cli/commands/cmd_registry.cpp - registry init/resign, publish... ---===//
//
// The registry commands. `registry init`, `publish`, `yank` and `registry
// resign` write a registry directory with a signing key (the work is in
// ireepkg/registry.h); `registry verify` reads a registry the way every
// client does and reports what it checked.
//
//===----------------------------------------------------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"
#include "commands/shared.h"

#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/transport/oci_registry.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/publisher.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

namespace ireepkg::cli {

static const OptionSpec kSigningKey{"key", 'k', "FILE",
                                    "the registry's minisign secret key"};
static const OptionSpec kPasswordFile{"password-file", 0, "FILE",
                                      "read the secret key's password from "
                                      "FILE (its first line)"};
static const OptionSpec kExpiresDays{
    "expires-days", 0, "N",
    "the new snapshot expires N days from now (default: 30); clients refuse "
    "an expired snapshot"};
static const OptionSpec kRegistryDir{"registry", 0, "DIR",
                                     "the registry directory to write"};
static const OptionSpec kSite{
    "site", 0, "DIR",
    "then write the registry's web site to DIR, as `ireepkg registry site` "
    "does"};
static const OptionSpec kSiteUrl{
    "site-url", 0, "URL",
    "the URL users reach the registry at, for the site's install snippets "
    "(default: the directory as a file:// URL)"};

namespace {

std::string helpHint(const Command &self) {
  return "see `ireepkg " + self.name + " --help`";
}

/// --key, --password-file and --expires-days into `out`; returns an exit
/// code other than kExitOk after printing an error.
int signingOptions(const Command &self, const ParsedArgs &args,
                   registry::SigningOptions &out) {
  auto key = args.value("key");
  if (!key) {
    printError("'" + self.name +
                   "' needs --key <secret key>: a registry is "
                   "signed with a minisign secret key",
               "make a key pair with `ireepkg key generate -o "
               "registry-signing` and pass --key registry-signing.key");
    return kExitUsage;
  }
  out.secretKeyPath = *key;
  if (!passwordOption(args, out.password))
    return kExitFailure;
  auto file = signing::readSecretKeyFile(*key);
  if (!file) {
    printError(file.error());
    return kExitFailure;
  }
  if (file->encrypted && !out.password) {
    printError(*key + ": the secret key is encrypted; its password is needed",
               "give it with --password-file FILE");
    return kExitUsage;
  }
  if (!file->encrypted && out.password) {
    printWarning(*key + " is not encrypted; ignoring --password-file");
    out.password.reset();
  }
  if (auto days = args.value("expires-days")) {
    char *end = nullptr;
    long n = std::strtol(days->c_str(), &end, 10);
    if (days->empty() || *end != '\0' || n < 1 || n > 3650) {
      printError("--expires-days must be a number of days from 1 to 3650, "
                 "not '" +
                     *days + "'",
                 helpHint(self));
      return kExitUsage;
    }
    out.expiresDays = static_cast<int>(n);
  }
  out.now = static_cast<int64_t>(std::time(nullptr));
  return kExitOk;
}

/// The registry directory of --registry (a path or file:// URL).
std::optional<std::string> registryDirOption(const Command &self,
                                             const ParsedArgs &args) {
  auto dir = args.value("registry");
  if (!dir) {
    printError("'" + self.name + "' needs --registry <dir>", helpHint(self));
    return std::nullopt;
  }
  if (dir->rfind("file://", 0) == 0)
    return dir->substr(7);
  if (registry::isOciRegistryUrl(*dir))
    return *dir;
  if (dir->find("://") != std::string::npos) {
    printError("'" + self.name + "' writes into a registry directory, not " +
                   *dir,
               "run it on the machine that holds the registry's files (the "
               "directory the web server serves), then publish those; or "
               "keep the registry in an OCI registry (oci://HOST/NAMESPACE)");
    return std::nullopt;
  }
  return *dir;
}

/// The registry's metadata as files: its directory, or for an oci://
/// registry a temporary copy of what it holds now (removed at the end).
class MetadataView {
public:
  explicit MetadataView(const std::string &registry,
                        Reporter *reporter = nullptr)
      : dir_(registry) {
    if (!registry::isOciRegistryUrl(registry))
      return;
    std::error_code ec;
    std::string tmpl =
        (std::filesystem::temp_directory_path(ec) / "ireepkg-view-XXXXXX")
            .string();
    if (ec || !::mkdtemp(tmpl.data()))
      return;
    temp_ = dir_ = tmpl;
    (void)registry::pullOciRegistryMetadata(registry, dir_, reporter);
  }
  ~MetadataView() {
    if (!temp_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(temp_, ec);
    }
  }
  const std::string &dir() const { return dir_; }

private:
  std::string dir_, temp_;
};

/// snapshot.json's version and expiry, as just written.
std::pair<int64_t, std::string>
readSnapshotInfo(const std::string &registry, Reporter *reporter = nullptr) {
  MetadataView view(registry, reporter);
  auto doc = JsonDocument::load(view.dir() + "/snapshot.json");
  if (!doc)
    return {0, ""};
  DiagnosticList diags;
  RegistrySnapshot s = parseRegistrySnapshot(*doc, ParseOptions{false}, diags);
  return {s.version, s.expires};
}

std::string shortSha(const std::string &sha) { return sha.substr(0, 12); }

void printJson(const nlohmann::json &j) {
  std::printf("%s\n", j.dump(2).c_str());
}

} // namespace

//===----------------------------------------------------------------------===//
// registry init
//===----------------------------------------------------------------------===//

int runRegistryInit(const Command &self, const ParsedArgs &args) {
  const std::string &dir = args.positional[0];
  bool json = args.flag("json");
  registry::InitOptions options;
  if (int rc = signingOptions(self, args, options.signing); rc != kExitOk)
    return rc;
  options.name = args.value("name").value_or("");
  options.mirrors = args.all("mirror");
  options.description = args.value("description").value_or("");
  CliReporter reporter(json);
  options.signing.reporter = &reporter;
  if (Status st = registry::initRegistry(dir, options); !st)
    return printFailure(st.error(), json);

  // What was written: config.json lists the key's public half.
  auto [version, expires] = readSnapshotInfo(dir, &reporter);
  MetadataView view(dir, &reporter);
  auto doc = JsonDocument::load(view.dir() + "/config.json");
  std::string name = options.name, pub, keyId;
  if (doc) {
    DiagnosticList diags;
    RegistryConfig config =
        parseRegistryConfig(*doc, ParseOptions{false}, diags);
    name = config.name;
    if (!config.keys.empty()) {
      pub = config.keys[0];
      if (auto key = signing::parsePublicKey(pub))
        keyId = signing::keyIdHex(*key);
    }
  }
  if (json) {
    printJson({{"ok", true},
               {"registry", dir},
               {"name", name},
               {"key_id", keyId},
               {"public_key", pub},
               {"snapshot_version", version},
               {"expires", expires}});
    return kExitOk;
  }
  printSummary("created registry \"%s\" in %s\n", name.c_str(), dir.c_str());
  printSummary("signing key: %s (%s)\n", keyId.c_str(), pub.c_str());
  printSummary("snapshot version %lld, expires %s\n",
               static_cast<long long>(version), expires.c_str());
  printSummary("clients trust it with --registry-key %s, or \"public_key\": "
               "\"%s\" in plugins.json\n",
               pub.c_str(), pub.c_str());
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// registry resign
//===----------------------------------------------------------------------===//

int runRegistryResign(const Command &self, const ParsedArgs &args) {
  const std::string &dir = args.positional[0];
  bool json = args.flag("json");
  registry::SigningOptions options;
  if (int rc = signingOptions(self, args, options); rc != kExitOk)
    return rc;
  CliReporter reporter(json);
  options.reporter = &reporter;
  auto version = registry::resignRegistry(dir, options);
  if (!version)
    return printFailure(version.error(), json);
  if (!updateSiteAfterWrite(args, dir, json))
    return kExitFailure;
  auto [v, expires] = readSnapshotInfo(dir, &reporter);
  MetadataView view(dir, &reporter);
  auto sig = signing::readSignatureFile(view.dir() + "/snapshot.json.minisig");
  std::string keyId = sig ? signing::keyIdHex(sig->keyId) : "";
  if (json) {
    printJson({{"ok", true},
               {"registry", dir},
               {"snapshot_version", *version},
               {"expires", expires},
               {"key_id", keyId}});
    return kExitOk;
  }
  printSummary("re-signed %s: snapshot version %lld, expires %s (key %s)\n",
               dir.c_str(), static_cast<long long>(*version), expires.c_str(),
               keyId.c_str());
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// publish
//===----------------------------------------------------------------------===//

int runPublish(const Command &self, const ParsedArgs &args) {
  bool json = args.flag("json");
  auto dir = registryDirOption(self, args);
  if (!dir)
    return kExitUsage;
  registry::SigningOptions options;
  if (int rc = signingOptions(self, args, options); rc != kExitOk)
    return rc;
  CliReporter reporter(json);
  options.reporter = &reporter;
  // One transaction: every archive is checked, then all are published
  // with one new snapshot, or none is.
  auto published = registry::publishArchives(*dir, args.positional, options);
  if (!published)
    return printFailure(published.error(), json);
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < published->size(); ++i) {
    const registry::PublishResult &r = (*published)[i];
    for (const Diagnostic &d : r.warnings)
      reporter.warning(d);
    results.push_back({{"archive", args.positional[i]},
                       {"ok", true},
                       {"name", r.name},
                       {"version", r.version.str()},
                       {"path", r.archivePath},
                       {"sha256", r.sha256},
                       {"size", r.size},
                       {"snapshot_version", r.snapshotVersion},
                       {"already_published", r.alreadyPublished}});
    if (json)
      continue;
    if (r.alreadyPublished)
      printSummary("%s %s is already published with the same contents; "
                   "nothing changed\n",
                   r.name.c_str(), r.version.str().c_str());
    else
      printSummary("published %s %s: %s (%s, sha256 %s...), snapshot "
                   "version %lld\n",
                   r.name.c_str(), r.version.str().c_str(),
                   r.archivePath.c_str(), formatBytes(r.size).c_str(),
                   shortSha(r.sha256).c_str(),
                   static_cast<long long>(r.snapshotVersion));
  }
  bool failed = !updateSiteAfterWrite(args, *dir, json);
  if (json)
    printJson({{"ok", !failed}, {"registry", *dir}, {"published", results}});
  return failed ? kExitFailure : kExitOk;
}

//===----------------------------------------------------------------------===//
// yank
//===----------------------------------------------------------------------===//

int runYank(const Command &self, const ParsedArgs &args) {
  bool json = args.flag("json");
  const std::string &spec = args.positional[0];
  size_t at = spec.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == spec.size()) {
    printError("'" + spec + "' is not <name>@<version>",
               "name the exact version, e.g. `ireepkg yank simple-mul@1.2.0`");
    return kExitUsage;
  }
  std::string name = spec.substr(0, at);
  auto version = Version::parse(spec.substr(at + 1));
  if (!version) {
    printError("'" + spec.substr(at + 1) +
                   "' is not a version: " + version.error().message,
               "name the exact version, e.g. `ireepkg yank simple-mul@1.2.0`");
    return kExitUsage;
  }
  auto dir = registryDirOption(self, args);
  if (!dir)
    return kExitUsage;
  registry::SigningOptions options;
  if (int rc = signingOptions(self, args, options); rc != kExitOk)
    return rc;
  bool yank = !args.flag("undo");
  CliReporter reporter(json);
  options.reporter = &reporter;
  auto before = readSnapshotInfo(*dir, &reporter).first;
  auto after = registry::yankVersion(*dir, name, *version, yank, options);
  if (!after)
    return printFailure(after.error(), json);
  bool changed = *after != before;
  if (!updateSiteAfterWrite(args, *dir, json))
    return kExitFailure;
  if (json) {
    printJson({{"ok", true},
               {"registry", *dir},
               {"name", name},
               {"version", version->str()},
               {"yanked", yank},
               {"changed", changed},
               {"snapshot_version", *after}});
    return kExitOk;
  }
  if (!changed)
    printSummary("%s %s is already %s; nothing changed\n", name.c_str(),
                 version->str().c_str(), yank ? "yanked" : "not yanked");
  else
    printSummary("%s %s %s, snapshot version %lld\n",
                 yank ? "yanked" : "restored", name.c_str(),
                 version->str().c_str(), static_cast<long long>(*after));
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// registry verify
//===----------------------------------------------------------------------===//

int runRegistryVerify(const Command &, const ParsedArgs &args) {
  bool json = args.flag("json");
  registry::RegistrySpec spec = standaloneRegistry(args, args.positional[0]);
  registry::ClientOptions options;
  options.offline = args.flag("offline");
  // What this machine checked before is checked again.
  options.recheck = true;
  CliReporter reporter(json);
  auto client = registry::RegistryClient::open(spec, options, reporter);
  if (!client)
    return printFailure(client.error(), json);
  registry::RegistryClient &c = **client;

  nlohmann::json packages = nlohmann::json::array();
  std::vector<std::pair<std::string, Version>> all;
  std::string text;
  size_t versionCount = 0;
  for (const std::string &name : c.packageNames()) {
    auto idx = c.index(name);
    if (!idx)
      return printFailure(idx.error(), json);
    nlohmann::json versions = nlohmann::json::array();
    std::string line;
    for (const IndexEntry &e : (*idx)->versions) {
      nlohmann::json platforms = nlohmann::json::array();
      for (const Platform &p : e.platforms)
        platforms.push_back(p.str());
      versions.push_back({{"version", e.version.str()},
                          {"yanked", e.yanked},
                          {"archive", e.archive},
                          {"sha256", e.sha256},
                          {"size", e.size},
                          {"platforms", platforms}});
      line += (line.empty() ? "" : ", ") + e.version.str() +
              (e.yanked ? " (yanked)" : "");
      all.emplace_back(name, e.version);
      ++versionCount;
    }
    packages.push_back({{"name", name}, {"versions", versions}});
    text += "  " + name + ": " + line + "\n";
  }
  bool archives = args.flag("archives");
  if (archives) {
    auto paths = c.fetchArchives(all, reporter);
    reporter.clearProgress();
    if (!paths)
      return printFailure(paths.error(), json);
  }
  const RegistrySnapshot &s = c.snapshot();
  if (json) {
    printJson({{"ok", true},
               {"registry", spec.url},
               {"name", c.config().name},
               {"snapshot_version", s.version},
               {"expires", s.expires},
               {"signed_by", c.signedBy()},
               {"packages", packages},
               {"archives_verified", archives}});
    return kExitOk;
  }
  printSummary("registry \"%s\" (%s): snapshot version %lld signed by %s, "
               "expires %s\n",
               c.config().name.c_str(), spec.url.c_str(),
               static_cast<long long>(s.version), c.signedBy().c_str(),
               s.expires.c_str());
  printSummary("%s", text.c_str());
  printSummary("%zu package%s, %zu version%s: every index file matches the "
               "signed snapshot\n",
               packages.size(), packages.size() == 1 ? "" : "s", versionCount,
               versionCount == 1 ? "" : "s");
  if (archives)
    printSummary("every archive has the size and SHA-256 of its index entry\n");
  return kExitOk;
}

//===----------------------------------------------------------------------===//
// registry add-existing
//===----------------------------------------------------------------------===//

int runRegistryAddExisting(const Command &self, const ParsedArgs &args) {
  bool json = args.flag("json");
  const std::string &spec = args.positional[0];
  size_t at = spec.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == spec.size()) {
    printError("'" + spec + "' is not <name>@<version>",
               "name the exact version, e.g. `ireepkg registry add-existing "
               "simple-mul@1.2.0`");
    return kExitUsage;
  }
  const std::string name = spec.substr(0, at);
  auto version = Version::parse(spec.substr(at + 1));
  if (!version) {
    printError("'" + spec.substr(at + 1) +
                   "' is not a version: " + version.error().message,
               "name the exact version, e.g. `ireepkg registry add-existing "
               "simple-mul@1.2.0`");
    return kExitUsage;
  }
  auto url = args.value("registry");
  if (!url || !registry::isOciRegistryUrl(*url)) {
    printError("'" + self.name +
                   "' needs --registry oci://HOST/NAMESPACE (a registry kept "
                   "in an OCI registry)",
               helpHint(self));
    return kExitUsage;
  }
  registry::SigningOptions options;
  if (int rc = signingOptions(self, args, options); rc != kExitOk)
    return rc;
  CliReporter reporter(json);
  options.reporter = &reporter;
  auto r = registry::addExistingOciArtifact(*url, name, *version, options);
  reporter.clearProgress();
  if (!r)
    return printFailure(r.error(), json);
  if (json) {
    printJson({{"ok", true},
               {"registry", *url},
               {"name", r->name},
               {"version", r->version.str()},
               {"sha256", r->sha256},
               {"size", r->size},
               {"snapshot_version", r->snapshotVersion},
               {"already_published", r->alreadyPublished}});
    return kExitOk;
  }
  if (r->alreadyPublished)
    printSummary("%s %s is already in the registry's metadata with the same "
                 "contents; nothing changed\n",
                 r->name.c_str(), r->version.str().c_str());
  else
    printSummary("added %s %s (sha256 %s...), snapshot version %lld\n",
                 r->name.c_str(), r->version.str().c_str(),
                 shortSha(r->sha256).c_str(),
                 static_cast<long long>(r->snapshotVersion));
  return kExitOk;
}

const Command &registryInitCommand() {
  static const Command command{
      .name = "registry init",
      .synopsis = "<dir> --key FILE [--password-file FILE] [--name NAME] "
                  "[--mirror URL]... [--json]",
      .summary = "create a signed registry in a new or empty directory",
      .description =
          "Writes a registry's layout into <dir>: config.json (its name, the "
          "public half of --key as its signing key, and its mirrors), index/, "
          "archives/, and snapshot.json version 1 with its signature "
          "snapshot.json.minisig. Serve the directory with any web server, or "
          "use it as it is (a path or file:// URL).\n\n"
          "A key is required: clients only use signed registries. Make one "
          "with `ireepkg key generate`. Clients do not trust config.json's "
          "key by themselves: give them the public key (printed here) "
          "through a channel they trust.",
      .options = {kSigningKey,
                  kPasswordFile,
                  {"name", 0, "NAME",
                   "the registry's name (default: the directory's name)"},
                  {"mirror", 0, "URL", "another URL serving the same registry",
                   true},
                  {"description", 0, "TEXT", "what the registry holds"},
                  kExpiresDays,
                  kJson},
      .examples =
          {"ireepkg key generate -o registry-signing",
           "ireepkg registry init ./registry --key registry-signing.key"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runRegistryInit,
  };
  return command;
}

const Command &publishCommand() {
  static const Command command{
      .name = "publish",
      .synopsis =
          "<archive>... --registry DIR --key FILE [--password-file FILE] "
          "[--expires-days N] [--json]",
      .summary = "add package archives to a registry directory and re-sign it",
      .description =
          "Checks each archive as `install` does (manifest, RECORD, every "
          "member rule), copies it to archives/<name>/<name>-<version>.ireepkg "
          "with its signature, adds the version to index/<name>.json (its "
          "dependencies, IREE requirement, platforms, size and SHA-256), and "
          "writes a new snapshot.json, version one higher, signed with "
          "--key, which must be one of config.json's keys.\n\n"
          "A published version never changes: publishing a name and version "
          "that is there with other contents is refused; with the same "
          "contents nothing changes.\n\n"
          "Several archives are published in one transaction: each is "
          "checked first (two of the same name and version must have the "
          "same contents), and if any is refused none is published; "
          "otherwise they all go in with one new snapshot, and --site "
          "writes the site once. Every file is replaced atomically, under "
          "a lock, in an order that lets clients read the registry while it "
          "is being updated.",
      .options = {kRegistryDir, kSigningKey, kPasswordFile, kExpiresDays, kSite,
                  kSiteUrl, kJson},
      .examples = {"ireepkg publish dist/simple-mul-1.2.0.ireepkg --registry "
                   "./registry --key registry-signing.key",
                   "ireepkg publish dist/*.ireepkg --registry ./registry --key "
                   "registry-signing.key --site ./registry/site --site-url "
                   "https://plugins.example.org/iree"},
      .minPositional = 1,
      .run = runPublish,
  };
  return command;
}

const Command &yankCommand() {
  static const Command command{
      .name = "yank",
      .synopsis =
          "<name>@<version> --registry DIR --key FILE [--undo] [--json]",
      .summary = "withdraw a published version (or restore it with --undo)",
      .description =
          "Marks the version as yanked in index/<name>.json and re-signs the "
          "snapshot. A yanked version stays downloadable for lockfiles that "
          "already pin it, but resolution never chooses it otherwise. "
          "--undo clears the mark.",
      .options = {kRegistryDir,
                  kSigningKey,
                  kPasswordFile,
                  {"undo", 0, "", "restore the version instead"},
                  kExpiresDays,
                  kSite,
                  kSiteUrl,
                  kJson},
      .examples = {"ireepkg yank simple-mul@1.2.0 --registry ./registry --key "
                   "registry-signing.key"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runYank,
  };
  return command;
}

const Command &registryAddExistingCommand() {
  static const Command command{
      .name = "registry add-existing",
      .synopsis = "<name>@<version> --registry oci://HOST/NAMESPACE --key FILE "
                  "[--json]",
      .summary =
          "add a version another OCI client pushed to the signed metadata",
      .description =
          "For a registry kept in an OCI registry: the artifact "
          "NAMESPACE/<name>:<version> was pushed by another tool (oras, a "
          "CI's own pusher) with the archive as its layer of media type "
          "application/vnd.ireepkg.archive.v1. Downloads that layer "
          "(verified against its digest), checks it as `publish` checks an "
          "archive (it must be that name and version), and adds it to the "
          "index and a new signed snapshot. The artifact is left as it was.",
      .options = {kRegistryDir, kSigningKey, kPasswordFile, kExpiresDays,
                  kJson},
      .examples =
          {"ireepkg registry add-existing simple-mul@1.2.0 --registry "
           "oci://ghcr.io/acme/iree-plugins --key registry-signing.key"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runRegistryAddExisting,
  };
  return command;
}

const Command &registryResignCommand() {
  static const Command command{
      .name = "registry resign",
      .synopsis = "<dir> --key FILE [--password-file FILE] [--expires-days N] "
                  "[--json]",
      .summary = "re-sign a registry's snapshot with a new version and expiry",
      .description =
          "Checks that every index file still has the hash the current "
          "snapshot pins, then writes the same snapshot with its version "
          "raised by one and a new expiry, signed with --key. Run it "
          "regularly (before the snapshot expires: clients refuse an expired "
          "one), or after adding a new key to config.json to move to it.",
      .options = {kSigningKey, kPasswordFile, kExpiresDays, kSite, kSiteUrl,
                  kJson},
      .examples =
          {"ireepkg registry resign ./registry --key registry-signing.key "
           "--expires-days 90"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runRegistryResign,
  };
  return command;
}

const Command &registryVerifyCommand() {
  static const Command command{
      .name = "registry verify",
      .synopsis = "<dir|url> [--registry-key KEY]... [--archives] [--json]",
      .summary = "check a registry as a client does and list what it holds",
      .description =
          "Reads the registry the way every ireepkg client does: the "
          "snapshot's signature against the trusted keys, its version "
          "against the highest this machine has seen (rollback) and its "
          "expiry (freeze), and every index file's hash against the "
          "snapshot. With --archives, also downloads every archive into the "
          "cache and checks its size and SHA-256. Any failure is reported "
          "with what it means and exit status 1.",
      .options =
          {{"registry-key", 0, "KEY",
            "trust this minisign public key (the RW... line, or a .pub "
            "file)",
            true},
           {"mirror", 0, "URL", "another URL of the same registry", true},
           {"archives", 0, "", "also fetch and check every archive"},
           {"offline", 0, "",
            "open no network connection (a remote registry's archives must "
            "be in the cache)"},
           kJson},
      .examples = {"ireepkg registry verify ./registry --registry-key RWQ...",
                   "ireepkg registry verify https://plugins.example.org/iree "
                   "--registry-key registry-signing.pub --archives"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runRegistryVerify,
  };
  return command;
}

} // namespace ireepkg::cli
