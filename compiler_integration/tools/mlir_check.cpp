//===- compiler_integration/tools/mlir_check.cpp --------------------------===//
//
// ireepkg-mlir-check: plugins and pipelines.
//
// Why one file of this size: a separate program built against libMLIR as
// C++17 without RTTI, apart from ireepkg's libraries; its request, loaders,
// parser checks and report belong to one process and one protocol.
//
//===----------------------------------------------------------------------===//
//
// ireepkg-mlir-check loads MLIR pass and dialect plugins the way MLIR's tools
// do (`mlir-opt --load-pass-plugin` / `--load-dialect-plugin`), and checks
// MLIR textual pass pipelines (the pipelines of a package's preprocessing,
// mlir-pipeline and executable-preprocessing hooks) with MLIR's own pass
// pipeline parser, against the passes MLIR registers
// (mlir::registerAllPasses) and those of the plugins it loaded.
//
// ireepkg runs it as a child process from `pack`, `install` and `doctor`, so
// that the ireepkg binary links no LLVM or MLIR. It reads one JSON request
// (stdin, or the file named on the command line) and prints one JSON report
// on stdout:
//
//   request {"plugins": ["/abs/libpasses.so",
//                        {"path": "/abs/libdialect.so", "kind": "dialect"},
//                        ...],
//            "fragments": [{"anchor": "builtin.module",
//                           "text":
//                           "func.func(cse),canonicalize{max-iterations=3}",
//                           "passes": [{"name": "cse", "anchor": "func.func"},
//                                      {"name": "canonicalize",
//                                       "anchor": "builtin.module",
//                                       "options": "max-iterations=3"}]}],
//            "step_timeout_ms": 30000}
//
//   report  {"mlir_version": "22.1.8",
//            "plugins": [{"path": ..., "kind": "pass", "loaded": true,
//                         "api_version": 1, "name": ..., "version": ...,
//                         "passes": [...], "dialects": [...] (dialect)}
//                        | {"path": ..., "kind": ..., "loaded": false,
//                           "error": ...}],
//            "fragments": [{"passes": [{"known": true, "errors": [...]}, ...],
//                           "unknown": [...], "suggestions": {...},
//                           "errors": [...]}]}
//
// A plugin (a path: a pass plugin; or {"path", "kind": "pass"|"dialect"})
// is loaded with MLIR's checks (see loadPlugin): the library opens against
// the libMLIR this tool links (the one mlir-opt-22 uses), it exports
// mlirGetPassPluginInfo / mlirGetDialectPluginInfo, the entry point returns
// MLIR_PLUGIN_API_VERSION and a non-null callback; then the callback runs
// (a dialect plugin's dialects are loaded into a context).
//
// A fragment's `text` is parsed into an OpPassManager anchored on `anchor`
// ("any" for an op-agnostic one) with explicit nesting: exactly what MLIR
// does with the inside of `anchor(...)`. `passes` lists every pass element
// of the text, in order, with the operation it is nested on (ireepkg's own
// syntax checker found them). Each known pass is parsed alone, so that every
// error belongs to one pass (and option) of the text; the whole text is
// parsed when every pass in it is known. Passes MLIR does not know (IREE's
// own, or those of plugins that are not loaded) are listed in "unknown",
// with the closest registered name in "suggestions" when one is close.
// An error is {"message", "hint"?, "option"?, "column"?}: the option it is
// about, and a 1-based column in the text MLIR parsed when MLIR gave one.
//
// The work runs in a forked worker process that the main process watches.
// A plugin that crashes, hangs, calls exit() or hits an LLVM fatal error
// while it loads is reported as failed, and the worker starts again without
// it; the same for a pipeline whose parsing crashes. Every step has a time
// limit. Exit status: 0 with a report, 1 when MLIR itself cannot start (the
// reason on stderr), 2 for a malformed request.
//
//===----------------------------------------------------------------------===//

#include "ireepkg/base/environment.h"
#include "ireepkg/base/text.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using ireepkg::signalName;
using ireepkg::splitLines;
using ireepkg::startsWith;
using ireepkg::trimmed;

