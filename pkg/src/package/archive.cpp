//===- pkg/src/package/archive.cpp - Reading and writing package archives -===//
//
// libarchive does the tar and zstd work. ireepkg adds the rules libarchive
// does not enforce (or only when asked): path shape, member types, set-id
// bits, duplicates, case collisions, RECORD membership, hashes and sizes,
// and size and ratio limits. Every member is checked before any of its data
// is written, and the archive is read exactly once.
//
// Why one file of this size: reading and writing share the member rules and
// limits, which must be enforced identically on both sides.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/package/package.h"
#include "ireepkg/manifest_schema/names.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/text.h"
#include "ireepkg/manifest_schema/json_document.h"

#include <archive.h>
#include <archive_entry.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ireepkg {

namespace {

constexpr size_t kReadBlock = 1 << 20;

Error memberError(const std::string &archive, const std::string &member,
                  std::string rule, ErrorCode code = ErrorCode::Integrity) {
  return Error(code, std::move(rule), Location{archive, 0, 0, "", "", member},
               "the archive is unsafe or corrupted; it was not installed");
}

/// Reads the compressed file for libarchive, hashing and counting the bytes
/// on the way, so that the archive's own SHA-256 costs no second pass.
struct Source {
  int fd = -1;
  Sha256 hash;
  uint64_t bytes = 0;
  /// Not zeroed: read() fills it, and a small archive touches few pages.
  std::unique_ptr<char[]> buffer{new char[kReadBlock]};
  int error = 0;

  static la_ssize_t read(struct archive *, void *self, const void **out) {
    auto *s = static_cast<Source *>(self);
    while (true) {
      ssize_t n = ::read(s->fd, s->buffer.get(), kReadBlock);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        s->error = errno;
        return -1;
      }
      s->hash.update(s->buffer.get(), static_cast<size_t>(n));
      s->bytes += static_cast<uint64_t>(n);
      *out = s->buffer.get();
      return n;
    }
  }
};

/// An open archive reader; closes everything on destruction.
class Reader {
public:
  ~Reader() {
    if (a_)
      archive_read_free(a_);
    if (src_.fd >= 0)
      ::close(src_.fd);
  }

  Status open(const std::string &path) {
    auto fd = fsutil::openForReading(path);
    if (!fd)
      return Unexpected(fd.error());
    src_.fd = fd->release();
    return openDescriptor(path);
  }

  Status open(const ArchiveFile &file) {
    auto fd = file.reopen();
    if (!fd)
      return Unexpected(fd.error());
    src_.fd = *fd;
    return openDescriptor(file.path());
  }

private:
  Status openDescriptor(const std::string &path) {
    path_ = path;
    struct stat st;
    if (::fstat(src_.fd, &st) != 0)
      return Unexpected(fsutil::ioError("cannot stat", path, errno));
    if (!S_ISREG(st.st_mode))
      return makeError(ErrorCode::Invalid, "not a regular file",
                       Location::inFile(path));
    fileSize_ = static_cast<uint64_t>(st.st_size);
    a_ = archive_read_new();
    archive_read_support_filter_zstd(a_);
    archive_read_support_format_tar(a_);
    if (archive_read_open(a_, &src_, nullptr, &Source::read, nullptr) !=
        ARCHIVE_OK)
      return notAnArchive();
    return ok();
  }

public:
  /// After the first header: libarchive also passes uncompressed tars
  /// through, which are not ireepkg archives.
  Status requireZstd() {
    if (archive_filter_count(a_) >= 2 &&
        archive_filter_code(a_, 0) == ARCHIVE_FILTER_ZSTD)
      return ok();
    return makeError(ErrorCode::Invalid,
                     "not an ireepkg archive: it is a tar, but not "
                     "zstd-compressed",
                     Location::inFile(path_),
                     "package archives are made by `ireepkg pack`");
  }

  Unexpected notAnArchive() {
    std::string why = src_.error                 ? std::strerror(src_.error)
                      : archive_error_string(a_) ? archive_error_string(a_)
                                                 : "unreadable";
    return makeError(ErrorCode::Invalid,
                     "not an ireepkg archive (a zstd-compressed tar): " + why,
                     Location::inFile(path_),
                     "package archives are made by `ireepkg pack`");
  }

  /// Next header; nullopt at the end. Errors for unreadable data.
  Expected<archive_entry *> next() {
    archive_entry *entry = nullptr;
    int rc = archive_read_next_header(a_, &entry);
    if (rc == ARCHIVE_EOF)
      return nullptr;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      return notAnArchive();
    return entry;
  }

