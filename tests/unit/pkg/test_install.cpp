//===- test_install.cpp - Install, remove and verify at the library level -===//
//
// Packages are written as compiler-configuration authors write them (an
// ireeplugin.json with a preprocessing hook, a README, a data file), packed
// with packDirectory and installed into a prefix in a temporary directory.
// Hook packages have no native library, so nothing here needs a compiler;
// their pipelines are checked for syntax only (IREEPKG_MLIR_CHECK=off).
//
//===----------------------------------------------------------------------===//
#include "temp_dir.h"

#include "ireepkg/manifest_schema/platform.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/pkg/prefix/install.h"
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/pkg/prefix/state.h"
#include "ireepkg/runtime.h"

#include <doctest/doctest.h>

using namespace ireepkg;
using namespace ireepkg::test;

namespace {

/// A prefix, a place for package sources and archives, and the options
/// every install here uses (no package cache: test_cache.cpp covers it).
struct InstallFixture {
  TempDir tmp{"install"};
  std::string prefix = tmp / "prefix";
  ScopedEnv mlir{"IREEPKG_MLIR_CHECK", "off"};
  InstallOptions options;
  RecordingReporter reporter;

  InstallFixture() { options.useCache = false; }

  /// Writes and packs a hook package; returns its archive.
  std::string
  package(const std::string &name, const std::string &version,
          const std::vector<std::pair<std::string, std::string>> &deps = {}) {
    std::string src = tmp / ("src/" + name + "-" + version);
    writeHookPackageDir(src, name, version, "func.func(canonicalize,cse)",
                        deps);
    fs::create_directories(tmp / "dist");
    return packOk(src, tmp / "dist");
  }

  InstallReport install(const std::vector<std::string> &archives) {
    auto r = installArchives(prefix, archives, options, reporter);
    REQUIRE_MESSAGE(r.has_value(), whyNot(r));
    return *r;
  }

  Error installFails(const std::vector<std::string> &archives) {
    auto r = installArchives(prefix, archives, options, reporter);
    REQUIRE_FALSE(r.has_value());
    return r.error();
  }

  InstalledState state() {
    auto s = readInstalledState(prefix, reporter);
    REQUIRE_MESSAGE(s.has_value(), whyNot(s));
    return *s;
  }

  VerifyReport verify(const std::vector<std::string> &names = {}) {
    auto v = verifyPrefix(prefix, names, reporter);
    REQUIRE_MESSAGE(v.has_value(), whyNot(v));
    return *v;
  }

  std::vector<std::string> installedNames() {
    std::vector<std::string> names;
    for (const InstalledPackage &p : state().packages)
      names.push_back(p.name + " " + p.version.str());
    return names;
  }
};

std::string changes(const InstallReport &r) {
  std::string out;
  for (const auto &c : r.changes)
    out += c.name + ":" + (c.from.empty() ? "-" : c.from) + "->" +
           (c.to.empty() ? "-" : c.to) + ";";
  return out;
}

std::string problems(const VerifyReport &r) {
  std::string out;
  for (const VerifyProblem &p : r.problems)
    out += p.package + "|" + p.path + "|" + p.kind + "|" + p.detail + "\n";
  return out;
}

} // namespace

