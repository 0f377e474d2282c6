//===- output.cpp - What the CLI prints ----------------------------------===//
#include "output.h"

#include "cli_config.h"

#include "ireepkg/manifest_schema/environment.h"
#include "ireepkg/pkg/iree_version.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <set>
#include <unistd.h>

namespace ireepkg::cli {

GlobalOptions &globalOptions() {
  static GlobalOptions options;
  return options;
}

//===----------------------------------------------------------------------===//
// Colour
//===----------------------------------------------------------------------===//

void resolveColor(const std::optional<std::string> &flag,
                  const std::optional<std::string> &configured,
                  const std::string &configuredWhere) {
  GlobalOptions &g = globalOptions();
  auto mode = [](const std::string &v) {
    return v == "always" ? ColorMode::Always
           : v == "never" ? ColorMode::Never
                          : ColorMode::Auto;
  };
  auto set = [](const char *name) {
    const char *v = environmentOverride(name);
    return v && *v && std::string(v) != "0";
  };
  if (flag) {
    g.color = mode(*flag);
    g.colorSource = "--color";
  } else if (set("FORCE_COLOR")) {
    g.color = ColorMode::Always;
    g.colorSource = "FORCE_COLOR";
  } else if (set("CLICOLOR_FORCE")) {
    g.color = ColorMode::Always;
    g.colorSource = "CLICOLOR_FORCE";
  } else if (const char *v = environmentOverride("NO_COLOR"); v && *v) {
    g.color = ColorMode::Never;
    g.colorSource = "NO_COLOR";
  } else if (configured) {
    g.color = mode(*configured);
    g.colorSource = configuredWhere;
  } else {
    g.color = ColorMode::Auto;
    g.colorSource = "default";
  }
}

bool colorEnabled(OutStream stream) {
  switch (globalOptions().color) {
  case ColorMode::Always:
    return true;
  case ColorMode::Never:
    return false;
  case ColorMode::Auto:
    break;
  }
  if (::isatty(stream == OutStream::Out ? STDOUT_FILENO : STDERR_FILENO) != 1)
    return false;
  const char *term = std::getenv("TERM");
  return !(term && std::string(term) == "dumb");
}

std::string paint(Style style, const std::string &text, OutStream stream) {
  if (text.empty() || !colorEnabled(stream))
    return text;
  const char *code = "";
  switch (style) {
  case Style::Error:
    code = "1;31"; // bold red
    break;
  case Style::Warning:
    code = "1;33"; // bold yellow
    break;
  case Style::Hint:
    code = "36"; // cyan
    break;
  case Style::Note:
    code = "1;34"; // bold blue
    break;
  case Style::Added:
    code = "32"; // green
    break;
  case Style::Removed:
    code = "31"; // red
    break;
  case Style::Changed:
    code = "33"; // yellow
    break;
  case Style::Bold:
    code = "1";
    break;
  }
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

void verboseLine(int level, const std::string &message) {
  const GlobalOptions &g = globalOptions();
  if (g.quiet || g.verbose < level)
    return;
  std::fprintf(stderr, "%s %s\n", paint(Style::Note, "ireepkg:", OutStream::Err).c_str(),
               message.c_str());
}

//===----------------------------------------------------------------------===//
// Errors and warnings
//===----------------------------------------------------------------------===//

namespace {
std::string errorLabel() {
  return "ireepkg: " + paint(Style::Error, "error:", OutStream::Err);
}
std::string hintLabel() {
  return "  " + paint(Style::Hint, "hint:", OutStream::Err);
}
} // namespace

void printError(const std::string &message, const std::string &hint) {
  std::fprintf(stderr, "%s %s\n", errorLabel().c_str(), message.c_str());
  if (!hint.empty())
    std::fprintf(stderr, "%s %s\n", hintLabel().c_str(), hint.c_str());
}

void printWarning(const std::string &message) {
  if (globalOptions().quiet)
    return;
  std::fprintf(stderr, "ireepkg: %s %s\n",
               paint(Style::Warning, "warning:", OutStream::Err).c_str(),
               message.c_str());
}

void printError(const Error &error) {
  if (error.diagnostics.empty()) {
    // A message of several lines (the resolver's explanation) keeps its
    // lines; each is escaped on its own.
    std::string first = error.message, rest;
    if (size_t nl = first.find('\n'); nl != std::string::npos) {
      rest = first.substr(nl + 1);
      first.resize(nl);
    }
    Diagnostic d{Severity::Error, error.where, first, error.hint};
    std::fprintf(stderr, "%s %s\n", errorLabel().c_str(), d.format().c_str());
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      Diagnostic line{Severity::Error, {}, rest.substr(0, nl), ""};
      std::fprintf(stderr, "  %s\n", line.format().c_str());
      rest = nl == std::string::npos ? "" : rest.substr(nl + 1);
    }
    if (!error.hint.empty())
      std::fprintf(stderr, "%s %s\n", hintLabel().c_str(), error.hint.c_str());
    return;
  }
  for (const Diagnostic &d : error.diagnostics) {
    if (d.severity == Severity::Error)
      std::fprintf(stderr, "%s %s\n", errorLabel().c_str(), d.format().c_str());
    else
      std::fprintf(stderr, "ireepkg: %s\n", d.format().c_str());
    if (!d.hint.empty())
      std::fprintf(stderr, "%s %s\n", hintLabel().c_str(), d.hint.c_str());
  }
  if (!error.hint.empty())
    std::fprintf(stderr, "%s %s\n", hintLabel().c_str(), error.hint.c_str());
}

CliReporter::CliReporter(bool quiet)
    : quiet_(quiet || globalOptions().quiet),
      tty_(::isatty(STDERR_FILENO) == 1), board_(stderr, STDERR_FILENO) {
  state_.commandStart = monotonicSeconds();
}

void CliReporter::detail(int level, const std::string &message) {
  if (globalOptions().quiet || globalOptions().verbose < level)
    return;
  clearProgress();
  verboseLine(level, message);
}

CliReporter::~CliReporter() { clearProgress(); }

void CliReporter::waitingForLock(const std::string &prefix,
                                 const std::string &holder) {
  clearProgress();
  std::fprintf(stderr,
               "ireepkg: waiting for %s to finish with prefix %s ...\n",
               holder.c_str(), prefix.c_str());
}

void CliReporter::recovered(const std::string &prefix,
                            const std::string &what) {
  clearProgress();
  std::fprintf(stderr, "ireepkg: %s %s in %s\n",
               paint(Style::Note, "note:", OutStream::Err).c_str(), what.c_str(),
               prefix.c_str());
}

void CliReporter::warning(const Diagnostic &d) {
  if (quiet_)
    return;
  clearProgress();
  std::string text = d.format();
  const std::string w = "warning: ";
  if (size_t pos = text.find(w); pos != std::string::npos)
    text.erase(pos, w.size());
  std::fprintf(stderr, "ireepkg: %s %s\n",
               paint(Style::Warning, "warning:", OutStream::Err).c_str(),
               text.c_str());
  if (!d.hint.empty())
    std::fprintf(stderr, "%s %s\n", hintLabel().c_str(), d.hint.c_str());
}

namespace {
int gSetupFailure = kExitFailure;
}
int setupFailure() { return gSetupFailure; }
void setSetupFailure(int code) { gSetupFailure = code; }

std::optional<PrefixLocation> choosePrefix(const ParsedArgs &args) {
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) {
    printError("cannot read the current directory");
    setSetupFailure(kExitFailure);
    return std::nullopt;
  }
  auto loc = locatePrefix(args.value("prefix"), cwd);
  if (!loc) {
    printError(loc.error());
    setSetupFailure(loc.error().code == ErrorCode::Usage ? kExitUsage
                                                         : kExitFailure);
    return std::nullopt;
  }
  // config.toml's prefix: below --prefix, IREEPKG_PREFIX and the project.
  if (loc->reason == "XDG_DATA_HOME" || loc->reason == "default")
    if (const config::Setting *p = configSetting("prefix")) {
      auto configured = locatePrefix(p->value, cwd);
      if (!configured) {
        printError(configured.error());
        setSetupFailure(kExitFailure);
        return std::nullopt;
      }
      loc = std::move(configured);
      loc->reason = settingWhere(*p);
    }
  verboseLine(1, "prefix: " + loc->path + " (from " + loc->reason + ")");
  return *loc;
}

