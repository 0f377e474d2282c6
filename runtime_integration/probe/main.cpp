//===- runtime_integration/probe/main.cpp ---------------------------------===//
//
// ireepkg-plugin-probe: load one runtime plugin.
//
// ireepkg-plugin-probe loads ONE IREE executable plugin library and drives
// it through the executable plugin ABI v0.1 the way IREE's CPU runtime
// does (see include/ireepkg/iree_executable_plugin.h):
//
//   dlopen -> iree_hal_executable_plugin_query(LATEST, NULL) -> header
//   checks (NULL header, version, FULL_STATUS, sanitizer) -> load with a
//   tracking host allocator -> resolve the declared imports (sorted, as
//   IREE sorts them) -> resolve names the plugin should NOT know -> unload
//   -> dlclose -> allocations still live are leaks.
//
// It prints one JSON object on stdout describing what happened, and exits 0
// whenever it ran to the end, whatever it found; 2 for usage errors.
//
// `ireepkg doctor` runs it as a child process, so that a plugin that
// crashes, hangs or calls exit() cannot take doctor down. To tell doctor
// where a crash happened, the probe writes the name of every stage it
// enters, one per line, to the descriptor given with --progress-fd.
// Anything the plugin prints on stdout is redirected to stderr so that
// stdout carries only the report.
//
// The probe is built without sanitizers, like the released IREE tools, and
// without full status support: it refuses what such a runtime refuses.
//
// It calls dlopen, dlsym and dlclose itself rather than through
// ireepkg/base/os.h: it links nothing of ireepkg but the environment policy
// (it is built without the sanitizers the libraries may carry), and what it
// reports is what each of those calls did, stage by stage.
//
// With --compiler-plugin LAYOUT it reads a dynamic IREE compiler plugin
// instead: dlopen(RTLD_NOW|RTLD_LOCAL) as IREE's loader does, then
// iree_get_compiler_plugin_info(), whose struct it reads in LAYOUT (see
// ireepkg/pkg/checks/compiler_plugin_abi.h). It never calls the plugin's
// registration function.
//
//===----------------------------------------------------------------------===//

#include "ireepkg/iree_executable_plugin.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/pkg/checks/compiler_plugin_abi.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IREEPKG_PROBE_HAS_ASAN 1
#endif
#endif
#ifndef IREEPKG_PROBE_HAS_ASAN
#define IREEPKG_PROBE_HAS_ASAN 0
#endif

