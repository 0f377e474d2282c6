//===- compiler_integration/src/tuning_specs.cpp - Linking tuning specs ---===//
//
// See tuning_specs.h.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/tuning_specs.h"
#include "ireepkg/compiler_integration/compiler_config.h"
#include "ireepkg/manifest_schema/suggest.h"
#include "ireepkg/pkg/cache/cache.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg {

std::string CompileTarget::text() const {
  switch (kind) {
  case TuningTargetKind::Rocm:
    return name.empty() ? "ROCm" : name;
  case TuningTargetKind::AnyCpu:
  case TuningTargetKind::Cpu:
    return name.empty() ? "llvm-cpu" : "llvm-cpu (" + name + ")";
  default:
    return name;
  }
}

Expected<CompileTarget> parseCompileTarget(std::string_view text) {
  TuningTargetKind kind = tuningTargetKind(text);
  switch (kind) {
  case TuningTargetKind::Rocm:
  case TuningTargetKind::Cpu:
  case TuningTargetKind::Ignoring:
    return CompileTarget{kind, std::string(text)};
  case TuningTargetKind::AnyCpu:
    return CompileTarget{TuningTargetKind::Cpu, ""};
  case TuningTargetKind::Invalid:
    break;
  }
  return makeError(ErrorCode::Usage,
                   "\"" + std::string(text) + "\" is not a compile target",
                   Location{},
                   "targets are ROCm architectures (gfx942), llvm-cpu, a CPU "
                   "name (znver4), or cuda, vulkan-spirv, vmvx");
}

