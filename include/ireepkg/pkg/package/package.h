//===- ireepkg/pkg/package/package.h - Package archives ---------*- C++ -*-===//
//
// The package archive (`<name>-<version>.ireepkg`): a zstd-compressed tar
// whose first member is `ireeplugin.json` and second `.ireepkg/RECORD.json`,
// the list of every other member with its SHA-256 and size.
//
// Reading an archive is one streaming pass: the compressed bytes are hashed
// as they are read (the archive's own SHA-256), each member is checked
// against every safety rule before its data is touched, and its data is
// hashed while it is written. Nothing is read twice.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_PACKAGE_H
#define IREEPKG_PACKAGE_H

#include "ireepkg/base/error.h"
#include "ireepkg/manifest_schema/formats.h"
#include "ireepkg/pkg/checks/pipeline_report.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ireepkg {

inline constexpr const char *kManifestName = "ireeplugin.json";
inline constexpr const char *kRecordName = ".ireepkg/RECORD.json";

/// `.ireepkg/RECORD.json`
struct RecordEntry {
  std::string path;
  std::string sha256;
  uint64_t size = 0;
  bool executable = false;
};

struct Record {
  std::vector<RecordEntry> files; ///< sorted by path
  /// The package has tests and was packed without running them
  /// (`pack --no-test`): "tests_skipped": true.
  bool testsSkipped = false;
  uint64_t totalSize() const;
  const RecordEntry *find(std::string_view path) const;
};

std::string serializeRecord(const Record &record);
Expected<Record> parseRecord(std::string_view text, const std::string &where);

/// The largest ireeplugin.json and .ireepkg/RECORD.json a package may have.
/// RECORD's limit leaves room for kMaxMembers entries with long paths.
inline constexpr size_t kMaxManifestBytes = 4u << 20;
inline constexpr size_t kMaxRecordBytes = 64u << 20;

/// The limits of a package, the same for `pack` (which refuses to make a
/// package that `install` would refuse) and for reading archives. Documented
/// in docs/manifest-reference.md ("Limits").
struct ArchiveLimits {
  uint64_t maxUnpackedBytes = 4ull << 30; ///< 4 GiB
  /// Unpacked size may be at most this many times the archive's size.
  uint64_t maxCompressionRatio = 200;
  uint64_t maxMembers = 100000;
  size_t maxPathBytes = 1024;
  size_t maxComponentBytes = 255;
};

/// Whether a package of these files can be installed under `limits`: the
/// member count, RECORD's size and the unpacked size. "" when it can, else
/// what is over which limit. `pack` runs it before writing an archive.
std::string packageLimitProblem(const Record &record, size_t recordBytes,
                                const ArchiveLimits &limits = {});

/// The first two members, read without extracting anything else.
struct ArchiveHead {
  std::string manifestText;
  Manifest manifest;
  Record record;
  std::vector<Diagnostic> warnings; ///< lenient-mode manifest warnings
};

/// An archive file opened once. Install reads an archive's head, checks
/// it, then extracts it: both reads go through this one open file, so that
/// an archive replaced on disk in between (renamed over, or another file
/// put at its path) cannot mix one archive's manifest with another's files.
class ArchiveFile {
public:
  static Expected<ArchiveFile> open(const std::string &path);
  ArchiveFile(ArchiveFile &&other) noexcept;
  ArchiveFile &operator=(ArchiveFile &&other) noexcept;
  ArchiveFile(const ArchiveFile &) = delete;
  ArchiveFile &operator=(const ArchiveFile &) = delete;
  ~ArchiveFile();
  const std::string &path() const { return path_; }
  /// A new descriptor for the file, positioned at its start; the caller
  /// closes it.
  Expected<int> reopen() const;

private:
  ArchiveFile() = default;
  std::string path_;
  int fd_ = -1;
};

/// Reads and checks ireeplugin.json and RECORD.json from the start of an
/// archive (reading only as far as they go).
Expected<ArchiveHead> readArchiveHead(const std::string &archivePath);
Expected<ArchiveHead> readArchiveHead(const ArchiveFile &archive);

/// One member's content (its path as RECORD.json names it), read from the
/// start of `archive` without extracting anything else. More than `limit`
/// bytes, a member that is not there or an unreadable archive is Invalid:
/// "cannot read <member>: <why>", at the archive's path.
Expected<std::string> readArchiveMember(const ArchiveFile &archive,
                                        const std::string &member,
                                        uint64_t limit);

struct ExtractResult {
  ArchiveHead head;
  std::string archiveSha256;
  uint64_t archiveSize = 0;
  uint64_t unpackedSize = 0;
};

/// Called for each regular file as it is extracted (for progress).
using ExtractProgress = std::function<void(uint64_t bytesDone)>;

/// Extracts a whole archive into `destDir` (which must not exist yet),
/// verifying every rule on the way; on any failure `destDir` is removed and
/// the Error names the member and the rule. Files are left writable; the
/// caller makes the tree read-only once it is complete.
Expected<ExtractResult> extractArchive(const std::string &archivePath,
                                       const std::string &destDir,
                                       const ArchiveLimits &limits = {},
                                       const ExtractProgress &progress = {});
/// The same from an archive opened once; when `expected` is given, the head
/// read now must be the one read before (else Integrity: the file was
/// rewritten in place meanwhile).
Expected<ExtractResult> extractArchive(const ArchiveFile &archive,
                                       const std::string &destDir,
                                       const ArchiveLimits &limits,
                                       const ExtractProgress &progress,
                                       const ArchiveHead *expected);

/// Extracts a plain zstd tar (an offline bundle) into `destDir` (which must
/// not exist) under the same member rules (regular files and directories,
/// safe relative paths, limits); nothing is left behind on failure.
/// Returns the number of files.
Expected<uint64_t> extractFiles(const std::string &archivePath,
                                const std::string &destDir,
                                const ArchiveLimits &limits = {});

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

struct PackOptions {
  std::string outputDir = ".";
  bool fatelf = false; ///< join embedded-elf per-arch files into a .sos
  /// The package's tests are not run (`--no-test`): a package with tests
  /// records so in its RECORD.
  bool testsSkipped = false;
  /// Skip inspecting native libraries (tests of the archive format only).
  bool skipBinaryChecks = false;
};

struct PackResult {
  std::string archivePath;
  std::string sha256;
  uint64_t size = 0;
  Manifest manifest;
  Record record;
  std::vector<Diagnostic> warnings;
  /// How the hooks' pass pipelines were checked with MLIR.
  MlirCheckReport pipelineCheck;
};

/// Checks a package directory (manifest, files, native libraries, hook
/// pipelines with MLIR's parser where it knows the passes) and
/// writes its reproducible archive. Every problem found is in the Error's
/// diagnostics.
Expected<PackResult> packDirectory(const std::string &dir,
                                   const PackOptions &options = {});

/// Writes an archive from explicit members (used by pack and by tests that
/// need archives pack would refuse to write): `members` are (path, content,
/// executable). Members are written in the given order, reproducibly.
struct ArchiveMember {
  std::string path;
  std::string content;    ///< used when sourcePath is empty
  std::string sourcePath; ///< stream the content from this file instead
  bool executable = false;
};
Status writeArchive(const std::string &path,
                    const std::vector<ArchiveMember> &members);

} // namespace ireepkg

#endif // IREEPKG_PACKAGE_H
