//===- test_native_check.cpp - Native libraries against their manifest ----===//
//
// What ireepkg-inspect says about FatELF images as the client reads it, the
// inspection cache's round trip (serializeBinaryInfo), and the checks of a
// declared library against what the file is (native_check.h), message by
// message.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/checks/native_check.h"

#include <doctest/doctest.h>

using namespace ireepkg;

namespace {

/// What checkLibrary says about `info` declared as `d`, one line each.
std::vector<std::string> check(const DeclaredLibrary &d,
                               const BinaryInfo &info) {
  DiagnosticList diags;
  checkLibrary(d, info, Location{"m.json", 3, 4, "/x", "p", d.path}, diags);
  std::vector<std::string> out;
  for (const Diagnostic &x : diags.items())
    out.push_back(x.format());
  return out;
}

} // namespace

TEST_CASE("inspect: FatELF images, and the cache's round trip") {
  const char *text = R"({"files":[{"path":"k.sos","format":"fatelf",
    "fat_archs":["x86_64",null],
    "fat_images":[
      {"record":0,"arch":"x86_64","machine":"EM_X86_64","osabi":0,
       "is64":true,"little_endian":true,
       "image":{"format":"elf","arch":"x86_64","machine":"EM_X86_64",
                "os":"linux","is64":true,"type":"shared",
                "needed":["libc.so.6"],"exports":["q"],"error":""}},
      {"record":1,"arch":null,"machine":"EM_PPC64","osabi":97,
       "is64":true,"little_endian":false,
       "image":{"format":"unknown","error":"not an ELF image"}}],
    "error":""}]})";
  auto infos = parseInspectOutput(text);
  REQUIRE(infos);
  const BinaryInfo &k = infos->front();
  CHECK(k.fatArchs == std::vector<Arch>{Arch::X86_64});
  REQUIRE(k.fatImages.size() == 2);
  CHECK(k.fatImages[0].record == 0);
  CHECK(k.fatImages[0].arch == Arch::X86_64);
  CHECK(k.fatImages[0].image.needed == std::vector<std::string>{"libc.so.6"});
  CHECK(k.fatImages[0].image.exportsSymbol("q"));
  CHECK(k.fatImages[1].record == 1);
  CHECK_FALSE(k.fatImages[1].arch);
  CHECK(k.fatImages[1].machine == "EM_PPC64");
  CHECK(k.fatImages[1].osabi == 97);
  CHECK_FALSE(k.fatImages[1].littleEndian);
  CHECK(k.fatImages[1].image.error == "not an ELF image");

  // What the inspection cache stores reads back the same.
  std::string stored = serializeBinaryInfo(k);
  auto again = parseInspectOutput(R"({"files":[)" + stored + "]}");
  REQUIRE(again);
  CHECK(serializeBinaryInfo(again->front()) == stored);
  CHECK(again->front().fatImages[1].osabi == 97);
  CHECK(again->front().fatImages[0].image.os == "linux");
}

TEST_CASE("native checks: a declaration against what a file is") {
  Manifest m;
  m.name = "p";
  RuntimePlugin emb;
  emb.name = "k";
  emb.format = RuntimeFormat::EmbeddedElf;
  emb.library = {{"fat", "k.sos"}, {"x86_64", "k.so"}};
  m.runtimePlugins.push_back(emb);
  std::vector<DeclaredLibrary> libs = declaredLibraries(m);
  REQUIRE(libs.size() == 2);
  CHECK(libs[0].fat);
  CHECK(libs[0].pointer == "/runtime/plugins/0/library/fat");
  CHECK(libs[1].arch == Arch::X86_64);
  CHECK_FALSE(libs[1].os);

  BinaryInfo plugin;
  plugin.format = "elf";
  plugin.arch = Arch::X86_64;
  plugin.os = "none";
  plugin.exports = {"iree_hal_executable_plugin_query"};
  CHECK(check(libs[1], plugin).empty());
  BinaryInfo bigEndian = plugin;
  bigEndian.littleEndian = false;
  CHECK(check(libs[1], bigEndian) ==
        std::vector<std::string>{
            "m.json:3:4: package 'p': member 'k.so': /x: \"k.so\" is declared "
            "for x86_64 but it is an x86_64 big-endian ELF"});

  BinaryInfo fat;
  fat.format = "fatelf";
  CHECK(check(libs[0], fat) ==
        std::vector<std::string>{"m.json:3:4: package 'p': member 'k.sos': "
                                 "/x: \"k.sos\" is a FatELF file without "
                                 "images"});
  FatElfImage good{0, Arch::X86_64, "EM_X86_64", 0, true, true, plugin};
  FatElfImage arm = good;
  arm.record = 1;
  arm.arch = Arch::AArch64;
  arm.image.arch = Arch::AArch64;
  fat.fatImages = {good, arm};
  CHECK(check(libs[0], fat).empty());
  FatElfImage osabi = arm;
  osabi.osabi = 97;
  FatElfImage ppc = arm;
  ppc.arch.reset();
  ppc.machine = "EM_PPC64";
  ppc.littleEndian = false;
  FatElfImage interp = arm;
  interp.image.interpreter = "/lib/ld-linux-aarch64.so.1";
  for (auto [image, message] : std::vector<std::pair<FatElfImage, std::string>>{
           {osabi, "image 1 (aarch64) has ELF OS ABI 97, which IREE's loader "
                   "never selects"},
           {ppc, "image 1 is for EM_PPC64 (64-bit big-endian), not an "
                 "architecture embedded plugins are built for"},
           {interp, "image 1 (aarch64) is an embedded ELF but has a program "
                    "interpreter (/lib/ld-linux-aarch64.so.1)"}}) {
    fat.fatImages = {good, image};
    CHECK(check(libs[0], fat) ==
          std::vector<std::string>{"m.json:3:4: package 'p': member 'k.sos': "
                                   "/x: \"k.sos\" " +
                                   message});
  }
}