namespace {

constexpr int kExitUsage = 2;

using status_t = ireepkg_hal_executable_plugin_status_t;

//===----------------------------------------------------------------------===//
// JSON output
//===----------------------------------------------------------------------===//

/// Appends `text` as a JSON string literal. Invalid UTF-8 becomes U+FFFD so
/// that the report always parses, whatever bytes a plugin or path holds.
void appendJsonString(std::string &out, std::string_view text) {
  out += '"';
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: copy it if it is well-formed UTF-8.
    size_t length = c >= 0xF0 && c <= 0xF4   ? 4
                    : c >= 0xE0              ? 3
                    : c >= 0xC2 && c <= 0xDF ? 2
                                             : 0;
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (valid && length == 3) {
      unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
      valid = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (valid && length == 4) {
      unsigned char c1 = static_cast<unsigned char>(text[i + 1]);
      valid = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  out += '"';
}

/// The report, built as an ordered list of `"key": value` members.
class Report {
public:
  void string(const char *key, std::string_view value) {
    std::string v;
    appendJsonString(v, value);
    raw(key, v);
  }
  void number(const char *key, uint64_t value) {
    raw(key, std::to_string(value));
  }
  void boolean(const char *key, bool value) {
    raw(key, value ? "true" : "false");
  }
  void null(const char *key) { raw(key, "null"); }
  void strings(const char *key, const std::vector<std::string> &values) {
    std::string v = "[";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i)
        v += ", ";
      appendJsonString(v, values[i]);
    }
    v += "]";
    raw(key, v);
  }
  void raw(const char *key, const std::string &value) {
    for (auto &member : members_)
      if (member.first == key) {
        member.second = value;
        return;
      }
    members_.emplace_back(key, value);
  }
  std::string str() const {
    std::string out = "{";
    for (size_t i = 0; i < members_.size(); ++i) {
      out += i ? ",\n  " : "\n  ";
      appendJsonString(out, members_[i].first);
      out += ": " + members_[i].second;
    }
    out += "\n}\n";
    return out;
  }

private:
  std::vector<std::pair<std::string, std::string>> members_;
};

//===----------------------------------------------------------------------===//
// Progress
//===----------------------------------------------------------------------===//

int gProgressFd = -1;

/// Writes all of `text` with write(2) (nothing buffered, so it survives a
/// plugin that crashes right after); gives up quietly if the reader is gone.
void writeAll(int fd, const std::string &text) {
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

/// Tells the parent which stage is about to run (a crash is then blamed on
/// it). Uses write(2) directly: nothing is buffered when the plugin crashes.
void enterStage(const char *stage) {
  if (gProgressFd >= 0)
    writeAll(gProgressFd, std::string(stage) + "\n");
}

//===----------------------------------------------------------------------===//
// Status codes, features, sanitizers
//===----------------------------------------------------------------------===//

const char *statusCodeName(unsigned code) {
  static const char *const names[] = {
      "OK",
      "CANCELLED",
      "UNKNOWN",
      "INVALID_ARGUMENT",
      "DEADLINE_EXCEEDED",
      "NOT_FOUND",
      "ALREADY_EXISTS",
      "PERMISSION_DENIED",
      "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION",
      "ABORTED",
      "OUT_OF_RANGE",
      "UNIMPLEMENTED",
      "INTERNAL",
      "UNAVAILABLE",
      "DATA_LOSS",
      "UNAUTHENTICATED",
      "DEFERRED",
  };
  return code < sizeof names / sizeof names[0] ? names[code] : nullptr;
}

/// "ok" for OK, else the name of the status code (mask 0x1F), or
/// "CODE_<n>" for a code IREE does not define.
std::string statusText(status_t status) {
  if (ireepkg_hal_executable_plugin_status_is_ok(status))
    return "ok";
  unsigned code =
      static_cast<unsigned>(ireepkg_hal_executable_plugin_status_code(status));
  if (code == IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK) {
    // A non-NULL pointer whose low bits are zero: a full status object,
    // which a runtime without full status cannot read.
    char buf[64];
    std::snprintf(buf, sizeof buf, "STATUS_OBJECT_%#jx",
                  static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(status)));
    return buf;
  }
  if (const char *name = statusCodeName(code))
    return name;
  return "CODE_" + std::to_string(code);
}

std::vector<std::string> featureNames(uint32_t features) {
  std::vector<std::string> names;
  if (features & IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_STANDALONE)
    names.push_back("STANDALONE");
  if (features & IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_FULL_STATUS)
    names.push_back("FULL_STATUS");
  for (unsigned bit = 2; bit < 32; ++bit)
    if (features & (1u << bit)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%x", 1u << bit);
      names.push_back(buf);
    }
  return names;
}

std::string sanitizerName(int32_t kind) {
  switch (kind) {
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE:
    return "none";
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS:
    return "address";
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_MEMORY:
    return "memory";
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD:
    return "thread";
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_UNDEFINED:
    return "undefined";
  default:
    return "unknown (" + std::to_string(kind) + ")";
  }
}

/// IREE's rule: a NONE plugin in a NONE host; ASan and TSan plugins only in
/// a host built with the same sanitizer; anything else never.
bool sanitizerCompatible(int32_t plugin, int32_t host) {
  switch (plugin) {
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_NONE:
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_ADDRESS:
  case IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_THREAD:
    return plugin == host;
  default:
    return false;
  }
}

/// Copies a C string from the plugin, bounded (a missing terminator must
/// not run away). NULL reads as nullopt.
std::optional<std::string> boundedString(const char *text) {
  if (!text)
    return std::nullopt;
  return std::string(text, ::strnlen(text, 4096));
}

//===----------------------------------------------------------------------===//
// The host allocator
//===----------------------------------------------------------------------===//

/// Serves the plugin's allocations from malloc and remembers every live
/// block, so that what is left after unload can be reported as leaked.
/// Bad frees are recorded, not executed.
class TrackingAllocator {
public:
  ireepkg_hal_executable_plugin_allocator_t handle() {
    return {this, &TrackingAllocator::ctl};
  }

  size_t liveCount() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  uint64_t liveBytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t bytes = 0;
    for (const auto &block : live_)
      bytes += block.second;
    return bytes;
  }
  uint64_t totalAllocations() {
    std::lock_guard<std::mutex> lock(mutex_);
    return total_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_;
  }

private:
  static status_t ctl(void *self,
                      ireepkg_hal_executable_plugin_allocator_command_t command,
                      const void *params, void **inout_ptr) {
    return static_cast<TrackingAllocator *>(self)->control(command, params,
                                                           inout_ptr);
  }