  /// Reads the current member fully into memory (for small metadata).
  Expected<std::string> readSmall(const std::string &member, uint64_t limit) {
    std::string out;
    char buf[65536];
    while (true) {
      la_ssize_t n = archive_read_data(a_, buf, sizeof buf);
      if (n < 0)
        return notAnArchive();
      if (n == 0)
        break;
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > limit)
        return Unexpected(memberError(
            path_, member, "is larger than " + std::to_string(limit) + " bytes",
            ErrorCode::Invalid));
    }
    return out;
  }

  struct archive *raw() {
    return a_;
  }
  Source &source() { return src_; }
  uint64_t fileSize() const { return fileSize_; }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  Source src_;
  struct archive *a_ = nullptr;
  uint64_t fileSize_ = 0;
};

/// The safety rules for one member header. Returns the rule it breaks, or "".
std::string memberProblem(archive_entry *entry, const std::string &name,
                          const ArchiveLimits &limits) {
  if (name.empty())
    return "has an empty name";
  if (name.front() == '/')
    return "absolute paths are not allowed";
  if (name.size() > limits.maxPathBytes)
    return "path is longer than " + std::to_string(limits.maxPathBytes) +
           " bytes";
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string seg = name.substr(
        start, slash == std::string::npos ? std::string::npos : slash - start);
    if (seg == "..")
      return "\"..\" components are not allowed";
    if (seg.size() > limits.maxComponentBytes)
      return "a path component is longer than " +
             std::to_string(limits.maxComponentBytes) + " bytes";
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  if (archive_entry_hardlink(entry))
    return "hard links are not allowed";
  switch (archive_entry_filetype(entry)) {
  case AE_IFREG:
  case AE_IFDIR:
    break;
  case AE_IFLNK:
    return "symbolic links are not allowed";
  case AE_IFCHR:
  case AE_IFBLK:
    return "device files are not allowed";
  case AE_IFIFO:
    return "FIFOs are not allowed";
  case AE_IFSOCK:
    return "sockets are not allowed";
  default:
    return "has an unsupported file type";
  }
  if (archive_entry_mode(entry) & (S_ISUID | S_ISGID | S_ISVTX))
    return "set-id and sticky bits are not allowed";
  if (archive_entry_sparse_count(entry) > 0)
    return "sparse files are not allowed";
  std::string problem = packagePathProblem(name);
  if (!problem.empty())
    return "is " + problem;
  return {};
}

std::string foldCase(const std::string &s) { return lower(s); }

/// Reads, checks and (optionally) writes the two metadata members.
struct HeadReader {
  Reader &reader;
  const ArchiveLimits &limits;
  ArchiveHead head;
  std::string manifestSha;

  /// Reads member `expected`, the first (index 0) or second file of the
  /// archive. Directory members before it are checked and passed over, as
  /// anywhere in an archive: `tar -c` writes a directory (`.ireepkg/`)
  /// before the files in it.
  Status readMember(size_t index, const char *expected, std::string &out) {
    auto entry = reader.next();
    if (!entry)
      return Unexpected(entry.error());
    if (index == 0 && *entry)
      if (Status s = reader.requireZstd(); !s)
        return s;
    while (*entry && archive_entry_filetype(*entry) == AE_IFDIR) {
      const char *dir = archive_entry_pathname(*entry);
      std::string name = dir ? dir : "";
      if (name.size() > 1 && name.back() == '/')
        name.pop_back();
      if (name == expected)
        break; // a directory where the file must be: refused below
      std::string problem = memberProblem(*entry, name, limits);
      if (!problem.empty())
        return Unexpected(memberError(reader.path(), name, problem));
      entry = reader.next();
      if (!entry)
        return Unexpected(entry.error());
    }
    if (!*entry)
      return makeError(ErrorCode::Invalid,
                       std::string("the archive ends before ") + expected,
                       Location::inFile(reader.path()),
                       "package archives are made by `ireepkg pack`");
    const char *raw = archive_entry_pathname(*entry);
    std::string name = raw ? raw : "";
    if (name != expected)
      return makeError(ErrorCode::Invalid,
                       std::string(index == 0 ? "the first" : "the second") +
                           " member must be " + expected + ", not \"" + name +
                           "\"",
                       Location{reader.path(), 0, 0, "", "", name},
                       "package archives are made by `ireepkg pack`");
    std::string problem = memberProblem(*entry, name, limits);
    if (!problem.empty())
      return Unexpected(memberError(reader.path(), name, problem));
    if (archive_entry_filetype(*entry) != AE_IFREG)
      return Unexpected(
          memberError(reader.path(), name, "must be a regular file"));
    auto data =
        reader.readSmall(name, index == 0 ? kMaxManifestBytes : kMaxRecordBytes);
    if (!data)
      return Unexpected(data.error());
    out = std::move(*data);
    return ok();
  }

