//===- ireepkg/manifest_schema/formats.h - ireepkg's file formats ---------===//
//
// Typed views of the user-facing files (see docs/manifest-reference.md and
// the JSON Schemas in manifest_schema/): the plugin manifest, the project
// file, the lockfile and the registry's config, snapshot and index files.
//
// Each parse function checks every rule of the published schema plus the
// rules a schema cannot express, and reports *every* problem into a
// DiagnosticList with file, line:column and JSON pointer. The returned value
// is only meaningful when no error was reported.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_FORMATS_H
#define IREEPKG_FORMATS_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/manifest_schema/semver.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ireepkg {

/// The newest schema_version / lock_version this build reads and writes.
inline constexpr int kSchemaVersion = 1;

struct ParseOptions {
  /// Unknown fields are errors (pack, lock, manifest check); otherwise
  /// warnings (reading what is already installed, written by a newer tool).
  bool strict = true;
};

//===----------------------------------------------------------------------===//
// Option schemas (a subset of the JSON Schema vocabulary)
//===----------------------------------------------------------------------===//

/// Why `value` does not satisfy the option `schema` ("" if it does), e.g.
/// `64 is greater than the maximum 32`.
std::string optionValueProblem(const nlohmann::json &schema,
                               const nlohmann::json &value);

//===----------------------------------------------------------------------===//
// ireeplugin.json
//===----------------------------------------------------------------------===//

enum class CompilerPluginKind {
  IreeStatic,
  IreeDynamic,
  MlirPassPlugin,
  MlirDialectPlugin
};
std::string_view compilerPluginKindName(CompilerPluginKind kind);
/// The entry point symbol a kind exports unless the manifest names another.
std::string_view defaultEntryPoint(CompilerPluginKind kind);

struct CompilerPlugin {
  std::string id;
  CompilerPluginKind kind = CompilerPluginKind::IreeStatic;
  std::string entryPoint; ///< defaulted from the kind when absent
  std::optional<int64_t> apiVersion;
  std::string abiHash;
  std::map<std::string, std::string> library; ///< platform -> path
  /// flag name (without dashes) -> option schema
  std::map<std::string, nlohmann::json> options;
  /// mlir-pass-plugin / mlir-dialect-plugin: the MLIR tools it is for, as
  /// found on PATH ("mlir-opt": mlir-opt, else mlir-opt-22); empty: mlir-opt.
  std::vector<std::string> tools;
  std::string description;
};

enum class HookPoint {
  Preprocessing,
  ExecutablePreprocessing,
  ExecutableObjects,
  TransformSpec,
  PdlSpec,
  TuningSpec,
  TransformLibrary,
  InputType,
  MlirPipeline,
};
std::span<const std::string_view> hookPointNames();
std::string_view hookPointName(HookPoint point);
std::optional<HookPoint> parseHookPoint(std::string_view name);
/// Hook points of which only one active package may set a value.
bool isSingleValued(HookPoint point);

struct Hook {
  HookPoint point = HookPoint::Preprocessing;
  std::string pipeline; ///< preprocessing, mlir-pipeline, executable-preproc.
  std::string tool;     ///< executable-preprocessing (package path)
  std::string file;     ///< *-spec, transform-library (package path)
  std::string sequence; ///< transform-library
  std::string value;    ///< input-type
  /// executable-objects: arch -> dir; tuning-spec: target -> file (its
  /// "targets", see tuningTargetKind).
  std::map<std::string, std::string> paths;
  /// tuning-spec: the IREE versions the spec is written for.
  std::optional<Constraint> iree;
  std::string description;
};

/// What a tuning-spec target names: a ROCm architecture ("gfx942"), every
/// CPU compile ("llvm-cpu"), one CPU as --iree-llvmcpu-target-cpu names it
/// ("znver4"), a target whose compiles ignore tuning specs ("cuda",
/// "vulkan-spirv", "vmvx", ...), or nothing ireepkg knows.
enum class TuningTargetKind { Rocm, AnyCpu, Cpu, Ignoring, Invalid };
TuningTargetKind tuningTargetKind(std::string_view target);

enum class RuntimeFormat { EmbeddedElf, SystemLibrary };
std::string_view runtimeFormatName(RuntimeFormat format);

struct RuntimePlugin {
  std::string name;
  RuntimeFormat format = RuntimeFormat::EmbeddedElf;
  /// embedded-elf: arch or "fat" -> path; system-library: platform -> path
  std::map<std::string, std::string> library;
  std::vector<std::string> imports;
  std::map<std::string, std::string> parameters;
  std::string description;
};

/// How a package test runs (the manifest's "tests", formats.md §1).
enum class PackageTestTool { IreeRunModule, MlirOpt };
std::string_view packageTestToolName(PackageTestTool tool);

/// What a package test expects of its tool's output: a whole line (blanks
/// around it aside), a line that contains `text`, or a line in which the
/// regular expression `text` (ECMAScript) finds a match.
struct ExpectedOutput {
  enum class Kind { Line, Contains, Matches };
  Kind kind = Kind::Line;
  std::string text;
  /// As messages show it: the line, `contains "x"` or `matches /x/`.
  std::string describe() const;
};

/// One smoke test a package ships.
struct PackageTest {
  std::string name;
  PackageTestTool tool = PackageTestTool::IreeRunModule;
  /// The tool to run, as written: "iree-run-module", "mlir-opt", or (an
  /// MlirOpt test) an MLIR tool one of the package's MLIR plugins names in
  /// its "tools".
  std::string toolName;
  std::string program;                   ///< package path of the MLIR program
  std::string function;                  ///< iree-run-module
  std::vector<std::string> inputs;       ///< iree-run-module --input= values
  std::vector<std::string> compileFlags; ///< extra iree-compile flags
  std::string pipeline;                  ///< mlir-opt --pass-pipeline=
  std::vector<ExpectedOutput> expectedOutput;
  int timeoutSeconds = 120;
  std::string description;
};