namespace {

using nlohmann::json;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr const char *kTool = "ireepkg-mlir-check";
constexpr size_t kMaxRequestBytes = 64u << 20;
constexpr int64_t kDefaultStepTimeoutMs = 30000;
/// How much of what a failing step printed is quoted in its error.
constexpr size_t kMaxQuoted = 600;
/// Captured output kept per step.
constexpr size_t kMaxCapture = 1u << 20;
/// The worker's address-space limit: a plugin that allocates without end
/// fails instead of taking the machine's memory.
constexpr rlim_t kWorkerAddressSpace = rlim_t(16) << 30;

const char *const kUsage =
    "usage: ireepkg-mlir-check [REQUEST.json]\n"
    "Checks MLIR pass pipeline fragments with MLIR's own pass pipeline "
    "parser.\nReads a JSON request (from the file, or stdin) and prints a "
    "JSON report;\nsee the comment at the top of "
    "compiler_integration/tools/mlir_check.cpp.\n";

//===----------------------------------------------------------------------===//
// Small utilities
//===----------------------------------------------------------------------===//

/// JSON text that always serializes, whatever bytes plugins put in messages.
std::string jsonText(const json &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// Bytes [start, end) of a file, at most kMaxCapture of them.
std::string readRange(int fd, off_t start, off_t end) {
  std::string out;
  if (start < 0 || end <= start)
    return out;
  size_t want = std::min(static_cast<size_t>(end - start), kMaxCapture);
  out.resize(want);
  size_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(fd, &out[got], want - got, start + off_t(got));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string inQuotes(const std::string &s) { return "\"" + s + "\""; }

/// The last lines of what a failing step printed, for its error message.
std::string tailOf(const std::string &printed) {
  std::string t = trimmed(printed);
  if (t.size() > kMaxQuoted)
    t = "..." + t.substr(t.size() - kMaxQuoted);
  for (char &c : t)
    if (c == '\n')
      c = ' ';
  return t;
}

/// The closest of `candidates` to `word` within a small edit distance, or "".
std::string closest(const std::string &word,
                    const std::vector<std::string> &candidates) {
  unsigned limit = word.size() <= 4 ? 1 : word.size() <= 12 ? 2 : 3;
  unsigned best = limit + 1;
  std::string out;
  for (const std::string &c : candidates) {
    if (c == word)
      continue;
    unsigned d = llvm::StringRef(word).edit_distance(c, true, limit + 1);
    if (d < best) {
      best = d;
      out = c;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The request
//===----------------------------------------------------------------------===//

struct PassRef {
  std::string name;
  std::string anchor;
  bool hasOptions = false;
  std::string options;
};

struct Fragment {
  std::string anchor;
  std::string text;
  std::vector<PassRef> passes;
};

/// One MLIR plugin library to load, as mlir-opt's --load-pass-plugin or
/// --load-dialect-plugin would.
struct PluginRef {
  std::string path;
  bool dialect = false;
};

struct Request {
  std::vector<PluginRef> plugins;
  std::vector<Fragment> fragments;
  int64_t stepTimeoutMs = kDefaultStepTimeoutMs;
};

/// Reads the request; returns a problem ("" if it is well formed).
std::string parseRequest(const std::string &text, Request &out) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    return "the request is not valid JSON";
  if (!doc.is_object())
    return "/: must be an object";
  auto str = [](const json &j, const char *key, std::string &dst,
                bool required) -> bool {
    auto it = j.find(key);
    if (it == j.end())
      return !required;
    if (!it->is_string())
      return false;
    dst = it->get<std::string>();
    return true;
  };
  if (auto it = doc.find("plugins"); it != doc.end()) {
    if (!it->is_array())
      return "/plugins: must be an array of paths";
    for (size_t i = 0; i < it->size(); ++i) {
      const json &p = (*it)[i];
      std::string at = "/plugins/" + std::to_string(i);
      PluginRef ref;
      if (p.is_object()) {
        if (!str(p, "path", ref.path, true) || ref.path.empty())
          return at + "/path: must be a path";
        std::string kind = "pass";
        if (!str(p, "kind", kind, false) ||
            (kind != "pass" && kind != "dialect"))
          return at + "/kind: must be \"pass\" or \"dialect\"";
        ref.dialect = kind == "dialect";
      } else if (p.is_string() && !p.get<std::string>().empty()) {
        ref.path = p.get<std::string>();
      } else {
        return at + ": must be a path";
      }
      out.plugins.push_back(std::move(ref));
    }
  }
  if (auto it = doc.find("step_timeout_ms"); it != doc.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > 86400000)
      return "/step_timeout_ms: must be an integer from 1 to 86400000";
    out.stepTimeoutMs = it->get<int64_t>();
  }
  auto frags = doc.find("fragments");
  if (frags == doc.end() || !frags->is_array())
    return "/fragments: must be an array";
  for (size_t i = 0; i < frags->size(); ++i) {
    const json &f = (*frags)[i];
    std::string at = "/fragments/" + std::to_string(i);
    if (!f.is_object())
      return at + ": must be an object";
    Fragment frag;
    if (!str(f, "anchor", frag.anchor, true) || frag.anchor.empty())
      return at + "/anchor: must be an operation name or \"any\"";
    if (!str(f, "text", frag.text, true))
      return at + "/text: must be a string";
    auto passes = f.find("passes");
    if (passes == f.end() || !passes->is_array())
      return at + "/passes: must be an array";
    for (size_t k = 0; k < passes->size(); ++k) {
      const json &p = (*passes)[k];
      std::string pat = at + "/passes/" + std::to_string(k);
      if (!p.is_object())
        return pat + ": must be an object";
      PassRef ref;
      if (!str(p, "name", ref.name, true) || ref.name.empty())
        return pat + "/name: must be a pass name";
      if (!str(p, "anchor", ref.anchor, true) || ref.anchor.empty())
        return pat + "/anchor: must be an operation name or \"any\"";
      auto opts = p.find("options");
      if (opts != p.end() && !opts->is_null()) {
        if (!opts->is_string())
          return pat + "/options: must be a string or null";
        ref.hasOptions = true;
        ref.options = opts->get<std::string>();
      }
      frag.passes.push_back(std::move(ref));
    }
    out.fragments.push_back(std::move(frag));
  }
  return "";
}

//===----------------------------------------------------------------------===//
// The worker: MLIR, plugins and the parser
//===----------------------------------------------------------------------===//

int gEventFd = -1;

void emit(const json &event) { writeAll(gEventFd, jsonText(event) + "\n"); }

/// LLVM's report_fatal_error ends here: tell the main process why, and go.
void onFatalError(void *, const char *reason, bool) {
  emit({{"event", "fatal"}, {"message", reason ? reason : ""}});
  ::_exit(kExitFailure);
}

/// What is written to descriptor `fd` (a memfd) while `fn` runs.
template <typename Fn> std::string capture(int fd, Fn &&fn) {
  llvm::outs().flush();
  off_t start = ::lseek(fd, 0, SEEK_END);
  fn();
  llvm::outs().flush();
  off_t end = ::lseek(fd, 0, SEEK_END);
  return readRange(fd, start, end);
}

const mlir::PassRegistryEntry *lookupEntry(const std::string &name) {
  if (const mlir::PassInfo *p = mlir::PassInfo::lookup(name))
    return p;
  return mlir::PassPipelineInfo::lookup(name);
}

/// Every registered pass and pass pipeline name, from MLIR's own listing.
std::vector<std::string> registeredNames() {
  std::string listing =
      capture(STDOUT_FILENO, [] { mlir::printRegisteredPasses(); });
  std::vector<std::string> names;
  for (std::string_view line : splitLines(listing)) {
    // Entries are indented by two spaces, their options by four.
    if (!startsWith(line, "  --") || startsWith(line, "   "))
      continue;
    std::string rest(line.substr(4));
    names.push_back(rest.substr(0, rest.find_first_of(" =")));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

struct OptionInfo {
  std::string name;
  std::string type; ///< "long", "uint", "string", "value" (enum), "" (flag)
  std::vector<std::string> values; ///< enum values
};

/// The options of a pass or pipeline, from MLIR's help text for it.
std::vector<OptionInfo> optionsOf(const mlir::PassRegistryEntry &entry) {
  std::string help = capture(STDOUT_FILENO, [&] {
    entry.printHelpStr(2, entry.getOptionWidth() + 4);
  });
  std::vector<OptionInfo> out;
  bool first = true;
  for (std::string_view line : splitLines(help)) {
    std::string t = trimmed(line);
    if (startsWith(t, "--")) {
      if (first) { // the entry itself
        first = false;
        continue;
      }
      OptionInfo o;
      std::string rest = t.substr(2);
      size_t end = rest.find_first_of(" =");
      o.name = rest.substr(0, end);
      if (end != std::string::npos && rest[end] == '=' &&
          rest.compare(end, 2, "=<") == 0) {
        size_t close = rest.find('>', end);
        if (close != std::string::npos)
          o.type = rest.substr(end + 2, close - end - 2);
      }
      out.push_back(std::move(o));
    } else if (startsWith(t, "=") && !out.empty()) {
      std::string v = t.substr(1);
      out.back().values.push_back(v.substr(0, v.find(' ')));
    }
  }
  return out;
}

/// One problem MLIR printed.
struct Problem {
  std::string message;
  std::string option;
  bool unknownOption = false;
  int column = 0;
  /// The pass MLIR then says it failed to add: the one checked, or one in
  /// a pipeline-valued option of it (inline{op-pipelines=func.func(cse)}).
  std::string pass;
};

/// Reads what MLIR printed while parsing `text` (its error stream, and what
/// LLVM's option parser printed on stderr) into problems.
std::vector<Problem> readProblems(const std::string &printed,
                                  const std::string &text) {
  std::vector<Problem> out;
  std::vector<std::string> context;
  const std::string kParser = "MLIR Textual PassPipeline Parser:";
  // A located error is followed by the line it is about and a caret line.
  bool echo = false;
  for (std::string_view line : splitLines(printed)) {
    std::string t = trimmed(line);
    if (t.empty() || t == trimmed(text) ||
        t.find_first_not_of("^ ~") == std::string::npos)
      continue;
    if (echo) {
      echo = false;
      if (!startsWith(t, kParser))
        continue;
    }
    if (startsWith(t, "failed to add `")) {
      context.push_back(t);
      std::string name = t.substr(15, t.find('`', 15) - 15);
      for (Problem &p : out)
        if (p.pass.empty())
          p.pass = name;
      continue;
    }
    Problem p;
    if (startsWith(t, kParser)) {
      // "<buffer>:1:7: error: message"
      std::string rest = t.substr(kParser.size());
      size_t colon = rest.find(':');
      if (colon != std::string::npos)
        p.column = std::atoi(rest.c_str() + colon + 1);
      size_t err = rest.find("error: ");
      t = err == std::string::npos ? rest : rest.substr(err + 7);
      echo = true;
    }
    const std::string kOptions = "<Pass-Options-Parser>: ";
    if (startsWith(t, kOptions))
      t = t.substr(kOptions.size());
    if (size_t f = t.find("for the --"); f != std::string::npos) {
      size_t o = t.find(" option: ", f);
      if (o != std::string::npos) {
        p.option = t.substr(f + 10, o - f - 10);
        t = t.substr(o + 9);
      }
    } else if (startsWith(t, "no such option ")) {
      p.option = trimmed(t.substr(15));
      p.unknownOption = true;
    }
    while (!t.empty() && t.back() == '!')
      t.pop_back();
    p.message = t;
    out.push_back(std::move(p));
  }
  if (out.empty()) {
    Problem p;
    p.message = context.empty()
                    ? std::string("MLIR's pass pipeline parser refused it "
                                  "without saying why")
                    : context.front();
    out.push_back(std::move(p));
  }
  return out;
}

/// "an integer", for what LLVM's option parser calls a "long argument".
std::string typeNoun(const std::string &type) {
  if (type == "int" || type == "long" || type == "long long" ||
      type == "integer")
    return "an integer";
  if (type == "uint" || type == "ulong" || type == "unsigned long long" ||
      type == "unsigned" || type == "size_t")
    return "a non-negative integer";
  if (type == "floating point" || type == "number" || type == "double")
    return "a number";
  if (type == "char")
    return "a single character";
  return "a valid " + type;
}

/// The text between the first pair of single quotes after `from`.
std::string quotedValue(const std::string &s, size_t from = 0) {
  size_t open = s.find('\'', from);
  if (open == std::string::npos)
    return "";
  size_t close = s.find('\'', open + 1);
  if (close == std::string::npos)
    return "";
  return s.substr(open + 1, close - open - 1);
}

/// An error of pass `passName` (a registered `entry`) as the report says it.
json describe(const Problem &p, const std::string &passName,
              const mlir::PassRegistryEntry *entry) {
  json e = json::object();
  std::string message = p.message, hint;
  std::vector<OptionInfo> options;
  if (entry && !p.option.empty())
    options = optionsOf(*entry);
  std::vector<std::string> names;
  for (const OptionInfo &o : options)
    names.push_back(o.name);
  const OptionInfo *option = nullptr;
  for (const OptionInfo &o : options)
    if (o.name == p.option)
      option = &o;

  const std::string what =
      entry && !mlir::PassInfo::lookup(passName) ? "pass pipeline " : "pass ";
  if (p.unknownOption) {
    message =
        what + inQuotes(passName) + " has no option " + inQuotes(p.option);
    std::string near = closest(p.option, names);
    if (!near.empty())
      message += "; did you mean " + inQuotes(near) + "?";
    hint = names.empty()
               ? "\"" + passName + "\" takes no options"
               : "the options of \"" + passName + "\" are: " + joinNames(names);
  } else if (!p.option.empty()) {
    std::string detail = p.message;
    std::string value = quotedValue(detail);
    if (detail.find("is invalid value for boolean argument") !=
        std::string::npos) {
      detail = inQuotes(value) + " is not a boolean";
      hint = "write true or false (or 1 or 0)";
    } else if (size_t at = detail.find("' value invalid for ");
               at != std::string::npos) {
      size_t end = detail.find(" argument", at);
      std::string type =
          end == std::string::npos ? "" : detail.substr(at + 20, end - at - 20);
      detail = inQuotes(value) + " is not " + typeNoun(type);
    } else if (startsWith(detail, "Cannot find option named '")) {
      detail = inQuotes(value) + " is not one of its values";
      if (option && !option->values.empty())
        hint = "the values of \"" + p.option +
               "\" are: " + joinNames(option->values);
    }
    message = "invalid value for option " + inQuotes(p.option) + " of " + what +
              inQuotes(passName) + ": " + detail;
  } else if (size_t r = message.find("restricted to '");
             r != std::string::npos &&
             message.find("did you intend to nest?") != std::string::npos) {
    // "Can't add pass 'X' restricted to 'func.func' on a PassManager
    // intended to run on 'builtin.module', did you intend to nest?"
    std::string runsOn = quotedValue(message, r);
    size_t i = message.find("intended to run on '");
    std::string placedOn =
        i == std::string::npos ? "" : quotedValue(message, i + 19);
    message =
        "pass " + inQuotes(passName) + " runs on " + inQuotes(runsOn) +
        " operations, but here it is nested on " +
        (placedOn == "any" ? std::string("any operation") : inQuotes(placedOn));
    hint = "nest it in the operation it runs on, as in " + runsOn + "(" +
           passName + ")";
  }
  e["message"] = message;
  if (!hint.empty())
    e["hint"] = hint;
  if (!p.option.empty())
    e["option"] = p.option;
  if (p.column > 0)
    e["column"] = p.column;
  return e;
}

/// Parses `text` with MLIR's parser into a pass manager on `anchor`.
/// Returns the problems (none on success).
std::vector<Problem> parseWithMlir(const std::string &anchor,
                                   const std::string &text) {
  mlir::OpPassManager pm(anchor, mlir::OpPassManager::Nesting::Explicit);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  bool ok = false;
  std::string printed = capture(STDERR_FILENO, [&] {
    ok = mlir::succeeded(mlir::parsePassPipeline(text, pm, os));
  });
  os.flush();
  if (ok)
    return {};
  return readProblems(printed + "\n" + errors, text);
}

json checkFragment(const Fragment &frag, size_t index,
                   std::vector<std::string> &names, bool &namesKnown) {
  json passes = json::array();
  std::vector<std::string> unknown;
  bool anyError = false;
  for (size_t k = 0; k < frag.passes.size(); ++k) {
    const PassRef &ref = frag.passes[k];
    const mlir::PassRegistryEntry *entry = lookupEntry(ref.name);
    if (!entry) {
      if (std::find(unknown.begin(), unknown.end(), ref.name) == unknown.end())
        unknown.push_back(ref.name);
      passes.push_back({{"known", false}});
      continue;
    }
    emit({{"event", "begin"}, {"fragment", index}, {"pass", k}});
    std::string text = ref.name;
    if (ref.hasOptions)
      text += "{" + ref.options + "}";
    json errors = json::array();
    for (const Problem &p : parseWithMlir(ref.anchor, text)) {
      // A pass named inside a pipeline-valued option (as in
      // inline{op-pipelines=func.func(iree-foo)}) that MLIR does not know
      // is unknown, like one in the pipeline itself.
      const std::string kUnknown =
          "' does not refer to a registered pass or pass pipeline";
      size_t at = p.message.find(kUnknown);
      if (p.option.empty() && startsWith(p.message, "'") &&
          at != std::string::npos && at + kUnknown.size() == p.message.size()) {
        std::string name = p.message.substr(1, at - 1);
        if (std::find(unknown.begin(), unknown.end(), name) == unknown.end())
          unknown.push_back(name);
        continue;
      }
      if (!p.pass.empty() && p.pass != ref.name) {
        // About a pass inside one of this pass's options: say so, and
        // point at this pass rather than at one of its options.
        json e = describe(p, p.pass, lookupEntry(p.pass));
        e["message"] = "in the options of " + inQuotes(ref.name) + ": " +
                       e["message"].get<std::string>();
        e.erase("option");
        errors.push_back(e);
        continue;
      }
      errors.push_back(describe(p, ref.name, entry));
    }
    anyError = anyError || !errors.empty();
    passes.push_back({{"known", true}, {"errors", errors}});
  }
  json result = {{"passes", passes}, {"unknown", unknown}};
  json suggestions = json::object();
  if (!unknown.empty()) {
    if (!namesKnown) {
      names = registeredNames();
      namesKnown = true;
    }
    for (const std::string &u : unknown) {
      std::string near = closest(u, names);
      if (!near.empty())
        suggestions[u] = near;
    }
  }
  result["suggestions"] = suggestions;
  json errors = json::array();
  if (unknown.empty() && !anyError) {
    emit({{"event", "begin"}, {"fragment", index}});
    for (const Problem &p : parseWithMlir(frag.anchor, frag.text))
      errors.push_back(describe(p, "", nullptr));
  }
  result["errors"] = errors;
  return result;
}

/// The entry point MLIR's tools look up in a plugin of this kind.
const char *entryPointOf(const PluginRef &ref) {
  return ref.dialect ? "mlirGetDialectPluginInfo" : "mlirGetPassPluginInfo";
}

/// Loads one plugin the way mlir-opt's --load-pass-plugin and
/// --load-dialect-plugin do (mlir::PassPlugin::load, DialectPlugin::load:
/// the library opened for good with RTLD_GLOBAL, its entry point called,
/// the API version compared with MLIR_PLUGIN_API_VERSION, the callback
/// required), then calls its callback: a pass plugin registers its passes,
/// a dialect plugin fills a DialectRegistry, whose dialects are then loaded
/// into a context. The checks are MLIR's own, but the messages are whole
/// (MLIR's "entry point not found" message ends in the middle of a quote).
/// `names` (the registered passes) is updated.
json loadPlugin(const PluginRef &ref, std::vector<std::string> &names) {
  json result = {{"path", ref.path},
                 {"kind", ref.dialect ? "dialect" : "pass"},
                 {"loaded", false}};
  const char *entry = entryPointOf(ref);
  std::string error;
  llvm::sys::DynamicLibrary library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(ref.path.c_str(), &error);
  if (!library.isValid()) {
    result["error"] = "the library cannot be opened: " + error;
    return result;
  }
  void *address = library.getAddressOfSymbol(entry);
  if (!address) {
    result["error"] = std::string("the library does not export ") + entry +
                      ", the entry point MLIR tools look up in " +
                      (ref.dialect ? "a dialect" : "a pass") + " plugin";
    return result;
  }
  uint32_t apiVersion = 0;
  const char *name = nullptr, *version = nullptr;
  bool hasCallback = false;
  mlir::PassPluginLibraryInfo passInfo{};
  mlir::DialectPluginLibraryInfo dialectInfo{};
  if (ref.dialect) {
    dialectInfo =
        reinterpret_cast<decltype(&mlirGetDialectPluginInfo)>(address)();
    apiVersion = dialectInfo.apiVersion;
    name = dialectInfo.pluginName;
    version = dialectInfo.pluginVersion;
    hasCallback = dialectInfo.registerDialectRegistryCallbacks != nullptr;
  } else {
    passInfo = reinterpret_cast<decltype(&mlirGetPassPluginInfo)>(address)();
    apiVersion = passInfo.apiVersion;
    name = passInfo.pluginName;
    version = passInfo.pluginVersion;
    hasCallback = passInfo.registerPassRegistryCallbacks != nullptr;
  }
  result["api_version"] = apiVersion;
  if (apiVersion != MLIR_PLUGIN_API_VERSION) {
    result["error"] = std::string(entry) + " returned plugin API version " +
                      std::to_string(apiVersion) + ", but MLIR " +
                      LLVM_VERSION_STRING + " supports only version " +
                      std::to_string(MLIR_PLUGIN_API_VERSION) +
                      " (MLIR_PLUGIN_API_VERSION)";
    return result;
  }
  if (!hasCallback) {
    result["error"] = std::string(entry) + " returned a null " +
                      (ref.dialect ? "registerDialectRegistryCallbacks"
                                   : "registerPassRegistryCallbacks") +
                      " callback";
    return result;
  }
  json dialects = json::array();
  if (ref.dialect) {
    mlir::DialectRegistry registry;
    std::set<std::string> before;
    for (llvm::StringRef d : registry.getDialectNames())
      before.insert(d.str()); // the builtin dialect
    dialectInfo.registerDialectRegistryCallbacks(&registry);
    for (llvm::StringRef d : registry.getDialectNames())
      if (!before.count(d.str()))
        dialects.push_back(d.str());
    mlir::MLIRContext context(registry,
                              mlir::MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
  } else {
    passInfo.registerPassRegistryCallbacks();
  }
  std::vector<std::string> after = registeredNames();
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), names.begin(), names.end(),
                      std::back_inserter(added));
  names = std::move(after);
  result["loaded"] = true;
  result["name"] = name ? name : "";
  result["version"] = version ? version : "";
  result["passes"] = added;
  if (ref.dialect)
    result["dialects"] = dialects;
  return result;
}

struct Plan {
  std::vector<bool> skipPlugin;
  size_t firstFragment = 0;
};

[[noreturn]] void runWorker(const Request &req, const Plan &plan, int eventFd,
                            pid_t parent) {
  gEventFd = eventFd;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent)
    ::_exit(kExitFailure);
  struct rlimit limit = {kWorkerAddressSpace, kWorkerAddressSpace};
  ::setrlimit(RLIMIT_AS, &limit);
  ::signal(SIGPIPE, SIG_DFL);
  llvm::install_fatal_error_handler(onFatalError, nullptr);
  // stdout belongs to the report: what MLIR and plugins print goes to a
  // scratch file (help texts are read back from it).
  int out = ::memfd_create("ireepkg-mlir-check-stdout", MFD_CLOEXEC);
  if (out < 0 || ::dup2(out, STDOUT_FILENO) < 0)
    ::_exit(kExitFailure);

  emit({{"event", "begin"}, {"startup", true}});
  mlir::registerAllPasses();
  std::vector<std::string> names;
  bool namesKnown = false;
  emit({{"event", "ready"}});

  for (size_t i = 0; i < req.plugins.size(); ++i) {
    if (plan.skipPlugin[i])
      continue;
    if (!namesKnown) {
      names = registeredNames();
      namesKnown = true;
    }
    emit({{"event", "begin"}, {"plugin", i}});
    json result = loadPlugin(req.plugins[i], names);
    emit({{"event", "plugin"}, {"index", i}, {"result", result}});
  }

  for (size_t j = plan.firstFragment; j < req.fragments.size(); ++j) {
    emit({{"event", "begin"}, {"fragment", j}});
    json result = checkFragment(req.fragments[j], j, names, namesKnown);
    emit({{"event", "fragment"}, {"index", j}, {"result", result}});
  }
  emit({{"event", "done"}});
  ::_exit(0);
}

//===----------------------------------------------------------------------===//
// The main process: runs workers until every step has an outcome
//===----------------------------------------------------------------------===//

/// What a worker was doing when it last said so.
struct Step {
  enum class Kind { None, Startup, Plugin, Fragment } kind = Kind::None;
  size_t index = 0;
  std::optional<size_t> pass; ///< within a fragment
  off_t stderrStart = 0;
};

struct Run {
  bool done = false;
  bool timedOut = false;
  std::string fatal;
  int status = 0;
  Step step;
};

class Supervisor {
public:
  explicit Supervisor(const Request &req) : req_(req) {
    plan_.skipPlugin.assign(req.plugins.size(), false);
    plugins_.assign(req.plugins.size(), json());
    fragments_.assign(req.fragments.size(), json());
  }

  /// Runs workers until done; returns the exit status.
  int run() {
    // Each failed step is settled and skipped, so this ends.
    size_t attempts = req_.plugins.size() + req_.fragments.size() + 2;
    for (size_t attempt = 0; attempt < attempts; ++attempt) {
      std::optional<Run> r = runWorkerOnce();
      if (!r)
        return kExitFailure;
      if (r->done && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0)
        return report();
      if (!settle(*r))
        return kExitFailure;
    }
    std::fprintf(stderr, "%s: error: the worker kept failing\n", kTool);
    return kExitFailure;
  }

private:
  std::optional<Run> runWorkerOnce() {
    int events[2];
    if (::pipe2(events, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "%s: error: pipe: %s\n", kTool,
                   std::strerror(errno));
      return std::nullopt;
    }
    errFd_ = ::memfd_create("ireepkg-mlir-check-stderr", MFD_CLOEXEC);
    if (errFd_ < 0) {
      std::fprintf(stderr, "%s: error: memfd_create: %s\n", kTool,
                   std::strerror(errno));
      ::close(events[0]);
      ::close(events[1]);
      return std::nullopt;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t self = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "%s: error: fork: %s\n", kTool,
                   std::strerror(errno));
      ::close(events[0]);
      ::close(events[1]);
      ::close(errFd_);
      return std::nullopt;
    }
    if (pid == 0) {
      ::close(events[0]);
      if (::dup2(errFd_, STDERR_FILENO) < 0)
        ::_exit(kExitFailure);
      runWorker(req_, plan_, events[1], self);
    }
    ::close(events[1]);

    Run run;
    std::string buffer;
    using Clock = std::chrono::steady_clock;
    // Starting MLIR is not a plugin's doing: it gets at least a minute.
    auto stepDeadline = [&] {
      bool starting = run.step.kind == Step::Kind::None ||
                      run.step.kind == Step::Kind::Startup;
      int64_t ms = starting ? std::max<int64_t>(req_.stepTimeoutMs, 60000)
                            : req_.stepTimeoutMs;
      return Clock::now() + std::chrono::milliseconds(ms);
    };
    auto deadline = stepDeadline();
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - Clock::now())
                      .count();
      if (left <= 0) {
        run.timedOut = true;
        ::kill(pid, SIGKILL);
        break;
      }
      pollfd p = {events[0], POLLIN, 0};
      int ready =
          ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
      if (ready < 0 && errno != EINTR)
        break;
      if (ready <= 0)
        continue;
      char chunk[65536];
      ssize_t n = ::read(events[0], chunk, sizeof chunk);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        break; // the worker is gone
      buffer.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        handle(line, run);
        deadline = stepDeadline();
      }
      if (buffer.size() > (64u << 20)) {
        ::kill(pid, SIGKILL);
        break;
      }
    }
    ::close(events[0]);
    // Without "done" it may still run (a read error, output without end).
    if (!run.done)
      ::kill(pid, SIGKILL);
    while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
    }
    return run;
  }

  void handle(const std::string &line, Run &run) {
    try {
      handleEvent(line, run);
    } catch (const json::exception &) {
      // Not one of the worker's events (it writes only well-formed ones).
    }
  }

  void handleEvent(const std::string &line, Run &run) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object())
      return;
    std::string kind = e.value("event", "");
    if (kind == "begin") {
      Step s;
      s.stderrStart = ::lseek(errFd_, 0, SEEK_END);
      if (e.contains("startup")) {
        s.kind = Step::Kind::Startup;
      } else if (e.contains("plugin")) {
        s.kind = Step::Kind::Plugin;
        s.index = e["plugin"].get<size_t>();
      } else if (e.contains("fragment")) {
        s.kind = Step::Kind::Fragment;
        s.index = e["fragment"].get<size_t>();
        if (e.contains("pass"))
          s.pass = e["pass"].get<size_t>();
      }
      run.step = s;
    } else if (kind == "ready") {
      run.step = Step();
    } else if (kind == "plugin") {
      size_t i = e["index"].get<size_t>();
      if (i < plugins_.size())
        plugins_[i] = e["result"];
      run.step = Step();
    } else if (kind == "fragment") {
      size_t j = e["index"].get<size_t>();
      if (j < fragments_.size()) {
        fragments_[j] = e["result"];
        plan_.firstFragment = j + 1;
      }
      run.step = Step();
    } else if (kind == "fatal") {
      run.fatal = e.value("message", "");
    } else if (kind == "done") {
      run.done = true;
    }
  }

  /// How a worker's step ended, for messages: "crashed (SIGSEGV)".
  std::string howItEnded(const Run &r) const {
    std::string how;
    if (r.timedOut)
      how = "did not finish within " + std::to_string(req_.stepTimeoutMs) +
            " ms (stopped)";
    else if (!r.fatal.empty())
      how = "hit an LLVM fatal error: " + r.fatal;
    else if (WIFSIGNALED(r.status))
      how = "crashed (" + signalName(WTERMSIG(r.status)) + ")";
    else if (WIFEXITED(r.status))
      how = "ended the process (exit status " +
            std::to_string(WEXITSTATUS(r.status)) + ")";
    else
      how = "stopped unexpectedly";
    if (r.fatal.empty()) {
      std::string printed = tailOf(
          readRange(errFd_, r.step.stderrStart, ::lseek(errFd_, 0, SEEK_END)));
      if (!printed.empty())
        how += "; it printed: " + printed;
    }
    return how;
  }

  /// The plugin that registered pass `name`, if one did.
  std::optional<size_t> pluginOf(const std::string &name) const {
    for (size_t i = 0; i < plugins_.size(); ++i) {
      const json &p = plugins_[i];
      if (p.is_object() && p.contains("passes"))
        for (const json &n : p["passes"])
          if (n == name)
            return i;
    }
    return std::nullopt;
  }

  /// Records the failed step of a worker run and plans the next run.
  bool settle(const Run &r) {
    std::string how = howItEnded(r);
    ::close(errFd_);
    errFd_ = -1;
    switch (r.step.kind) {
    case Step::Kind::None:
    case Step::Kind::Startup:
      std::fprintf(stderr, "%s: error: MLIR %s while starting\n", kTool,
                   how.c_str());
      return false;
    case Step::Kind::Plugin: {
      size_t i = r.step.index;
      plugins_[i] = {{"path", req_.plugins[i].path},
                     {"kind", req_.plugins[i].dialect ? "dialect" : "pass"},
                     {"loaded", false},
                     {"error", "while it was loaded, the plugin " + how}};
      plan_.skipPlugin[i] = true;
      return true;
    }
    case Step::Kind::Fragment: {
      size_t j = r.step.index;
      const Fragment &f = req_.fragments[j];
      json error = json::object();
      json passes = json::array();
      for (size_t k = 0; k < f.passes.size(); ++k)
        passes.push_back({{"known", true}, {"errors", json::array()}});
      if (r.step.pass && *r.step.pass < f.passes.size()) {
        const std::string &name = f.passes[*r.step.pass].name;
        std::string message = "while adding pass " + inQuotes(name);
        if (auto p = pluginOf(name))
          message +=
              " (registered by plugin " + inQuotes(req_.plugins[*p].path) + ")";
        message += ", MLIR's pass pipeline parser " + how;
        json error = {{"message", message}};
        // A registered pipeline that adds a pass where it cannot run stops
        // MLIR with a fatal error rather than a message.
        if (r.fatal.find("did you intend to nest?") != std::string::npos)
          error["hint"] =
              "nest " + inQuotes(name) + " in the operation its passes run on";
        passes[*r.step.pass]["errors"].push_back(error);
        fragments_[j] = {{"passes", passes},
                         {"unknown", json::array()},
                         {"suggestions", json::object()},
                         {"errors", json::array()}};
      } else {
        fragments_[j] = {
            {"passes", passes},
            {"unknown", json::array()},
            {"suggestions", json::object()},
            {"errors", json::array({{{"message", "MLIR's pass pipeline "
                                                 "parser " +
                                                     how}}})}};
      }
      plan_.firstFragment = j + 1;
      return true;
    }
    }
    return false;
  }

  int report() {
    if (errFd_ >= 0)
      ::close(errFd_);
    json plugins = json::array();
    for (size_t i = 0; i < plugins_.size(); ++i)
      plugins.push_back(plugins_[i].is_null()
                            ? json{{"path", req_.plugins[i].path},
                                   {"kind", req_.plugins[i].dialect
                                                ? "dialect"
                                                : "pass"},
                                   {"loaded", false},
                                   {"error", "was not loaded"}}
                            : plugins_[i]);
    json out = {{"mlir_version", LLVM_VERSION_STRING},
                {"plugins", plugins},
                {"fragments", fragments_}};
    std::string text = jsonText(out) + "\n";
    return writeAll(STDOUT_FILENO, text) ? 0 : kExitFailure;
  }

  const Request &req_;
  Plan plan_;
  std::vector<json> plugins_;
  std::vector<json> fragments_;
  int errFd_ = -1;
};

} // namespace

