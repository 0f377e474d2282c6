//===- cmd_registry.cpp - registry init/resign/verify, publish, yank ------===//
//
// The registry commands. `registry init`, `publish`, `yank` and `registry
// resign` write a registry directory with a signing key (the work is in
// ireepkg/registry.h); `registry verify` reads a registry the way every
// client does and reports what it checked.
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "registry_args.h"
#include "report.h"
#include "shared.h"

#include "ireepkg/pkg/package/signature.h"
#include "ireepkg/registry/oci_registry.h"
#include "ireepkg/registry/registry.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

namespace ireepkg::cli {

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

} // namespace ireepkg::cli
