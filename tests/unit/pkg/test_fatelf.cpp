//===- test_fatelf.cpp - FatELF files and the ireepkg-inspect client ------===//
//
// FatELF join/parse/select/split round trips on minimal ELF images built in
// memory (several machines, word sizes and byte orders), every refusal with
// its message, the architectures a file can be activated for, and the
// parsing of ireepkg-inspect's JSON output.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/checks/binary_info.h"
#include "ireepkg/pkg/package/fatelf.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace ireepkg;
using namespace ireepkg::fatelf;

namespace {

constexpr uint16_t kX86_64 = 0x3E, kAArch64 = 0xB7, kRiscV = 0xF3, kArm = 0x28,
                   kPpc64 = 0x15;

void put(std::string &out, size_t at, uint64_t value, size_t bytes,
         bool little) {
  for (size_t i = 0; i < bytes; ++i) {
    size_t shift = 8 * (little ? i : bytes - 1 - i);
    out[at + i] = static_cast<char>((value >> shift) & 0xFF);
  }
}

/// A minimal valid ELF header (ET_DYN) followed by `payload`.
std::string makeElf(uint16_t machine, bool is64, bool little, uint8_t osabi = 0,
                    uint8_t abiVersion = 0, std::string payload = {}) {
  size_t headerSize = is64 ? 64 : 52;
  std::string elf(headerSize, '\0');
  elf[0] = 0x7F;
  elf[1] = 'E';
  elf[2] = 'L';
  elf[3] = 'F';
  elf[4] = is64 ? 2 : 1;   // EI_CLASS
  elf[5] = little ? 1 : 2; // EI_DATA
  elf[6] = 1;              // EI_VERSION
  elf[7] = static_cast<char>(osabi);
  elf[8] = static_cast<char>(abiVersion);
  put(elf, 16, 3, 2, little); // e_type = ET_DYN
  put(elf, 18, machine, 2, little);
  put(elf, 20, 1, 4, little);                      // e_version
  put(elf, is64 ? 52 : 40, headerSize, 2, little); // e_ehsize
  if (payload.empty())
    payload = "image of machine " + std::to_string(machine) +
              (is64 ? " 64" : " 32") + (little ? " le" : " be");
  return elf + payload;
}

uint64_t getLE(std::string_view data, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i)
    v |= uint64_t(static_cast<uint8_t>(data[at + i])) << (8 * i);
  return v;
}

/// A FatELF of x86_64, aarch64 and riscv64 images, and the images.
struct Sample {
  std::vector<std::string> images = {makeElf(kX86_64, true, true),
                                     makeElf(kAArch64, true, true, 3, 1),
                                     makeElf(kRiscV, true, true, 255)};
  std::vector<std::string> names = {"a.x86_64.so", "a.aarch64.so",
                                    "a.riscv64.so"};
  std::string fat;
  Sample() {
    auto joined = join({images.begin(), images.end()}, names);
    REQUIRE(joined);
    fat = *joined;
  }
};

std::string formatOf(const Error &e) { return e.format(); }

} // namespace

TEST_CASE("fatelf: architecture tables") {
  CHECK(elfMachine(Arch::X86_64) == 0x3E);
  CHECK(elfMachine(Arch::AArch64) == 0xB7);
  CHECK(elfMachine(Arch::RiscV64) == 0xF3);
  CHECK(elfMachine(Arch::RiscV32) == 0xF3);
  CHECK(elfMachine(Arch::Arm) == 0x28);
  CHECK(wordSize(Arch::X86_64) == 2);
  CHECK(wordSize(Arch::RiscV32) == 1);
  CHECK(wordSize(Arch::Arm) == 1);
  CHECK(archOf(0xF3, 2) == Arch::RiscV64);
  CHECK(archOf(0xF3, 1) == Arch::RiscV32);
  CHECK(archOf(0x3E, 2) == Arch::X86_64);
  CHECK(archOf(0xB7, 2) == Arch::AArch64);
  CHECK(archOf(0x28, 1) == Arch::Arm);
  CHECK_FALSE(archOf(0x3E, 1)); // x32 is not one of ours
  CHECK_FALSE(archOf(kPpc64, 2));
}