  Status run() {
    if (Status s = readMember(0, kManifestName, head.manifestText); !s)
      return s;
    std::string recordText;
    if (Status s = readMember(1, kRecordName, recordText); !s)
      return s;
    auto record = parseRecord(recordText, kRecordName);
    if (!record) {
      Error e = record.error();
      e.where.file = reader.path();
      return Unexpected(std::move(e));
    }
    head.record = std::move(*record);
    // The manifest is covered by RECORD like every other member.
    const RecordEntry *m = head.record.find(kManifestName);
    if (!m)
      return Unexpected(memberError(reader.path(), kManifestName,
                                    "is not listed in .ireepkg/RECORD.json"));
    if (m->size != head.manifestText.size() ||
        m->sha256 != Sha256::hex(head.manifestText))
      return Unexpected(
          memberError(reader.path(), kManifestName,
                      "SHA-256 does not match .ireepkg/RECORD.json"));
    // Parse leniently: an installed package may come from a newer ireepkg.
    auto doc = JsonDocument::parse(head.manifestText,
                                   reader.path() + ":" + kManifestName);
    if (!doc) {
      Error e = doc.error();
      e.code = ErrorCode::Invalid;
      return Unexpected(std::move(e));
    }
    DiagnosticList diags;
    ParseOptions po;
    po.strict = false;
    head.manifest = parseManifest(*doc, po, diags);
    if (diags.hasErrors())
      return makeError(ErrorCode::Invalid, diags);
    head.warnings = diags.items();
    // Every file the manifest names must be in the archive.
    for (const std::string &p : head.manifest.referencedPaths()) {
      bool found = head.record.find(p) != nullptr;
      if (!found) { // a directory (executable-objects) holds files
        std::string prefix = p + "/";
        for (const RecordEntry &e : head.record.files)
          if (e.path.compare(0, prefix.size(), prefix) == 0) {
            found = true;
            break;
          }
      }
      if (!found)
        return makeError(ErrorCode::Invalid,
                         "ireeplugin.json names \"" + p +
                             "\", which is not in the archive",
                         Location{reader.path(), 0, 0, "", "", p},
                         "re-create the archive with `ireepkg pack`");
    }
    // Size and ratio limits, before anything is extracted.
    uint64_t total = head.record.totalSize();
    if (total > limits.maxUnpackedBytes)
      return makeError(ErrorCode::Invalid,
                       "the archive unpacks to " + std::to_string(total) +
                           " bytes, more than the limit of " +
                           std::to_string(limits.maxUnpackedBytes),
                       Location::inFile(reader.path()),
                       "this may be a decompression bomb");
    if (total > 1 << 20 && total / std::max<uint64_t>(reader.fileSize(), 1) >
                               limits.maxCompressionRatio)
      return makeError(
          ErrorCode::Invalid,
          "the archive expands " +
              std::to_string(total / std::max<uint64_t>(reader.fileSize(), 1)) +
              " times (" + std::to_string(reader.fileSize()) + " bytes to " +
              std::to_string(total) + "), more than the limit of " +
              std::to_string(limits.maxCompressionRatio),
          Location::inFile(reader.path()),
          "this may be a decompression bomb");
    if (head.record.files.size() + 1 > limits.maxMembers)
      return makeError(ErrorCode::Invalid,
                       "the archive has more than " +
                           std::to_string(limits.maxMembers) + " members",
                       Location::inFile(reader.path()));
    return ok();
  }
};

/// The most bytes an archive of `archiveBytes` may write under `limits`:
/// the unpacked-size limit, and the ratio limit past the first MiB. What
/// RECORD and the tar headers declare is checked against the limits before
/// extraction; this caps the bytes actually written as well.
uint64_t writeBudget(uint64_t archiveBytes, const ArchiveLimits &limits) {
  uint64_t byRatio;
  if (__builtin_mul_overflow(std::max<uint64_t>(archiveBytes, 1),
                             limits.maxCompressionRatio, &byRatio))
    byRatio = UINT64_MAX;
  return std::min(limits.maxUnpackedBytes,
                  std::max<uint64_t>(byRatio, 1u << 20));
}