int printFailure(const Error &e, bool json);

std::optional<PrefixState> readPrefixState(const ParsedArgs &args, bool json,
                                           int &exitCode) {
  auto prefix = choosePrefix(args);
  if (!prefix) {
    exitCode = setupFailure();
    return std::nullopt;
  }
  CliReporter reporter(json);
  auto state = readInstalledState(prefix->path, reporter);
  if (!state) {
    exitCode = printFailure(state.error(), json);
    return std::nullopt;
  }
  return PrefixState{std::move(*prefix), std::move(*state)};
}

bool lockOptions(const ParsedArgs &args, LockOptions &out) {
  auto v = args.value("lock-timeout");
  if (!v)
    return true;
  char *end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end || d < 0 || d > 86400 * 7) {
    printError("--lock-timeout takes a number of seconds, not '" + *v + "'");
    return false;
  }
  out.timeoutSeconds = d;
  return true;
}

bool isExecutableFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

FoundTool findTool(const std::string &name) {
  LocatedTool t = locateTool(name);
  return FoundTool{t.path, t.source};
}

std::string shadowedImportsText(const std::vector<ShadowedImport> &imports) {
  std::string out;
  auto who = [](const RuntimePluginRef &r) {
    return r.package + " (" + r.plugin + ")";
  };
  for (const ShadowedImport &s : imports) {
    std::string others;
    for (const RuntimePluginRef &r : s.shadowed)
      others += (others.empty() ? "" : ", ") + who(r);
    out += "import " + s.import + ": IREE uses " + who(s.used) +
           ", activated last; shadowed: " + others + "\n";
  }
  return out;
}

