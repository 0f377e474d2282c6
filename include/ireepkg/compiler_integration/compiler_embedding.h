//===- ireepkg/compiler_integration/compiler_embedding.h ------------------===//
//
// In-process IREE compiler.
//
// Runs the IREE compiler inside the calling process through the C embedding
// API that libIREECompiler.so exports (the library the iree-base-compiler
// wheel keeps in iree/compiler/_mlir_libs/), and applies a prefix's
// CompilerConfig to it:
//
//   auto lib = CompilerLibrary::open(findCompilerLibrary()->path);
//   auto applied = (*lib)->applyConfig(config);   // globals, then a session
//   applied->session->compileFile("in.mlir", "out.vmfb", {"--iree-hal-..."});
//
// The library is opened with dlopen (ireepkg/base/os.h) and every entry
// point is bound by name; no IREE header is needed at build time and
// nothing links against the compiler.
//
// Flags go where IREE's API lets them go:
//  - a flag marked process-global (CompilerFlag::global, e.g.
//    --iree-hal-executable-object-search-path), and any flag that a session
//    of the loaded compiler does not accept, through ONE call of
//    ireeCompilerSetupGlobalCL, before the first session exists. Which
//    options a session accepts is asked from the library itself
//    (ireeCompilerSessionGetFlags of a scratch session), so the routing
//    follows the compiler actually loaded: in the 3.x wheels, for example,
//    --iree-plugin is not a session option and has to go this way;
//  - every other flag through ireeCompilerSessionSetFlags, one call per
//    flag, so that a refusal names the flag and the package that
//    contributed it.
//
// Process-wide rules that IREE imposes (this API keeps no global state of
// its own; each CompilerLibrary object tracks what it did):
//  - ireeCompilerGlobalInitialize is reference counted; the final
//    ireeCompilerGlobalShutdown disables the compiler for the rest of the
//    process. CompilerLibrary initializes lazily and never shuts down or
//    unloads the library (IREE requires shutdown before unloading, and after
//    it the compiler cannot be initialized again), so another
//    CompilerLibrary can be opened later in the same process.
//  - ireeCompilerSetupGlobalCL may run once per process (a second call
//    aborts the process), and only sessions created after it see the
//    global flags. So setGlobalFlags refuses when this object already
//    created a session or set global flags, and when libIREECompiler.so was
//    already loaded in the process before this object opened it (someone
//    else, such as Python's iree.compiler or another CompilerLibrary, may
//    have set up the command line already).
//  - LLVM's command-line parser exits the process on an unknown option or
//    a bad value. setGlobalFlags therefore first makes the same call in a
//    forked child process and only calls ireeCompilerSetupGlobalCL in this
//    process when the child accepted the flags; a refusal comes back as an
//    Error naming the flags and their packages.
//  - dynamic compiler plugins (--iree-load-plugin) are loaded only from the
//    IREE_LOAD_PLUGINS environment variable when the library initializes;
//    applyConfig checks that the variable names each one and never changes
//    the environment.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_COMPILER_EMBEDDING_H
#define IREEPKG_COMPILER_EMBEDDING_H