TEST_CASE("fatelf: reading ELF identities") {
  auto id = readElfIdentity(makeElf(kX86_64, true, true, 3, 7));
  REQUIRE(id);
  CHECK(id->machine == kX86_64);
  CHECK(id->osabi == 3);
  CHECK(id->osabiVersion == 7);
  CHECK(id->wordSize == 2);
  CHECK(id->byteOrder == 1);

  // Big-endian: e_machine is read in the ELF's own byte order.
  id = readElfIdentity(makeElf(kPpc64, true, false));
  REQUIRE(id);
  CHECK(id->machine == kPpc64);
  CHECK(id->wordSize == 2);
  CHECK(id->byteOrder == 0);

  id = readElfIdentity(makeElf(kRiscV, false, true));
  REQUIRE(id);
  CHECK(id->machine == kRiscV);
  CHECK(id->wordSize == 1);

  id = readElfIdentity(makeElf(kArm, false, false));
  REQUIRE(id);
  CHECK(id->machine == kArm);
  CHECK(id->byteOrder == 0);
}

TEST_CASE("fatelf: ELF identity errors") {
  auto message = [](std::string_view image) {
    auto id = readElfIdentity(image);
    REQUIRE_FALSE(id);
    CHECK(id.error().code == ErrorCode::Invalid);
    return id.error().message;
  };
  CHECK(message("hello world, this is text") == "not an ELF file");
  CHECK(message("") == "not an ELF file");
  CHECK(message("\x7F"
                "EL") == "not an ELF file");
  CHECK(message(std::string("\x7F"
                            "ELF\x02\x01",
                            6)) == "truncated ELF header (6 bytes)");
  std::string elf = makeElf(kX86_64, true, true);
  std::string bad = elf;
  bad[4] = 3;
  CHECK(message(bad) ==
        "unknown ELF class 3 (expected 1 for 32-bit or 2 for 64-bit)");
  bad = elf;
  bad[5] = 0;
  CHECK(message(bad) == "unknown ELF data encoding 0 (expected 1 for "
                        "little-endian or 2 for big-endian)");
  CHECK(message(elf.substr(0, 40)) ==
        "truncated ELF header (40 bytes, a 64-bit header needs 64)");
  CHECK(message(makeElf(kArm, false, true).substr(0, 51)) ==
        "truncated ELF header (51 bytes, a 32-bit header needs 52)");
}

TEST_CASE("fatelf: join writes IREE's layout") {
  Sample s;
  const std::string &fat = s.fat;
  CHECK(isFatElf(fat));
  CHECK_FALSE(isFatElf(s.images[0]));
  CHECK_FALSE(isFatElf("\xFA\x70\x0E"));
  // Header: magic FA 70 0E 1F, version 1, count, reserved.
  CHECK(fat.substr(0, 4) == "\xFA\x70\x0E\x1F");
  CHECK(getLE(fat, 4, 2) == 1);
  CHECK(getLE(fat, 6, 1) == 3);
  CHECK(getLE(fat, 7, 1) == 0);
  // Records.
  size_t expectOffset = 4096;
  for (size_t i = 0; i < 3; ++i) {
    size_t at = 8 + 24 * i;
    auto id = readElfIdentity(s.images[i]);
    REQUIRE(id);
    CHECK(getLE(fat, at, 2) == id->machine);
    CHECK(getLE(fat, at + 2, 1) == id->osabi);
    CHECK(getLE(fat, at + 3, 1) == id->osabiVersion);
    CHECK(getLE(fat, at + 4, 1) == 2);
    CHECK(getLE(fat, at + 5, 1) == 1);
    CHECK(getLE(fat, at + 6, 2) == 0);
    CHECK(getLE(fat, at + 8, 8) == expectOffset);
    CHECK(getLE(fat, at + 16, 8) == s.images[i].size());
    // The image, then zero padding up to the next page.
    CHECK(fat.substr(expectOffset, s.images[i].size()) == s.images[i]);
    size_t padEnd = expectOffset + 4096;
    for (size_t p = expectOffset + s.images[i].size(); p < padEnd; ++p)
      REQUIRE(fat[p] == '\0');
    expectOffset = padEnd;
  }
  CHECK(fat.size() == 4 * 4096);
  // The table itself is followed by zeros up to the first image.
  for (size_t p = 8 + 3 * 24; p < 4096; ++p)
    REQUIRE(fat[p] == '\0');
}