TEST_CASE("install: a packed package, its files and state, verify, remove") {
  InstallFixture f;
  std::string archive = f.package("hooks-a", "1.0.0");

  // A prefix that does not exist reads as empty.
  CHECK(f.state().packages.empty());

  InstallReport r = f.install({archive});
  CHECK(changes(r) == "hooks-a:-->1.0.0;");
  CHECK(r.unchanged.empty());
  CHECK(r.prefix == f.prefix);

  InstalledState st = f.state();
  CHECK(st.platform == hostPlatform().str());
  REQUIRE(st.packages.size() == 1);
  const InstalledPackage &p = st.packages[0];
  CHECK(p.name == "hooks-a");
  CHECK(p.version.str() == "1.0.0");
  CHECK(p.explicitlyInstalled);
  CHECK(p.dependencies.empty());
  CHECK(p.archiveSha256 == *sha256File(archive));

  // The package's files, read-only, with the RECORD the archive carried.
  std::string dir = packageDir(f.prefix, "hooks-a", p.version);
  CHECK(dir == f.prefix + "/packages/hooks-a/1.0.0");
  auto head = readArchiveHead(archive);
  REQUIRE(head.has_value());
  CHECK(p.recordSha256 == Sha256::hex(serializeRecord(head->record)));
  CHECK(p.installedSize == head->record.totalSize());
  CHECK(readText(dir + "/" + kRecordName) == serializeRecord(head->record));
  CHECK(readText(dir + "/data/notes.txt") == "hooks-a 1.0.0 notes\n");
  CHECK(readText(dir + "/README.md") ==
        readText(f.tmp / "src/hooks-a-1.0.0/README.md"));
  for (const char *rel : {"ireeplugin.json", "README.md", "data/notes.txt"}) {
    struct stat sb;
    REQUIRE(::stat((dir + "/" + rel).c_str(), &sb) == 0);
    CHECK_MESSAGE((sb.st_mode & 0222) == 0, rel);
  }
  auto manifest = readInstalledManifest(f.prefix, p, f.reporter);
  REQUIRE(manifest.has_value());
  CHECK(manifest->hooks.size() == 1);

  // The state files: every one a transaction writes, and nothing else
  // (no journal, no scratch space).
  CHECK(listDir(f.prefix) == std::vector<std::string>{"packages", "state"});
  CHECK(listDir(f.prefix + "/state") ==
        std::vector<std::string>{"activation.json", "compiler.flags",
                                 "compiler.json", "installed.json", "lock",
                                 "runtime.flags", "runtime.index"});
  CHECK(readText(f.prefix + "/state/lock").empty());
  // The hook becomes iree-compile's flag, one argument a line; a fragment
  // is anchored on builtin.module, as IREE's option needs.
  CHECK(readText(f.prefix + "/state/compiler.flags") ==
        "--iree-preprocessing-pass-pipeline=builtin.module(func.func("
        "canonicalize,cse))\n");
  // No runtime plugin: runtime.flags is its header only, as
  // libireepkg_runtime writes it (its version is the project's).
  std::string runtimeFlags = readText(f.prefix + "/state/runtime.flags");
  CHECK(runtimeFlags == "# IREE runtime flags for the ireepkg prefix " +
                            f.prefix + ", target " + hostPlatform().str() +
                            "\n# Generated by libireepkg_runtime " +
                            ireepkg_runtime_version() +
                            " in activation order; do not edit.\n# Use: "
                            "iree-run-module --flagfile=" +
                            f.prefix + "/state/runtime.flags ...\n");
  // What the transaction recorded: who wrote the state, and its files.
  REQUIRE(f.state().stateRecord.has_value());
  CHECK(f.state().stateRecord->writtenBy ==
        std::string("ireepkg ") + ireepkg_runtime_version());
  CHECK(f.state().stateRecord->files ==
        std::vector<std::string>{"activation.json", "compiler.flags",
                                 "compiler.json", "runtime.flags",
                                 "runtime.index"});
  auto compilerJson =
      nlohmann::json::parse(readText(f.prefix + "/state/compiler.json"));
  CHECK(compilerJson.dump().find("\"hooks-a\"") != std::string::npos);
  CHECK(compilerJson.dump().find("func.func(canonicalize,cse)") !=
        std::string::npos);
  auto activation =
      nlohmann::json::parse(readText(f.prefix + "/state/activation.json"));
  CHECK(activation.dump().find("\"hooks-a\"") != std::string::npos);
  CHECK(activation.contains("compiler"));
  auto installed =
      nlohmann::json::parse(readText(f.prefix + "/state/installed.json"));
  CHECK(installed.dump().find(p.recordSha256) != std::string::npos);

  // verify: every file hashed, nothing wrong.
  VerifyReport v = f.verify();
  CHECK(problems(v) == "");
  CHECK(v.checkedPackages == std::vector<std::string>{"hooks-a"});
  CHECK(v.checkedFiles == head->record.files.size());

  // The same archive again changes nothing, byte for byte.
  auto before = snapshotTree(f.prefix);
  InstallReport again = f.install({archive});
  CHECK(again.changes.empty());
  CHECK(again.unchanged == std::vector<std::string>{"hooks-a 1.0.0"});
  CHECK(snapshotTree(f.prefix) == before);

  // Removing it leaves a prefix with nothing installed that verifies clean.
  auto removed = removePackages(f.prefix, {"hooks-a"}, {}, f.reporter);
  REQUIRE_MESSAGE(removed.has_value(), whyNot(removed));
  CHECK(changes(*removed) == "hooks-a:1.0.0->-;");
  CHECK(f.state().packages.empty());
  CHECK(listDir(f.prefix + "/packages").empty());
  CHECK(listDir(f.prefix) == std::vector<std::string>{"packages", "state"});
  CHECK(readText(f.prefix + "/state/compiler.flags") == "");
  CHECK(problems(f.verify()) == "");
  CHECK(f.verify().checkedPackages.empty());
}