#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/base/error.h"

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ireepkg {

//===----------------------------------------------------------------------===//
// Finding libIREECompiler.so
//===----------------------------------------------------------------------===//

struct CompilerLibraryLocation {
  std::string path;
  /// How it was found: "explicit", "IREE_COMPILER_LIB", or
  /// "python <interpreter>" (the iree.compiler package of that Python).
  std::string source;
};

/// `explicitPath` when not empty; else $IREE_COMPILER_LIB; else
/// <iree.compiler package>/_mlir_libs/libIREECompiler.so of the active
/// Python: `python3` on PATH, then $VIRTUAL_ENV/bin/python. The Python is
/// asked where the package is (importlib's find_spec, which does not run the
/// package's code); the file must exist. Errors name every place tried.
Expected<CompilerLibraryLocation>
findCompilerLibrary(const std::string &explicitPath = {});

//===----------------------------------------------------------------------===//
// The library
//===----------------------------------------------------------------------===//

/// The embedding API versions this code works with: major 1, minor >= 2.
inline constexpr int kCompilerApiMajor = 1;
inline constexpr int kCompilerApiMinMinor = 2;

/// One diagnostic from the compiler (the API's callback diagnostics).
struct CompilerDiagnostic {
  enum class Severity { Note, Warning, Error, Remark };
  Severity severity = Severity::Error;
  std::string message; ///< formatted by the compiler, with its location
};
const char *compilerDiagnosticSeverityName(CompilerDiagnostic::Severity s);

class CompilerSession;

/// The flags of a configuration, as applyConfig routed them.
struct AppliedCompilerConfig {
  std::unique_ptr<CompilerSession> session;
  /// Given to the one ireeCompilerSetupGlobalCL call (empty: not called):
  /// the flags marked global, then those a session does not accept.
  std::vector<CompilerFlag> global;
  /// Given to ireeCompilerSessionSetFlags, one call each, in order.
  std::vector<CompilerFlag> sessionFlags;
  /// --iree-load-plugin flags already satisfied by IREE_LOAD_PLUGINS.
  std::vector<CompilerFlag> loadedAtInitialization;
};

/// libIREECompiler.so, loaded with dlopen and bound by name. Share one
/// object per process (sessions keep it alive). Thread-safe; sessions are
/// not (use one session per thread).
class CompilerLibrary : public std::enable_shared_from_this<CompilerLibrary> {
public:
  /// Loads the library and binds every entry point. Errors:
  ///  - the library does not open (dlerror's message);
  ///  - it does not export ireeCompilerGetAPIVersion (not an IREE
  ///    compiler library) or another entry point;
  ///  - its API version is not 1.x with x >= 2.
  static Expected<std::shared_ptr<CompilerLibrary>>
  open(const std::string &path);

  ~CompilerLibrary();
  CompilerLibrary(const CompilerLibrary &) = delete;
  CompilerLibrary &operator=(const CompilerLibrary &) = delete;

  const std::string &path() const { return path_; }
  int apiMajor() const { return apiMajor_; }
  int apiMinor() const { return apiMinor_; }
  /// Was libIREECompiler.so already loaded in this process when open()
  /// ran? Then process-global flags cannot be set through this object.
  bool loadedBefore() const { return loadedBefore_; }

  /// ireeCompilerGetRevision (initializes the compiler).
  std::string revision();
  /// The plugins compiled into the compiler (ireeCompilerEnumeratePlugins).
  std::vector<std::string> plugins();
  /// For --iree-plugin=[-]<id>: is <id> one of plugins()? Other flags pass.
  /// setGlobalFlags and CompilerSession::setFlag check every flag with it
  /// (the compiler itself only fails at the first compile, on stderr).
  Status checkPluginFlag(const CompilerFlag &flag);

  /// The options a session of this compiler accepts (names without
  /// dashes, sorted), from a scratch session's ireeCompilerSessionGetFlags;
  /// asked once. The scratch session is destroyed at once and does not
  /// count as a session for setGlobalFlags.
  std::vector<std::string> sessionOptions();
  bool isSessionOption(std::string_view name);

  /// Sets process-global flags with ONE ireeCompilerSetupGlobalCL call.
  /// Refused (nothing is called) when this object already created a
  /// session, already set global flags (unless `flags` are the same ones
  /// again, which does nothing), when the library was loaded before open(),
  /// for LLVM's action flags (--help*, --version, --print-options, ...), or
  /// when the compiler's parser refuses a flag (tried in a child process
  /// first). An empty list does nothing.
  Status setGlobalFlags(const std::vector<CompilerFlag> &flags);
  /// The flags setGlobalFlags gave to ireeCompilerSetupGlobalCL.
  std::vector<CompilerFlag> globalFlags() const;

  /// A new session (initializes the compiler first).
  Expected<std::unique_ptr<CompilerSession>> createSession();

  /// Applies a configuration: the flags marked global and those a session
  /// does not accept (isSessionOption) through setGlobalFlags, then a new
  /// session with every other flag (CompilerSession::setFlags), each group
  /// in the configuration's order. An error returns no session; global
  /// flags already set stay set (IREE cannot undo them).
  Expected<AppliedCompilerConfig> applyConfig(const CompilerConfig &config);

private:
  friend class CompilerSession;
  struct Api; ///< the bound entry points
  CompilerLibrary() = default;
  void initializeLocked();
  void probeSessionOptionsLocked();

  std::string path_;
  void *handle_ = nullptr;
  std::unique_ptr<Api> api_;
  int apiMajor_ = 0, apiMinor_ = 0;
  bool loadedBefore_ = false;

  mutable std::mutex mutex_;
  bool initialized_ = false;
  bool sessionCreated_ = false;
  bool globalSet_ = false;
  std::vector<CompilerFlag> globalFlags_;
  bool sessionOptionsKnown_ = false;
  std::vector<std::string> sessionOptions_;
};

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

struct CompileResult {
  /// Warnings, notes and remarks of a successful compile.
  std::vector<CompilerDiagnostic> diagnostics;
};

/// One ireeCompilerSession: a private set of session flags and an
/// MLIRContext. Not thread-safe.
class CompilerSession {
public:
  ~CompilerSession();
  CompilerSession(const CompilerSession &) = delete;
  CompilerSession &operator=(const CompilerSession &) = delete;

  /// One ireeCompilerSessionSetFlags call. A refusal reads
  /// `flag --name=value (from package p): <compiler's message>` (without
  /// the package part when the flag has none).
  Status setFlag(const CompilerFlag &flag);
  /// setFlag for each, in order; stops at the first refusal.
  Status setFlags(const std::vector<CompilerFlag> &flags);
  /// Flags given as text ("--name=value"; "-name=value" and "--name" also
  /// work), with no package.
  Status setFlags(const std::vector<std::string> &flags);

  /// The flags in effect (ireeCompilerSessionGetFlags), "--name=value".
  std::vector<std::string> flags(bool nonDefaultOnly = true) const;
  /// The flags this object set, in order.
  const std::vector<CompilerFlag> &appliedFlags() const { return applied_; }

  /// Sets `extraFlags` on the session (they stay set), parses `input`,
  /// runs the standard pipeline (IREE_COMPILER_PIPELINE_STD) and writes VM
  /// bytecode to `output`. Diagnostics are captured through the API's
  /// diagnostic callback, not printed; on failure they are in the Error's
  /// message, one per line, and `output` is not left behind.
  Expected<CompileResult>
  compileFile(const std::string &input, const std::string &output,
              const std::vector<std::string> &extraFlags = {});

private:
  friend class CompilerLibrary;
  CompilerSession(std::shared_ptr<CompilerLibrary> library, void *session)
      : library_(std::move(library)), session_(session) {}

  std::shared_ptr<CompilerLibrary> library_;
  void *session_;
  std::vector<CompilerFlag> applied_;
};

/// Parses "--name=value" (or "-name=value", "--name") into a flag with no
/// package; `global` from isGlobalCompilerFlag.
CompilerFlag parseCompilerFlag(const std::string &text);

} // namespace ireepkg

#endif // IREEPKG_COMPILER_EMBEDDING_H