TEST_CASE("fatelf: a large image spans several pages") {
  std::string big = makeElf(kX86_64, true, true, 0, 0, std::string(9000, 'x'));
  std::string small = makeElf(kAArch64, true, true);
  auto fat = join({big, small}, {"big", "small"});
  REQUIRE(fat);
  auto records = parse(*fat, "f.sos");
  REQUIRE(records);
  REQUIRE(records->size() == 2);
  CHECK((*records)[0].offset == 4096);
  CHECK((*records)[0].size == big.size());
  CHECK((*records)[1].offset == 4096 + 12288); // 9064 bytes -> 3 pages
  CHECK(fat->size() == 4096 + 12288 + 4096);
}

TEST_CASE("fatelf: parse and split give back the inputs") {
  Sample s;
  auto records = parse(s.fat, "a.sos");
  REQUIRE(records);
  REQUIRE(records->size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const Record &r = (*records)[i];
    CHECK(s.fat.substr(r.offset, r.size) == s.images[i]);
  }
  CHECK((*records)[1].osabi == 3);
  CHECK((*records)[1].osabiVersion == 1);
  CHECK((*records)[2].osabi == 255);

  // Joining the split images again gives the same bytes.
  std::vector<std::string_view> split;
  for (const Record &r : *records)
    split.push_back(std::string_view(s.fat).substr(r.offset, r.size));
  auto again = join(split, s.names);
  REQUIRE(again);
  CHECK(*again == s.fat);
}

TEST_CASE("fatelf: images of mixed word sizes and byte orders") {
  std::vector<std::string> images = {
      makeElf(kRiscV, true, true), makeElf(kRiscV, false, true),
      makeElf(kPpc64, true, false), makeElf(kPpc64, true, true),
      makeElf(kArm, false, true)};
  std::vector<std::string> names = {"rv64", "rv32", "ppc64", "ppc64le", "arm"};
  auto fat = join({images.begin(), images.end()}, names);
  REQUIRE(fat);
  auto records = parse(*fat, "m.sos");
  REQUIRE(records);
  REQUIRE(records->size() == 5);
  CHECK((*records)[1].wordSize == 1);
  CHECK((*records)[2].machine == kPpc64);
  CHECK((*records)[2].byteOrder == 0);
  CHECK((*records)[3].byteOrder == 1);
  for (size_t i = 0; i < 5; ++i)
    CHECK(fat->substr((*records)[i].offset, (*records)[i].size) == images[i]);

  auto r = select(*records, Arch::RiscV64, "m.sos");
  REQUIRE(r);
  CHECK(r->offset == (*records)[0].offset);
  r = select(*records, Arch::RiscV32, "m.sos");
  REQUIRE(r);
  CHECK(r->offset == (*records)[1].offset);
  r = select(*records, Arch::Arm, "m.sos");
  REQUIRE(r);
  CHECK(r->offset == (*records)[4].offset);
  r = select(*records, Arch::X86_64, "m.sos");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::NotFound);
  CHECK(formatOf(r.error()) ==
        "m.sos: no image for x86_64 (the file holds: riscv64; riscv32; "
        "machine 0x15, 64-bit big-endian; machine 0x15, 64-bit "
        "little-endian; arm)");
}

TEST_CASE("fatelf: join refusals") {
  std::string x86 = makeElf(kX86_64, true, true);
  auto err = [](const std::vector<std::string_view> &images,
                const std::vector<std::string> &names) {
    auto r = join(images, names);
    REQUIRE_FALSE(r);
    return r.error();
  };

  Error e = err({x86, "#!/bin/sh\necho hi\n"}, {"a.so", "script.sh"});
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(e.where.file == "script.sh");
  CHECK(formatOf(e) == "script.sh: not an ELF file");

  e = err({x86, std::string(x86).substr(0, 30)}, {"a.so", "short.so"});
  CHECK(formatOf(e) ==
        "short.so: truncated ELF header (30 bytes, a 64-bit header needs "
        "64)");

  // The same machine, word size and byte order twice, even with another
  // OS ABI.
  e = err({x86, makeElf(kX86_64, true, true, 3)}, {"a.so", "b.so"});
  CHECK(e.code == ErrorCode::Invalid);
  CHECK(formatOf(e) == "b.so: same architecture (x86_64) as a.so\n"
                       "  hint: a FatELF file holds one image per "
                       "architecture");
  e = err({makeElf(kPpc64, true, false), makeElf(kPpc64, true, false)},
          {"p1", "p2"});
  CHECK(e.message == "same architecture (machine 0x15, 64-bit big-endian) "
                     "as p1");
  // ...but the same machine with another word size or byte order is fine.
  CHECK(join({makeElf(kPpc64, true, false), makeElf(kPpc64, true, true)},
             {"p1", "p2"}));

  e = err({}, {});
  CHECK(e.message == "no ELF images to join");

  std::vector<std::string> many(256, x86);
  std::vector<std::string> manyNames(256, "x.so");
  e = err({many.begin(), many.end()}, manyNames);
  CHECK(e.message == "cannot join 256 images: a FatELF file holds at most 255");

  e = err({x86}, {});
  CHECK(e.code == ErrorCode::Internal);
}

