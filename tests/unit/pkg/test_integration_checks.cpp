//===- test_integration_checks.cpp - The checks the program registers -----===//
//
// ireepkg/pkg/checks/integration_checks.h: pack and install run the
// integrations' checks through the CompilerChecks and RuntimeChecks the
// program registered (main.cpp registers compiler_integration's and
// runtime_integration's, as the CLI does). Fakes registered for one test
// case see what pkg asks of them.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/compiler_integration/compiler_checks.h"
#include "ireepkg/pkg/checks/integration_checks.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "ireepkg/runtime_integration/runtime_checks.h"

#include <doctest/doctest.h>

#include <filesystem>

using namespace ireepkg;
using namespace ireepkg::test;
namespace fs = std::filesystem;

namespace {

using Calls = std::vector<std::string>;

struct FakeCompilerChecks final : CompilerChecks {
  mutable Calls calls;
  Expected<MlirCheckReport>
  checkPipelines(const std::vector<PipelineCheckPackage> &packages,
                 const Platform &platform, bool loadPlugins,
                 DiagnosticList &diags, bool authoring) const override {
    std::string call = "pipelines";
    for (const PipelineCheckPackage &p : packages)
      call += " " + p.name + (p.check ? "*" : "");
    if (loadPlugins)
      call += " load";
    if (authoring)
      call += " authoring";
    if (platform != hostPlatform())
      call += " " + platform.str();
    calls.push_back(call);
    (void)diags;
    MlirCheckReport report;
    report.skipped = "fake";
    return report;
  }
  void checkDynamicPlugins(const Manifest &m, const JsonDocument &,
                           const PackageFileOf &,
                           DiagnosticList &) const override {
    calls.push_back("dynamic " + m.name);
  }
};

struct FakeRuntimeChecks final : RuntimeChecks {
  mutable Calls calls;
  void checkImports(const Manifest &m, const JsonDocument &,
                    const PackageFileOf &,
                    DiagnosticList &diags) const override {
    calls.push_back("imports " + m.name);
    diags.warning(Location{}, "fake import check");
  }
};

/// The fakes, registered for one scope; then the real checks again.
struct Fakes {
  FakeCompilerChecks compiler;
  FakeRuntimeChecks runtime;
  Fakes() {
    registerCompilerChecks(compiler);
    registerRuntimeChecks(runtime);
  }
  ~Fakes() {
    registerCompilerChecks(compilerChecks());
    registerRuntimeChecks(runtimeChecks());
  }
};

} // namespace

TEST_CASE("integration checks: main registers the integrations' checks") {
  CHECK(registeredCompilerChecks() == &compilerChecks());
  CHECK(registeredRuntimeChecks() == &runtimeChecks());
}

TEST_CASE("integration checks: pack and install run the registered ones") {
  TempDir tmp{"checks"};
  Fakes fakes;
  writeHookPackageDir(tmp / "src", "hooks-a", "1.0.0");
  fs::create_directories(tmp / "dist");
  PackOptions options;
  options.outputDir = tmp / "dist";

  SUBCASE("pack: imports, dynamic compiler plugins, then pipelines") {
    auto packed = packDirectory(tmp / "src", options);
    REQUIRE_MESSAGE(packed.has_value(), whyNot(packed));
    CHECK(fakes.runtime.calls == Calls{"imports hooks-a"});
    CHECK(fakes.compiler.calls ==
          Calls{"dynamic hooks-a", "pipelines hooks-a* load authoring"});
    CHECK(packed->pipelineCheck.skipped == "fake");
    bool warned = false;
    for (const Diagnostic &d : packed->warnings)
      warned |= d.message == "fake import check";
    CHECK(warned);

    // Install: the pipelines of the prefix as it will be, plugins loaded.
    fakes.compiler.calls.clear();
    RecordingReporter reporter;
    InstallOptions install;
    install.useCache = false;
    auto installed = installArchives(tmp / "prefix", {packed->archivePath},
                                     install, reporter);
    REQUIRE_MESSAGE(installed.has_value(), whyNot(installed));
    CHECK(fakes.compiler.calls == Calls{"pipelines hooks-a* load"});
    CHECK(installed->pipelineCheck.skipped == "fake");
  }

  SUBCASE("pack without binary checks: the pipelines only, nothing loaded") {
    options.skipBinaryChecks = true;
    auto packed = packDirectory(tmp / "src", options);
    REQUIRE_MESSAGE(packed.has_value(), whyNot(packed));
    CHECK(fakes.runtime.calls.empty());
    CHECK(fakes.compiler.calls == Calls{"pipelines hooks-a* authoring"});
  }
}
