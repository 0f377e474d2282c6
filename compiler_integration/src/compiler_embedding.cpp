//===- compiler_integration/src/compiler_embedding.cpp --------------------===//
//
// In-process IREE compiler.
//
// Loads libIREECompiler.so with dlopen and binds IREE's C embedding API by
// name. The declarations below are ireepkg's own, written from the API's
// documented signatures (API version 1.x); no IREE header is used.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/compiler_embedding.h"
#include "ireepkg/base/text.h"
#include "ireepkg/base/environment.h"

#include "ireepkg/base/child_process.h"
#include "ireepkg/base/os.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ireepkg {

//===----------------------------------------------------------------------===//
// The C API, as function pointer types
//===----------------------------------------------------------------------===//

namespace {

// Opaque handles of the API; only passed back to it.
struct IreeError;
struct IreeSession;
struct IreeInvocation;
struct IreeSource;
struct IreeOutput;

// Values of the API's enums (plain ints in the C ABI).
constexpr int kPipelineStd = 0; // IREE_COMPILER_PIPELINE_STD
// iree_compiler_diagnostic_severity_t: note 0, warning 1, error 2, remark 3.

extern "C" {
using FlagCallback = void (*)(const char *flag, size_t length, void *user);
using DiagnosticCallback = void (*)(int severity, const char *message,
                                    size_t size, void *user);

using GetAPIVersionFn = int (*)();
using GlobalInitializeFn = void (*)();
using GetRevisionFn = const char *(*)();
using EnumeratePluginsFn = void (*)(void (*)(const char *name, void *user),
                                    void *user);
using SetupGlobalCLFn = void (*)(int argc, const char **argv,
                                 const char *banner,
                                 bool installSignalHandlers);
using ErrorGetMessageFn = const char *(*)(IreeError *);
using ErrorDestroyFn = void (*)(IreeError *);
using SessionCreateFn = IreeSession *(*)();
using SessionDestroyFn = void (*)(IreeSession *);
using SessionSetFlagsFn = IreeError *(*)(IreeSession *, int argc,
                                         const char *const *argv);
using SessionGetFlagsFn = void (*)(IreeSession *, bool nonDefaultOnly,
                                   FlagCallback, void *user);
using InvocationCreateFn = IreeInvocation *(*)(IreeSession *);
using InvocationDestroyFn = void (*)(IreeInvocation *);
using InvocationEnableCallbackDiagnosticsFn =
    void (*)(IreeInvocation *, int flags, DiagnosticCallback, void *user);
using InvocationParseSourceFn = bool (*)(IreeInvocation *, IreeSource *);
using InvocationPipelineFn = bool (*)(IreeInvocation *, int pipeline);
using InvocationOutputVMBytecodeFn = IreeError *(*)(IreeInvocation *,
                                                    IreeOutput *);
using SourceOpenFileFn = IreeError *(*)(IreeSession *, const char *path,
                                        IreeSource **out);
using SourceDestroyFn = void (*)(IreeSource *);
using OutputOpenFileFn = IreeError *(*)(const char *path, IreeOutput **out);
using OutputKeepFn = void (*)(IreeOutput *);
using OutputDestroyFn = void (*)(IreeOutput *);
}

} // namespace

struct CompilerLibrary::Api {
  GetAPIVersionFn getAPIVersion = nullptr;
  GlobalInitializeFn globalInitialize = nullptr;
  GetRevisionFn getRevision = nullptr;
  EnumeratePluginsFn enumeratePlugins = nullptr;
  SetupGlobalCLFn setupGlobalCL = nullptr;
  ErrorGetMessageFn errorGetMessage = nullptr;
  ErrorDestroyFn errorDestroy = nullptr;
  SessionCreateFn sessionCreate = nullptr;
  SessionDestroyFn sessionDestroy = nullptr;
  SessionSetFlagsFn sessionSetFlags = nullptr;
  SessionGetFlagsFn sessionGetFlags = nullptr;
  InvocationCreateFn invocationCreate = nullptr;
  InvocationDestroyFn invocationDestroy = nullptr;
  InvocationEnableCallbackDiagnosticsFn invocationEnableCallbackDiagnostics =
      nullptr;
  InvocationParseSourceFn invocationParseSource = nullptr;
  InvocationPipelineFn invocationPipeline = nullptr;
  InvocationOutputVMBytecodeFn invocationOutputVMBytecode = nullptr;
  SourceOpenFileFn sourceOpenFile = nullptr;
  SourceDestroyFn sourceDestroy = nullptr;
  OutputOpenFileFn outputOpenFile = nullptr;
  OutputKeepFn outputKeep = nullptr;
  OutputDestroyFn outputDestroy = nullptr;