TEST_CASE("fatelf: 255 images are allowed") {
  std::vector<std::string> images;
  std::vector<std::string> names;
  for (uint16_t m = 1; m <= 255; ++m) {
    images.push_back(makeElf(m, true, true));
    names.push_back("m" + std::to_string(m));
  }
  auto fat = join({images.begin(), images.end()}, names);
  REQUIRE(fat);
  auto records = parse(*fat, "many.sos");
  REQUIRE(records);
  CHECK(records->size() == 255);
  CHECK(records->back().machine == 255);
  CHECK(fat->substr(records->back().offset, records->back().size) ==
        images.back());
}

TEST_CASE("fatelf: parse refusals") {
  Sample s;
  auto err = [](std::string_view data) {
    auto r = parse(data, "bad.sos");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::Invalid);
    CHECK(r.error().where.file == "bad.sos");
    Error shown = r.error();
    shown.hint.clear();
    return shown.format();
  };
  CHECK(err(s.images[0]) == "bad.sos: not a FatELF file (bad magic)");
  CHECK(err("") == "bad.sos: not a FatELF file (bad magic)");
  CHECK(err("\xFA\x70") == "bad.sos: truncated FatELF header (2 bytes, the "
                           "header needs 8)");
  CHECK(err(s.fat.substr(0, 7)) ==
        "bad.sos: truncated FatELF header (7 bytes, the header needs 8)");

  std::string v2 = s.fat;
  v2[4] = 2;
  CHECK(err(v2) ==
        "bad.sos: unsupported FatELF version 2 (ireepkg and IREE read "
        "version 1)");
  std::string v0 = s.fat;
  v0[4] = 0;
  CHECK(err(v0) ==
        "bad.sos: unsupported FatELF version 0 (ireepkg and IREE read "
        "version 1)");

  std::string none = s.fat;
  none[6] = 0;
  CHECK(err(none) == "bad.sos: FatELF file has no records");

  CHECK(err(s.fat.substr(0, 60)) ==
        "bad.sos: truncated FatELF record table (3 records need 80 bytes, "
        "the file has 60)");

  // The last image cut short: its range now ends past the file.
  size_t cut = 3 * 4096 + 10;
  CHECK(err(s.fat.substr(0, cut)) ==
        "bad.sos: record 2 (riscv64) points outside the file: offset "
        "12288, size " +
            std::to_string(s.images[2].size()) + ", but the file has " +
            std::to_string(cut) + " bytes");

  // An offset past the end, and an offset + size that wraps around.
  std::string far = s.fat;
  for (size_t i = 0; i < 8; ++i)
    far[8 + 24 + 8 + i] = i == 2 ? 0x10 : 0; // record 1 offset = 0x100000
  CHECK(err(far) == "bad.sos: record 1 (aarch64) points outside the file: "
                    "offset 1048576, size " +
                        std::to_string(s.images[1].size()) +
                        ", but the file has 16384 bytes");
  std::string wrap = s.fat;
  for (size_t i = 0; i < 8; ++i)
    wrap[8 + 16 + i] = '\xFF'; // record 0 size = 2^64 - 1
  CHECK(err(wrap) == "bad.sos: record 0 (x86_64) points outside the file: "
                     "offset 4096, size 18446744073709551615, but the file "
                     "has 16384 bytes");

  auto r = parse(s.images[0], "plain.so");
  REQUIRE_FALSE(r);
  CHECK(r.error().hint == "a FatELF file starts with the bytes FA 70 0E 1F");
}

