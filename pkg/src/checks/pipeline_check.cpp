//===- pkg/src/checks/pipeline_check.cpp - Hooks at pack and install ------===//
#include "pipeline_check.h"

#include <deque>

namespace ireepkg {

namespace {

const char *const kRegisterHint =
    "a program that packs or installs packages must register the "
    "integrations' checks (registerCompilerChecks, registerRuntimeChecks) "
    "first";

Error notRegistered(const char *what) {
  return Error{ErrorCode::Internal,
               std::string("no ") + what +
                   " checks are registered, so a package's plugins and hook "
                   "pipelines cannot be checked",
               {},
               kRegisterHint};
}

/// checkPackagePipelines of the registered compiler checks.
Expected<MlirCheckReport>
registeredPipelineCheck(const std::vector<PipelineCheckPackage> &packages,
                        const Platform &platform, bool loadPlugins,
                        DiagnosticList &diags, bool authoring = false) {
  const CompilerChecks *checks = registeredCompilerChecks();
  if (!checks)
    return Unexpected(notRegistered("compiler"));
  return checks->checkPipelines(packages, platform, loadPlugins, diags,
                                authoring);
}

} // namespace

void checkPackPlugins(const Manifest &m, const JsonDocument &doc,
                      const PackageFileOf &fileOf, DiagnosticList &diags) {
  const auto notThere = [&](const char *what) {
    Error e = notRegistered(what);
    diags.error(Location{}, e.message, e.hint);
  };
  if (const RuntimeChecks *runtime = registeredRuntimeChecks())
    runtime->checkImports(m, doc, fileOf, diags);
  else
    notThere("runtime");
  if (const CompilerChecks *compiler = registeredCompilerChecks())
    compiler->checkDynamicPlugins(m, doc, fileOf, diags);
  else
    notThere("compiler");
}

Expected<MlirCheckReport> checkPackPipelines(const Manifest &manifest,
                                             const JsonDocument &doc,
                                             const std::string &dir,
                                             bool loadPlugins,
                                             DiagnosticList &diags) {
  PipelineCheckPackage pkg;
  pkg.name = manifest.name;
  pkg.manifest = &manifest;
  pkg.dir = dir;
  pkg.document = &doc;
  pkg.file = doc.file();
  pkg.check = true;
  return registeredPipelineCheck({pkg}, hostPlatform(), loadPlugins, diags,
                                 /*authoring=*/true);
}

Expected<MlirCheckReport>
checkInstallPipelines(const std::string &prefix,
                      const std::vector<InstalledPackage> &packages,
                      const std::map<std::string, Manifest> &manifests,
                      const std::map<std::string, StagedPackage> &staged,
                      const Platform &platform, Reporter &reporter) {
  std::vector<PipelineCheckPackage> list;
  std::deque<JsonDocument> documents; // stable addresses
  for (const InstalledPackage &p : packages) {
    auto m = manifests.find(p.name);
    if (m == manifests.end())
      continue;
    PipelineCheckPackage pkg;
    pkg.name = p.name;
    pkg.manifest = &m->second;
    auto s = staged.find(p.name);
    if (s == staged.end()) {
      pkg.dir = packageDir(prefix, p.name, p.version);
      pkg.file = pkg.dir + "/" + kManifestName;
    } else {
      pkg.dir = s->second.dir;
      pkg.file = s->second.archive + ":" + kManifestName;
      pkg.check = true;
      if (s->second.manifestText)
        if (auto doc = JsonDocument::parse(*s->second.manifestText, pkg.file)) {
          documents.push_back(std::move(*doc));
          pkg.document = &documents.back();
        }
    }
    list.push_back(std::move(pkg));
  }
  DiagnosticList diags;
  auto report =
      registeredPipelineCheck(list, platform, /*loadPlugins=*/true, diags);
  if (!report)
    return report;
  if (diags.hasErrors())
    return makeError(ErrorCode::Invalid, diags);
  for (const Diagnostic &d : diags.items())
    reporter.warning(d);
  return report;
}

} // namespace ireepkg
