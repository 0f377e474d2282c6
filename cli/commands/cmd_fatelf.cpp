//===- cli/commands/cmd_fatelf.cpp - `ireepkg fatelf ...` -----------------===//
//
// The FatELF commands: join per-architecture ELF files into one `.sos`,
// split one back into byte-identical files, extract the image IREE's runtime
// would load on an architecture, and print the header and records. Every
// file is written atomically (a temporary file in the same directory, then
// a rename).
//
//===----------------------------------------------------------------------===//
#include "commands/command.h"
#include "output/messages.h"
#include "commands/options.h"

#include "ireepkg/pkg/package/fatelf.h"
#include "ireepkg/manifest_schema/suggest.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::cli {

namespace {


/// Prints an error as `ireepkg: error: <file>: <message>` plus its hint.
int fail(const Error &e) {
  Error shown = e;
  shown.hint.clear();
  printError(shown.format(), e.hint);
  return kExitFailure;
}

int usage(const std::string &command, const std::string &message) {
  printError(message, "see `ireepkg " + command + " --help`");
  return kExitUsage;
}

Expected<std::string> readFile(const std::string &path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return makeError(ErrorCode::Io, "is a directory, not a file",
                     Location::inFile(path));
  // Opening a named pipe would wait for a writer.
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    return makeError(ErrorCode::Io, "not a regular file",
                     Location::inFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(ErrorCode::Io,
                     std::string("cannot read: ") + std::strerror(errno),
                     Location::inFile(path));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad())
    return makeError(ErrorCode::Io, "read failed", Location::inFile(path));
  return std::move(buf).str();
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over
/// `path`, so that a reader never sees a partly written file.
Status writeFileAtomic(const fs::path &path, std::string_view bytes) {
  static unsigned counter = 0;
  fs::path dir = path.parent_path();
  fs::path tmp =
      dir / ("." + path.filename().string() + ".tmp." +
             std::to_string(::getpid()) + "." + std::to_string(counter++));
  auto ioError = [&](const std::string &what) {
    std::string message = what + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return makeError(ErrorCode::Io, message, Location::inFile(path.string()));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return makeError(ErrorCode::Io,
                     std::string("cannot create a file in ") +
                         (dir.empty() ? "." : dir.string()) + ": " +
                         std::strerror(errno),
                     Location::inFile(path.string()));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
      return ioError("cannot write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return ioError("cannot write");
  }
  if (::close(fd) != 0)
    return ioError("cannot write");
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return ioError("cannot write");
  return ok();
}

/// The architecture's name, or nothing for a record that is not one of ours
/// (other machines, and big-endian images, which IREE never selects).
std::optional<Arch> recordArch(const fatelf::Record &r) {
  if (r.byteOrder != 1)
    return std::nullopt;
  return fatelf::archOf(r.machine, r.wordSize);
}

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx",
                static_cast<unsigned long long>(value));
  return buf;
}

std::string wordSizeText(uint8_t w) {
  return w == 1 ? "32" : w == 2 ? "64" : "?" + std::to_string(w);
}

std::string byteOrderText(uint8_t b) {
  return b == 1 ? "little" : b == 0 ? "big" : "?" + std::to_string(b);
}

std::string archList() {
  std::string list;
  for (std::string_view n : archNames())
    list += (list.empty() ? "" : ", ") + std::string(n);
  return list;
}

/// Reads and parses a FatELF file.
Expected<std::pair<std::string, std::vector<fatelf::Record>>>
readFatElf(const std::string &path) {
  Expected<std::string> data = readFile(path);
  if (!data)
    return Unexpected(data.error());
  Expected<std::vector<fatelf::Record>> records = fatelf::parse(*data, path);
  if (!records)
    return Unexpected(records.error());
  return std::pair{std::move(*data), std::move(*records)};
}

/// Where join and select write: the file of -o, or standard output ("-")
/// for `-o -`, or without -o when standard output is not a terminal (as
/// IREE's own build calls iree-fatelf: `... > out.sos`). nullopt after a
/// usage error.
std::optional<std::string> outputOf(const Command &self,
                                    const ParsedArgs &args,
                                    const std::string &file) {
  if (std::optional<std::string> out = args.value("output"))
    return out;
  if (!::isatty(STDOUT_FILENO))
    return std::string("-");
  usage(self.name, "'" + self.name + "' needs -o " + file +
                       " (or -o - for standard output)");
  return std::nullopt;
}

/// Writes `bytes` to `out`: atomically to a file, or whole to standard
/// output for "-".
Status writeOutput(const std::string &out, std::string_view bytes) {
  if (out != "-")
    return writeFileAtomic(out, bytes);
  std::fflush(stdout);
  while (!bytes.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return makeError(ErrorCode::Io, std::string("cannot write to standard "
                                                  "output: ") +
                                          std::strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return ok();
}

} // namespace

int runFatelfJoin(const Command &self, const ParsedArgs &args) {
  std::optional<std::string> out = outputOf(self, args, "<out.sos>");
  if (!out)
    return kExitUsage;
  std::vector<std::string> data;
  data.reserve(args.positional.size());
  for (const std::string &path : args.positional) {
    Expected<std::string> bytes = readFile(path);
    if (!bytes)
      return fail(bytes.error());
    data.push_back(std::move(*bytes));
  }
  std::vector<std::string_view> images(data.begin(), data.end());
  Expected<std::string> joined = fatelf::join(images, args.positional);
  if (!joined) {
    Error e = joined.error();
    for (size_t i = 0; i < data.size(); ++i)
      if (e.where.file == args.positional[i] && fatelf::isFatElf(data[i]))
        e.hint = "this is already a FatELF file; join takes per-architecture "
                 "ELF files (`ireepkg fatelf split` gives them back)";
    return fail(e);
  }
  if (Status s = writeOutput(*out, *joined); !s)
    return fail(s.error());
  if (*out == "-")
    return kExitOk;
  std::string archs;
  for (const fatelf::Record &r : *fatelf::parse(*joined, *out)) {
    std::optional<Arch> a = recordArch(r);
    archs += (archs.empty() ? "" : ", ") +
             (a ? std::string(archName(*a)) : "machine " + hex(r.machine));
  }
  printSummary("wrote %s (%s)\n", out->c_str(), archs.c_str());
  if (!out->ends_with(".sos"))
    printWarning("'" + *out +
                 "' does not end in .sos: IREE's runtime loads it as a "
                 "FatELF file only with the .sos extension or an `embedded:` "
                 "prefix");
  return kExitOk;
}

int runFatelfSplit(const Command &, const ParsedArgs &args) {
  const std::string &path = args.positional.front();
  fs::path dir = args.value("output").value_or(""); // "": here
  auto file = readFatElf(path);
  if (!file)
    return fail(file.error());
  const auto &[data, records] = *file;

  std::error_code ec;
  if (!dir.empty())
    fs::create_directories(dir, ec);
  if (!dir.empty() && (ec || !fs::is_directory(dir, ec)))
    return fail(Error(ErrorCode::Io,
                      "cannot create the output directory" +
                          (ec ? ": " + ec.message() : std::string()),
                      Location::inFile(dir.string())));

  std::string stem = fs::path(path).filename().string();
  if (stem.ends_with(".sos") && stem.size() > 4)
    stem.resize(stem.size() - 4);
  std::set<std::string> used;
  for (size_t i = 0; i < records.size(); ++i) {
    const fatelf::Record &r = records[i];
    std::optional<Arch> a = recordArch(r);
    std::string label =
        a ? std::string(archName(*a)) : "machine-" + hex(r.machine);
    std::string name = stem + "." + label + ".so";
    if (used.count(name)) // same architecture twice: keep both
      name = stem + "." + label + "." + std::to_string(i) + ".so";
    used.insert(name);
    fs::path target = dir / name;
    std::string_view image = std::string_view(data).substr(r.offset, r.size);
    if (Status s = writeFileAtomic(target, image); !s)
      return fail(s.error());
    printSummary("wrote %s\n", target.string().c_str());
  }
  return kExitOk;
}

int runFatelfSelect(const Command &self, const ParsedArgs &args) {
  std::optional<std::string> out = outputOf(self, args, "<out>");
  if (!out)
    return kExitUsage;
  Arch arch = hostPlatform().arch;
  if (std::optional<std::string> name = args.value("arch")) {
    std::optional<Arch> parsed = parseArch(*name);
    if (!parsed) {
      printError("unknown architecture '" + *name + "'" +
                     didYouMean(*name, archNames()),
                 "architectures are: " + archList());
      return kExitUsage;
    }
    arch = *parsed;
  }
  const std::string &path = args.positional.front();
  auto file = readFatElf(path);
  if (!file)
    return fail(file.error());
  const auto &[data, records] = *file;
  Expected<fatelf::Record> r = fatelf::select(records, arch, path);
  if (!r) {
    Error e = r.error();
    e.hint = "select another architecture with --arch, or add a " +
             std::string(archName(arch)) + " image with `ireepkg fatelf join`";
    return fail(e);
  }
  size_t index = 0;
  auto same = [&](const fatelf::Record &x) {
    return x.machine == r->machine && x.osabi == r->osabi &&
           x.wordSize == r->wordSize && x.byteOrder == r->byteOrder &&
           x.offset == r->offset && x.size == r->size;
  };
  while (index < records.size() && !same(records[index]))
    ++index;
  if (Status s =
          writeOutput(*out, std::string_view(data).substr(r->offset, r->size));
      !s)
    return fail(s.error());
  if (*out != "-")
    printSummary("wrote %s (%s, record %zu)\n", out->c_str(),
               std::string(archName(arch)).c_str(), index);
  return kExitOk;
}

int runFatelfDump(const Command &, const ParsedArgs &args) {
  const std::string &path = args.positional.front();
  auto file = readFatElf(path);
  if (!file)
    return fail(file.error());
  const auto &records = file->second;
  if (args.flag("json")) {
    nlohmann::ordered_json doc = {{"version", fatelf::kVersion},
                                  {"records", nlohmann::ordered_json::array()}};
    for (size_t i = 0; i < records.size(); ++i) {
      const fatelf::Record &r = records[i];
      std::optional<Arch> a = recordArch(r);
      nlohmann::ordered_json j;
      j["index"] = i;
      j["arch"] = a ? nlohmann::ordered_json(std::string(archName(*a)))
                    : nlohmann::ordered_json(nullptr);
      j["machine"] = r.machine;
      j["osabi"] = r.osabi;
      j["osabi_version"] = r.osabiVersion;
      if (r.wordSize == 1 || r.wordSize == 2)
        j["word_size"] = r.wordSize == 1 ? 32 : 64;
      else
        j["word_size"] = nullptr;
      if (r.byteOrder <= 1)
        j["byte_order"] = byteOrderText(r.byteOrder);
      else
        j["byte_order"] = nullptr;
      j["offset"] = r.offset;
      j["size"] = r.size;
      doc["records"].push_back(std::move(j));
    }
    std::printf("%s\n", doc.dump(2).c_str());
    return kExitOk;
  }
  std::printf("%s: FatELF version %u, %zu record%s\n", path.c_str(),
              unsigned(fatelf::kVersion), records.size(),
              records.size() == 1 ? "" : "s");
  for (size_t i = 0; i < records.size(); ++i) {
    const fatelf::Record &r = records[i];
    std::optional<Arch> a = recordArch(r);
    std::string arch =
        a ? std::string(archName(*a)) : "machine " + hex(r.machine);
    std::printf("  %zu: %s osabi=%u word_size=%s byte_order=%s offset=%llu "
                "size=%llu\n",
                i, arch.c_str(), unsigned(r.osabi),
                wordSizeText(r.wordSize).c_str(),
                byteOrderText(r.byteOrder).c_str(),
                static_cast<unsigned long long>(r.offset),
                static_cast<unsigned long long>(r.size));
  }
  return kExitOk;
}

const Command &fatelfJoinCommand() {
  static const Command command{
      .name = "fatelf join",
      .synopsis = "<elf>... [-o <out.sos>]",
      .summary = "join per-architecture ELF files into one FatELF .sos",
      .description =
          "Writes IREE's FatELF v1 layout: header, one record per input, "
          "then the images, page-aligned. IREE's runtime loads the record "
          "that matches the host. Without -o (or with -o -) the file goes "
          "to standard output, when that is not a terminal.",
      .options = {{"output", 'o', "FILE",
                   "the .sos file to write (- for standard "
                   "output)"}},
      .examples = {"ireepkg fatelf join -o plugin.sos plugin.x86_64.so "
                   "plugin.aarch64.so",
                   "ireepkg fatelf join plugin.x86_64.so plugin.aarch64.so > "
                   "plugin.sos"},
      .minPositional = 1,
      .run = runFatelfJoin,
  };
  return command;
}

const Command &fatelfSplitCommand() {
  static const Command command{
      .name = "fatelf split",
      .synopsis = "<file.sos> [-o DIR]",
      .summary = "write each image of a FatELF file to its own file",
      .description =
          "Writes <stem>.<arch>.so for every record, byte-identical to the "
          "files that were joined.",
      .options = {{"output", 'o', "DIR", "where to write (default: .)"}},
      .examples = {"ireepkg fatelf split plugin.sos -o out/"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runFatelfSplit,
  };
  return command;
}

const Command &fatelfSelectCommand() {
  static const Command command{
      .name = "fatelf select",
      .synopsis = "<file.sos> [--arch ARCH] [-o <out>]",
      .summary = "extract the image IREE would load on an architecture",
      .description =
          "Applies the runtime's selection rule (machine, OS ABI, word size, "
          "byte order) for the host, or for --arch. Without -o (or with -o "
          "-) the image goes to standard output, when that is not a "
          "terminal.",
      .options = {{"arch", 0, "ARCH",
                   "select for this architecture (default: host)"},
                  {"output", 'o', "FILE",
                   "the ELF file to write (- for standard "
                   "output)"}},
      .examples = {"ireepkg fatelf select plugin.sos -o plugin.so"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runFatelfSelect,
  };
  return command;
}

const Command &fatelfDumpCommand() {
  static const Command command{
      .name = "fatelf dump",
      .synopsis = "<file.sos> [--json]",
      .summary = "print a FatELF file's header and records",
      .description =
          "Prints the version and, for each record, the architecture, ELF "
          "machine, OS ABI, word size, byte order, offset and size.",
      .options = {kJson},
      .examples = {"ireepkg fatelf dump plugin.sos"},
      .minPositional = 1,
      .maxPositional = 1,
      .run = runFatelfDump,
  };
  return command;
}

} // namespace ireepkg::cli
