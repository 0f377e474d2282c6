//===- test_state.cpp - A prefix's state files and the StateWriter API ----===//
//
// activationOrder, generateState with the integrations' writers (main.cpp
// registers them, as the CLI does): activation.json and runtime.flags for
// embedded-ELF and system-library plugins; and a StateWriter of the test's
// own, registered here, whose file a transaction writes and verify checks,
// and removes once the writer stops writing it; verify of a prefix whose
// state an older ireepkg wrote.
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/compiler_integration/compiler_state.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/manifest_schema/json_document.h"
#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/runtime_integration/runtime_state.h"
#include "ireepkg/pkg/prefix/install.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

InstalledPackage pkg(const std::string &name,
                     std::vector<std::string> deps = {}) {
  InstalledPackage p;
  p.name = name;
  p.version = *Version::parse("1.0.0");
  p.dependencies = std::move(deps);
  return p;
}

std::vector<std::string> ordered(const std::vector<InstalledPackage> &ps,
                                 const std::vector<std::string> &preferred) {
  std::vector<std::string> out;
  for (size_t i : activationOrder(ps, preferred))
    out.push_back(ps[i].name);
  return out;
}

Manifest manifestOf(const nlohmann::ordered_json &j) {
  auto doc = JsonDocument::parse(j.dump(), "ireeplugin.json");
  REQUIRE_MESSAGE(doc.has_value(), whyNot(doc));
  DiagnosticList diags;
  Manifest m = parseManifest(*doc, ParseOptions{}, diags);
  REQUIRE_MESSAGE(!diags.hasErrors(),
                  (diags.hasErrors() ? diags.items().front().format() : ""));
  return m;
}

/// A package with an embedded-ELF plugin (one file per architecture).
nlohmann::ordered_json kernelsManifest() {
  return {{"schema_version", 1},
          {"name", "kernels"},
          {"version", "1.0.0"},
          {"summary", "embedded-ELF kernels"},
          {"runtime",
           {{"plugins",
             {{{"name", "k"},
               {"format", "embedded-elf"},
               {"library",
                {{"x86_64", "runtime/k.x86_64.so"},
                 {"aarch64", "runtime/k.aarch64.so"}}},
               {"imports", {"k_workgroup"}}}}}}}};
}

/// A package with a system-library plugin for linux-x86_64 only, which
/// depends on "kernels".
nlohmann::ordered_json systemManifest() {
  return {{"schema_version", 1},
          {"name", "sys"},
          {"version", "1.0.0"},
          {"summary", "a system-library plugin"},
          {"dependencies", {{"kernels", ">=1.0.0"}}},
          {"runtime",
           {{"plugins",
             {{{"name", "s"},
               {"format", "system-library"},
               {"library", {{"linux-x86_64", "runtime/linux-x86_64/libs.so"}}},
               {"imports", {"s_workgroup"}}}}}}}};
}

/// A writer of the tests' own: it writes state/unit-probe.txt (the active
/// packages, in order) and adds "unit_probe" to activation.json, but only
/// while a package named "state-probe" is active, so that the prefixes of
/// every other test stay as the integrations alone make them.
class ProbeWriter final : public StateWriter {
public:
  Status write(const StateContext &context,
               std::map<std::string, std::string> &files,
               nlohmann::ordered_json &activation,
               std::vector<Diagnostic> &) const override {
    bool probe = false;
    std::string text = "platform " + context.platform.str() + "\n";
    for (const ActivePackage &a : context.active) {
      probe |= a.package->name == "state-probe";
      text += a.package->name + " " + a.package->version.str() + "\n";
    }
    if (!probe)
      return ok();
    files["unit-probe.txt"] = text;
    activation["unit_probe"] = context.active.size();
    return ok();
  }
};

/// A prefix in a temporary directory, and hook packages to install into it
/// (pipelines checked for syntax only, no package cache, no fault point).
struct PrefixFixture {
  TempDir tmp;
  ScopedEnv mlir{"IREEPKG_MLIR_CHECK", "off"};
  ScopedEnv fault{"IREEPKG_FAULT", std::nullopt};
  std::string prefix = tmp / "prefix";
  InstallOptions options;
  RecordingReporter reporter;