  static status_t code(ireepkg_hal_executable_plugin_status_code_t c) {
    return ireepkg_hal_executable_plugin_status_from_code(c);
  }

  void error(const std::string &text) {
    // Keep the report small even if a plugin misbehaves in a loop.
    if (errors_.size() < 16)
      errors_.push_back(text);
  }

  status_t control(ireepkg_hal_executable_plugin_allocator_command_t command,
                   const void *params, void **inout_ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!inout_ptr) {
      error("allocator called with a NULL pointer argument");
      return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
    }
    const auto *alloc = static_cast<
        const ireepkg_hal_executable_plugin_allocator_alloc_params_t *>(params);
    switch (command) {
    case IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_MALLOC:
    case IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_CALLOC: {
      if (!alloc) {
        error("allocation without parameters");
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
      }
      size_t size = alloc->byte_length ? alloc->byte_length : 1;
      void *block =
          command == IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_CALLOC
              ? std::calloc(1, size)
              : std::malloc(size);
      if (!block)
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_RESOURCE_EXHAUSTED);
      live_[block] = alloc->byte_length;
      ++total_;
      *inout_ptr = block;
      return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
    }
    case IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_REALLOC: {
      if (!alloc) {
        error("reallocation without parameters");
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
      }
      void *old = *inout_ptr;
      if (old && !live_.count(old)) {
        error("realloc of a block the host allocator did not allocate");
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
      }
      size_t size = alloc->byte_length ? alloc->byte_length : 1;
      void *block = std::realloc(old, size);
      if (!block)
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_RESOURCE_EXHAUSTED);
      if (old)
        live_.erase(old);
      else
        ++total_;
      live_[block] = alloc->byte_length;
      *inout_ptr = block;
      return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
    }
    case IREEPKG_HAL_EXECUTABLE_PLUGIN_ALLOCATOR_COMMAND_FREE: {
      void *block = *inout_ptr;
      if (!block)
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
      auto it = live_.find(block);
      if (it == live_.end()) {
        error("free of a block the host allocator did not allocate "
              "(or freed twice)");
        return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
      }
      live_.erase(it);
      std::free(block);
      *inout_ptr = nullptr;
      return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_OK);
    }
    }
    error("unknown allocator command " +
          std::to_string(static_cast<int>(command)));
    return code(IREEPKG_HAL_EXECUTABLE_PLUGIN_STATUS_INVALID_ARGUMENT);
  }

  std::mutex mutex_;
  std::unordered_map<void *, size_t> live_;
  uint64_t total_ = 0;
  std::vector<std::string> errors_;
};

//===----------------------------------------------------------------------===//
// Resolution
//===----------------------------------------------------------------------===//

struct Resolution {
  status_t status = nullptr;
  uint32_t bits = 0;
  std::vector<std::string> resolved, missingRequired, optionalMissing;
};

/// One resolve call with `names` (sorted as IREE sorts an executable's
/// imports); then every slot is checked.
Resolution resolveAll(const ireepkg_hal_executable_plugin_v0_t *plugin,
                      void *self, const std::vector<std::string> &names) {
  std::vector<const char *> symbolNames;
  for (const std::string &name : names)
    symbolNames.push_back(name.c_str());
  std::vector<void *> fns(names.size(), nullptr);
  std::vector<void *> contexts(names.size(), nullptr);
  ireepkg_hal_executable_plugin_resolve_params_v0_t params;
  params.count = names.size();
  params.symbol_names = symbolNames.data();
  params.out_fn_ptrs = fns.data();
  params.out_fn_contexts = contexts.data();
  Resolution out;
  out.status = plugin->resolve(self, &params, &out.bits);
  for (size_t i = 0; i < names.size(); ++i) {
    if (fns[i])
      out.resolved.push_back(names[i]);
    else if (ireepkg_hal_executable_plugin_import_is_optional(names[i].c_str()))
      out.optionalMissing.push_back(names[i]);
    else
      out.missingRequired.push_back(names[i]);
  }
  return out;
}