TEST_CASE("inspect: Mach-O slices and code signatures, and the cache's "
          "round trip") {
  const char *text = R"({"files":[{"path":"p.dylib","format":"macho",
    "os":"macos","fat_archs":["x86_64","aarch64"],
    "slices":[
      {"format":"macho","arch":"x86_64","machine":"CPU_TYPE_X86_64",
       "os":"macos","type":"shared","exports":["q"],"code_signature":false},
      {"format":"macho","arch":"aarch64","machine":"CPU_TYPE_ARM64",
       "os":"macos","type":"shared","needed":["@rpath/libz.dylib"],
       "exports":["q"],"code_signature":true}],
    "error":""}]})";
  auto infos = parseInspectOutput(text);
  REQUIRE(infos);
  const BinaryInfo &p = infos->front();
  REQUIRE(p.slices.size() == 2);
  CHECK(p.slices[0].arch == Arch::X86_64);
  CHECK_FALSE(p.slices[0].codeSignature);
  CHECK(p.slices[1].codeSignature);
  CHECK(p.slices[1].needed == std::vector<std::string>{"@rpath/libz.dylib"});
  std::string stored = serializeBinaryInfo(p);
  auto again = parseInspectOutput(R"({"files":[)" + stored + "]}");
  REQUIRE(again);
  CHECK(serializeBinaryInfo(again->front()) == stored);
  CHECK(again->front().slices[1].codeSignature);

  auto bad = parseInspectOutput(
      R"({"files":[{"path":"p","format":"macho","slices":[{"format":1}]}]})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        "ireepkg-inspect output: /files/0/slices/0/format: must be a string, "
        "not an integer");
}

TEST_CASE("native checks: Windows and macOS libraries in their own terms") {
  Manifest m;
  m.name = "p";
  RuntimePlugin sys;
  sys.name = "s";
  sys.format = RuntimeFormat::SystemLibrary;
  sys.library = {{"macos-aarch64", "p.dylib"}, {"windows-x86_64", "p.dll"}};
  m.runtimePlugins.push_back(sys);
  std::vector<DeclaredLibrary> libs = declaredLibraries(m);
  REQUIRE(libs.size() == 2);
  const DeclaredLibrary &mac = libs[0], &win = libs[1];
  BinaryInfo dll;
  dll.format = "coff";
  dll.os = "windows";
  dll.type = "shared";
  dll.arch = Arch::X86_64;
  dll.machine = "IMAGE_FILE_MACHINE_AMD64";
  dll.exports = {"iree_hal_executable_plugin_query"};
  // System DLLs, whatever their case, and API sets are not named.
  dll.needed = {"KERNEL32.dll", "msvcrt.dll", "VCRUNTIME140.dll",
                "api-ms-win-crt-runtime-l1-1-0.dll"};
  CHECK(check(win, dll).empty());
  dll.needed.push_back("libgcc_s_seh-1.dll");
  dll.needed.push_back("libwinpthread-1.dll");
  auto warned = check(win, dll);
  REQUIRE(warned.size() == 1);
  CHECK(warned[0].starts_with(
      "m.json:3:4: package 'p': member 'p.dll': /x: warning: \"p.dll\" imports "
      "libgcc_s_seh-1.dll, "
      "libwinpthread-1.dll, which Windows will not look for beside the "
      "plugin: IREE loads plugins with LoadLibraryA(path), and DLLs a plugin "
      "imports are searched for in"));

  BinaryInfo thin;
  thin.format = "macho";
  thin.os = "macos";
  thin.type = "shared";
  thin.arch = Arch::AArch64;
  thin.machine = "CPU_TYPE_ARM64";
  thin.exports = {"iree_hal_executable_plugin_query"};
  thin.codeSignature = true;
  thin.needed = {"/usr/lib/libSystem.B.dylib", "@rpath/libz.dylib",
                 "/System/Library/Frameworks/Metal.framework/Metal"};
  CHECK(check(mac, thin).empty());
  // The tool's directory is not the plugin's; a bare name is looked up
  // from the current directory.
  BinaryInfo elsewhere = thin;
  elsewhere.needed.push_back("@executable_path/libq.dylib");
  elsewhere.needed.push_back("libr.dylib");
  auto loads = check(mac, elsewhere);
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].starts_with(
      "m.json:3:4: package 'p': member 'p.dylib': /x: warning: \"p.dylib\" "
      "loads @executable_path/libq.dylib, libr.dylib by a path that is "
      "neither the system's"));
  BinaryInfo x86 = thin;
  x86.arch = Arch::X86_64;
  x86.machine = "CPU_TYPE_X86_64";
  BinaryInfo ppc = thin;
  ppc.arch.reset();
  ppc.machine = "CPU_TYPE_POWERPC";
  BinaryInfo fat;
  fat.format = "macho";
  fat.os = "macos";
  fat.slices = {x86, ppc};
  auto missing = check(mac, fat);
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].starts_with(
      "m.json:3:4: package 'p': member 'p.dylib': /x: \"p.dylib\" is declared "
      "for macos-aarch64 but "
      "it is a universal binary without an aarch64 slice (it holds x86_64, "
      "ppc)"));
  fat.slices = {x86, thin};
  CHECK(check(mac, fat).empty());
  CHECK(check(mac, ppc)[0].starts_with(
      "m.json:3:4: package 'p': member 'p.dylib': /x: \"p.dylib\" is declared "
      "for macos-aarch64 but "
      "it is a ppc Mach-O library (CPU_TYPE_POWERPC)"));
}