  explicit PrefixFixture(const char *name) : tmp(name) {
    options.useCache = false;
  }
  /// Writes and packs a hook package; returns its archive.
  std::string package(const std::string &name, const std::string &version) {
    writeHookPackageDir(tmp / ("src/" + name), name, version);
    return packOk(tmp / ("src/" + name), tmp.path());
  }
};

const ProbeWriter &probeWriter() {
  static const ProbeWriter writer;
  // Registration is process-wide and cannot be undone; it is harmless to
  // every other test (see above), and registering twice is a no-op.
  registerStateWriter(writer);
  return writer;
}

} // namespace

TEST_CASE("state: activation order puts dependencies first") {
  // Without a preferred order: the current order, dependencies first.
  CHECK(ordered({pkg("c", {"b"}), pkg("b", {"a"}), pkg("a")}, {}) ==
        std::vector<std::string>{"a", "b", "c"});
  CHECK(ordered({pkg("x"), pkg("y"), pkg("z")}, {}) ==
        std::vector<std::string>{"x", "y", "z"});
  // A project's order decides among independent packages...
  CHECK(ordered({pkg("x"), pkg("y"), pkg("z")}, {"z", "x"}) ==
        std::vector<std::string>{"z", "x", "y"});
  // ...but never puts a package before its dependencies.
  CHECK(ordered({pkg("a"), pkg("b", {"a"})}, {"b", "a"}) ==
        std::vector<std::string>{"a", "b"});
  // A dependency that is not installed does not hold anything back.
  CHECK(ordered({pkg("b", {"gone"}), pkg("a")}, {}) ==
        std::vector<std::string>{"b", "a"});
  CHECK(activationOrder({}, {"a"}).empty());
}

/// activationOrder's rule, written the plain (quadratic) way: repeatedly
/// the first package in primary order whose installed dependencies are all
/// placed, else the first not placed.
static std::vector<size_t>
plainActivationOrder(const std::vector<InstalledPackage> &ps,
                     const std::vector<std::string> &pref) {
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < ps.size(); ++i)
    byName[ps[i].name] = i;
  auto rank = [&](size_t i) {
    auto it = std::find(pref.begin(), pref.end(), ps[i].name);
    return it == pref.end() ? pref.size() + i : size_t(it - pref.begin());
  };
  std::vector<size_t> primary(ps.size());
  for (size_t i = 0; i < primary.size(); ++i)
    primary[i] = i;
  std::stable_sort(primary.begin(), primary.end(),
                   [&](size_t a, size_t b) { return rank(a) < rank(b); });
  std::vector<size_t> out;
  std::vector<bool> placed(ps.size());
  while (out.size() < ps.size()) {
    std::optional<size_t> next;
    for (size_t i : primary) {
      if (placed[i])
        continue;
      bool ready = true;
      for (const std::string &d : ps[i].dependencies)
        if (auto it = byName.find(d); it != byName.end() && !placed[it->second])
          ready = false;
      if (ready) {
        next = i;
        break;
      }
    }
    if (!next)
      for (size_t i : primary)
        if (!placed[i]) {
          next = i;
          break;
        }
    placed[*next] = true;
    out.push_back(*next);
  }
  return out;
}

TEST_CASE("state: activation order follows its rule on random prefixes") {
  // Random graphs with what a hand-edited installed.json may hold too:
  // cycles, self-dependencies, repeated and missing dependencies, names
  // repeated in the preferred order.
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    size_t n = rng() % 40;
    std::vector<InstalledPackage> ps;
    for (size_t i = 0; i < n; ++i)
      ps.push_back(pkg("p" + std::to_string(i)));
    for (size_t i = 0; i < n; ++i) {
      size_t deps = rng() % 4;
      for (size_t k = 0; k < deps; ++k) {
        // Mostly earlier packages (a DAG), sometimes any, or one not there.
        size_t pick = rng() % 10;
        if (pick == 0)
          ps[i].dependencies.push_back("gone" + std::to_string(rng() % 3));
        else if (pick == 1 || i == 0)
          ps[i].dependencies.push_back("p" + std::to_string(rng() % n));
        else
          ps[i].dependencies.push_back("p" + std::to_string(rng() % i));
      }
    }
    std::vector<std::string> pref;
    size_t prefs = n ? rng() % (n + 3) : 0;
    for (size_t k = 0; k < prefs; ++k)
      pref.push_back("p" + std::to_string(rng() % (n + 2)));
    std::shuffle(ps.begin(), ps.end(), rng);
    INFO("round " << round);
    CHECK(activationOrder(ps, pref) == plainActivationOrder(ps, pref));
  }
}