  /// The message of an API error, which is then destroyed.
  std::string take(IreeError *error) const {
    const char *m = errorGetMessage(error);
    std::string message = m ? m : "(no message)";
    errorDestroy(error);
    return message;
  }
};

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

namespace {

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The compiler's error text on one line: IREE's flag errors read
/// "Error parsing flags:\n  <problem>\n  <problem>".
std::string oneLine(const std::string &message) {
  std::string out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t nl = message.find('\n', start);
    std::string line = trimmed(message.substr(
        start, nl == std::string::npos ? std::string::npos : nl - start));
    if (!line.empty() && line != "Error parsing flags:")
      out += (out.empty() ? "" : "; ") + line;
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
  return out.empty() ? trimmed(message) : out;
}

/// "flag --x=1 (from package p)"
std::string describeFlag(const CompilerFlag &f) {
  std::string d = "flag " + f.text();
  if (!f.package.empty())
    d += " (from package " + f.package + ")";
  else if (f.name == "iree-preprocessing-pass-pipeline")
    d += " (composed from the packages' preprocessing hooks)";
  return d;
}

Location packageLocation(const CompilerFlag &f) {
  Location where;
  where.package = f.package;
  return where;
}

std::string findOnPath(const std::string &name) {
  const char *path = environmentOverride("PATH");
  if (!path)
    return {};
  std::string p = path;
  for (size_t start = 0; start <= p.size();) {
    size_t colon = p.find(':', start);
    std::string dir = p.substr(
        start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0 && isFile(cand))
      return cand;
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  return {};
}

constexpr const char *kLibraryName = "libIREECompiler.so";

} // namespace

//===----------------------------------------------------------------------===//
// Finding the library
//===----------------------------------------------------------------------===//

Expected<CompilerLibraryLocation>
findCompilerLibrary(const std::string &explicitPath) {
  if (!explicitPath.empty())
    return CompilerLibraryLocation{explicitPath, "explicit"};
  if (const char *env = environmentOverride("IREE_COMPILER_LIB"); env && *env)
    return CompilerLibraryLocation{env, "IREE_COMPILER_LIB"};

  std::vector<std::string> pythons;
  if (std::string p = findOnPath("python3"); !p.empty())
    pythons.push_back(p);
  if (const char *venv = environmentOverride("VIRTUAL_ENV"); venv && *venv) {
    std::string p = std::string(venv) + "/bin/python";
    if (std::find(pythons.begin(), pythons.end(), p) == pythons.end())
      pythons.push_back(p);
  }
  // Where the package is, without importing it (importing iree.compiler
  // takes ten times longer and is not needed to find a file).
  static const char *kScript =
      "import importlib.util as u, sys\n"
      "s = u.find_spec('iree.compiler')\n"
      "sys.exit(3) if s is None or not s.submodule_search_locations "
      "else print(list(s.submodule_search_locations)[0])\n";
  std::vector<std::string> tried;
  for (const std::string &python : pythons) {
    ChildOptions run;
    run.argv = {python, "-c", kScript};
    run.timeoutSeconds = 60;
    run.maxOut = 1u << 20;
    run.maxErr = 0; // its stderr is of no use here
    auto r = runChild(run);
    std::string why = !r              ? r.error().message
                      : r->spawnError ? std::strerror(r->spawnError)
                      : r->timedOut   ? "timed out after 60 s"
                                      : "";
    if (!why.empty()) {
      tried.push_back(python + " (cannot run: " + why + ")");
      continue;
    }
    if (!r->exited || r->exitCode != 0) {
      tried.push_back(python + " (has no iree.compiler package)");
      continue;
    }
    std::string dir = trimmed(r->out);
    std::string lib = dir + "/_mlir_libs/" + kLibraryName;
    if (!isFile(lib)) {
      tried.push_back(python + " (iree.compiler at " + dir + " has no _mlir_libs/" +
                      kLibraryName + ")");
      continue;
    }
    return CompilerLibraryLocation{lib, "python " + python};
  }
  std::string where;
  for (const std::string &t : tried)
    where += (where.empty() ? "" : ", ") + t;
  if (where.empty())
    where = "no python3 on PATH and no VIRTUAL_ENV";
  return makeError(ErrorCode::NotFound,
                   std::string("cannot find ") + kLibraryName +
                       ": IREE_COMPILER_LIB is not set and no Python has the "
                       "iree.compiler package (tried: " + where + ")",
                   {},
                   "install the iree-base-compiler wheel in the active "
                   "Python, or give the library's path (IREE_COMPILER_LIB)");
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Expected<std::shared_ptr<CompilerLibrary>>
CompilerLibrary::open(const std::string &path) {
  std::shared_ptr<CompilerLibrary> lib(new CompilerLibrary());
  lib->path_ = path;
  const std::string hint =
      "give the path of libIREECompiler.so, e.g. "
      "<site-packages>/iree/compiler/_mlir_libs/libIREECompiler.so of the "
      "iree-base-compiler wheel";

  // Already in the process? (Then someone else may own its global setup.)
  if (void *h = os::openLibrary(path, {.onlyIfLoaded = true})) {
    lib->loadedBefore_ = true;
    os::closeLibrary(h);
  }
  // Never unloaded: IREE requires a final shutdown before unloading, and
  // after it the compiler cannot be used again in this process.
  std::string why;
  lib->handle_ = os::openLibrary(path, {.keepLoaded = true}, &why);
  if (!lib->handle_) {
    struct stat st;
    bool exists = ::stat(path.c_str(), &st) == 0;
    return makeError(exists ? ErrorCode::Invalid : ErrorCode::NotFound,
                     "cannot load the IREE compiler library " + path + ": " +
                         (why.empty() ? "unknown dlopen error" : why),
                     {}, hint);
  }

  auto api = std::make_unique<Api>();
  auto bind = [&](auto &fn, const char *name) -> Status {
    std::string why;
    void *sym = os::librarySymbol(lib->handle_, name, &why);
    if (!sym) {
      return makeError(ErrorCode::Invalid,
                       "the IREE compiler library " + path +
                           " does not export " + name +
                           (why.empty() ? "" : " (" + why + ")"),
                       {}, hint);
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    return ok();
  };

  // The version first: a library too old for ireepkg may lack newer entry
  // points, and saying so is clearer than naming one of them.
  if (void *sym = os::librarySymbol(lib->handle_, "ireeCompilerGetAPIVersion"))
    api->getAPIVersion = reinterpret_cast<GetAPIVersionFn>(sym);
  else
    return makeError(ErrorCode::Invalid,
                     path + " is not an IREE compiler library: it does not "
                            "export ireeCompilerGetAPIVersion",
                     {}, hint);
  int version = api->getAPIVersion();
  lib->apiMajor_ = version >> 16;
  lib->apiMinor_ = version & 0xFFFF;
  std::string have = std::to_string(lib->apiMajor_) + "." +
                     std::to_string(lib->apiMinor_);
  std::string need = std::to_string(kCompilerApiMajor) + "." +
                     std::to_string(kCompilerApiMinMinor);
  if (lib->apiMajor_ < kCompilerApiMajor ||
      (lib->apiMajor_ == kCompilerApiMajor &&
       lib->apiMinor_ < kCompilerApiMinMinor))
    return makeError(ErrorCode::Unsupported,
                     "the IREE compiler library " + path +
                         " has embedding API version " + have +
                         ", which is too old: ireepkg needs " + need +
                         " or newer",
                     {}, "use a newer iree-base-compiler");
  if (lib->apiMajor_ > kCompilerApiMajor)
    return makeError(ErrorCode::Unsupported,
                     "the IREE compiler library " + path +
                         " has embedding API version " + have +
                         ", ireepkg supports major version " +
                         std::to_string(kCompilerApiMajor) + " (" + need +
                         " or newer)",
                     {}, "use an ireepkg built for this compiler");

  Status s = ok();
  auto b = [&](auto &fn, const char *name) {
    if (s)
      s = bind(fn, name);
  };
  b(api->globalInitialize, "ireeCompilerGlobalInitialize");
  b(api->getRevision, "ireeCompilerGetRevision");
  b(api->enumeratePlugins, "ireeCompilerEnumeratePlugins");
  b(api->setupGlobalCL, "ireeCompilerSetupGlobalCL");
  b(api->errorGetMessage, "ireeCompilerErrorGetMessage");
  b(api->errorDestroy, "ireeCompilerErrorDestroy");
  b(api->sessionCreate, "ireeCompilerSessionCreate");
  b(api->sessionDestroy, "ireeCompilerSessionDestroy");
  b(api->sessionSetFlags, "ireeCompilerSessionSetFlags");
  b(api->sessionGetFlags, "ireeCompilerSessionGetFlags");
  b(api->invocationCreate, "ireeCompilerInvocationCreate");
  b(api->invocationDestroy, "ireeCompilerInvocationDestroy");
  b(api->invocationEnableCallbackDiagnostics,
    "ireeCompilerInvocationEnableCallbackDiagnostics");
  b(api->invocationParseSource, "ireeCompilerInvocationParseSource");
  b(api->invocationPipeline, "ireeCompilerInvocationPipeline");
  b(api->invocationOutputVMBytecode, "ireeCompilerInvocationOutputVMBytecode");
  b(api->sourceOpenFile, "ireeCompilerSourceOpenFile");
  b(api->sourceDestroy, "ireeCompilerSourceDestroy");
  b(api->outputOpenFile, "ireeCompilerOutputOpenFile");
  b(api->outputKeep, "ireeCompilerOutputKeep");
  b(api->outputDestroy, "ireeCompilerOutputDestroy");
  if (!s)
    return Unexpected(s.error());
  lib->api_ = std::move(api);
  return lib;
}

CompilerLibrary::~CompilerLibrary() {
  // Deliberately no ireeCompilerGlobalShutdown and no dlclose (see open()):
  // the library stays initialized for the rest of the process.
  if (handle_)
    os::closeLibrary(handle_); // keepLoaded: drops the reference only
}

void CompilerLibrary::initializeLocked() {
  if (!initialized_) {
    api_->globalInitialize();
    initialized_ = true;
  }
}

std::string CompilerLibrary::revision() {
  std::lock_guard lock(mutex_);
  initializeLocked();
  const char *r = api_->getRevision();
  return r ? r : "";
}

std::vector<std::string> CompilerLibrary::plugins() {
  std::lock_guard lock(mutex_);
  initializeLocked();
  std::vector<std::string> out;
  api_->enumeratePlugins(
      [](const char *name, void *user) {
        static_cast<std::vector<std::string> *>(user)->push_back(name);
      },
      &out);
  return out;
}

Status CompilerLibrary::checkPluginFlag(const CompilerFlag &flag) {
  if (flag.name != "iree-plugin")
    return ok();
  // --iree-plugin=<id> activates, --iree-plugin=-<id> deactivates.
  std::string id = flag.value.rfind("-", 0) == 0 ? flag.value.substr(1)
                                                  : flag.value;
  std::vector<std::string> known = plugins();
  if (std::find(known.begin(), known.end(), id) != known.end())
    return ok();
  std::string list;
  for (const std::string &k : known)
    list += (list.empty() ? "" : ", ") + k;
  return makeError(ErrorCode::NotFound,
                   describeFlag(flag) + ": this compiler has no plugin '" +
                       id + "' (its plugins: " + list + ")",
                   packageLocation(flag),
                   flag.package.empty()
                       ? ""
                       : "package " + flag.package +
                             " needs a compiler with this plugin compiled "
                             "in, or an iree-dynamic build of it");
}

std::vector<CompilerFlag> CompilerLibrary::globalFlags() const {
  std::lock_guard lock(mutex_);
  return globalFlags_;
}

//===----------------------------------------------------------------------===//
// Process-global flags
//===----------------------------------------------------------------------===//

namespace {

bool sameFlags(const std::vector<CompilerFlag> &a,
               const std::vector<CompilerFlag> &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const CompilerFlag &x, const CompilerFlag &y) {
                      return x.text() == y.text();
                    });
}

std::string listFlags(const std::vector<CompilerFlag> &flags) {
  std::string out;
  for (const CompilerFlag &f : flags)
    out += (out.empty() ? "" : ", ") + describeFlag(f);
  return out;
}

constexpr const char *kProgramName = "ireepkg";
constexpr const char *kBanner = "ireepkg: IREE compiler (embedded)";

} // namespace

Status CompilerLibrary::setGlobalFlags(const std::vector<CompilerFlag> &flags) {
  if (flags.empty())
    return ok();
  // LLVM's parser acts on these: prints, and exits the process.
  for (const CompilerFlag &f : flags)
    if (f.name.rfind("help", 0) == 0 || f.name == "version" ||
        f.name == "print-options" || f.name == "print-all-options")
      return makeError(ErrorCode::Invalid,
                       describeFlag(f) + " is not a compiler setting",
                       packageLocation(f));

  for (const CompilerFlag &f : flags)
    if (Status s = checkPluginFlag(f); !s)
      return s;

  std::lock_guard lock(mutex_);
  if (globalSet_) {
    if (sameFlags(flags, globalFlags_))
      return ok();
    return makeError(
        ErrorCode::Conflict,
        "process-global compiler flags were already set in this process (" +
            listFlags(globalFlags_) + "); cannot set " + listFlags(flags),
        {},
        "ireeCompilerSetupGlobalCL runs once per process: apply one "
        "configuration per process, or run the compiler as a separate "
        "process (ireepkg exec iree-compile)");
  }
  if (sessionCreated_)
    return makeError(
        ErrorCode::Conflict,
        "process-global compiler flags must be set before the first "
        "compiler session is created, and this process already created "
        "one; cannot set " + listFlags(flags),
        {},
        "apply the configuration (applyConfig / setGlobalFlags) before "
        "creating any session");
  if (loadedBefore_)
    return makeError(
        ErrorCode::Conflict,
        "process-global compiler flags can only be set by the first user "
        "of " + path_ + ", but it was already loaded in this process when "
        "ireepkg opened it; cannot set " + listFlags(flags),
        {},
        "open the compiler library with ireepkg before anything else uses "
        "it (e.g. Python's iree.compiler), once per process");

  std::vector<std::string> texts{kProgramName};
  for (const CompilerFlag &f : flags)
    texts.push_back(f.text());
  std::vector<const char *> argv;
  for (const std::string &t : texts)
    argv.push_back(t.c_str());
  argv.push_back(nullptr);
  int argc = static_cast<int>(texts.size());

  initializeLocked();

  // LLVM's parser prints and exits the process on a flag it does not know.
  // Try the same call in a child process first; only if it accepts the
  // flags is the call made here.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return makeError(ErrorCode::Io,
                     std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return makeError(ErrorCode::Io, std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    // The child only parses. When LLVM refuses a flag it calls exit(1):
    // this handler, registered last, runs first and leaves at once, so the
    // host's own exit handlers and static destructors never run here.
    std::atexit([] { ::_exit(1); });
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    api_->setupGlobalCL(argc, argv.data(), kBanner, false);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string childOut;
  char buf[4096];
  bool timedOut = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0) {
      timedOut = true;
      break;
    }
    if (n < 0)
      break;
    ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    if (childOut.size() < 65536)
      childOut.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  if (timedOut)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // LLVM's lines, without the advice to run `ireepkg --help`.
    std::vector<std::string> lines;
    for (size_t start = 0; start < childOut.size();) {
      size_t nl = childOut.find('\n', start);
      std::string line = trimmed(childOut.substr(
          start, nl == std::string::npos ? std::string::npos : nl - start));
      if (line.rfind(std::string(kProgramName) + ": ", 0) == 0)
        line = line.substr(std::strlen(kProgramName) + 2);
      if (size_t t = line.find("  Try: '"); t != std::string::npos)
        line = trimmed(line.substr(0, t));
      if (!line.empty())
        lines.push_back(line);
      if (nl == std::string::npos)
        break;
      start = nl + 1;
    }
    // Name the flags the parser complained about (all of them if it named
    // none); a flag it does not know is named as such.
    std::vector<CompilerFlag> named;
    std::string message;
    for (const CompilerFlag &f : flags) {
      if (childOut.find("Unknown command line argument '" + f.text() + "'") !=
          std::string::npos) {
        named.push_back(f);
        message += (message.empty() ? "" : "; ") + describeFlag(f) +
                   ": the compiler has no such option (neither a session "
                   "option nor a process-global one)";
      } else if (childOut.find(f.name) != std::string::npos) {
        named.push_back(f);
      }
    }
    std::string hint;
    for (const std::string &l : lines)
      if (l.rfind("Did you mean", 0) == 0)
        hint += (hint.empty() ? "" : " ") + l;
    std::string why = timedOut ? "timed out" : "";
    for (const std::string &l : lines)
      if (l.rfind("Did you mean", 0) != 0)
        why += (why.empty() ? "" : "; ") + l;
    if (why.empty())
      why = WIFSIGNALED(status)
                ? "killed by signal " + std::to_string(WTERMSIG(status))
                : "exit status " + std::to_string(WEXITSTATUS(status));
    if (message.empty()) {
      if (named.empty())
        named = flags;
      message = "the compiler refuses the process-global " +
                listFlags(named) + ": " + why;
    }
    Location where = named.size() == 1 ? packageLocation(named[0]) : Location{};
    return makeError(ErrorCode::Invalid, message, where, hint);
  }