nlohmann::json
shadowedImportsToJson(const std::vector<ShadowedImport> &imports) {
  nlohmann::json out = nlohmann::json::array();
  auto ref = [](const RuntimePluginRef &r) {
    return nlohmann::json{{"package", r.package}, {"plugin", r.plugin}};
  };
  for (const ShadowedImport &s : imports) {
    nlohmann::json shadowed = nlohmann::json::array();
    for (const RuntimePluginRef &r : s.shadowed)
      shadowed.push_back(ref(r));
    out.push_back(
        {{"import", s.import}, {"used", ref(s.used)}, {"shadowed", shadowed}});
  }
  return out;
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B",
                  static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

nlohmann::json diagnosticToJson(const Diagnostic &d) {
  nlohmann::json j = {
      {"severity", d.severity == Severity::Error ? "error" : "warning"},
      {"message", d.message}};
  if (!d.where.file.empty())
    j["file"] = d.where.file;
  if (d.where.line) {
    j["line"] = d.where.line;
    j["column"] = d.where.column;
  }
  if (!d.where.pointer.empty())
    j["pointer"] = d.where.pointer;
  if (!d.where.package.empty())
    j["package"] = d.where.package;
  if (!d.where.member.empty())
    j["member"] = d.where.member;
  if (!d.hint.empty())
    j["hint"] = d.hint;
  return j;
}

nlohmann::json errorToJson(const Error &e) {
  nlohmann::json j = {{"code", errorCodeName(e.code)}, {"message", e.message}};
  nlohmann::json diags = nlohmann::json::array();
  if (e.diagnostics.empty())
    diags.push_back(
        diagnosticToJson(Diagnostic{Severity::Error, e.where, e.message, e.hint}));
  for (const Diagnostic &d : e.diagnostics)
    diags.push_back(diagnosticToJson(d));
  j["diagnostics"] = diags;
  if (!e.hint.empty())
    j["hint"] = e.hint;
  return j;
}

nlohmann::json manifestToJson(const Manifest &m) {
  nlohmann::json j = {{"name", m.name}, {"version", m.version.str()}};
  if (!m.summary.empty())
    j["summary"] = m.summary;
  if (!m.license.empty())
    j["license"] = m.license;
  if (m.requiresIree)
    j["requires"] = {{"iree", m.requiresIree->text()}};
  nlohmann::json deps = nlohmann::json::object();
  for (const auto &[n, c] : m.dependencies)
    deps[n] = c.text();
  j["dependencies"] = deps;
  std::set<std::string> platforms;
  nlohmann::json compiler = nlohmann::json::array();
  for (const CompilerPlugin &p : m.compilerPlugins) {
    nlohmann::json o = {{"id", p.id},
                        {"kind", std::string(compilerPluginKindName(p.kind))}};
    if (!p.entryPoint.empty())
      o["entry_point"] = p.entryPoint;
    nlohmann::json lib = nlohmann::json::object();
    for (const auto &[k, v] : p.library) {
      lib[k] = v;
      platforms.insert(k);
    }
    if (!p.library.empty())
      o["library"] = lib;
    nlohmann::json opts = nlohmann::json::object();
    for (const auto &[flag, schema] : p.options)
      opts[flag] = schema;
    o["options"] = opts;
    compiler.push_back(o);
  }
  j["compiler_plugins"] = compiler;
  nlohmann::json hooks = nlohmann::json::array();
  for (const Hook &h : m.hooks) {
    nlohmann::json o = {{"point", std::string(hookPointName(h.point))}};
    if (!h.pipeline.empty())
      o["pipeline"] = h.pipeline;
    if (!h.tool.empty())
      o["tool"] = h.tool;
    if (!h.file.empty())
      o["file"] = h.file;
    if (!h.sequence.empty())
      o["sequence"] = h.sequence;
    if (!h.value.empty())
      o["value"] = h.value;
    if (!h.paths.empty())
      o["path"] = h.paths;
    hooks.push_back(o);
  }
  j["hooks"] = hooks;
  nlohmann::json runtime = nlohmann::json::array();
  for (const RuntimePlugin &p : m.runtimePlugins) {
    for (const auto &[k, v] : p.library)
      platforms.insert(k);
    runtime.push_back({{"name", p.name},
                       {"format", std::string(runtimeFormatName(p.format))},
                       {"library", p.library},
                       {"imports", p.imports},
                       {"parameters", p.parameters}});
  }
  j["runtime_plugins"] = runtime;
  j["platforms"] = platforms.empty() ? nlohmann::json("any")
                                     : nlohmann::json(platforms);
  return j;
}

std::string describeManifest(const Manifest &m, const std::string &in) {
  std::string out;
  if (!m.summary.empty())
    out += in + "summary: " + m.summary + "\n";
  if (!m.license.empty())
    out += in + "license: " + m.license + "\n";
  if (m.requiresIree)
    out += in + "requires: iree " + m.requiresIree->text() + "\n";
  if (!m.dependencies.empty()) {
    out += in + "dependencies:";
    for (const auto &[n, c] : m.dependencies)
      out += " " + n + " " + c.text() + ";";
    out.pop_back();
    out += "\n";
  }
  for (const CompilerPlugin &p : m.compilerPlugins) {
    out += in + "compiler plugin " + p.id + " (" +
           std::string(compilerPluginKindName(p.kind)) + ")";
    for (const auto &[k, v] : p.library)
      out += "\n" + in + "    " + k + ": " + v;
    out += "\n";
    for (const auto &[flag, schema] : p.options) {
      out += in + "    option --" + flag + ": " + schema.value("type", "?");
      if (schema.contains("default"))
        out += " (default " + schema["default"].dump() + ")";
      if (schema.contains("description"))
        out += " - " + schema["description"].get<std::string>();
      out += "\n";
    }
  }
  for (const Hook &h : m.hooks) {
    out += in + "hook " + std::string(hookPointName(h.point)) + ": ";
    if (!h.pipeline.empty())
      out += h.pipeline;
    else if (!h.tool.empty())
      out += h.tool;
    else if (!h.file.empty())
      out += h.file + (h.sequence.empty() ? "" : "@" + h.sequence);
    else if (!h.value.empty())
      out += h.value;
    else
      for (const auto &[a, d] : h.paths)
        out += a + "=" + d + " ";
    out += "\n";
  }
  for (const RuntimePlugin &p : m.runtimePlugins) {
    out += in + "runtime plugin " + p.name + " (" +
           std::string(runtimeFormatName(p.format)) + ")";
    if (!p.imports.empty()) {
      out += ", imports:";
      for (const std::string &i : p.imports)
        out += " " + i;
    }
    out += "\n";
    for (const auto &[k, v] : p.library)
      out += in + "    " + k + ": " + v + "\n";
  }
  return out;
}

} // namespace ireepkg::cli