struct Manifest {
  int schemaVersion = kSchemaVersion;
  std::string name;
  Version version;
  std::string summary, description, license, homepage, repository;
  std::vector<std::string> authors, keywords;
  std::optional<Constraint> requiresIree;
  std::map<std::string, Constraint> dependencies;
  std::vector<CompilerPlugin> compilerPlugins;
  std::vector<Hook> hooks;
  std::vector<RuntimePlugin> runtimePlugins;
  std::vector<PackageTest> tests;

  /// Every file the manifest names (library, hook files and directories,
  /// test programs).
  std::vector<std::string> referencedPaths() const;
};

Manifest parseManifest(const JsonDocument &doc, const ParseOptions &options,
                       DiagnosticList &diags);

//===----------------------------------------------------------------------===//
// plugins.json
//===----------------------------------------------------------------------===//

struct RegistryRef {
  std::string name;
  std::string url;
  std::vector<std::string> mirrors;
  std::string publicKey;
};

struct ProjectPlugin {
  std::string name;
  std::optional<Constraint> version; ///< absent with `path`, or = any
  std::string path;                  ///< a local package directory
  std::string registry;              ///< a registry name, or ""
  std::map<std::string, nlohmann::json> options;
};

struct ProjectFile {
  int schemaVersion = kSchemaVersion;
  std::vector<RegistryRef> registries;
  std::vector<Platform> platforms;
  std::vector<ProjectPlugin> plugins; ///< activation order
  std::map<std::string, std::string> choose; ///< hook point -> package
};

ProjectFile parseProjectFile(const JsonDocument &doc,
                             const ParseOptions &options,
                             DiagnosticList &diags);

//===----------------------------------------------------------------------===//
// plugins.lock.json
//===----------------------------------------------------------------------===//

struct LockedPackage {
  std::string name;
  Version version;
  enum class SourceKind { Registry, Path, Bundle } sourceKind =
      SourceKind::Registry;
  std::string source; ///< registry URL, path, or bundle file
  std::string archive;
  std::string sha256;
  uint64_t size = 0;
  std::string signedBy;
  std::vector<std::pair<std::string, Version>> dependencies;
  std::vector<Platform> platforms;
};

struct Lockfile {
  int lockVersion = kSchemaVersion;
  std::string inputHash;
  std::vector<Platform> platforms;
  /// The IREE version the lock was resolved for; nullopt: none was known.
  std::optional<Version> ireeVersion;
  std::vector<LockedPackage> packages;
  std::vector<std::string> activation;
};

Lockfile parseLockfile(const JsonDocument &doc, const ParseOptions &options,
                       DiagnosticList &diags);

//===----------------------------------------------------------------------===//
// Registry files
//===----------------------------------------------------------------------===//

struct RegistryConfig {
  int schemaVersion = kSchemaVersion;
  std::string name;
  std::vector<std::string> keys;
  std::vector<std::string> mirrors;
  std::string description;
};

struct RegistrySnapshot {
  int schemaVersion = kSchemaVersion;
  int64_t version = 0;
  std::string expires; ///< RFC 3339
  int64_t expiresUnix = 0;
  std::map<std::string, std::string> index; ///< name -> "sha256:<hex>"
};

struct IndexEntry {
  Version version;
  std::string summary;
  std::map<std::string, Constraint> dependencies;
  std::optional<Constraint> requiresIree;
  std::vector<Platform> platforms;
  std::string archive;
  std::string sha256;
  uint64_t size = 0;
  bool yanked = false;
};

struct RegistryIndex {
  int schemaVersion = kSchemaVersion;
  std::string name;
  std::vector<IndexEntry> versions;
};

RegistryConfig parseRegistryConfig(const JsonDocument &doc,
                                   const ParseOptions &options,
                                   DiagnosticList &diags);
RegistrySnapshot parseRegistrySnapshot(const JsonDocument &doc,
                                       const ParseOptions &options,
                                       DiagnosticList &diags);
RegistryIndex parseRegistryIndex(const JsonDocument &doc,
                                 const ParseOptions &options,
                                 DiagnosticList &diags);

/// Parses an RFC 3339 date-time into seconds since the epoch.
std::optional<int64_t> parseRfc3339(std::string_view text);

//===----------------------------------------------------------------------===//
// Detecting and checking any of them
//===----------------------------------------------------------------------===//

enum class FileKind {
  Manifest,
  Project,
  Lock,
  RegistryConfig,
  Snapshot,
  Index
};
std::span<const std::string_view> fileKindNames();
std::string_view fileKindName(FileKind kind);
std::optional<FileKind> parseFileKind(std::string_view name);
/// By file name (`ireeplugin.json`, `plugins.json`, `plugins.lock.json`,
/// `config.json`, `snapshot.json`, `index/<name>.json`).
std::optional<FileKind> detectFileKind(const std::string &path);

/// Loads `path` and checks it as `kind`; every problem lands in `diags`
/// (including I/O and JSON syntax errors).
void checkFile(const std::string &path, FileKind kind,
               const ParseOptions &options, DiagnosticList &diags);
/// The same for a file's text read from elsewhere (the manifest inside an
/// archive); `shownPath` is what diagnostics name.
void checkText(std::string_view text, const std::string &shownPath,
               FileKind kind, const ParseOptions &options,
               DiagnosticList &diags);

} // namespace ireepkg

#endif // IREEPKG_FORMATS_H