int main(int argc, char **argv) {
  if (std::string refusal = ireepkg::privilegedRunReport("ireepkg-mlir-check");
      !refusal.empty())
    return std::fputs(refusal.c_str(), stderr), 1;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("%s (MLIR %s)\n", kTool, LLVM_VERSION_STRING);
      return 0;
    }
    if ((arg.size() > 1 && arg[0] == '-') || !path.empty()) {
      std::fprintf(stderr, "%s: error: unexpected argument '%s'\n%s", kTool,
                   arg.c_str(), kUsage);
      return kExitUsage;
    }
    path = arg;
  }
  std::string text;
  if (path.empty() || path == "-") {
    std::istreambuf_iterator<char> begin(std::cin), end;
    for (; begin != end && text.size() <= kMaxRequestBytes; ++begin)
      text += *begin;
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: error: cannot read '%s': %s\n", kTool,
                   path.c_str(), std::strerror(errno));
      return kExitUsage;
    }
    std::istreambuf_iterator<char> begin(in), end;
    for (; begin != end && text.size() <= kMaxRequestBytes; ++begin)
      text += *begin;
  }
  if (text.size() > kMaxRequestBytes) {
    std::fprintf(stderr, "%s: error: the request is larger than %zu bytes\n",
                 kTool, kMaxRequestBytes);
    return kExitUsage;
  }
  Request req;
  std::string problem = parseRequest(text, req);
  if (!problem.empty()) {
    std::fprintf(stderr, "%s: error: malformed request: %s\n", kTool,
                 problem.c_str());
    return kExitUsage;
  }
  ::signal(SIGPIPE, SIG_IGN);
  return Supervisor(req).run();
}