TEST_CASE("fatelf: select follows IREE's rule") {
  Sample s;
  auto records = parse(s.fat, "a.sos");
  REQUIRE(records);
  auto r = select(*records, Arch::X86_64, "a.sos");
  REQUIRE(r);
  CHECK(r->machine == kX86_64);
  r = select(*records, Arch::AArch64, "a.sos"); // osabi LINUX
  REQUIRE(r);
  CHECK(r->machine == kAArch64);
  r = select(*records, Arch::RiscV64, "a.sos"); // osabi STANDALONE
  REQUIRE(r);
  CHECK(r->machine == kRiscV);
  r = select(*records, Arch::RiscV32, "a.sos");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::NotFound);
  CHECK(formatOf(r.error()) == "a.sos: no image for riscv32 (the file holds: "
                               "x86_64; aarch64; riscv64)");

  // Other OS ABIs and big-endian images are never selected; the first
  // match wins.
  std::vector<Record> recs = {
      {kAArch64, 97, 0, 2, 1, 4096, 10}, // ELFOSABI_ARM
      {kAArch64, 0, 0, 2, 0, 8192, 10},  // big-endian
      {kAArch64, 0, 0, 1, 1, 12288, 10}, // 32-bit
      {kAArch64, 3, 0, 2, 1, 16384, 10}, {kAArch64, 0, 0, 2, 1, 20480, 10},
  };
  r = select(recs, Arch::AArch64, "x.sos");
  REQUIRE(r);
  CHECK(r->offset == 16384);
  recs.resize(3);
  r = select(recs, Arch::AArch64, "x.sos");
  REQUIRE_FALSE(r);
  CHECK(r.error().message ==
        "no image for aarch64 (the file holds: aarch64 (osabi 97); aarch64, "
        "64-bit big-endian; machine 0xb7, 32-bit little-endian)");
  r = select({}, Arch::Arm, "empty.sos");
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "no image for arm (the file holds: nothing)");
}

TEST_CASE("fatelf: the architectures a file can be activated for") {
  Sample s;
  auto records = parse(s.fat, "a.sos");
  REQUIRE(records);
  CHECK(loadableArchs(*records) ==
        std::vector<Arch>{Arch::X86_64, Arch::AArch64, Arch::RiscV64});
  // What select never finds is not listed; an architecture is listed once.
  std::vector<Record> recs = {
      {kAArch64, 97, 0, 2, 1, 4096, 10}, // ELFOSABI_ARM
      {kAArch64, 0, 0, 2, 0, 8192, 10},  // big-endian
      {kRiscV, 0, 0, 1, 1, 12288, 10},   // riscv32
      {kPpc64, 0, 0, 2, 1, 16384, 10},   // not ours
      {kRiscV, 3, 0, 1, 1, 20480, 10},   // riscv32 again
  };
  CHECK(loadableArchs(recs) == std::vector<Arch>{Arch::RiscV32});
  CHECK(loadableArchs({}).empty());
  CHECK(loadableOsAbi(0));
  CHECK(loadableOsAbi(3));
  CHECK(loadableOsAbi(255));
  CHECK_FALSE(loadableOsAbi(97));
}

TEST_CASE("fatelf: reading only the table of a file") {
  Sample s;
  auto dir = std::filesystem::temp_directory_path() /
             ("ireepkg-test-table-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string &name, const std::string &bytes) {
    std::ofstream((dir / name).string(), std::ios::binary) << bytes;
    return (dir / name).string();
  };
  auto table = readTable(write("a.sos", s.fat));
  REQUIRE(table);
  auto whole = parse(s.fat, "a.sos");
  REQUIRE(whole);
  REQUIRE(table->size() == whole->size());
  for (size_t i = 0; i < table->size(); ++i) {
    CHECK((*table)[i].machine == (*whole)[i].machine);
    CHECK((*table)[i].offset == (*whole)[i].offset);
    CHECK((*table)[i].size == (*whole)[i].size);
  }
  // The records' ranges are checked against the file's size, and the
  // messages are parse's.
  size_t intoLastImage = static_cast<size_t>(whole->back().offset) + 10;
  for (size_t cut : {size_t(5), size_t(50), intoLastImage}) {
    std::string path = write("cut.sos", s.fat.substr(0, cut));
    auto a = readTable(path);
    auto b = parse(s.fat.substr(0, cut), path);
    REQUIRE_FALSE(a);
    REQUIRE_FALSE(b);
    CHECK(a.error().message == b.error().message);
  }
  auto missing = readTable((dir / "nope.sos").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "cannot read: No such file or directory");
  std::filesystem::remove_all(dir);
}

