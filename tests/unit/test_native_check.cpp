//===- test_native_check.cpp - Native libraries against their manifest ----===//
//
// What ireepkg-inspect says about FatELF images as the client reads it, the
// inspection cache's round trip (serializeBinaryInfo), and the checks of a
// declared library against what the file is (native_check.h), message by
// message.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/native_check.h"

#include <doctest/doctest.h>

using namespace ireepkg;

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

  auto check = [](const DeclaredLibrary &d, const BinaryInfo &info) {
    DiagnosticList diags;
    checkLibrary(d, info, Location{"m.json", 3, 4, "/x", "p", d.path}, diags);
    std::vector<std::string> out;
    for (const Diagnostic &x : diags.items())
      out.push_back(x.format());
    return out;
  };
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