TEST_CASE("verify: what tampering it reports") {
  InstallFixture f;
  f.install({f.package("hooks-a", "1.0.0")});
  std::string dir = f.prefix + "/packages/hooks-a/1.0.0";
  REQUIRE(problems(f.verify()) == "");
  auto writable = [](const std::string &path) {
    fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  };

  SUBCASE("a changed file") {
    writable(dir + "/data");
    writable(dir + "/data/notes.txt");
    writeText(dir + "/data/notes.txt", "changed\n");
    CHECK(problems(f.verify()) ==
          "hooks-a|data/notes.txt|modified|content differs from RECORD (size "
          "8, expected 20)\n");
  }
  SUBCASE("a file made writable") {
    writable(dir + "/README.md");
    CHECK(problems(f.verify()) == "hooks-a|README.md|permissions|is writable; "
                                  "installed files are read-only\n");
  }
  SUBCASE("a missing and an extra file") {
    writable(dir);
    writable(dir + "/data");
    fs::remove(dir + "/data/notes.txt");
    writeText(dir + "/extra.txt", "x");
    CHECK(problems(f.verify()) ==
          "hooks-a|data/notes.txt|missing|the file is missing\n"
          "hooks-a|extra.txt|extra|is not part of the package\n");
  }
  SUBCASE("a changed state file") {
    writeText(f.prefix + "/state/runtime.flags", "--executable_plugin=x\n");
    CHECK(problems(f.verify()) == "|state/runtime.flags|state|does not match "
                                  "the installed packages\n");
  }
  SUBCASE("a file in state/ that no ireepkg wrote") {
    writeText(f.prefix + "/state/notes.txt", "mine\n");
    CHECK(problems(f.verify()) ==
          "|state/notes.txt|extra|is not part of the prefix's state (no state "
          "writer produces it)\n");
    // A transaction leaves what it did not write.
    f.install({f.package("hooks-b", "1.0.0")});
    CHECK(readText(f.prefix + "/state/notes.txt") == "mine\n");
  }
  SUBCASE("a missing package directory and one nothing lists") {
    makeTreeWritable(f.prefix + "/packages");
    fs::rename(dir, f.prefix + "/packages/hooks-a/9.9.9");
    CHECK(problems(f.verify()) ==
          "hooks-a||missing|the package directory is missing\n"
          "|packages/hooks-a/9.9.9|extra|is not an installed package\n");
  }
  SUBCASE("verify of a package that is not installed") {
    auto v = verifyPrefix(f.prefix, {"nope"}, f.reporter);
    REQUIRE_FALSE(v.has_value());
    CHECK(v.error().code == ErrorCode::NotFound);
    CHECK(v.error().message == "package \"nope\" is not installed");
  }
}

