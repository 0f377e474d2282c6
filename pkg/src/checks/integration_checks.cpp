//===- pkg/src/checks/integration_checks.cpp - Checks the program adds ----===//
#include "ireepkg/pkg/checks/integration_checks.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/programs.h"

#include <filesystem>

namespace ireepkg {

CompilerChecks::~CompilerChecks() = default;
RuntimeChecks::~RuntimeChecks() = default;

namespace {

const CompilerChecks *compilerChecksRegistered = nullptr;
const RuntimeChecks *runtimeChecksRegistered = nullptr;

std::string absolutePath(const std::string &path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

} // namespace

void registerCompilerChecks(const CompilerChecks &checks) {
  compilerChecksRegistered = &checks;
}

void registerRuntimeChecks(const RuntimeChecks &checks) {
  runtimeChecksRegistered = &checks;
}

const CompilerChecks *registeredCompilerChecks() {
  return compilerChecksRegistered;
}

const RuntimeChecks *registeredRuntimeChecks() {
  return runtimeChecksRegistered;
}

std::optional<bool> packLoadChecks(DiagnosticList &diags) {
  auto loadChecks = loadChecksEnabled();
  if (!loadChecks) {
    diags.error(Location{}, loadChecks.error().message,
                loadChecks.error().hint);
    return std::nullopt;
  }
  return *loadChecks;
}

std::string findPluginProbe() {
  if (const char *env = environmentOverride("IREEPKG_PROBE"); env && *env)
    return absolutePath(env);
  std::string probe = besideExecutable("ireepkg-plugin-probe");
  return probe.empty() ? "ireepkg-plugin-probe" : probe;
}

} // namespace ireepkg
