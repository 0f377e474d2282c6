//===- cmd_registry_mirror.cpp - registry mirror --------------------------===//
//
// `ireepkg registry mirror <url> <dir>`: a verified static copy of a
// registry (the work is registry::mirrorRegistry, mirror.cpp).
//
//===----------------------------------------------------------------------===//
#include "output.h"
#include "registry_args.h"
#include "report.h"

#include "ireepkg/registry/registry.h"

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

} // namespace ireepkg::cli