/// Sorted (byte order, like strcmp, `?` included) and without duplicates.
std::vector<std::string> sortedUnique(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

struct Options {
  std::string library;
  std::optional<ireepkg::CompilerPluginLayout> compilerLayout;
  std::vector<std::string> imports;
  std::vector<std::string> probeImports;
  std::vector<std::pair<std::string, std::string>> params;
};

void printUsage(FILE *out) {
  std::fputs(
      "usage: ireepkg-plugin-probe <library> [--import NAME]...\n"
      "                            [--probe-import NAME]...\n"
      "                            [--param KEY=VALUE]... [--progress-fd N]\n"
      "       ireepkg-plugin-probe --compiler-plugin LAYOUT <library>\n"
      "\n"
      "Loads one IREE executable plugin (ABI v0.1) and prints a JSON report:\n"
      "query, header checks, load, resolve of the --import names (those the\n"
      "plugin declares), resolve of the --probe-import names (names it should\n"
      "not know: the report lists those it resolves anyway), unload, leaks.\n"
      "With --compiler-plugin, reads a dynamic IREE compiler plugin's info\n"
      "(iree_get_compiler_plugin_info) in LAYOUT (hash64 or\n"
      "api-version-hash-string) without registering it.\n"
      "Exit status 0 when the checks ran to the end, 2 for usage errors.\n",
      out);
}

bool usageError(const std::string &message) {
  std::fprintf(stderr, "ireepkg-plugin-probe: error: %s\n", message.c_str());
  printUsage(stderr);
  return false;
}

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return usageError(arg + " needs a value");
      out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "-h" || arg == "--help") {
      printUsage(stdout);
      std::exit(0);
    } else if (arg == "--import") {
      if (!value(v))
        return false;
      if (v.empty())
        return usageError("--import needs a non-empty name");
      options.imports.push_back(v);
    } else if (arg == "--probe-import") {
      if (!value(v))
        return false;
      if (v.empty())
        return usageError("--probe-import needs a non-empty name");
      options.probeImports.push_back(v);
    } else if (arg == "--param") {
      if (!value(v))
        return false;
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        return usageError("--param needs KEY=VALUE, got \"" + v + "\"");
      options.params.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (arg == "--compiler-plugin") {
      if (!value(v))
        return false;
      using ireepkg::CompilerPluginLayout;
      for (CompilerPluginLayout l :
           {CompilerPluginLayout::Hash64,
            CompilerPluginLayout::ApiVersionHashString})
        if (v == ireepkg::compilerPluginLayoutName(l))
          options.compilerLayout = l;
      if (!options.compilerLayout)
        return usageError("unknown compiler plugin layout \"" + v +
                          "\" (hash64, api-version-hash-string)");
    } else if (arg == "--progress-fd") {
      if (!value(v))
        return false;
      char *end = nullptr;
      long fd = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || fd < 0 || fd > 1 << 20)
        return usageError("--progress-fd needs a descriptor number");
      gProgressFd = static_cast<int>(fd);
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option " + arg);
    } else if (options.library.empty()) {
      options.library = arg;
    } else {
      return usageError("only one library can be probed at a time");
    }
  }
  if (options.library.empty())
    return usageError("no library given");
  return true;
}

//===----------------------------------------------------------------------===//
// The probe
//===----------------------------------------------------------------------===//

/// Writes the report to `fd` (the original stdout).
void emit(int fd, const Report &report) { writeAll(fd, report.str()); }

/// dlopen(RTLD_NOW|RTLD_LOCAL), as IREE's loaders open a plugin; the
/// report's "dlopen" is "ok" or dlerror(). NULL when it fails.
void *openLibrary(const std::string &path, Report &report) {
  enterStage("dlopen");
  void *library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = ::dlerror();
    report.string("dlopen", why ? why : "dlopen failed");
    return nullptr;
  }
  report.string("dlopen", "ok");
  return library;
}

