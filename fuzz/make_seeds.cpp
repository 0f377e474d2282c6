//===- make_seeds.cpp - Seed inputs for the fuzz targets ------------------===//
//
// `ireepkg-fuzz-seeds <source dir> <output dir>` writes
// <output dir>/<target>/<seed> for the targets whose inputs tests/data does
// not hold: binary formats (FatELF, runtime index, archives) made by the
// project's own writers, keys and signatures made by its signer, and short
// texts (versions, constraints, pipelines, flags). Everything is
// deterministic except the keys, which are fresh on every build.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/compiler_integration/compiler_index.h"
#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/runtime_integration/runtime_index.h"
#include "ireepkg/pkg/package/signature.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ireepkg;

namespace {

std::string outDir;

void write(const std::string &target, const std::string &name,
           const std::string &content) {
  fs::create_directories(outDir + "/" + target);
  std::ofstream(outDir + "/" + target + "/" + name, std::ios::binary)
      << content;
}

void writeTexts(const std::string &target,
                std::initializer_list<const char *> texts) {
  int i = 0;
  for (const char *t : texts)
    write(target, "seed" + std::to_string(i++), t);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The 64-byte header of an ELF64 shared object (no sections).
std::string elfHeader(uint16_t machine, bool littleEndian = true) {
  std::string h(64, '\0');
  h[0] = 0x7f, h[1] = 'E', h[2] = 'L', h[3] = 'F';
  h[4] = 2;                      // ELFCLASS64
  h[5] = littleEndian ? 1 : 2;   // ELFDATA2LSB / MSB
  h[6] = 1;                      // EV_CURRENT
  auto put16 = [&](size_t at, uint16_t v) {
    h[at + (littleEndian ? 0 : 1)] = static_cast<char>(v & 0xff);
    h[at + (littleEndian ? 1 : 0)] = static_cast<char>(v >> 8);
  };
  put16(16, 3);       // ET_DYN
  put16(18, machine); // e_machine
  h[littleEndian ? 20 : 23] = 1; // e_version
  put16(52, 64);      // e_ehsize
  return h;
}

int fail(const std::string &what) {
  std::fprintf(stderr, "ireepkg-fuzz-seeds: %s\n", what.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3)
    return fail("usage: ireepkg-fuzz-seeds <source dir> <output dir>");
  std::string source = argv[1];
  outDir = argv[2];
  fs::remove_all(outDir);

  // RECORD.json
  Record record;
  record.files = {{"lib/libplugin.so", std::string(64, 'a'), 12345, true},
                  {"runtime/simple_mul.x86_64.so", std::string(64, '0'), 0,
                   false},
                  {"specs/spec.mlir", std::string(64, 'f'), 7, false}};
  write("record", "three", serializeRecord(record));
  write("record", "empty", serializeRecord(Record{}));

  // FatELF
  std::string x86 = elfHeader(62), arm = elfHeader(183), rv = elfHeader(243);
  if (auto fat = fatelf::join({x86, arm}, {"x86_64", "aarch64"}))
    write("fatelf", "x86_64-aarch64.sos", *fat);
  else
    return fail(fat.error().message);
  if (auto fat = fatelf::join({rv}, {"riscv64"}))
    write("fatelf", "riscv64.sos", *fat);
  write("fatelf", "elf-header", x86);

  // runtime.index
  RuntimeIndexInput in;
  in.prefix = "/opt/prefix";
  in.platform = "linux-x86_64";
  write("runtime_index", "empty", encodeRuntimeIndex(in));
  RuntimeIndexPlugin embedded{
      "simple_mul", "simple-mul", "1.2.0", "embedded-elf",
      {{"x86_64", "/opt/prefix/packages/simple-mul/1.2.0/x.so"},
       {"fat", "/opt/prefix/packages/simple-mul/1.2.0/fat.sos"}},
      {"simple_mul_workgroup"},
      {{"tile", "4"}}};
  RuntimeIndexPlugin system{
      "sys", "sys-lib", "0.1.0-rc.1", "system-library",
      {{"linux-x86_64", "/opt/prefix/packages/sys-lib/0.1.0-rc.1/l.so"},
       {"linux-aarch64", "/opt/prefix/packages/sys-lib/0.1.0-rc.1/a.so"}},
      {},
      {}};
  in.plugins = {embedded, system};
  write("runtime_index", "two-plugins", encodeRuntimeIndex(in));

  // compiler.json, from the manifests of tests/data.
  std::vector<Manifest> manifests;
  for (const char *name : {"good_full.json", "good_compiler_only.json"}) {
    auto doc = JsonDocument::load(source + "/tests/data/manifest/" + name);
    if (!doc)
      return fail(doc.error().message);
    DiagnosticList diags;
    manifests.push_back(parseManifest(*doc, ParseOptions{}, diags));
    if (diags.hasErrors())
      return fail(std::string("tests/data/manifest/") + name +
                  " does not parse");
  }
  std::vector<ActivatedPackage> packages;
  for (const Manifest &m : manifests)
    packages.push_back({m.name, m.version, "/opt/prefix/packages/" + m.name,
                        &m});
  ProjectSettings settings;
  write("compiler_index", "empty",
        encodeCompilerIndex({}, "linux-x86_64", settings));
  write("compiler_index", "two",
        encodeCompilerIndex(packages, "linux-x86_64", settings));

  // Package archives.
  std::string manifestText =
      readFile(source + "/tests/data/manifest/good_minimal.json");
  std::string archive = outDir + "/archive-tmp.ireepkg";
  Record one;
  one.files = {{"README", std::string(64, '0'), 0, false}};
  if (Status s = writeArchive(archive, {{"ireeplugin.json", manifestText},
                                        {".ireepkg/RECORD.json",
                                         serializeRecord(one)},
                                        {"README", ""}});
      !s)
    return fail(s.error().message);
  write("archive", "minimal.ireepkg", readFile(archive));
  fs::remove(archive);

  // bundle.json
  writeTexts("bundle",
             {R"({"bundle_version": 1, "registries": [{"url": "https://r.example/", "dir": "registries/0"}]})",
              R"({"registries": [{"url": "file:///srv/a", "dir": "a"}, {"url": "https://b", "dir": "b/c"}]})",
              R"({"registries": []})"});

  // Keys and signatures.
  signing::KeyPair pair = signing::generateKeyPair();
  write("minisign_key", "key.pub", signing::serializePublicKey(pair.publicKey));
  write("minisign_key", "key.line",
        signing::publicKeyBase64(pair.publicKey));
  if (auto sk = signing::serializeSecretKey(pair.secretKey, std::nullopt))
    write("minisign_key", "unencrypted.key", *sk);
  if (auto sk = signing::serializeSecretKey(pair.secretKey, "pw",
                                            signing::kInteractiveKdfLimits))
    write("minisign_key", "encrypted.key", *sk);
  for (bool prehash : {true, false}) {
    signing::SignOptions options;
    options.prehash = prehash;
    options.trustedComment = signing::defaultTrustedComment("data", 0, prehash);
    auto sig = signing::signBuffer(pair.secretKey, "data", options);
    if (!sig)
      return fail(sig.error().message);
    write("minisign_signature", prehash ? "prehashed" : "legacy",
          signing::serializeSignature(*sig));
  }

  // Texts.
  writeTexts("version", {"1.2.3", "0.0.0-alpha.1+build.5", "3.13.0rc20261016",
                         "18446744073709551615.0.1", "1.0.0-x-y-z.--"});
  writeTexts("constraint",
             {"^1.2", "~1.2.3", ">=1.0.0, <2.0.0 || 3.*", "1.*", "*",
              ">=1.3.0-beta", "<=0.0.1-rc.1", "=1.2.3 || >4"});
  writeTexts("pipeline",
             {"builtin.module(func.func(cse,canonicalize),inline)",
              "canonicalize{max-iterations=3 region-simplify=true},cse",
              "builtin.module()",
              "func.func(test-pass{list=1,2,3 nested={a=1} s='x y'})"});
  writeTexts("flagfile",
             {"# IREE runtime flags\n--executable_plugin=embedded:/p/x.so\n",
              "--iree-plugin=foo\n-iree-hal-executable-object-search-path=/x\n"
              "--iree-load-plugin\n"});
  return 0;
}