TEST_CASE("state: the integrations' writers are registered once, in order") {
  const auto &writers = stateWriters();
  REQUIRE(writers.size() >= 2);
  CHECK(writers[0] == &runtimeStateWriter());
  CHECK(writers[1] == &compilerStateWriter());
  size_t n = writers.size();
  registerStateWriter(runtimeStateWriter());
  CHECK(stateWriters().size() == n);
}

TEST_CASE("state: runtime.flags and activation.json for runtime plugins") {
  Manifest kernels = manifestOf(kernelsManifest());
  Manifest sys = manifestOf(systemManifest());
  std::vector<InstalledPackage> installed = {pkg("sys", {"kernels"}),
                                             pkg("kernels")};
  installed[0].explicitlyInstalled = true;
  installed[1].explicitlyInstalled = false;
  std::map<std::string, const Manifest *> manifests = {{"kernels", &kernels},
                                                       {"sys", &sys}};
  const std::string prefix = "/opt/p";
  std::vector<ActivePackage> active;
  for (size_t i : activationOrder(installed, {})) {
    const InstalledPackage &p = installed[i];
    active.push_back(
        {&p, manifests.at(p.name), packageDir(prefix, p.name, p.version)});
  }
  // libireepkg_runtime writes runtime.flags (its version is the
  // project's, as stateWriterName says it).
  auto header = [](const std::string &target) {
    return "# IREE runtime flags for the ireepkg prefix /opt/p, target " +
           target + "\n# Generated by libireepkg_runtime " +
           stateWriterName().substr(std::string("ireepkg ").size()) +
           " in activation order; do not edit.\n# Use: iree-run-module "
           "--flagfile=/opt/p/state/runtime.flags ...\n";
  };

  SUBCASE("linux-x86_64: both plugins, dependency first") {
    auto gen = generateState(prefix, "linux-x86_64", active);
    REQUIRE_MESSAGE(gen.has_value(), whyNot(gen));
    CHECK(gen->warnings.empty());
    REQUIRE(gen->files.count("runtime.flags"));
    CHECK(gen->files.at("runtime.flags") ==
          header("linux-x86_64") +
              "--executable_plugin=embedded:/opt/p/packages/kernels/1.0.0/"
              "runtime/k.x86_64.so\n"
              "--executable_plugin=/opt/p/packages/sys/1.0.0/runtime/"
              "linux-x86_64/libs.so\n");
    CHECK(gen->files.count("runtime.index"));
    CHECK(gen->files.count("compiler.json"));
    CHECK(gen->files.at("compiler.flags") == "");
    auto j = nlohmann::json::parse(gen->activationJson);
    CHECK(j["prefix"] == prefix);
    CHECK(j["platform"] == "linux-x86_64");
    REQUIRE(j["packages"].size() == 2);
    CHECK(j["packages"][0]["name"] == "kernels");
    CHECK(j["packages"][0]["reason"] == "dependency");
    CHECK(j["packages"][0]["path"] == "/opt/p/packages/kernels/1.0.0");
    CHECK(j["packages"][1]["name"] == "sys");
    CHECK(j["packages"][1]["reason"] == "explicit");
    REQUIRE(j["runtime"].size() == 2);
    CHECK(j["runtime"][0]["spec"] ==
          "embedded:/opt/p/packages/kernels/1.0.0/runtime/k.x86_64.so");
    CHECK(j["runtime"][0]["format"] == "embedded-elf");
    CHECK(j["runtime"][0]["imports"] == nlohmann::json::array({"k_workgroup"}));
    CHECK(j["runtime"][1]["spec"] ==
          "/opt/p/packages/sys/1.0.0/runtime/linux-x86_64/libs.so");
    CHECK(j["skipped"].empty());
    // The compiler writer's notes are there too.
    CHECK(j["compiler"].contains("notes"));
  }
  SUBCASE("linux-aarch64: the system library is skipped, with a warning") {
    auto gen = generateState(prefix, "linux-aarch64", active);
    REQUIRE(gen.has_value());
    CHECK(gen->files.at("runtime.flags") ==
          header("linux-aarch64") +
              "# Not activated: sys 1.0.0 plugin s (no build for "
              "linux-aarch64)\n"
              "--executable_plugin=embedded:/opt/p/packages/kernels/"
              "1.0.0/runtime/k.aarch64.so\n");
    REQUIRE(gen->warnings.size() == 1);
    CHECK(gen->warnings[0].message == "runtime plugin \"s\" has no build for "
                                      "linux-aarch64; it is not activated");
    auto j = nlohmann::json::parse(gen->activationJson);
    REQUIRE(j["skipped"].size() == 1);
    CHECK(j["skipped"][0]["package"] == "sys");
    CHECK(j["skipped"][0]["reason"] == "no build for linux-aarch64");
  }
  SUBCASE("a path no flag line can hold fails; nothing is written") {
    // IREE reads a flagfile a line at a time: a carriage return in a path
    // would end up in the plugin's path, and a line break would start a
    // flag of its own. The prefix's comment line shows it as '?'.
    std::vector<ActivePackage> odd = active;
    const std::string oddPrefix = "/opt/p\rq";
    for (ActivePackage &a : odd)
      a.dir = packageDir(oddPrefix, a.package->name, a.package->version);
    auto gen = generateState(oddPrefix, "linux-x86_64", odd);
    REQUIRE_FALSE(gen.has_value());
    CHECK(gen.error().code == ErrorCode::Invalid);
    CHECK(gen.error().message.find("contains a line break, which a flag "
                                   "line cannot hold") != std::string::npos);
    CHECK(gen.error().where.file == oddPrefix + "/state/runtime.flags");
  }
  SUBCASE("the library choice, one plugin at a time") {
    bool embedded = false;
    CHECK(runtimeLibraryFor(kernels.runtimePlugins[0],
                            *Platform::parse("linux-x86_64"), embedded,
                            "/nowhere") == "runtime/k.x86_64.so");
    CHECK(embedded);
    RuntimeLibraryChoice c = chooseRuntimeLibrary(
        sys.runtimePlugins[0], *Platform::parse("linux-riscv64"), "/nowhere");
    CHECK(c.rel == "");
    CHECK_FALSE(c.embedded);
    CHECK(c.reason == "no build for linux-riscv64");
  }
  SUBCASE("an embedded build is not used where IREE cannot call it") {
    RuntimeLibraryChoice c = chooseRuntimeLibrary(
        kernels.runtimePlugins[0], *Platform::parse("windows-x86_64"),
        "/nowhere");
    CHECK(c.rel == "");
    REQUIRE(c.fact != nullptr);
    CHECK(std::string(c.fact->upstream) == "iree-org/iree#12801");
    CHECK(c.reason == describePlatformFact(*c.fact));
    CHECK(c.reason.rfind("on windows, embedded ELF (and FatELF) executable "
                         "plugins cannot be called: ",
                         0) == 0);
    // No build at all is still said as such.
    c = chooseRuntimeLibrary(kernels.runtimePlugins[0],
                             *Platform::parse("windows-riscv64"), "/nowhere");
    CHECK(c.fact == nullptr);
    CHECK(c.reason == "no build for windows-riscv64");
  }
}