//===----------------------------------------------------------------------===//
// The ireepkg-inspect client
//===----------------------------------------------------------------------===//

TEST_CASE("inspect: parsing the tool's output") {
  const char *text = R"({"files":[
    {"path":"a.so","format":"elf","arch":"aarch64","machine":"EM_AARCH64",
     "os":"none","is64":true,"little_endian":true,"type":"shared",
     "needed":[],"interpreter":"",
     "exports":["zeta","iree_hal_executable_plugin_query","zeta"],
     "fat_archs":[],"error":""},
    {"path":"/usr/lib/libx.so","format":"elf","arch":null,"machine":"EM_PPC64",
     "os":"linux","is64":true,"little_endian":false,"type":"executable",
     "needed":["libc.so.6","libm.so.6"],"interpreter":"/lib/ld64.so.1",
     "exports":[],"fat_archs":[],"error":"", "future_field": 1},
    {"path":"k.sos","format":"fatelf","arch":null,"machine":"","os":"",
     "is64":false,"little_endian":true,"type":"other","needed":[],
     "interpreter":"","exports":[],
     "fat_archs":["x86_64",null,"riscv32","sparc"],"error":""},
    {"path":"notes.txt","format":"unknown","arch":null,"machine":"","os":"",
     "is64":false,"little_endian":true,"type":"other","needed":[],
     "interpreter":"","exports":[],"fat_archs":[],
     "error":"not an object file"},
    {"path":"min.so","format":"coff"}
  ]})";
  auto infos = parseInspectOutput(text);
  REQUIRE(infos);
  REQUIRE(infos->size() == 5);
  const BinaryInfo &a = (*infos)[0];
  CHECK(a.path == "a.so");
  CHECK(a.format == "elf");
  CHECK(a.arch == Arch::AArch64);
  CHECK(a.machine == "EM_AARCH64");
  CHECK(a.os == "none");
  CHECK(a.is64);
  CHECK(a.littleEndian);
  CHECK(a.type == "shared");
  CHECK(a.needed.empty());
  CHECK(a.interpreter == "");
  CHECK(a.exports ==
        std::vector<std::string>{"iree_hal_executable_plugin_query", "zeta"});
  CHECK(a.exportsSymbol("iree_hal_executable_plugin_query"));
  CHECK_FALSE(a.exportsSymbol("iree_hal"));
  CHECK(a.fatArchs.empty());
  CHECK(a.error == "");

  const BinaryInfo &b = (*infos)[1];
  CHECK_FALSE(b.arch);
  CHECK(b.machine == "EM_PPC64");
  CHECK(b.os == "linux");
  CHECK_FALSE(b.littleEndian);
  CHECK(b.type == "executable");
  CHECK(b.needed == std::vector<std::string>{"libc.so.6", "libm.so.6"});
  CHECK(b.interpreter == "/lib/ld64.so.1");

  const BinaryInfo &k = (*infos)[2];
  CHECK(k.format == "fatelf");
  CHECK(k.fatArchs == std::vector<Arch>{Arch::X86_64, Arch::RiscV32});

  CHECK((*infos)[3].error == "not an object file");
  CHECK((*infos)[3].format == "unknown");

  const BinaryInfo &m = (*infos)[4];
  CHECK(m.format == "coff");
  CHECK(m.type == "");
  CHECK(m.exports.empty());
}