/// Runs every check, filling `report`. Returns when a check makes going on
/// pointless (or unsafe, as for a runtime that would refuse the plugin).
void probe(const Options &options, Report &report,
           TrackingAllocator &allocator) {
  const uint32_t hostVersion = IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_LATEST;
  const int32_t hostSanitizer = IREEPKG_HAL_EXECUTABLE_PLUGIN_SANITIZER_KIND;

  void *library = openLibrary(options.library, report);
  if (!library)
    return;

  enterStage("query");
  ::dlerror();
  void *symbol = ::dlsym(library, IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT_NAME);
  if (!symbol) {
    report.string("query", "missing symbol");
    return;
  }
  auto query =
      reinterpret_cast<ireepkg_hal_executable_plugin_query_fn_t>(symbol);
  const ireepkg_hal_executable_plugin_header_t **result =
      query(hostVersion, nullptr);
  if (!result) {
    report.string("query", "returned null");
    return;
  }
  report.string("query", "ok");

  enterStage("header");
  const auto *plugin =
      reinterpret_cast<const ireepkg_hal_executable_plugin_v0_t *>(result);
  const ireepkg_hal_executable_plugin_header_t *header = plugin->header;
  if (!header) {
    report.string("interface", "NULL header");
    return;
  }
  report.number("version", header->version);
  bool versionOk =
      header->version >= IREEPKG_HAL_EXECUTABLE_PLUGIN_VERSION_0_1 &&
      header->version <= hostVersion;
  report.boolean("version_ok", versionOk);
  report.number("host_version", hostVersion);
  if (auto name = boundedString(header->name))
    report.string("name", *name);
  if (auto description = boundedString(header->description))
    report.string("description", *description);
  report.strings("features", featureNames(header->features));
  bool fullStatus =
      header->features & IREEPKG_HAL_EXECUTABLE_PLUGIN_FEATURE_FULL_STATUS;
  // This host (like IREE's release builds) has no full status support.
  report.boolean("features_ok", !fullStatus);
  int32_t sanitizer = static_cast<int32_t>(header->sanitizer);
  report.string("sanitizer", sanitizerName(sanitizer));
  report.string("host_sanitizer", sanitizerName(hostSanitizer));
  bool sanitizerOk = sanitizerCompatible(sanitizer, hostSanitizer);
  report.boolean("sanitizer_ok", sanitizerOk);
  std::string missing;
  if (!plugin->load)
    missing = "NULL load function";
  else if (!plugin->unload)
    missing = "NULL unload function";
  else if (!plugin->resolve)
    missing = "NULL resolve function";
  report.string("interface", missing.empty() ? "ok" : missing);
  if (!versionOk || fullStatus || !sanitizerOk || !missing.empty()) {
    report.string("load", "not attempted");
    return;
  }

  enterStage("load");
  ireepkg_hal_executable_plugin_environment_v0_t environment;
  environment.host_allocator = allocator.handle();
  std::vector<ireepkg_hal_executable_plugin_string_pair_t> params;
  for (const auto &[key, value] : options.params)
    params.push_back({{key.data(), key.size()}, {value.data(), value.size()}});
  void *self = nullptr;
  status_t status =
      plugin->load(&environment, params.size(),
                   params.empty() ? nullptr : params.data(), &self);
  report.string("load", statusText(status));
  if (!ireepkg_hal_executable_plugin_status_is_ok(status))
    return; // IREE does not unload a plugin whose load failed.

  std::vector<std::string> imports = sortedUnique(options.imports);
  if (!imports.empty()) {
    enterStage("resolve");
    Resolution r = resolveAll(plugin, self, imports);
    report.string("resolve", statusText(r.status));
    report.number("resolution", r.bits);
    report.strings("resolved", r.resolved);
    report.strings("missing_required", r.missingRequired);
    report.strings("optional_missing", r.optionalMissing);
  }

  // Names the plugin does not declare: a separate call, so that they cannot
  // change what the declared imports resolve to.
  std::vector<std::string> probes;
  for (const std::string &name : sortedUnique(options.probeImports))
    if (!std::binary_search(imports.begin(), imports.end(), name))
      probes.push_back(name);
  report.strings("probed", probes);
  if (!probes.empty()) {
    enterStage("resolve-undeclared");
    Resolution r = resolveAll(plugin, self, probes);
    report.string("probe_resolve", statusText(r.status));
    report.strings("undeclared_resolved", r.resolved);
  }

  enterStage("unload");
  plugin->unload(self);
  report.string("unload", "ok");

  enterStage("dlclose");
  if (::dlclose(library) != 0) {
    const char *why = ::dlerror();
    report.string("dlclose", why ? why : "dlclose failed");
  } else {
    report.string("dlclose", "ok");
  }
}