TEST_CASE("state: responseFileQuote quotes only what needs it") {
  CHECK(responseFileQuote("--iree-flag=a,b") == "--iree-flag=a,b");
  CHECK(responseFileQuote("a b") == "\"a b\"");
  CHECK(responseFileQuote("") == "\"\"");
  CHECK(responseFileQuote("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(responseFileQuote("c:\\x") == "\"c:\\\\x\"");
  CHECK(responseFileQuote("#x") == "\"#x\"");
}

TEST_CASE("state: a registered StateWriter's file is part of the prefix") {
  const ProbeWriter &writer = probeWriter();
  const auto &writers = stateWriters();
  REQUIRE(std::find(writers.begin(), writers.end(), &writer) != writers.end());

  PrefixFixture f("state");
  const std::string &prefix = f.prefix;
  const InstallOptions &options = f.options;
  RecordingReporter &reporter = f.reporter;
  std::string other = f.package("other", "1.0.0");
  std::string probe = f.package("state-probe", "2.0.0");

  // Without the probe package the writer adds nothing.
  REQUIRE(installArchives(prefix, {other}, options, reporter).has_value());
  CHECK_FALSE(exists(prefix + "/state/unit-probe.txt"));
  CHECK(readText(prefix + "/state/activation.json").find("unit_probe") ==
        std::string::npos);

  // With it, the transaction writes the writer's file with the others.
  REQUIRE(installArchives(prefix, {probe}, options, reporter).has_value());
  CHECK(readText(prefix + "/state/unit-probe.txt") ==
        "platform " + hostPlatform().str() +
            "\nother 1.0.0\nstate-probe 2.0.0\n");
  auto activation =
      nlohmann::json::parse(readText(prefix + "/state/activation.json"));
  CHECK(activation["unit_probe"] == 2);
  auto v = verifyPrefix(prefix, {}, reporter);
  REQUIRE(v.has_value());
  CHECK(v->problems.empty());

  // verify holds the writer's file to what the writer says.
  writeText(prefix + "/state/unit-probe.txt", "edited\n");
  v = verifyPrefix(prefix, {}, reporter);
  REQUIRE(v.has_value());
  REQUIRE(v->problems.size() == 1);
  CHECK(v->problems[0].path == "state/unit-probe.txt");
  CHECK(v->problems[0].kind == "state");
  CHECK(v->problems[0].detail == "does not match the installed packages");
  fs::remove(prefix + "/state/unit-probe.txt");
  v = verifyPrefix(prefix, {}, reporter);
  REQUIRE(v.has_value());
  REQUIRE(v->problems.size() == 1);
  CHECK(v->problems[0].path == "state/unit-probe.txt");
  CHECK(v->problems[0].kind == "missing");
}

namespace {

/// installed.json with its "state" record replaced (or removed when
/// `record` is null), as an ireepkg that wrote other files left it.
void setStateRecord(const std::string &prefix, const nlohmann::json &record) {
  auto j =
      nlohmann::ordered_json::parse(readText(prefix + "/state/installed.json"));
  if (record.is_null())
    j.erase("state");
  else
    j["state"] = record;
  writeText(prefix + "/state/installed.json", j.dump(2) + "\n");
}

std::string problemList(const VerifyReport &r) {
  std::string out;
  for (const auto *list : {&r.problems, &r.outdated})
    for (const VerifyProblem &p : *list)
      out += p.path + "|" + p.kind + "|" + p.detail + "\n";
  return out;
}

} // namespace

TEST_CASE("state: a file a StateWriter stops writing leaves the prefix") {
  probeWriter();
  PrefixFixture f("state-stale");
  const std::string &prefix = f.prefix;
  RecordingReporter &reporter = f.reporter;
  std::string other = f.package("other", "1.0.0");
  std::string probe = f.package("state-probe", "2.0.0");
  auto record = [&] {
    auto st = readInstalledState(prefix, reporter);
    REQUIRE_MESSAGE(st.has_value(), whyNot(st));
    REQUIRE(st->stateRecord.has_value());
    CHECK(st->stateRecord->writtenBy == stateWriterName());
    return st->stateRecord->files;
  };
  auto verify = [&] {
    auto v = verifyPrefix(prefix, {}, reporter);
    REQUIRE_MESSAGE(v.has_value(), whyNot(v));
    return problemList(*v);
  };
  const std::vector<std::string> integrations = {
      "activation.json", "compiler.flags", "compiler.json", "runtime.flags",
      "runtime.index"};
  std::vector<std::string> withProbe = integrations;
  withProbe.push_back("unit-probe.txt");

  REQUIRE(
      installArchives(prefix, {other, probe}, f.options, reporter).has_value());
  CHECK(exists(prefix + "/state/unit-probe.txt"));
  CHECK(record() == withProbe);

  SUBCASE("removing the package the writer wrote for removes its file") {
    REQUIRE(removePackages(prefix, {"state-probe"}, {}, reporter).has_value());
    CHECK_FALSE(exists(prefix + "/state/unit-probe.txt"));
    CHECK(record() == integrations);
    CHECK(verify() == "");
    CHECK_FALSE(exists(prefix + "/.trash"));
  }
  SUBCASE("verify names a recorded file no writer produces; a transaction "
          "removes it") {
    // As an ireepkg whose writers wrote old.txt as well left the prefix.
    std::vector<std::string> files = withProbe;
    files.push_back("old.txt");
    setStateRecord(prefix,
                   {{"written_by", stateWriterName()}, {"files", files}});
    writeText(prefix + "/state/old.txt", "old\n");
    CHECK(verify() == "state/old.txt|stale|an earlier transaction wrote it, "
                      "but no state writer produces it now; the next "
                      "install, remove or sync that changes the prefix "
                      "removes it\n");
    REQUIRE(removePackages(prefix, {"other"}, {}, reporter).has_value());
    CHECK_FALSE(exists(prefix + "/state/old.txt"));
    CHECK(record() == withProbe);
    CHECK(verify() == "");
  }
  SUBCASE("a crash before the commit keeps the file; after it, recovery "
          "removes it") {
    REQUIRE_FALSE(runningPrivileged()); // else IREEPKG_FAULT is ignored
    for (const char *point : {"state-staged", "commit-marked", "applied"}) {
      CAPTURE(point);
      int status = runWithFault(point, [&](Reporter &quiet) {
        return removePackages(prefix, {"state-probe"}, {}, quiet).has_value();
      });
      REQUIRE(WIFSIGNALED(status));
      auto st = readInstalledState(prefix, reporter); // recovers
      REQUIRE(st.has_value());
      bool committed = std::string(point) != "state-staged";
      CHECK(exists(prefix + "/state/unit-probe.txt") == !committed);
      CHECK(record() == (committed ? integrations : withProbe));
      CHECK(verify() == "");
      if (committed)
        break;
    }
  }
  SUBCASE("a malformed record is the prefix's corruption, not a list of "
          "files to delete") {
    setStateRecord(prefix, {{"written_by", stateWriterName()},
                            {"files", {"../installed.json"}}});
    auto st = readInstalledState(prefix, reporter);
    REQUIRE_FALSE(st.has_value());
    CHECK(st.error().message ==
          "the prefix state is corrupted: \"state\" lists "
          "\"../installed.json\", which is not a state file");
  }
}

TEST_CASE("state: verify of a prefix an older ireepkg wrote") {
  PrefixFixture f("state-older");
  const std::string &prefix = f.prefix;
  RecordingReporter &reporter = f.reporter;
  std::string a = f.package("alpha", "1.0.0");
  std::string b = f.package("beta", "1.0.0");
  REQUIRE(installArchives(prefix, {a}, f.options, reporter).has_value());
  const std::string flags = prefix + "/state/runtime.flags";
  const std::string current = readText(flags);
  // runtime.flags as ireepkg wrote it before libireepkg_runtime wrote it.
  const std::string older = "# IREE runtime flags for the ireepkg prefix " +
                            prefix +
                            "\n# Generated by ireepkg in activation order; do "
                            "not edit.\n# Use: iree-run-module --flagfile=" +
                            flags + " ...\n";
  writeText(flags, older);
  auto verify = [&] {
    auto v = verifyPrefix(prefix, {}, reporter);
    REQUIRE_MESSAGE(v.has_value(), whyNot(v));
    return *v;
  };

  SUBCASE("no record: written by an older ireepkg, not a problem") {
    setStateRecord(prefix, nullptr);
    VerifyReport v = verify();
    CHECK(v.problems.empty());
    CHECK(problemList(v) ==
          "state/runtime.flags|outdated|written by an older ireepkg, not by " +
              stateWriterName() +
              ", which writes it differently; the next install, remove or "
              "sync that changes the prefix rewrites it\n");
  }
  SUBCASE("a record naming another version") {
    setStateRecord(prefix,
                   {{"written_by", "ireepkg 0.0.9"},
                    {"files",
                     {"activation.json", "compiler.flags", "compiler.json",
                      "runtime.flags", "runtime.index"}}});
    VerifyReport v = verify();
    CHECK(v.problems.empty());
    REQUIRE(v.outdated.size() == 1);
    CHECK(v.outdated[0].detail.starts_with("written by ireepkg 0.0.9, not by " +
                                           stateWriterName()));
  }
  SUBCASE("written by this ireepkg: the same bytes are damage") {
    VerifyReport v = verify();
    CHECK(v.outdated.empty());
    CHECK(problemList(v) == "state/runtime.flags|state|does not match the "
                            "installed packages\n");
  }
  // The next transaction rewrites it.
  REQUIRE(installArchives(prefix, {b}, f.options, reporter).has_value());
  VerifyReport v = verify();
  CHECK(problemList(v) == "");
  CHECK(readText(flags).starts_with(current.substr(0, current.find('\n'))));
}