std::vector<CompileTarget>
compileTargetsOf(const std::vector<std::string> &args) {
  // The last value of each flag, or every value of the repeatable ones.
  std::vector<std::string> devices, backends;
  std::string rocm, cpu, localBackends;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a.size() < 3 || a[0] != '-')
      continue;
    std::string name = a.substr(a[1] == '-' ? 2 : 1);
    std::string value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < args.size()) {
      value = args[i + 1];
    }
    auto list = [&](std::vector<std::string> &into) {
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        std::string item = value.substr(start, comma - start);
        if (!item.empty())
          into.push_back(item);
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    };
    if (name == "iree-hal-target-device")
      list(devices);
    else if (name == "iree-hal-target-backends")
      list(backends);
    else if (name == "iree-rocm-target" || name == "iree-hip-target")
      rocm = value;
    else if (name == "iree-llvmcpu-target-cpu")
      cpu = value;
    else if (name == "iree-hal-local-target-device-backends")
      localBackends = value;
  }
  std::vector<CompileTarget> out;
  auto add = [&](TuningTargetKind kind, const std::string &n) {
    for (const CompileTarget &t : out)
      if (t.kind == kind && t.name == n)
        return;
    out.push_back({kind, n});
  };
  auto backend = [&](std::string b) {
    if (b == "llvm-cpu")
      add(TuningTargetKind::Cpu, cpu == "host" ? "" : cpu);
    else if (b == "rocm" || b == "hip" || b == "amdgpu")
      add(TuningTargetKind::Rocm, rocm);
    else if (tuningTargetKind(b) == TuningTargetKind::Ignoring)
      add(TuningTargetKind::Ignoring, b);
  };
  for (std::string d : devices) {
    // "hip", "hip[0]", "local://...", "#hal.device.target<...>": the name.
    size_t end = d.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_");
    d = d.substr(0, end);
    if (d == "local") {
      std::string lb = localBackends.empty() ? "llvm-cpu" : localBackends;
      size_t start = 0;
      while (start <= lb.size()) {
        size_t comma = lb.find(',', start);
        backend(lb.substr(start, comma - start));
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else {
      backend(d);
    }
  }
  for (const std::string &b : backends)
    backend(b);
  return out;
}

std::string tuningSpecThreadingWorkaround(const std::string &ireeVersion) {
  // IREE 3.13: threaded compiles with a tuning spec sometimes hang (a
  // worker re-locks a mutex in getOrLoadTransformLibraryModule, through a
  // parallel mlir::verify) or crash; single-threaded compiles do not. No
  // release with a fix is known, so every version from 3.13 on, and any
  // version that cannot be told, gets the workaround.
  static const char *const kAffected = ">=3.13.0";
  const std::string why =
      "IREE's threaded compiles with a tuning spec can hang or crash "
      "(getOrLoadTransformLibraryModule re-locks a mutex)";
  auto v = Version::parse(ireeVersion);
  if (!v)
    return why + "; the IREE version is not known";
  auto affected = Constraint::parse(kAffected);
  Version core = *v;
  core.prerelease.clear();
  if (affected && affected->matches(core))
    return why + " in IREE " + std::string(kAffected).substr(2) + " and later";
  return "";
}

TuningSpecSelection
selectTuningSpecs(const std::vector<ActivatedPackage> &packages,
                  const std::vector<CompileTarget> &targets,
                  const std::string &chosen, const std::string &ireeVersion) {
  TuningSpecSelection sel;
  auto note = [&](const std::string &pkg, const std::string &msg,
                  const std::string &hint = {}) {
    sel.notes.push_back(Diagnostic{Severity::Warning,
                                   Location{"", 0, 0, "", pkg, ""}, msg, hint});
  };
  std::optional<Version> version;
  if (auto v = Version::parse(ireeVersion)) {
    version = *v;
    version->prerelease.clear();
  }
  std::vector<std::string> ignoring, untargeted;
  for (const CompileTarget &t : targets)
    if (t.kind == TuningTargetKind::Ignoring)
      ignoring.push_back(t.name);
  std::vector<std::string> ignoredBy;
  for (const ActivatedPackage &p : packages) {
    for (const Hook &h : p.manifest->hooks) {
      if (h.point != HookPoint::TuningSpec)
        continue;
      if (!chosen.empty() && chosen != p.name)
        continue;
      if (h.iree && version && !h.iree->matches(*version)) {
        note(p.name, "its tuning spec is for IREE " + h.iree->text() +
                         ", not " + ireeVersion + ", and is left out");
        continue;
      }
      size_t before = sel.specs.size();
      auto take = [&](const std::string &target, const std::string &rel) {
        for (const TuningSpecInput &s : sel.specs)
          if (s.package == p.name && s.rel == rel)
            return;
        sel.specs.push_back({p.name, target, rel, p.dir + "/" + rel});
      };
      if (!h.file.empty()) {
        take("", h.file);
      } else {
        for (const CompileTarget &t : targets) {
          auto find = [&](const std::string &key) {
            auto it = h.paths.find(key);
            if (it != h.paths.end())
              take(key, it->second);
            return it != h.paths.end();
          };
          if (t.kind == TuningTargetKind::Rocm && !t.name.empty())
            find(t.name);
          else if (t.kind == TuningTargetKind::Cpu &&
                   (t.name.empty() || !find(t.name)))
            find("llvm-cpu");
        }
        if (targets.empty()) {
          std::string keys;
          for (const auto &[key, rel] : h.paths)
            keys += (keys.empty() ? "" : ", ") + key;
          untargeted.push_back(p.name + " (" + keys + ")");
        }
      }
      if (!ignoring.empty() && (sel.specs.size() > before || h.file.empty()))
        ignoredBy.push_back(p.name);
    }
  }
  if (!untargeted.empty()) {
    std::string list;
    for (const std::string &u : untargeted)
      list += (list.empty() ? "" : "; ") + u;
    note("",
         "tuning specs per target are left out because the compile's "
         "target is not known: " +
             list,
         "give the target: `ireepkg flags compiler --target gfx942`; `ireepkg "
         "exec` reads it from the compile's own --iree-hal-target-device= "
         "and --iree-rocm-target= flags");
  }
  if (!ignoredBy.empty()) {
    std::string who, what;
    for (const std::string &n : ignoredBy)
      who += (who.empty() ? "" : ", ") + n;
    for (const std::string &n : ignoring)
      what += (what.empty() ? "" : ", ") + n;
    note("",
         "tuning specs of " + who + " have no effect on the " + what +
             " target: IREE applies tuning specs to llvm-cpu and ROCm "
             "compiles only, and ignores them for " +
             what,
         "compile for llvm-cpu or a ROCm architecture to use them");
  }
  return sel;
}

//===----------------------------------------------------------------------===//
// Linking
//===----------------------------------------------------------------------===//

namespace {

constexpr double kIreeOptTimeoutSeconds = 300;

std::string describe(const TuningSpecInput &s) {
  return "tuning spec " + s.rel +
         (s.target.empty() ? std::string() : " (for " + s.target + ")");
}

Expected<ChildResult> runIreeOpt(const std::vector<std::string> &argv) {
  ChildOptions options;
  options.argv = argv;
  options.timeoutSeconds = kIreeOptTimeoutSeconds;
  options.ownProcessGroup = true;
  options.maxErr = 4u << 20;
  options.hintIfNotStarted =
      "install IREE's compiler (pip install iree-base-compiler): linking "
      "tuning specs uses its iree-opt";
  return runChild(options);
}

/// iree-opt's failure as the message's tail: how it ended and its output,
/// whole.
std::string failureText(const ChildResult &r) {
  std::string how =
      r.timedOut ? "did not finish within " +
                       std::to_string(int(kIreeOptTimeoutSeconds)) + " seconds"
      : r.exited ? "exited with " + std::to_string(r.exitCode)
                 : "was killed by signal " + std::to_string(r.signal);
  std::string out = r.err;
  if (!r.out.empty() && r.exitCode != 0)
    out = r.out + out;
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return "iree-opt " + how + (out.empty() ? std::string() : ":\n" + out);
}

/// `module @x attributes ...` / `module {` with the module's name replaced
/// by `name`; nullopt when the text does not start with a module.
std::optional<std::string> renameTopModule(const std::string &text,
                                           const std::string &name) {
  size_t at = 0;
  while (at < text.size()) {
    size_t eol = text.find('\n', at);
    std::string_view line(text.data() + at,
                          (eol == std::string::npos ? text.size() : eol) - at);
    if (line.starts_with("module")) {
      size_t rest = at + 6;
      if (rest < text.size() && text[rest] != ' ' && text[rest] != '{')
        return std::nullopt;
      size_t p = text.find_first_not_of(' ', rest);
      if (p != std::string::npos && text[p] == '@')
        rest = text.find_first_of(" {", p);
      return text.substr(0, at) + "module @" + name + text.substr(rest);
    }
    if (!line.empty() && !line.starts_with("//"))
      return std::nullopt;
    if (eol == std::string::npos)
      break;
    at = eol + 1;
  }
  return std::nullopt;
}

std::string symbolPart(const std::string &s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

} // namespace

Expected<LinkedTuningSpec>
linkTuningSpecs(const std::vector<TuningSpecInput> &specs,
                const std::string &ireeOpt) {
  auto located = [](const TuningSpecInput &s) {
    return Location{s.path, 0, 0, "", s.package, ""};
  };
  // The key: iree-opt as a file, and each spec's bytes, in order.
  struct stat st;
  if (::stat(ireeOpt.c_str(), &st) != 0)
    return makeError(ErrorCode::NotFound,
                     "cannot find iree-opt (" + ireeOpt +
                         ") to link the tuning specs of the active packages",
                     Location{},
                     "install IREE's compiler (pip install "
                     "iree-base-compiler), whose iree-opt is installed beside "
                     "iree-compile");
  std::string key =
      "ireepkg tuning-spec link 1\n" + fsutil::absolutePath(ireeOpt) + " " +
      std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
      "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
  for (const TuningSpecInput &s : specs) {
    auto bytes = fsutil::readFile(s.path);
    if (!bytes)
      return makeError(ErrorCode::NotFound,
                       "cannot read " + describe(s) + ": " +
                           bytes.error().message,
                       located(s), "reinstall the package");
    key += s.package + " " + s.target + " " + s.rel + " " +
           Sha256::hex(*bytes) + "\n";
  }
  auto cache = PackageCache::openDefault();
  if (!cache)
    return makeError(ErrorCode::NotFound,
                     "no cache directory to keep the linked tuning spec in",
                     Location{},
                     "set IREEPKG_CACHE_DIR to a directory of your own");
  std::string dir = cache->root() + "/tuning";
  std::string out = dir + "/" + Sha256::hex(key) + ".mlir";
  if (::lstat(out.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      fsutil::trustedCacheFile(out, st))
    return LinkedTuningSpec{out, true};

  // Each spec printed with its attributes in place, under a name of its
  // own, nested in one module; line numbers remember whose lines are whose.
  std::string nested = "module @ireepkg_tuning_specs attributes "
                       "{transform.with_named_sequence} {\n";
  std::vector<std::pair<size_t, size_t>> lines; // first, last (1-based)
  std::vector<size_t> nestedEnds;               // where each spec's text ends
  size_t line = 2;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TuningSpecInput &s = specs[i];
    auto r = runIreeOpt({ireeOpt, "--mlir-print-local-scope", s.path});
    if (!r)
      return Unexpected(r.error());
    if (!r->exited || r->exitCode != 0)
      return makeError(ErrorCode::Invalid,
                       describe(s) + " does not parse: " + failureText(*r),
                       located(s),
                       "the spec must be an MLIR module for this IREE "
                       "version's transform dialect; ask the package's "
                       "author, or remove the package");
    std::string name = "ireepkg_" + std::to_string(i) + "_" +
                       symbolPart(s.package) +
                       (s.target.empty() ? "" : "_" + symbolPart(s.target));
    auto renamed = renameTopModule(r->out, name);
    if (!renamed)
      return makeError(ErrorCode::Invalid, describe(s) + " is not one module",
                       located(s),
                       "a tuning spec is a module with "
                       "transform.with_named_sequence and "
                       "iree_codegen.tuning_spec_with_default_entrypoint");
    if (renamed->empty() || renamed->back() != '\n')
      renamed->push_back('\n');
    size_t count = std::count(renamed->begin(), renamed->end(), '\n');
    lines.emplace_back(line, line + count - 1);
    line += count;
    nested += *renamed;
    nestedEnds.push_back(nested.size());
  }

  if (::mkdir(cache->root().c_str(), 0755) != 0 && errno != EEXIST)
    return Unexpected(fsutil::ioError("cannot create", cache->root(), errno));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Unexpected(fsutil::ioError("cannot create", dir, errno));
  if (!fsutil::trustedCacheDirectory(dir))
    return makeError(ErrorCode::Io,
                     "the cache directory " + dir +
                         " may be written by another user, so a linked "
                         "tuning spec kept there cannot be trusted",
                     Location{},
                     "set IREEPKG_CACHE_DIR to a directory of your own");
  // Links the first `count` specs; the output, or why not.
  auto link = [&](size_t count) -> Expected<ChildResult> {
    std::string text = nested.substr(0, nestedEnds[count - 1]) + "}\n";
    std::string input = dir + "/.nested-" + Sha256::hex(key) + "." +
                        std::to_string(::getpid()) + ".mlir";
    if (Status s = fsutil::writeFileAtomic(input, text); !s)
      return Unexpected(s.error());
    auto r = runIreeOpt({ireeOpt, "--iree-codegen-link-tuning-specs", input});
    ::unlink(input.c_str());
    if (r && !r->err.empty()) {
      // iree-opt names the temporary file: name the spec instead.
      std::string shown;
      size_t pos = 0;
      for (size_t at; (at = r->err.find(input, pos)) != std::string::npos;
           pos = at + input.size())
        shown += r->err.substr(pos, at - pos) + "<linked tuning specs>";
      r->err = shown + r->err.substr(pos);
    }
    return r;
  };
  auto r = link(specs.size());
  if (!r)
    return Unexpected(r.error());
  if (!r->exited || r->exitCode != 0) {
    // Whose spec: the one holding the line of iree-opt's first error, else
    // the first whose addition to the specs before it fails to link.
    size_t culprit = specs.size();
    const std::string marker = "<linked tuning specs>:";
    if (size_t at = r->err.find(marker); at != std::string::npos) {
      size_t errLine =
          std::strtoul(r->err.c_str() + at + marker.size(), nullptr, 10);
      for (size_t i = 0; i < specs.size(); ++i)
        if (errLine >= lines[i].first && errLine <= lines[i].second)
          culprit = i;
    }
    ChildResult shown = *r;
    if (culprit == specs.size()) {
      culprit = specs.size() - 1;
      for (size_t n = 2; n < specs.size(); ++n) {
        auto partial = link(n);
        if (partial && (!partial->exited || partial->exitCode != 0)) {
          culprit = n - 1;
          shown = *partial;
          break;
        }
      }
    }
    std::string before;
    for (size_t i = 0; i < culprit; ++i)
      before +=
          (before.empty() ? "" : ", ") + specs[i].package + " " + specs[i].rel;
    return makeError(ErrorCode::Invalid,
                     describe(specs[culprit]) + " does not link" +
                         (before.empty()
                              ? std::string()
                              : " with the specs before it (" + before + ")") +
                         ": " + failureText(shown),
                     located(specs[culprit]),
                     "each spec must be a module with "
                     "transform.with_named_sequence and "
                     "iree_codegen.tuning_spec_with_default_entrypoint "
                     "holding one @__kernel_config that consumes its "
                     "argument; ask the package's author, or remove the "
                     "package");
  }
  if (Status s = fsutil::writeFileAtomic(out, r->out); !s)
    return Unexpected(s.error());
  return LinkedTuningSpec{out, false};
}

Status addTuningSpecFlags(const std::vector<ActivatedPackage> &packages,
                          const CompilerConfigRequest &request,
                          CompilerConfig &config) {
  if (request.tool == CompilerTool::MlirOpt)
    return ok();
  auto note = [&](const std::string &msg) {
    config.notes.push_back(
        Diagnostic{Severity::Warning, Location{}, msg, std::string()});
  };
  bool any = false;
  for (const ActivatedPackage &p : packages)
    for (const Hook &h : p.manifest->hooks)
      any |= h.point == HookPoint::TuningSpec;
  if (!any)
    return ok();
  if (request.deferDynamic) {
    note("tuning specs are linked for each compile's target by `ireepkg "
         "exec` and `ireepkg flags compiler`, not kept in compiler.flags");
    return ok();
  }
  auto chosen =
      request.choose.find(std::string(hookPointName(HookPoint::TuningSpec)));
  TuningSpecSelection sel = selectTuningSpecs(
      packages, request.targets,
      chosen == request.choose.end() ? std::string() : chosen->second,
      request.compiler.version);
  for (Diagnostic &d : sel.notes)
    config.notes.push_back(std::move(d));
  if (sel.specs.empty())
    return ok();
  CompilerFlag flag{"iree-codegen-tuning-spec-path", sel.specs[0].path,
                    sel.specs[0].package, false, true};
  if (sel.specs.size() > 1) {
    // The iree-opt beside the compiler (or beside what a link to it
    // points at): the IREE in use.
    std::string ireeOpt = request.ireeOpt;
    auto beside = [](const std::string &tool) {
      return tool.substr(0, tool.rfind('/') + 1) + "iree-opt";
    };
    if (ireeOpt.empty() && !request.compiler.path.empty()) {
      ireeOpt = beside(request.compiler.path);
      if (::access(ireeOpt.c_str(), X_OK) != 0)
        if (char *real = ::realpath(request.compiler.path.c_str(), nullptr)) {
          ireeOpt = beside(real);
          std::free(real);
        }
    }
    std::string who;
    for (const TuningSpecInput &s : sel.specs)
      who += (who.empty() ? "" : ", ") + s.package + " " + s.rel;
    if (ireeOpt.empty())
      return makeError(ErrorCode::NotFound,
                       "the tuning specs of " + who +
                           " must be linked into one, which needs IREE's "
                           "iree-opt, and no IREE compiler was found",
                       Location{},
                       "install IREE's compiler (pip install "
                       "iree-base-compiler) or activate its virtual "
                       "environment");
    auto linked = linkTuningSpecs(sel.specs, ireeOpt);
    if (!linked)
      return Unexpected(linked.error());
    flag.value = linked->path;
    flag.package = "";
  }
  config.flags.push_back(flag);
  std::string why = tuningSpecThreadingWorkaround(request.compiler.version);
  if (!why.empty()) {
    // An MLIR context option: the embedding API sets it only globally.
    config.flags.push_back(
        CompilerFlag{"mlir-disable-threading", "true", "", true, true});
    note("adding --mlir-disable-threading because a tuning spec is active: " +
         why);
  }
  return ok();
}

} // namespace ireepkg