TEST_CASE("inspect: what x86-64 code needs of the CPU") {
  const char *text = R"({"files":[
    {"path":"k.so","format":"elf","arch":"x86_64","cpu_scanned":true,
     "cpu_uses":[{"feature":"avx","address":4990,"offset":894,
                  "section":".text","symbol":"f","mnemonic":"vmovss"},
                 {"feature":"popcnt"}]}]})";
  auto infos = parseInspectOutput(text);
  REQUIRE(infos);
  const BinaryInfo &k = infos->front();
  CHECK(k.cpuScanned);
  REQUIRE(k.cpuUses.size() == 2);
  CHECK(k.cpuUses[0].feature == "avx");
  CHECK(k.cpuUses[0].address == 4990);
  CHECK(k.cpuUses[0].offset == 894);
  CHECK(k.cpuUses[0].section == ".text");
  CHECK(k.cpuUses[0].symbol == "f");
  CHECK(k.cpuUses[0].mnemonic == "vmovss");
  CHECK(k.cpuUses[1].feature == "popcnt");
  CHECK(k.cpuUses[1].symbol == "");

  auto message = [](std::string_view t) {
    auto r = parseInspectOutput(t);
    REQUIRE_FALSE(r);
    return r.error().message;
  };
  CHECK(message(R"({"files":[{"path":"a","format":"elf","cpu_uses":{}}]})") ==
        "ireepkg-inspect output: /files/0/cpu_uses: must be an array, not an "
        "object");
  CHECK(message(R"({"files":[{"path":"a","format":"elf","cpu_uses":[{}]}]})") ==
        "ireepkg-inspect output: /files/0/cpu_uses/0/feature: missing");
  CHECK(message(R"({"files":[{"path":"a","format":"elf",
                   "cpu_uses":[{"feature":"avx","offset":-1}]}]})") ==
        "ireepkg-inspect output: /files/0/cpu_uses/0/offset: must be an "
        "unsigned integer, not an integer");
}

TEST_CASE("inspect: malformed tool output is an error") {
  auto message = [](std::string_view text) {
    auto r = parseInspectOutput(text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::Internal);
    CHECK_FALSE(r.error().hint.empty());
    return r.error().message;
  };
  CHECK(message(R"({"files":[{"path":"a.so","format":)") ==
        "ireepkg-inspect printed malformed JSON");
  CHECK(message("") == "ireepkg-inspect printed malformed JSON");
  CHECK(message("[]") ==
        "ireepkg-inspect output: /: must be an object, not an array");
  CHECK(message("{}") ==
        "ireepkg-inspect output: /files: must be an array, but is missing");
  CHECK(message(R"({"files":{}})") ==
        "ireepkg-inspect output: /files: must be an array, not an object");
  CHECK(message(R"({"files":[7]})") ==
        "ireepkg-inspect output: /files/0: must be an object, not an integer");
  CHECK(message(R"({"files":[7.5]})") ==
        "ireepkg-inspect output: /files/0: must be an object, not a number");
  CHECK(message(R"({"files":[{"format":"elf"}]})") ==
        "ireepkg-inspect output: /files/0/path: missing");
  CHECK(message(R"({"files":[{"path":"a","format":"elf","is64":"yes"}]})") ==
        "ireepkg-inspect output: /files/0/is64: must be a boolean, not a "
        "string");
  CHECK(message(R"({"files":[{"path":"a","format":"elf","arch":64}]})") ==
        "ireepkg-inspect output: /files/0/arch: must be a string or null, "
        "not an integer");
  CHECK(
      message(
          R"({"files":[{"path":"a","format":"elf","exports":["f",null]}]})") ==
      "ireepkg-inspect output: /files/0/exports/1: must be a string, not "
      "null");
  CHECK(message(
            R"({"files":[{"path":"a","format":"fatelf","fat_archs":"x"}]})") ==
        "ireepkg-inspect output: /files/0/fat_archs: must be an array, not "
        "a string");
  CHECK(parseInspectOutput(R"({"files":[]})"));
  CHECK(message(
            R"({"files":[{"path":"a","format":"fatelf","fat_images":[7]}]})") ==
        "ireepkg-inspect output: /files/0/fat_images/0: must be an object, "
        "not an integer");
  CHECK(message(R"({"files":[{"path":"a","format":"fatelf","fat_images":)"
                R"([{"record":0}]}]})") ==
        "ireepkg-inspect output: /files/0/fat_images/0/image: missing");
  CHECK(message(R"({"files":[{"path":"a","format":"fatelf","fat_images":)"
                R"([{"record":-1,"image":{"format":"elf"}}]}]})") ==
        "ireepkg-inspect output: /files/0/fat_images/0/record: must be an "
        "unsigned integer, not an integer");
  CHECK(message(R"({"files":[{"path":"a","format":"fatelf","fat_images":)"
                R"([{"image":{"format":"elf","needed":[1]}}]}]})") ==
        "ireepkg-inspect output: /files/0/fat_images/0/image/needed/0: must "
        "be a string, not an integer");
}