/// Writes one member's data to `fd`, hashing it; checks the byte count
/// against the member's declared size and the whole extraction's `budget`.
Status copyData(Reader &reader, int fd, const std::string &member,
                const std::string &outPath, uint64_t declared, Sha256 &hash,
                uint64_t &written, const ExtractProgress &progress,
                uint64_t &totalDone, uint64_t budget) {
  const void *buf;
  size_t size;
  la_int64_t offset;
  written = 0;
  while (true) {
    int rc = archive_read_data_block(reader.raw(), &buf, &size, &offset);
    if (rc == ARCHIVE_EOF)
      break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      const char *why = archive_error_string(reader.raw());
      return Unexpected(memberError(reader.path(), member,
                                    std::string("is truncated or corrupt: ") +
                                        (why ? why : "unreadable data")));
    }
    if (static_cast<uint64_t>(offset) != written)
      return Unexpected(
          memberError(reader.path(), member, "sparse files are not allowed"));
    if (written + size > declared)
      return Unexpected(memberError(reader.path(), member,
                                    "holds more data than its header says"));
    if (totalDone + size > budget)
      return Unexpected(Error(
          ErrorCode::Invalid,
          "the archive unpacks to more than " + std::to_string(budget) +
              " bytes (" + std::to_string(reader.fileSize()) +
              " bytes compressed), past the size or compression-ratio limit",
          Location{reader.path(), 0, 0, "", "", member},
          "this may be a decompression bomb"));
    hash.update(buf, size);
    const char *p = static_cast<const char *>(buf);
    size_t left = size;
    while (left) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return Unexpected(fsutil::ioError("write failed", outPath, errno));
      p += n;
      left -= static_cast<size_t>(n);
    }
    written += size;
    totalDone += size;
    if (progress)
      progress(totalDone);
  }
  return ok();
}

/// One member as read from the archive, checked against every rule that
/// concerns it alone (memberProblem) and the member count.
struct NextMember {
  archive_entry *entry = nullptr;
  std::string name; ///< without a directory's trailing '/'
  bool isDir = false;
};

/// The next member, or nullopt at the end of the archive.
Expected<std::optional<NextMember>> nextMember(Reader &reader,
                                               const std::string &archivePath,
                                               const ArchiveLimits &limits,
                                               uint64_t &members) {
  auto entry = reader.next();
  if (!entry)
    return Unexpected(entry.error());
  if (!*entry)
    return std::optional<NextMember>();
  NextMember m;
  m.entry = *entry;
  const char *raw = archive_entry_pathname(m.entry);
  m.name = raw ? raw : "";
  m.isDir = archive_entry_filetype(m.entry) == AE_IFDIR;
  if (m.isDir && m.name.size() > 1 && m.name.back() == '/')
    m.name.pop_back();
  if (++members > limits.maxMembers)
    return makeError(ErrorCode::Invalid,
                     "the archive has more than " +
                         std::to_string(limits.maxMembers) + " members",
                     Location::inFile(archivePath));
  std::string problem = memberProblem(m.entry, m.name, limits);
  if (!problem.empty())
    return Unexpected(memberError(archivePath, m.name, problem));
  return std::optional<NextMember>(std::move(m));
}

/// The rules that depend on the other members: each name once, no two
/// names that differ only in case, nothing inside a file, no file where a
/// directory is.
class MemberSet {
public:
  void addFile(const std::string &name) {
    seen_.insert(name);
    folded_.emplace(foldCase(name), name);
    files_.insert(name);
  }
  /// A directory that exists without a member of its own (`.ireepkg`,
  /// made by extraction): an explicit member for it is still admitted.
  void implyDir(const std::string &name) {
    folded_.emplace(foldCase(name), name);
    dirs_.insert(name);
  }

  /// The problem with admitting the member, or "" (and it is admitted).
  std::string admit(const std::string &name, bool isDir) {
    if (!seen_.insert(name).second)
      return "appears more than once";
    auto [it, fresh] = folded_.emplace(foldCase(name), name);
    if (!fresh && it->second != name)
      return "collides with \"" + it->second +
             "\" on a case-insensitive file system";
    for (size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
      std::string parent = name.substr(0, slash);
      if (files_.count(parent))
        return "is inside \"" + parent + "\", which is a file";
      auto [dirIt, freshDir] = folded_.emplace(foldCase(parent), parent);
      if (!freshDir && dirIt->second != parent)
        return "collides with \"" + dirIt->second +
               "\" on a case-insensitive file system";
      dirs_.insert(parent);
    }
    if (isDir) {
      if (files_.count(name))
        return "appears more than once";
      dirs_.insert(name);
      return "";
    }
    if (dirs_.count(name))
      return "is a file where other members put a directory";
    files_.insert(name);
    return "";
  }

private:
  std::set<std::string> seen_, dirs_, files_;
  std::map<std::string, std::string> folded_;
};