TEST_CASE("install: dependencies, activation order, upgrades, removal") {
  InstallFixture f;
  std::string a1 = f.package("base", "1.0.0");
  std::string a2 = f.package("base", "1.1.0");
  std::string b = f.package("app", "1.0.0", {{"base", ">=1.0.0"}});
  std::string c = f.package("zeta", "1.0.0");

  SUBCASE("a missing dependency is refused and nothing is written") {
    Error e = f.installFails({b});
    CHECK(e.code == ErrorCode::Conflict);
    CHECK(e.format().find("app 1.0.0 depends on base >=1.0.0, which is "
                          "neither installed nor given") != std::string::npos);
    CHECK(e.hint == "install the missing packages' archives in the same "
                    "command, or remove the packages that need them");
    CHECK(f.state().packages.empty());
    CHECK(listDir(f.prefix + "/packages").empty());
    CHECK_FALSE(exists(f.prefix + "/state/installed.json"));
  }
  SUBCASE("dependencies are activated first, whatever the order given") {
    InstallReport r = f.install({b, c, a1});
    CHECK(r.changes.size() == 3);
    CHECK(f.installedNames() ==
          std::vector<std::string>{"zeta 1.0.0", "base 1.0.0", "app 1.0.0"});
    InstalledState st = f.state();
    CHECK(st.find("app")->dependencies == std::vector<std::string>{"base"});
    // activation.json lists them in the same order.
    std::string act = readText(f.prefix + "/state/activation.json");
    CHECK(act.find("\"zeta\"") < act.find("\"base\""));
    CHECK(act.find("\"base\"") < act.find("\"app\""));
    CHECK(problems(f.verify()) == "");

    SUBCASE("an upgrade replaces the old version in place") {
      InstallReport up = f.install({a2});
      CHECK(changes(up) == "base:1.0.0->1.1.0;");
      CHECK(f.installedNames() ==
            std::vector<std::string>{"zeta 1.0.0", "base 1.1.0", "app 1.0.0"});
      CHECK(listDir(f.prefix + "/packages/base") ==
            std::vector<std::string>{"1.1.0"});
      CHECK(problems(f.verify()) == "");
    }
    SUBCASE("a dependency cannot be removed from under its dependent") {
      auto r2 = removePackages(f.prefix, {"base"}, {}, f.reporter);
      REQUIRE_FALSE(r2.has_value());
      CHECK(r2.error().message ==
            "cannot remove \"base\": \"app\" 1.0.0 depends on it");
      CHECK(r2.error().hint == "remove \"app\" too, or use --cascade");
      RemoveOptions cascade;
      cascade.cascade = true;
      auto r3 = removePackages(f.prefix, {"base"}, cascade, f.reporter);
      REQUIRE(r3.has_value());
      CHECK(r3->changes.size() == 2);
      CHECK(f.installedNames() == std::vector<std::string>{"zeta 1.0.0"});
      CHECK(listDir(f.prefix + "/packages") ==
            std::vector<std::string>{"zeta"});
      CHECK(problems(f.verify()) == "");
    }
    SUBCASE("a project's order is followed where dependencies allow") {
      f.options.preferredOrder = {"app", "base", "zeta"};
      InstallReport r4 = f.install({c});
      CHECK(r4.changes.empty());
      CHECK(r4.reordered);
      CHECK(f.installedNames() ==
            std::vector<std::string>{"base 1.0.0", "app 1.0.0", "zeta 1.0.0"});
      CHECK(problems(f.verify()) == "");
    }
  }
  SUBCASE("two archives of one package in one install") {
    Error e = f.installFails({a1, a2});
    CHECK(e.message ==
          "two archives provide package \"base\": " + a1 + " and " + a2);
  }
  SUBCASE("removing what is not installed") {
    f.install({a1});
    auto r = removePackages(f.prefix, {"bsae"}, {}, f.reporter);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == ErrorCode::NotFound);
    CHECK(r.error().message ==
          "package \"bsae\" is not installed (did you mean \"base\"?)");
  }
  SUBCASE("a prefix is for one platform") {
    f.install({a1});
    f.options.platform = Platform::parse(hostPlatform().str() == "linux-aarch64"
                                             ? "linux-x86_64"
                                             : "linux-aarch64");
    REQUIRE(f.options.platform.has_value());
    Error e = f.installFails({c});
    CHECK(e.message == "this prefix is for " + hostPlatform().str() + ", not " +
                           f.options.platform->str());
  }
}