namespace {

/// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string &value) : name(std::move(n)) {
    if (const char *v = std::getenv(name.c_str()))
      old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

std::filesystem::path tempDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("ireepkg-test-fatelf-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

void writeFile(const std::filesystem::path &p, const std::string &text) {
  std::ofstream(p, std::ios::binary) << text;
}

} // namespace

TEST_CASE("inspect: running the tool") {
  // The tool is built beside this test binary.
  auto dir = tempDir();
  writeFile(dir / "text.txt", "just text\n");
  std::string fat =
      *join({makeElf(kX86_64, true, true), makeElf(kAArch64, true, true)},
            {"a", "b"});
  writeFile(dir / "k.sos", fat);

  auto infos = inspectBinaries({(dir / "text.txt").string(),
                                (dir / "k.sos").string(), "/proc/self/exe"});
  REQUIRE_MESSAGE(infos, (infos ? "" : infos.error().format()));
  REQUIRE(infos->size() == 3);
  CHECK((*infos)[0].error == "not an object file");
  CHECK((*infos)[1].format == "fatelf");
  CHECK((*infos)[1].fatArchs == std::vector<Arch>{Arch::X86_64, Arch::AArch64});
  CHECK((*infos)[2].format == "elf");
  CHECK((*infos)[2].path == "/proc/self/exe");
  CHECK((*infos)[2].error == "");

  CHECK(inspectBinaries({})->empty());

  // More paths than one run takes: several runs, results in order.
  std::vector<std::string> many;
  for (int i = 0; i < 450; ++i)
    many.push_back((dir / (i % 2 ? "k.sos" : "text.txt")).string());
  infos = inspectBinaries(many);
  REQUIRE(infos);
  REQUIRE(infos->size() == 450);
  for (size_t i = 0; i < 450; ++i)
    REQUIRE((*infos)[i].format == (i % 2 ? "fatelf" : "unknown"));

  std::filesystem::remove_all(dir);
}

TEST_CASE("inspect: when the tool fails") {
  auto dir = tempDir();
  SUBCASE("IREEPKG_INSPECT names a missing file") {
    ScopedEnv env("IREEPKG_INSPECT", (dir / "no-such-tool").string());
    auto r = inspectBinaries({"/proc/self/exe"});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::NotFound);
    CHECK(r.error().message.find("not an executable file") !=
          std::string::npos);
  }
  SUBCASE("the tool fails") {
    writeFile(dir / "fails.sh", "#!/bin/sh\necho 'it broke' >&2\nexit 3\n");
    std::filesystem::permissions(dir / "fails.sh",
                                 std::filesystem::perms::owner_all);
    ScopedEnv env("IREEPKG_INSPECT", (dir / "fails.sh").string());
    auto r = inspectBinaries({"x.so"});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::Internal);
    CHECK(r.error().message ==
          "ireepkg-inspect failed with exit status 3 while reading 'x.so': "
          "it broke");
  }
  SUBCASE("the tool is killed by a signal") {
    writeFile(dir / "crash.sh", "#!/bin/sh\nkill -SEGV $$\n");
    std::filesystem::permissions(dir / "crash.sh",
                                 std::filesystem::perms::owner_all);
    ScopedEnv env("IREEPKG_INSPECT", (dir / "crash.sh").string());
    auto r = inspectBinaries({"a.so", "b.so"});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::Internal);
    CHECK(r.error().message.starts_with(
        "ireepkg-inspect was killed by signal 11"));
    CHECK(r.error().message.ends_with(
        "while reading 2 files, from 'a.so' to 'b.so'"));
  }
  SUBCASE("the tool prints something else") {
    writeFile(dir / "talks.sh", "#!/bin/sh\necho hello\n");
    std::filesystem::permissions(dir / "talks.sh",
                                 std::filesystem::perms::owner_all);
    ScopedEnv env("IREEPKG_INSPECT", (dir / "talks.sh").string());
    auto r = inspectBinaries({"a.so"});
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "ireepkg-inspect printed malformed JSON");
  }
  std::filesystem::remove_all(dir);
}