/// The directory an extraction fills: it must not exist yet, and it is
/// removed again on every path that does not keep() it.
class ExtractionDir {
public:
  /// Creates `dir`/`first` (`first` may be empty).
  static Expected<ExtractionDir> create(const std::string &dir,
                                        const std::string &first) {
    if (fsutil::exists(dir))
      return makeError(ErrorCode::Internal, "extraction target exists",
                       Location::inFile(dir));
    if (Status s = fsutil::makeDirs(first.empty() ? dir : dir + "/" + first);
        !s)
      return Unexpected(s.error());
    return ExtractionDir(dir);
  }
  ExtractionDir(ExtractionDir &&other) noexcept : dir_(std::move(other.dir_)) {
    other.dir_.clear();
  }
  ExtractionDir &operator=(ExtractionDir &&) = delete;
  ~ExtractionDir() {
    if (!dir_.empty())
      (void)fsutil::removeTree(dir_);
  }
  void keep() { dir_.clear(); }

private:
  explicit ExtractionDir(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

} // namespace

Expected<ArchiveFile> ArchiveFile::open(const std::string &path) {
  ArchiveFile f;
  f.path_ = path;
  auto fd = fsutil::openForReading(path);
  if (!fd)
    return Unexpected(fd.error());
  f.fd_ = fd->release();
  return f;
}

ArchiveFile::ArchiveFile(ArchiveFile &&other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

ArchiveFile &ArchiveFile::operator=(ArchiveFile &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ArchiveFile::~ArchiveFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Expected<int> ArchiveFile::reopen() const {
  // Through /proc, a descriptor of its own (its own offset) for the same
  // open file, whatever is at the path now.
  std::string self = "/proc/self/fd/" + std::to_string(fd_);
  int fd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // No /proc: a duplicate, rewound (its offset is shared, which is fine
    // for reads that follow one another).
    fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || ::lseek(fd, 0, SEEK_SET) != 0) {
      int e = errno;
      if (fd >= 0)
        ::close(fd);
      return Unexpected(fsutil::ioError("cannot read", path_, e));
    }
  }
  return fd;
}

namespace {
/// The head of an archive opened either way (a path or an ArchiveFile).
template <typename Source>
Expected<ArchiveHead> readHeadOf(const Source &source) {
  Reader reader;
  if (Status s = reader.open(source); !s)
    return Unexpected(s.error());
  ArchiveLimits limits;
  HeadReader head{reader, limits, {}, {}};
  if (Status s = head.run(); !s)
    return Unexpected(s.error());
  return std::move(head.head);
}
} // namespace

Expected<ArchiveHead> readArchiveHead(const ArchiveFile &archive) {
  return readHeadOf(archive);
}

Expected<std::string> readArchiveMember(const ArchiveFile &archive,
                                        const std::string &member,
                                        uint64_t limit) {
  auto opened = archive.reopen();
  if (!opened)
    return Unexpected(opened.error());
  // Closed after the reader is freed (declared first).
  fsutil::UniqueFd fd(*opened);
  std::unique_ptr<struct archive, int (*)(struct archive *)> a(
      archive_read_new(), archive_read_free);
  auto fail = [&](const std::string &why) -> Expected<std::string> {
    return makeError(ErrorCode::Invalid, "cannot read " + member + ": " + why,
                     Location::inFile(archive.path()));
  };
  auto why = [&] {
    const char *s = archive_error_string(a.get());
    return std::string(s ? s : "?");
  };
  archive_read_support_filter_zstd(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_fd(a.get(), fd.get(), 1 << 16) != ARCHIVE_OK)
    return fail(why());
  archive_entry *entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK ||
         rc == ARCHIVE_WARN) {
    std::string name = archive_entry_pathname(entry);
    if (name.rfind("./", 0) == 0)
      name = name.substr(2);
    if (name != member) {
      archive_read_data_skip(a.get());
      continue;
    }
    std::string out;
    char buf[1 << 16];
    for (;;) {
      la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
      if (n < 0)
        return fail(why());
      if (n == 0)
        break;
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > limit)
        return fail("larger than " + std::to_string(limit) + " bytes");
    }
    return out;
  }
  return fail("no such member");
}

Expected<ArchiveHead> readArchiveHead(const std::string &archivePath) {
  return readHeadOf(archivePath);
}

namespace {
Expected<ExtractResult> extractFrom(Reader &reader, const std::string &destDir,
                                    const ArchiveLimits &limits,
                                    const ExtractProgress &progress,
                                    const ArchiveHead *expected);
} // namespace

Expected<ExtractResult> extractArchive(const std::string &archivePath,
                                       const std::string &destDir,
                                       const ArchiveLimits &limits,
                                       const ExtractProgress &progress) {
  Reader reader;
  if (Status s = reader.open(archivePath); !s)
    return Unexpected(s.error());
  return extractFrom(reader, destDir, limits, progress, nullptr);
}

Expected<ExtractResult> extractArchive(const ArchiveFile &archive,
                                       const std::string &destDir,
                                       const ArchiveLimits &limits,
                                       const ExtractProgress &progress,
                                       const ArchiveHead *expected) {
  Reader reader;
  if (Status s = reader.open(archive); !s)
    return Unexpected(s.error());
  return extractFrom(reader, destDir, limits, progress, expected);
}

