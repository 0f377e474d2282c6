//===- ireepkg/compiler_integration/tuning_specs.h - Linking tuning specs -===//
//
// IREE's --iree-codegen-tuning-spec-path takes one file. Packages ship
// tuning specs per target (a ROCm architecture, every CPU, or one CPU);
// for a compile, the specs of every active package for its targets are
// linked into one, in activation order, which is their precedence: where
// two specs match the same operation, the package listed first wins.
//
// Linking runs the iree-opt of the IREE in use: each spec is printed with
// --mlir-print-local-scope (no `#alias = ...` lines that would clash),
// nested under a name of its own (two specs named alike would be a
// `redefinition of symbol`) in a module with transform.with_named_sequence,
// and linked with --iree-codegen-link-tuning-specs. The result is kept in
// the user's cache, under the SHA-256 of its inputs (iree-opt and each
// spec's bytes, in order):
//
//   <cache>/tuning/<sha256>.mlir
//
// and used again only when trustedCacheFile trusts it. One spec is passed
// as it is, without linking.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_TUNING_SPECS_H
#define IREEPKG_TUNING_SPECS_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"

#include <string>
#include <vector>

namespace ireepkg {

struct ActivatedPackage;
struct CompilerConfig;
struct CompilerConfigRequest;

/// What a compile is for, as far as tuning specs go.
struct CompileTarget {
  /// Rocm (name: the architecture, "" when the compile names none), Cpu
  /// (name: the CPU, "" when the compile names none), or Ignoring (name:
  /// the back end, e.g. "cuda").
  TuningTargetKind kind = TuningTargetKind::Invalid;
  std::string name;

  /// "gfx942", "llvm-cpu", "llvm-cpu (znver4)", "cuda".
  std::string text() const;
};

/// `flags compiler --target`: a ROCm architecture, "llvm-cpu", a CPU name,
/// or a back end that ignores tuning specs.
Expected<CompileTarget> parseCompileTarget(std::string_view text);

/// The targets the user's own iree-compile arguments compile for:
/// --iree-hal-target-device= (hip/amdgpu with --iree-rocm-target= or
/// --iree-hip-target=; local with --iree-hal-local-target-device-backends=;
/// llvm-cpu; cuda, vulkan, metal, webgpu), --iree-hal-target-backends=, and
/// the CPU of --iree-llvmcpu-target-cpu=.
std::vector<CompileTarget>
compileTargetsOf(const std::vector<std::string> &args);

/// Why a compile with a tuning spec must run single-threaded with this
/// IREE version ("" when it need not): the one record of IREE's bug.
std::string tuningSpecThreadingWorkaround(const std::string &ireeVersion);

/// One spec taking part, in precedence order.
struct TuningSpecInput {
  std::string package;
  std::string target; ///< its key in the hook's "targets"; "" for "file"
  std::string rel;    ///< package path
  std::string path;   ///< absolute
};

struct TuningSpecSelection {
  std::vector<TuningSpecInput> specs;
  std::vector<Diagnostic> notes;
};

/// The specs of `packages` (activation order) for `targets`; with `chosen`
/// (plugins.json "choose" for tuning-spec), only that package's.
/// `ireeVersion` ("" unknown) leaves out specs written for other versions.
TuningSpecSelection
selectTuningSpecs(const std::vector<ActivatedPackage> &packages,
                  const std::vector<CompileTarget> &targets,
                  const std::string &chosen, const std::string &ireeVersion);

struct LinkedTuningSpec {
  std::string path;
  bool cacheHit = false;
};

/// Links `specs` (two or more) with `ireeOpt` into one file in the cache
/// (see above). A spec that does not print or link is an error naming its
/// package and file, with iree-opt's output whole.
Expected<LinkedTuningSpec>
linkTuningSpecs(const std::vector<TuningSpecInput> &specs,
                const std::string &ireeOpt);

/// The tuning-spec flags of `config` (see buildCompilerConfig): the one
/// spec, or the linked file, and --mlir-disable-threading where
/// tuningSpecThreadingWorkaround says so, each with a note; at install
/// time (request.deferDynamic), only a note.
Status addTuningSpecFlags(const std::vector<ActivatedPackage> &packages,
                          const CompilerConfigRequest &request,
                          CompilerConfig &config);

} // namespace ireepkg

#endif