  api_->setupGlobalCL(argc, argv.data(), kBanner, false);
  globalSet_ = true;
  globalFlags_ = flags;
  return ok();
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

void CompilerLibrary::probeSessionOptionsLocked() {
  if (sessionOptionsKnown_)
    return;
  initializeLocked();
  // A scratch session, before any global setup: it only reads the names
  // of the options its binder knows, and is gone before anything else.
  IreeSession *s = api_->sessionCreate();
  std::vector<std::string> names;
  if (s) {
    api_->sessionGetFlags(
        s, /*nonDefaultOnly=*/false,
        [](const char *flag, size_t length, void *user) {
          std::string text(flag, length);
          size_t start = text.find_first_not_of('-');
          size_t eq = text.find('=');
          if (start == std::string::npos)
            return;
          static_cast<std::vector<std::string> *>(user)->push_back(text.substr(
              start, eq == std::string::npos ? std::string::npos : eq - start));
        },
        &names);
    api_->sessionDestroy(s);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  sessionOptions_ = std::move(names);
  sessionOptionsKnown_ = true;
}

std::vector<std::string> CompilerLibrary::sessionOptions() {
  std::lock_guard lock(mutex_);
  probeSessionOptionsLocked();
  return sessionOptions_;
}

bool CompilerLibrary::isSessionOption(std::string_view name) {
  std::lock_guard lock(mutex_);
  probeSessionOptionsLocked();
  return std::binary_search(sessionOptions_.begin(), sessionOptions_.end(),
                            name);
}

Expected<std::unique_ptr<CompilerSession>> CompilerLibrary::createSession() {
  std::lock_guard lock(mutex_);
  initializeLocked();
  IreeSession *s = api_->sessionCreate();
  if (!s)
    return makeError(ErrorCode::Internal,
                     "ireeCompilerSessionCreate returned no session");
  sessionCreated_ = true;
  return std::unique_ptr<CompilerSession>(
      new CompilerSession(shared_from_this(), s));
}

CompilerSession::~CompilerSession() {
  if (session_)
    library_->api_->sessionDestroy(static_cast<IreeSession *>(session_));
}

Status CompilerSession::setFlag(const CompilerFlag &flag) {
  if (Status s = library_->checkPluginFlag(flag); !s)
    return s;
  const auto &api = *library_->api_;
  std::string text = flag.text();
  const char *argv[] = {text.c_str()};
  if (IreeError *e =
          api.sessionSetFlags(static_cast<IreeSession *>(session_), 1, argv)) {
    std::string message = oneLine(api.take(e));
    std::string hint;
    if (flag.global || !library_->isSessionOption(flag.name))
      hint = "a session does not accept --" + flag.name +
             "; if it is a process-global option, give it to "
             "CompilerLibrary::setGlobalFlags (applyConfig does) before the "
             "first session";
    return makeError(ErrorCode::Invalid, describeFlag(flag) + ": " + message,
                     packageLocation(flag), hint);
  }
  applied_.push_back(flag);
  return ok();
}

Status CompilerSession::setFlags(const std::vector<CompilerFlag> &flags) {
  for (const CompilerFlag &f : flags)
    if (Status s = setFlag(f); !s)
      return s;
  return ok();
}

CompilerFlag parseCompilerFlag(const std::string &text) {
  std::string body = text;
  if (body.rfind("--", 0) == 0)
    body = body.substr(2);
  else if (body.rfind("-", 0) == 0)
    body = body.substr(1);
  CompilerFlag f;
  size_t eq = body.find('=');
  f.name = body.substr(0, eq);
  if (eq != std::string::npos)
    f.value = body.substr(eq + 1);
  f.global = isGlobalCompilerFlag(f.name);
  return f;
}

Status CompilerSession::setFlags(const std::vector<std::string> &flags) {
  for (const std::string &t : flags) {
    if (t.empty() || t[0] != '-')
      return makeError(ErrorCode::Usage,
                       "'" + t + "' is not a compiler flag (--name=value)");
    if (Status s = setFlag(parseCompilerFlag(t)); !s)
      return s;
  }
  return ok();
}

std::vector<std::string> CompilerSession::flags(bool nonDefaultOnly) const {
  std::vector<std::string> out;
  library_->api_->sessionGetFlags(
      static_cast<IreeSession *>(session_), nonDefaultOnly,
      [](const char *flag, size_t length, void *user) {
        static_cast<std::vector<std::string> *>(user)->emplace_back(flag,
                                                                    length);
      },
      &out);
  return out;
}

const char *compilerDiagnosticSeverityName(CompilerDiagnostic::Severity s) {
  switch (s) {
  case CompilerDiagnostic::Severity::Note:
    return "note";
  case CompilerDiagnostic::Severity::Warning:
    return "warning";
  case CompilerDiagnostic::Severity::Error:
    return "error";
  case CompilerDiagnostic::Severity::Remark:
    return "remark";
  }
  return "error";
}

namespace {

void collectDiagnostic(int severity, const char *message,
                                  size_t size, void *user) {
  auto *out = static_cast<std::vector<CompilerDiagnostic> *>(user);
  CompilerDiagnostic d;
  switch (severity) {
  case 0:
    d.severity = CompilerDiagnostic::Severity::Note;
    break;
  case 1:
    d.severity = CompilerDiagnostic::Severity::Warning;
    break;
  case 3:
    d.severity = CompilerDiagnostic::Severity::Remark;
    break;
  default:
    d.severity = CompilerDiagnostic::Severity::Error;
    break;
  }
  d.message.assign(message, size);
  out->push_back(std::move(d));
}

/// One diagnostic for an error message: `file:line:col: error: message`
/// (the callback gives the location and the message, without severity),
/// cut to a few lines (MLIR attaches whole operations as notes).
std::string formatDiagnostic(const CompilerDiagnostic &d) {
  constexpr size_t kMaxLines = 8, kMaxChars = 2000;
  std::string m = trimmed(d.message);
  std::string sev = std::string(compilerDiagnosticSeverityName(d.severity)) + ": ";
  // After a leading "<file>:<line>:<col>: ", if there is one.
  size_t insert = 0;
  size_t firstLine = m.find('\n');
  std::string head = m.substr(0, firstLine);
  for (size_t colon = head.find(": "); colon != std::string::npos;
       colon = head.find(": ", colon + 1)) {
    // <...>:<digits>:<digits> just before this ": "
    size_t c2 = head.rfind(':', colon - 1);
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos
                                                   : head.rfind(':', c2 - 1);
    auto digits = [&](size_t from, size_t to) {
      return to > from && std::all_of(head.begin() + from, head.begin() + to,
                                      [](char c) { return c >= '0' && c <= '9'; });
    };
    if (c1 != std::string::npos && digits(c2 + 1, colon) && digits(c1 + 1, c2)) {
      insert = colon + 2;
      break;
    }
  }
  if (head.compare(insert, sev.size(), sev) != 0)
    m.insert(insert, sev);
  size_t lines = 0, pos = 0;
  while (pos < m.size() && lines < kMaxLines) {
    size_t nl = m.find('\n', pos);
    if (nl == std::string::npos) {
      pos = m.size();
      break;
    }
    pos = nl + 1;
    ++lines;
  }
  size_t cut = std::min({pos, m.size(), kMaxChars});
  if (cut < m.size()) {
    size_t rest = static_cast<size_t>(
        std::count(m.begin() + static_cast<long>(cut), m.end(), '\n'));
    m = trimmed(m.substr(0, cut)) + "\n  [" + std::to_string(rest + 1) +
        " more lines]";
  }
  return m;
}

std::string formatDiagnostics(const std::vector<CompilerDiagnostic> &ds) {
  std::string out;
  for (const CompilerDiagnostic &d : ds)
    out += "\n" + formatDiagnostic(d);
  return out;
}

} // namespace

Expected<CompileResult>
CompilerSession::compileFile(const std::string &input,
                             const std::string &output,
                             const std::vector<std::string> &extraFlags) {
  if (Status s = setFlags(extraFlags); !s)
    return Unexpected(s.error());
  const auto &api = *library_->api_;
  auto *session = static_cast<IreeSession *>(session_);

  std::vector<CompilerDiagnostic> diagnostics;
  IreeInvocation *inv = api.invocationCreate(session);
  api.invocationEnableCallbackDiagnostics(inv, 0, collectDiagnostic,
                                          &diagnostics);
  IreeSource *source = nullptr;
  IreeOutput *out = nullptr;
  auto cleanup = [&] {
    // The invocation first: it may still refer to the source.
    api.invocationDestroy(inv);
    if (source)
      api.sourceDestroy(source);
    if (out)
      api.outputDestroy(out); // not kept: removes a partial file
  };

  if (IreeError *e = api.sourceOpenFile(session, input.c_str(), &source)) {
    std::string message = oneLine(api.take(e));
    cleanup();
    return makeError(ErrorCode::Io, "cannot read " + input + ": " + message);
  }
  if (!api.invocationParseSource(inv, source)) {
    std::string text = formatDiagnostics(diagnostics);
    cleanup();
    if (text.empty())
      text = " (the compiler reported no diagnostic; see its output on "
             "stderr)";
    return makeError(ErrorCode::Parse, "cannot parse " + input + text);
  }
  if (!api.invocationPipeline(inv, kPipelineStd)) {
    std::string text = formatDiagnostics(diagnostics);
    cleanup();
    return makeError(ErrorCode::Invalid, "compiling " + input + " failed" + text);
  }
  if (IreeError *e = api.outputOpenFile(output.c_str(), &out)) {
    std::string message = oneLine(api.take(e));
    cleanup();
    return makeError(ErrorCode::Io, "cannot write " + output + ": " + message);
  }
  if (IreeError *e = api.invocationOutputVMBytecode(inv, out)) {
    std::string message = oneLine(api.take(e));
    std::string text = formatDiagnostics(diagnostics);
    cleanup();
    return makeError(ErrorCode::Invalid, "writing VM bytecode to " + output +
                                             " failed: " + message + text);
  }
  api.outputKeep(out);
  cleanup();
  return CompileResult{std::move(diagnostics)};
}

//===----------------------------------------------------------------------===//
// Applying a configuration
//===----------------------------------------------------------------------===//

Expected<AppliedCompilerConfig>
CompilerLibrary::applyConfig(const CompilerConfig &config) {
  AppliedCompilerConfig applied;
  for (const CompilerFlag &f : config.flags) {
    if (f.name == "iree-load-plugin") {
      // Loaded only at initialization, from IREE_LOAD_PLUGINS (either
      // spelling: <path> or <id>=<path>).
      const char *env = environmentOverride("IREE_LOAD_PLUGINS");
      bool listed = false;
      if (env) {
        std::string list = env;
        for (size_t start = 0; start <= list.size();) {
          size_t comma = list.find(',', start);
          std::string item = trimmed(list.substr(
              start,
              comma == std::string::npos ? std::string::npos : comma - start));
          listed |= item == f.value ||
                    (item.size() > f.value.size() &&
                     item.compare(item.size() - f.value.size(),
                                  f.value.size(), f.value) == 0 &&
                     item[item.size() - f.value.size() - 1] == '=');
          if (comma == std::string::npos)
            break;
          start = comma + 1;
        }
      }
      if (!listed)
        return makeError(
            ErrorCode::Unsupported,
            describeFlag(f) + ": an embedded compiler loads dynamic plugins "
                              "only from IREE_LOAD_PLUGINS, when it "
                              "initializes, and IREE_LOAD_PLUGINS does not "
                              "name " + f.value,
            packageLocation(f),
            "set IREE_LOAD_PLUGINS=" + f.value +
                " (comma-separated) in the environment before the process "
                "opens the compiler library");
      applied.loadedAtInitialization.push_back(f);
      continue;
    }
    // What this compiler's sessions do not accept can only be process-wide.
    if (f.global || !isSessionOption(f.name)) {
      applied.global.push_back(f);
      applied.global.back().global = true;
    } else {
      applied.sessionFlags.push_back(f);
    }
  }
  if (Status s = setGlobalFlags(applied.global); !s)
    return Unexpected(s.error());
  auto session = createSession();
  if (!session)
    return Unexpected(session.error());
  if (Status s = (*session)->setFlags(applied.sessionFlags); !s)
    return Unexpected(s.error());
  applied.session = std::move(*session);
  return applied;
}

} // namespace ireepkg