/// Reads a dynamic compiler plugin's info in `layout`: "dlopen", "info"
/// ("ok", "missing symbol", "returned null"), then the fields.
void probeCompilerPlugin(const Options &options, Report &report) {
  using ireepkg::CompilerPluginLayout;
  report.string("layout",
                ireepkg::compilerPluginLayoutName(*options.compilerLayout));
  for (const char *key : {"dlopen", "info", "api_version", "abi_hash",
                          "plugin_id", "plugin_version", "register"})
    report.null(key);
  void *library = openLibrary(options.library, report);
  if (!library)
    return;
  enterStage("info");
  void *symbol = ::dlsym(library, ireepkg::kCompilerPluginInfoSymbol);
  if (!symbol) {
    report.string("info", "missing symbol");
    return;
  }
  const void *info = reinterpret_cast<const void *(*)(void)>(symbol)();
  if (!info) {
    report.string("info", "returned null");
    return;
  }
  report.string("info", "ok");
  auto text = [&](const char *key, const char *value) {
    if (auto s = boundedString(value))
      report.string(key, *s);
  };
  if (*options.compilerLayout == CompilerPluginLayout::Hash64) {
    const auto *i =
        static_cast<const ireepkg::CompilerPluginInfoHash64 *>(info);
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(i->abiHash));
    report.string("abi_hash", hash);
    text("plugin_id", i->pluginId);
    text("plugin_version", i->pluginVersion);
    report.boolean("register", i->registerPlugin != nullptr);
  } else {
    const auto *i =
        static_cast<const ireepkg::CompilerPluginInfoApiVersion *>(info);
    report.number("api_version", i->apiVersion);
    text("abi_hash", i->abiHash);
    text("plugin_id", i->pluginId);
    text("plugin_version", i->pluginVersion);
    report.boolean("register", i->registerPlugin != nullptr);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (std::string refusal =
          ireepkg::privilegedRunReport("ireepkg-plugin-probe");
      !refusal.empty())
    return std::fputs(refusal.c_str(), stderr), 1;
  Options options;
  if (!parseOptions(argc, argv, options))
    return kExitUsage;

  // A crashing plugin must not leave core files behind.
  struct rlimit noCore = {0, 0};
  ::setrlimit(RLIMIT_CORE, &noCore);
  // Nor may one that allocates without end take the machine's memory: it
  // gets 16 GiB of address space, as ireepkg-mlir-check's worker does. (Not
  // under AddressSanitizer, whose shadow memory alone reserves more.)
#if !defined(__SANITIZE_ADDRESS__) && !IREEPKG_PROBE_HAS_ASAN
  struct rlimit space = {rlim_t(16) << 30, rlim_t(16) << 30};
  ::setrlimit(RLIMIT_AS, &space);
#endif
#if defined(__linux__)
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // Runs in its own process group: if doctor is interrupted, a plugin that
  // hangs must not outlive it.
  if (gProgressFd >= 0)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif

  // Keep stdout for the report; whatever the plugin prints goes to stderr.
  std::fflush(stdout);
  int reportFd = ::dup(STDOUT_FILENO);
  if (reportFd < 0) {
    std::perror("ireepkg-plugin-probe: dup");
    return 1;
  }
  ::dup2(STDERR_FILENO, STDOUT_FILENO);

  Report report;
  report.string("path", options.library);
  if (options.compilerLayout) {
    probeCompilerPlugin(options, report);
    emit(reportFd, report);
    ::close(reportFd);
    enterStage("done");
    std::fflush(stderr);
    std::_Exit(0);
  }
  std::vector<std::pair<std::string, std::string>> params = options.params;
  std::vector<std::string> paramText;
  for (const auto &[key, value] : params)
    paramText.push_back(key + "=" + value);
  report.strings("params", paramText);
  // Every field, in order; what is not reached stays null.
  static const char *const kFields[] = {"dlopen",
                                        "query",
                                        "interface",
                                        "version",
                                        "version_ok",
                                        "host_version",
                                        "name",
                                        "description",
                                        "features",
                                        "features_ok",
                                        "sanitizer",
                                        "host_sanitizer",
                                        "sanitizer_ok",
                                        "load",
                                        "resolve",
                                        "resolution",
                                        "resolved",
                                        "missing_required",
                                        "optional_missing",
                                        "probed",
                                        "probe_resolve",
                                        "undeclared_resolved",
                                        "unload",
                                        "dlclose",
                                        "allocations",
                                        "leaked_allocations",
                                        "leaked_bytes"};
  for (const char *key : kFields)
    report.null(key);

  TrackingAllocator allocator;
  probe(options, report, allocator);

  enterStage("report");
  report.number("allocations", allocator.totalAllocations());
  report.number("leaked_allocations", allocator.liveCount());
  report.number("leaked_bytes", allocator.liveBytes());
  report.strings("allocator_errors", allocator.errors());
  emit(reportFd, report);
  ::close(reportFd);
  enterStage("done");
  // The plugin's destructors already ran at dlclose (or the library stays
  // mapped); skip static destructors of a process that may be in a strange
  // state after a misbehaving plugin.
  std::fflush(stderr);
  std::_Exit(0);
}