namespace {
Expected<ExtractResult> extractFrom(Reader &reader, const std::string &destDir,
                                    const ArchiveLimits &limits,
                                    const ExtractProgress &progress,
                                    const ArchiveHead *expected) {
  const std::string archivePath = reader.path();
  HeadReader head{reader, limits, {}, {}};
  if (Status s = head.run(); !s)
    return Unexpected(s.error());
  if (expected && (expected->manifestText != head.head.manifestText ||
                   serializeRecord(expected->record) !=
                       serializeRecord(head.head.record)))
    return makeError(ErrorCode::Integrity,
                     "the archive changed while it was being installed",
                     Location::inFile(archivePath),
                     "do not rewrite an archive while ireepkg installs it; "
                     "run the command again");

  auto target = ExtractionDir::create(destDir, ".ireepkg");
  if (!target)
    return Unexpected(target.error());
  if (Status s = fsutil::writeNewFile(destDir + "/" + kManifestName,
                                      head.head.manifestText, 0644);
      !s)
    return Unexpected(s.error());
  std::string recordText = serializeRecord(head.head.record);
  if (Status s =
          fsutil::writeNewFile(destDir + "/" + kRecordName, recordText, 0644);
      !s)
    return Unexpected(s.error());

  MemberSet names;
  names.addFile(kManifestName);
  names.addFile(kRecordName);
  names.implyDir(".ireepkg");
  std::set<std::string> extracted;
  // RECORD's total (what install shows progress against) counts the
  // manifest, written above: progress ends at exactly that total.
  uint64_t members = 2, totalDone = head.head.manifestText.size();
  Sha256 fileHash;
  while (true) {
    auto next = nextMember(reader, archivePath, limits, members);
    if (!next)
      return Unexpected(next.error());
    if (!*next)
      break;
    archive_entry *entry = (*next)->entry;
    const std::string &name = (*next)->name;
    if (std::string p = names.admit(name, (*next)->isDir); !p.empty())
      return Unexpected(memberError(archivePath, name, p));
    if ((*next)->isDir) {
      if (Status s = fsutil::makeDirs(destDir + "/" + name); !s)
        return Unexpected(s.error());
      continue;
    }
    const RecordEntry *rec = head.head.record.find(name);
    if (!rec)
      return Unexpected(memberError(archivePath, name,
                                    "is not listed in .ireepkg/RECORD.json"));
    uint64_t declared = static_cast<uint64_t>(archive_entry_size(entry));
    if (declared != rec->size)
      return Unexpected(
          memberError(archivePath, name,
                      "size " + std::to_string(declared) +
                          " does not match .ireepkg/RECORD.json (" +
                          std::to_string(rec->size) + ")"));
    std::string out = destDir + "/" + name;
    size_t lastSlash = name.rfind('/');
    if (lastSlash != std::string::npos)
      if (Status s =
              fsutil::makeDirs(destDir + "/" + name.substr(0, lastSlash));
          !s)
        return Unexpected(s.error());
    mode_t mode = rec->executable ? 0755 : 0644;
    int fd = ::open(out.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
      return Unexpected(fsutil::ioError("cannot create", out, errno));
    uint64_t written = 0;
    Status copied =
        copyData(reader, fd, name, out, declared, fileHash, written, progress,
                 totalDone, writeBudget(reader.fileSize(), limits));
    ::close(fd);
    if (!copied)
      return Unexpected(copied.error());
    if (written != declared)
      return Unexpected(memberError(archivePath, name,
                                    "is truncated (" + std::to_string(written) +
                                        " of " + std::to_string(declared) +
                                        " bytes)"));
    if (fileHash.hexDigest() != rec->sha256)
      return Unexpected(memberError(
          archivePath, name, "SHA-256 does not match .ireepkg/RECORD.json"));
    extracted.insert(name);
  }
  for (const RecordEntry &e : head.head.record.files)
    if (e.path != kManifestName && !extracted.count(e.path))
      return Unexpected(
          memberError(archivePath, e.path,
                      "is listed in .ireepkg/RECORD.json but missing "
                      "from the archive"));
  // Drain to the end so that the archive hash covers every byte.
  char sink[65536];
  while (true) {
    ssize_t n = ::read(reader.source().fd, sink, sizeof sink);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    reader.source().hash.update(sink, static_cast<size_t>(n));
    reader.source().bytes += static_cast<uint64_t>(n);
  }
  target->keep();
  ExtractResult result;
  result.head = std::move(head.head);
  result.archiveSha256 = reader.source().hash.hexDigest();
  result.archiveSize = reader.source().bytes;
  result.unpackedSize = result.head.record.totalSize();
  return result;
}
} // namespace

/// A plain archive (an offline bundle): regular files and directories
/// under the same member rules as a package, without manifest or RECORD
/// (what the files are is checked by whoever reads them: a bundle's
/// registry files carry signatures and hashes).
Expected<uint64_t> extractFiles(const std::string &archivePath,
                                const std::string &destDir,
                                const ArchiveLimits &limits) {
  Reader reader;
  if (Status s = reader.open(archivePath); !s)
    return Unexpected(s.error());
  auto target = ExtractionDir::create(destDir, "");
  if (!target)
    return Unexpected(target.error());
  MemberSet names;
  uint64_t members = 0, total = 0, totalDone = 0, files = 0;
  Sha256 hash;
  bool first = true;
  while (true) {
    auto next = nextMember(reader, archivePath, limits, members);
    if (!next)
      return Unexpected(next.error());
    if (!*next)
      break;
    if (first) {
      first = false;
      if (Status s = reader.requireZstd(); !s)
        return Unexpected(s.error());
    }
    archive_entry *entry = (*next)->entry;
    const std::string &name = (*next)->name;
    if (std::string p = names.admit(name, (*next)->isDir); !p.empty())
      return Unexpected(memberError(archivePath, name, p));
    std::string out = destDir + "/" + name;
    if ((*next)->isDir) {
      if (Status s = fsutil::makeDirs(out); !s)
        return Unexpected(s.error());
      continue;
    }
    ++files;
    uint64_t declared = static_cast<uint64_t>(archive_entry_size(entry));
    if (__builtin_add_overflow(total, declared, &total) ||
        total > writeBudget(reader.fileSize(), limits))
      return Unexpected(Error(
          ErrorCode::Invalid,
          "the archive unpacks to more than " +
              std::to_string(writeBudget(reader.fileSize(), limits)) +
              " bytes (" + std::to_string(reader.fileSize()) +
              " bytes compressed), past the size or compression-ratio limit",
          Location{archivePath, 0, 0, "", "", name},
          "this may be a decompression bomb"));
    size_t lastSlash = name.rfind('/');
    if (lastSlash != std::string::npos)
      if (Status s =
              fsutil::makeDirs(destDir + "/" + name.substr(0, lastSlash));
          !s)
        return Unexpected(s.error());
    int fd = ::open(out.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
      return Unexpected(fsutil::ioError("cannot create", out, errno));
    uint64_t written = 0;
    Status copied = copyData(reader, fd, name, out, declared, hash, written,
                             {}, totalDone, writeBudget(reader.fileSize(), limits));
    ::close(fd);
    if (!copied)
      return Unexpected(copied.error());
    if (written != declared)
      return Unexpected(memberError(archivePath, name,
                                    "is truncated (" + std::to_string(written) +
                                        " of " + std::to_string(declared) +
                                        " bytes)"));
  }
  target->keep();
  return files;
}

namespace {

/// The zstd side of writing: libarchive writes the tar, this compresses it
/// (libzstd, level 9, one thread: deterministic). Doing it here rather than
/// with libarchive's zstd filter keeps libarchive's option tables, which
/// reference every format it supports (and pull libxml2 and ICU into the
/// process), out of the binary.
struct ZstdSink {
  int fd = -1;
  ZSTD_CCtx *cctx = nullptr;
  std::vector<char> out = std::vector<char>(ZSTD_CStreamOutSize());
  int error = 0;

  bool flush(ZSTD_outBuffer &o) {
    const char *p = static_cast<const char *>(o.dst);
    size_t left = o.pos;
    while (left) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        error = errno;
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    o.pos = 0;
    return true;
  }

  static la_ssize_t write(struct archive *, void *self, const void *buf,
                          size_t size) {
    auto *s = static_cast<ZstdSink *>(self);
    ZSTD_inBuffer in{buf, size, 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer o{s->out.data(), s->out.size(), 0};
      size_t rc = ZSTD_compressStream2(s->cctx, &o, &in, ZSTD_e_continue);
      if (ZSTD_isError(rc) || !s->flush(o))
        return -1;
    }
    return static_cast<la_ssize_t>(size);
  }

  bool finish() {
    ZSTD_inBuffer in{nullptr, 0, 0};
    size_t rc;
    do {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      rc = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
      if (ZSTD_isError(rc) || !flush(o))
        return false;
    } while (rc != 0);
    return true;
  }
};

} // namespace

/// A tar header block (POSIX ustar, with a pax extended header before it
/// when a name does not fit). Only what pack writes: regular files, mode
/// 0644 or 0755, owner 0:0, time 0 -- so the archive is reproducible.
static std::string tarHeader(const std::string &name, uint64_t size,
                             unsigned mode, char type) {
  std::string h(512, '\0');
  auto put = [&](size_t off, size_t len, const std::string &v) {
    std::memcpy(&h[off], v.data(), std::min(len, v.size()));
  };
  auto octal = [&](size_t off, size_t len, uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llo", static_cast<int>(len - 1),
                  static_cast<unsigned long long>(v));
    put(off, len - 1, buf);
  };
  put(0, 100, name);
  octal(100, 8, mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 0);
  std::memset(&h[148], ' ', 8);
  h[156] = type;
  put(257, 6, std::string("ustar\0", 6));
  put(263, 2, "00");
  unsigned sum = 0;
  for (unsigned char c : h)
    sum += c;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06o", sum);
  std::memcpy(&h[148], buf, 7);
  h[155] = ' ';
  return h;
}

/// The header(s) for one member: a pax "path" record when the name is
/// longer than ustar's 100 bytes.
static std::string memberHeaders(const std::string &name, uint64_t size,
                                 bool executable) {
  std::string out;
  if (name.size() > 99) {
    std::string record = " path=" + name + "\n";
    // The length prefix counts itself.
    size_t len = record.size();
    while (std::to_string(len + std::to_string(len).size()).size() !=
           std::to_string(len).size())
      ++len;
    len += std::to_string(len).size();
    std::string pax = std::to_string(len) + record;
    out += tarHeader("PaxHeader/" + name.substr(name.size() - 80), pax.size(),
                     0644, 'x');
    out += pax;
    out.resize(out.size() + (512 - pax.size() % 512) % 512, '\0');
  }
  out += tarHeader(name.size() > 99 ? name.substr(0, 99) : name, size,
                   executable ? 0755 : 0644, '0');
  return out;
}

Status writeArchive(const std::string &path,
                    const std::vector<ArchiveMember> &members) {
  // Tar headers are written here and the stream compressed with libzstd
  // (level 9, one thread: deterministic). libarchive reads archives, where
  // its hardening matters; its writer would link every format it supports
  // (and with them libxml2 and ICU) into every ireepkg command.
  ZstdSink sink;
  sink.fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (sink.fd < 0)
    return Unexpected(fsutil::ioError("cannot create", path, errno));
  sink.cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(sink.cctx, ZSTD_c_compressionLevel, 9);
  ZSTD_CCtx_setParameter(sink.cctx, ZSTD_c_checksumFlag, 1);
  struct Closer {
    ZstdSink &s;
    ~Closer() {
      ZSTD_freeCCtx(s.cctx);
      if (s.fd >= 0)
        ::close(s.fd);
    }
  } closer{sink};
  auto emit = [&](const void *data, size_t size) {
    return ZstdSink::write(nullptr, &sink, data, size) >= 0;
  };
  auto fail = [&](Error e) {
    ::unlink(path.c_str());
    return Unexpected(std::move(e));
  };
  auto writeFailed = [&] {
    return fail(Error(
        ErrorCode::Io,
        std::string("cannot write archive: ") +
            (sink.error ? std::strerror(sink.error) : "compression failed"),
        Location::inFile(path)));
  };
  std::vector<char> buf(kReadBlock);
  static const char zeros[512] = {0};
  for (const ArchiveMember &m : members) {
    int fd = -1;
    uint64_t size = m.content.size();
    if (!m.sourcePath.empty()) {
      fd = ::open(m.sourcePath.c_str(), O_RDONLY | O_CLOEXEC);
      struct stat st;
      if (fd < 0 || ::fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
          ::close(fd);
        return fail(fsutil::ioError("cannot read", m.sourcePath, e));
      }
      size = static_cast<uint64_t>(st.st_size);
    }
    std::string headers = memberHeaders(m.path, size, m.executable);
    if (!emit(headers.data(), headers.size())) {
      if (fd >= 0)
        ::close(fd);
      return writeFailed();
    }
    if (fd < 0) {
      if (!emit(m.content.data(), m.content.size()))
        return writeFailed();
    } else {
      uint64_t left = size;
      while (left) {
        ssize_t n =
            ::read(fd, buf.data(), std::min<uint64_t>(buf.size(), left));
        if (n < 0 && errno == EINTR)
          continue;
        if (n <= 0) {
          ::close(fd);
          return fail(Error(ErrorCode::Io,
                            "short read (file changed while packing?)",
                            Location::inFile(m.sourcePath)));
        }
        if (!emit(buf.data(), static_cast<size_t>(n))) {
          ::close(fd);
          return writeFailed();
        }
        left -= static_cast<uint64_t>(n);
      }
      ::close(fd);
    }
    if (size % 512 && !emit(zeros, 512 - size % 512))
      return writeFailed();
  }
  // End of archive: two zero blocks.
  if (!emit(zeros, 512) || !emit(zeros, 512) || !sink.finish())
    return writeFailed();
  return ok();
}

} // namespace ireepkg