TEST_CASE("install: an embedded-ELF runtime plugin, built as its author does") {
  // A kernel library for the host's architecture, compiled as
  // ireepkg_add_executable_plugin compiles embedded ELF (clang and lld,
  // freestanding); pack and install inspect it with ireepkg-inspect.
  InstallFixture f;
  std::string arch(archName(hostPlatform().arch));
  std::string src = f.tmp / "src/kernels";
  writeText(src + "/k.c",
            "#include \"ireepkg/iree_executable_plugin.h\"\n"
            "IREEPKG_HAL_EXECUTABLE_PLUGIN_EXPORT\n"
            "const ireepkg_hal_executable_plugin_header_t **\n"
            "iree_hal_executable_plugin_query(\n"
            "    ireepkg_hal_executable_plugin_version_t max_version,\n"
            "    void *reserved) {\n"
            "  (void)max_version;\n"
            "  (void)reserved;\n"
            "  return 0;\n"
            "}\n");
  fs::create_directories(src + "/runtime");
  std::string lib = "runtime/k." + arch + ".so";
  std::string cmd =
      "clang-22 -target " + arch +
      "-none-elf -std=c17 -O2 -fPIC -ffreestanding -fvisibility=hidden "
      "-DIREEPKG_EMBEDDED_ELF=1 -I'" IREEPKG_SOURCE_DIR "/include' -c '" +
      src + "/k.c' -o '" + src +
      "/k.o' && ld.lld-22 --build-id=none "
      "-nostdlib -static -shared --no-undefined -o '" +
      src + "/" + lib + "' '" + src + "/k.o' && rm '" + src + "/k.o'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  nlohmann::ordered_json m = {{"schema_version", 1},
                              {"name", "kernels"},
                              {"version", "1.0.0"},
                              {"summary", "an embedded-ELF kernel"},
                              {"license", "Apache-2.0"},
                              {"runtime",
                               {{"plugins",
                                 {{{"name", "k"},
                                   {"format", "embedded-elf"},
                                   {"library", {{arch, lib}}},
                                   {"imports", {"k_workgroup"}}}}}}}};
  writeText(src + "/ireeplugin.json", m.dump(2) + "\n");
  std::string archive = packOk(src, f.tmp.path());

  f.install({archive});
  std::string dir = f.prefix + "/packages/kernels/1.0.0";
  CHECK(readText(dir + "/" + lib) == readText(src + "/" + lib));
  CHECK(readText(f.prefix + "/state/runtime.flags")
            .ends_with("/state/runtime.flags ...\n"
                       "--executable_plugin=embedded:" +
                       dir + "/" + lib + "\n"));
  auto activation =
      nlohmann::json::parse(readText(f.prefix + "/state/activation.json"));
  REQUIRE(activation["runtime"].size() == 1);
  CHECK(activation["runtime"][0]["spec"] == "embedded:" + dir + "/" + lib);
  CHECK(activation["runtime"][0]["imports"] ==
        nlohmann::json::array({"k_workgroup"}));
  CHECK(fs::file_size(f.prefix + "/state/runtime.index") > 0);
  CHECK(readText(f.prefix + "/state/compiler.flags") == "");
  CHECK(problems(f.verify()) == "");

  // One flagfile writer: the library's public API, given the written
  // index, writes runtime.flags byte for byte as the transaction did.
  const std::string flagsPath = f.prefix + "/state/runtime.flags";
  const std::string written = readText(flagsPath);
  ireepkg_runtime_index_t *index = nullptr;
  REQUIRE(ireepkg_runtime_open(f.prefix.c_str(), 0, &index, nullptr) ==
          IREEPKG_RUNTIME_OK);
  ireepkg_runtime_plugin_list_t *list = nullptr;
  REQUIRE(ireepkg_runtime_list_plugins(index,
                                       ireepkg_runtime_index_platform(index), 0,
                                       &list, nullptr) == IREEPKG_RUNTIME_OK);
  CHECK(ireepkg_runtime_write_flagfile(list, flagsPath.c_str(), nullptr) ==
        IREEPKG_RUNTIME_OK);
  ireepkg_runtime_free_plugin_list(list);
  ireepkg_runtime_close(index);
  CHECK(readText(flagsPath) == written);

  auto removed = removePackages(f.prefix, {"kernels"}, {}, f.reporter);
  REQUIRE(removed.has_value());
  CHECK(readText(f.prefix + "/state/runtime.flags").find("--executable") ==
        std::string::npos);
  CHECK(problems(f.verify()) == "");
}
