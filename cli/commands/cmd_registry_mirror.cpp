//===- cli/commands/cmd_registry_mirror.cpp - registry mirror -------------===//
//
// `ireepkg registry mirror <url> <dir>`: a verified static copy of a
// registry (the work is registry::mirrorRegistry, mirror.cpp).
//
//===----------------------------------------------------------------------===//
#include "commands/options.h"
#include "output/output.h"
#include "args/registry_args.h"
#include "output/report.h"

#include "ireepkg/registry/client/client.h"
#include "ireepkg/registry/publish/mirror.h"

#include <cstdio>
#include <string>

namespace ireepkg::cli {

int runRegistryMirror(const Command &, const ParsedArgs &args) {
  const bool json = args.flag("json");
  registry::RegistrySpec spec = standaloneRegistry(args, args.positional[0]);
  registry::ClientOptions options;
  CliReporter reporter(json);
  auto r =
      registry::mirrorRegistry(spec, args.positional[1], options, reporter);
  reporter.clearProgress();
  if (!r) {
    const int rc = printFailure(r.error(), json);
    return r.error().code == ErrorCode::Usage ? kExitUsage : rc;
  }
  if (json) {
    std::printf("%s\n", nlohmann::json(
                            {{"ok", true},
                             {"registry", spec.url},
                             {"dir", r->dir},
                             {"snapshot_version", r->snapshotVersion},
                             {"previous_snapshot_version", r->previousVersion},
                             {"signed_by", r->signedBy},
                             {"packages", r->packages},
                             {"versions", r->versions},
                             {"archives_copied", r->archivesCopied},
                             {"bytes_copied", r->bytesCopied}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  if (r->previousVersion == r->snapshotVersion && r->archivesCopied == 0)
    printSummary("%s is up to date: snapshot version %lld\n", r->dir.c_str(),
                 static_cast<long long>(r->snapshotVersion));
  else
    printSummary("%s %s: snapshot version %lld signed by %s, %zu package%s, "
                 "%zu version%s; %zu archive%s copied (%s)\n",
                 r->previousVersion ? "updated" : "copied into", r->dir.c_str(),
                 static_cast<long long>(r->snapshotVersion),
                 r->signedBy.c_str(), r->packages, r->packages == 1 ? "" : "s",
                 r->versions, r->versions == 1 ? "" : "s", r->archivesCopied,
                 r->archivesCopied == 1 ? "" : "s",
                 formatBytes(r->bytesCopied).c_str());
  return kExitOk;
}

const Command &registryMirrorCommand() {
  static const Command command{
      .name = "registry mirror",
      .synopsis =
          "<url> <dir> [--registry-key KEY]... [--mirror URL]... [--json]",
      .summary = "copy a registry into a directory, verified (a static mirror)",
      .description =
          "Reads the registry at <url> (oci://, https:// or a directory) the "
          "way every client does, and writes it into <dir> as a directory "
          "registry: config.json, snapshot.json and its signature and the "
          "index files byte for byte, every archive (yanked ones too) and "
          "each archive's signature. The copy verifies with the same key: "
          "serve it with any web server, list it as a mirror in "
          "plugins.json, or carry it to a machine without network. Nothing "
          "is written before it is checked (the snapshot's signature, "
          "version and expiry, every index's hash, every archive's size "
          "and SHA-256), and files move into <dir> in the order a publisher "
          "writes them, so a copy being served stays consistent.\n\n"
          "<dir> must be new, empty, or an earlier copy: run the command "
          "again to bring it up to date (only archives it lacks are "
          "fetched). A copy newer than <url> is not overwritten.",
      .options = {{"registry-key", 0, "KEY",
                   "trust this minisign public key (the RW... line, or a .pub "
                   "file)",
                   true},
                  {"mirror", 0, "URL", "another URL of the same registry",
                   true},
                  kJson},
      .examples = {"ireepkg registry mirror oci://ghcr.io/acme/iree-plugins "
                   "./static-copy --registry-key registry-signing.pub"},
      .minPositional = 2,
      .maxPositional = 2,
      .run = runRegistryMirror,
  };
  return command;
}

} // namespace ireepkg::cli
