//===- registry/src/transport/transport.cpp -------------------------------===//
//
// Where a registry's files come from.
//
// The transports behind registry::Transport (oci:// ones are in
// oci_transport.cpp):
//
//  - a directory (a plain path or a file:// URL): metadata is read with its
//    size cap checked before reading; archives are copied through SHA-256
//    into a temporary file beside the destination, cut off at the declared
//    size, and renamed into place only once size and hash match;
//  - HTTP(S), through net::HttpClient (the loadable libcurl module): every
//    request goes to the registry's URL and then to each mirror, and the
//    client keeps its metadata cache in <cache>/registries/<id>/http;
//  - a chain of those, for a registry whose mirrors are of another kind
//    than its URL (an oci:// registry with a static copy as a mirror).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/base/partial_files.h"
#include "ireepkg/registry/client/client.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/pkg/prefix/reporter.h"
#include "oci.h"
#include "ireepkg/registry/client/registry_cache.h"
#include "client/registry_urls.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::registry {

using namespace detail;

Transport::~Transport() = default;

std::vector<Expected<net::MetadataResponse>>
Transport::fetchMany(const std::vector<std::string> &relPaths,
                     uint64_t maxBytes) {
  std::vector<Expected<net::MetadataResponse>> out;
  out.reserve(relPaths.size());
  for (const std::string &rel : relPaths)
    out.push_back(fetch(rel, maxBytes));
  return out;
}

namespace {


std::string partSuffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return ".part-" + std::to_string(::getpid()) + "-" + buf;
}

class DirectoryTransport : public Transport {
public:
  DirectoryTransport(std::string given, std::string root)
      : given_(std::move(given)), root_(std::move(root)) {}

  std::string describe() const override { return given_; }

  /// Reading files keeps no state: a copy reads the same directory.
  std::unique_ptr<Transport> concurrentCopy() const override {
    return std::make_unique<DirectoryTransport>(given_, root_);
  }

  std::optional<fsutil::FileStamp>
  stamp(const std::string &relPath) const override {
    return fsutil::fileStamp(root_ + "/" + relPath);
  }

  Expected<net::MetadataResponse> fetch(const std::string &relPath,
                                        uint64_t maxBytes) override {
    const std::string path = root_ + "/" + relPath;
    const std::string shown = joinUrl(given_, relPath);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      if (e == ENOENT || e == ENOTDIR)
        return makeError(ErrorCode::NotFound, "no such file", Location::inFile(shown));
      return Unexpected(fsutil::ioError("cannot open", shown, e));
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return makeError(ErrorCode::Invalid, "not a regular file", Location::inFile(shown));
    }
    auto tooLarge = [&](uint64_t size) {
      return makeError(ErrorCode::Integrity,
                       "metadata file is larger than the " +
                           std::to_string(maxBytes) + " bytes allowed (" +
                           (size ? std::to_string(size) + " bytes" : "more") +
                           ")",
                       Location::inFile(shown),
                       "a registry's metadata is small: this one is broken, "
                       "or is feeding endless data; do not use it");
    };
    if (static_cast<uint64_t>(st.st_size) > maxBytes) {
      ::close(fd);
      return tooLarge(static_cast<uint64_t>(st.st_size));
    }
    // The file may grow while it is read: never read past the cap.
    net::MetadataResponse r;
    r.url = shown;
    r.body.reserve(static_cast<size_t>(st.st_size));
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        int e = errno;
        ::close(fd);
        return Unexpected(fsutil::ioError("read failed", shown, e));
      }
      if (n == 0)
        break;
      if (r.body.size() + static_cast<uint64_t>(n) > maxBytes) {
        ::close(fd);
        return tooLarge(0);
      }
      r.body.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return r;
  }

  Status downloadAll(const std::vector<Download> &downloads,
                     Reporter &reporter) override {
    uint64_t total = 0, done = 0;
    for (const Download &d : downloads)
      total += d.size;
    for (const Download &d : downloads)
      if (Status s = copyOne(d, reporter, done, total); !s)
        return s;
    return ok();
  }

private:
  Status copyOne(const Download &d, Reporter &reporter, uint64_t &done,
                 uint64_t total) {
    const std::string src = root_ + "/" + d.relPath;
    const std::string shown = joinUrl(given_, d.relPath);
    Location where = Location::inFile(shown);
    where.package = d.label;
    int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) {
      int e = errno;
      if (e == ENOENT)
        return makeError(ErrorCode::NotFound,
                         d.label + ": the archive the index names is missing",
                         where,
                         "the registry is incomplete; tell its maintainer");
      return Unexpected(fsutil::ioError("cannot open", shown, e));
    }
    if (Status s = fsutil::makeDirs(fs::path(d.destPath).parent_path()); !s) {
      ::close(in);
      return s;
    }
    const std::string part = d.destPath + partSuffix();
    int out =
        ::open(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
      int e = errno;
      ::close(in);
      return Unexpected(fsutil::ioError("cannot create", part, e));
    }
    PartialFileGuard partGuard(part); // removed if a signal ends the process
    auto fail = [&](Error e) -> Status {
      ::close(in);
      ::close(out);
      ::unlink(part.c_str());
      return Unexpected(std::move(e));
    };
    Sha256 h;
    uint64_t size = 0;
    std::vector<char> buf(1 << 20);
    for (;;) {
      // Read at most one byte past the declared size: enough to know it
      // is larger, never more (endless data).
      if (reporter.interrupted())
        return fail(interruptedError("copying " + d.label));
      uint64_t want = std::min<uint64_t>(buf.size(), d.size + 1 - size);
      ssize_t n = ::read(in, buf.data(), want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return fail(fsutil::ioError("read failed", shown, errno));
      if (n == 0)
        break;
      size += static_cast<uint64_t>(n);
      if (size > d.size)
        return fail(Error(ErrorCode::Integrity,
                          d.label + ": the archive is larger than the " +
                              std::to_string(d.size) +
                              " bytes its index entry declares; the "
                              "download was cut off there",
                          where,
                          "the registry serves other bytes than it signed "
                          "for: do not use it, and tell its maintainer"));
      h.update(buf.data(), static_cast<size_t>(n));
      for (ssize_t w = 0; w < n;) {
        ssize_t k = ::write(out, buf.data() + w, static_cast<size_t>(n - w));
        if (k < 0 && errno == EINTR)
          continue;
        if (k < 0)
          return fail(fsutil::ioError("write failed", part, errno));
        w += k;
      }
      done += static_cast<uint64_t>(n);
      reporter.itemProgress(d.label, size, d.size);
      reporter.progress("downloading", done, total);
    }
    if (size != d.size)
      return fail(Error(ErrorCode::Integrity,
                        d.label + ": the archive is " + std::to_string(size) +
                            " bytes, but its index entry declares " +
                            std::to_string(d.size),
                        where,
                        "the archive is truncated or was replaced; do not "
                        "use it, and tell the registry's maintainer"));
    std::string sha = h.hexDigest();
    if (sha != d.sha256)
      return fail(Error(ErrorCode::Integrity,
                        d.label + ": the archive's SHA-256 is " + sha +
                            ", but its index entry declares " + d.sha256,
                        where,
                        "the archive was altered after it was published; do "
                        "not use it, and tell the registry's maintainer"));
    if (::fsync(out) != 0)
      return fail(fsutil::ioError("fsync failed", part, errno));
    ::close(in);
    ::close(out);
    if (::rename(part.c_str(), d.destPath.c_str()) != 0) {
      int e = errno;
      ::unlink(part.c_str());
      return Unexpected(
          fsutil::ioError("cannot rename into place", d.destPath, e));
    }
    return ok();
  }

  std::string given_;
  std::string root_;
};

class HttpTransport : public Transport {
public:
  HttpTransport(std::vector<std::string> bases, net::FetchOptions options,
                std::unique_ptr<net::HttpClient> client)
      : bases_(std::move(bases)), options_(std::move(options)),
        client_(std::move(client)) {}

  std::string describe() const override { return bases_.front(); }

  /// A client (its curl handles) serves one thread at a time: the copy
  /// has its own, opened with the same options (the same metadata cache,
  /// whose entries are replaced by renames, so both may write it), and
  /// tries the mirrors in the same order. Null when no client opens.
  std::unique_ptr<Transport> concurrentCopy() const override {
    auto client = net::openHttpClient(options_);
    if (!client)
      return nullptr;
    auto copy =
        std::make_unique<HttpTransport>(bases_, options_, std::move(*client));
    copy->preferred_ = preferred_;
    return copy;
  }

  Expected<net::MetadataResponse> fetch(const std::string &relPath,
                                        uint64_t maxBytes) override {
    return std::move(fetchMany({relPath}, maxBytes).front());
  }

  size_t parallelFetches() const override {
    return static_cast<size_t>(std::max(1, options_.parallel));
  }

  /// One fetchMetadataMany: the files are fetched in parallel (up to
  /// FetchOptions::parallel), each from the mirrors in the order fetch()
  /// would try them now.
  std::vector<Expected<net::MetadataResponse>>
  fetchMany(const std::vector<std::string> &relPaths,
            uint64_t maxBytes) override {
    std::vector<net::MetadataRequest> requests;
    requests.reserve(relPaths.size());
    for (const std::string &relPath : relPaths) {
      net::MetadataRequest request;
      request.urls = urls(relPath);
      request.maxBytes = maxBytes;
      request.label = relPath;
      request.useCache = !pinnedByHash(relPath);
      requests.push_back(std::move(request));
    }
    auto results = client_->fetchMetadataMany(requests);
    for (size_t i = 0; i < results.size() && i < relPaths.size(); ++i)
      if (results[i])
        remember(results[i]->url, relPaths[i]);
    return results;
  }

  Status downloadAll(const std::vector<Download> &downloads,
                     Reporter &reporter) override {
    std::vector<net::DownloadRequest> requests;
    for (const Download &d : downloads) {
      if (Status s = fsutil::makeDirs(fs::path(d.destPath).parent_path()); !s)
        return s;
      net::DownloadRequest r;
      r.urls = urls(d.relPath);
      r.destPath = d.destPath;
      r.size = d.size;
      r.sha256 = d.sha256;
      r.label = d.label;
      requests.push_back(std::move(r));
    }
    return client_->downloadAll(requests, reporter);
  }

private:
  /// Index files: the signed snapshot pins each one's SHA-256, and the
  /// client keeps what it verified by that hash (index.pack, or a verified
  /// copy), never asking for a file it holds. A second copy in the
  /// metadata cache, by URL, would only cost a file created per index
  /// file read (a cold lock of a thousand packages: a thousand files).
  static bool pinnedByHash(const std::string &relPath) {
    return relPath.starts_with("index/") && relPath.ends_with(".json");
  }

  /// The mirror that answered last is tried first from then on, so that a
  /// dead URL costs its retries once per command, not once per file.
  void remember(const std::string &answered, const std::string &relPath) {
    for (size_t i = 0; i < bases_.size(); ++i)
      if (joinUrl(bases_[i], relPath) == answered)
        preferred_ = i;
  }

  std::vector<std::string> urls(const std::string &relPath) const {
    std::vector<std::string> out{joinUrl(bases_[preferred_], relPath)};
    for (size_t i = 0; i < bases_.size(); ++i)
      if (i != preferred_)
        out.push_back(joinUrl(bases_[i], relPath));
    return out;
  }

  std::vector<std::string> bases_;
  size_t preferred_ = 0;
  net::FetchOptions options_; ///< what the client was opened with
  std::unique_ptr<net::HttpClient> client_;
};

} // namespace

namespace {

enum class UrlKind { Directory, Oci, Http };

UrlKind urlKind(const std::string &url) {
  if (isDirectoryUrl(url))
    return UrlKind::Directory;
  if (oci::isOciUrl(url))
    return UrlKind::Oci;
  return UrlKind::Http;
}

/// A registry whose URL and mirrors are of different kinds: an oci://
/// registry with a static copy (`registry mirror`) served over HTTPS or
/// kept in a directory, or the reverse. Each run of URLs of one kind is
/// one transport (which tries its own URLs in turn); requests go to them in
/// turn, the one that answered last first, so that a snapshot's signature
/// comes from where the snapshot came from. The transports only move
/// bytes: the client checks whatever answered exactly as always.
class ChainTransport : public Transport {
public:
  ChainTransport(std::string url, std::vector<std::unique_ptr<Transport>> t)
      : url_(std::move(url)), parts_(std::move(t)) {}

  std::string describe() const override { return url_; }

  Expected<net::MetadataResponse> fetch(const std::string &relPath,
                                        uint64_t maxBytes) override {
    std::optional<Error> first;
    for (size_t n = 0; n < parts_.size(); ++n) {
      const size_t i = (preferred_ + n) % parts_.size();
      auto r = parts_[i]->fetch(relPath, maxBytes);
      if (r) {
        preferred_ = i;
        return r;
      }
      if (!first)
        first = r.error();
    }
    return Unexpected(*first);
  }

  Status downloadAll(const std::vector<Download> &downloads,
                     Reporter &reporter) override {
    std::optional<Error> first;
    std::vector<Download> rest = downloads;
    for (size_t n = 0; n < parts_.size() && !rest.empty(); ++n) {
      const size_t i = (preferred_ + n) % parts_.size();
      Status s = parts_[i]->downloadAll(rest, reporter);
      if (s)
        return s;
      if (!first)
        first = s.error();
      // What was verified stays; the next transport gets the others.
      std::vector<Download> missing;
      for (const Download &d : rest)
        if (!fsutil::exists(d.destPath))
          missing.push_back(d);
      rest = std::move(missing);
    }
    if (rest.empty())
      return ok();
    return Unexpected(*first);
  }

private:
  std::string url_;
  std::vector<std::unique_ptr<Transport>> parts_;
  size_t preferred_ = 0;
};

} // namespace

Expected<std::unique_ptr<Transport>>
openTransport(const RegistrySpec &spec, const ClientOptions &options) {
  if (spec.url.empty())
    return makeError(ErrorCode::Usage,
                     "registry \"" + spec.name + "\" has no URL", {},
                     "give the registry's https:// URL or directory");
  // URLs of different kinds: one transport per run of one kind.
  const UrlKind kind = urlKind(spec.url);
  if (std::any_of(spec.mirrors.begin(), spec.mirrors.end(),
                  [&](const std::string &m) { return urlKind(m) != kind; })) {
    std::vector<std::unique_ptr<Transport>> parts;
    std::vector<std::string> urls{spec.url};
    urls.insert(urls.end(), spec.mirrors.begin(), spec.mirrors.end());
    for (size_t i = 0; i < urls.size();) {
      RegistrySpec part = spec;
      part.url = urls[i];
      part.mirrors.clear();
      size_t j = i + 1;
      // A directory transport reads one directory: each is its own.
      for (; j < urls.size() && urlKind(urls[i]) != UrlKind::Directory &&
             urlKind(urls[j]) == urlKind(urls[i]);
           ++j)
        part.mirrors.push_back(urls[j]);
      auto t = openTransport(part, options);
      if (!t)
        return Unexpected(t.error());
      parts.push_back(std::move(*t));
      i = j;
    }
    return std::unique_ptr<Transport>(
        std::make_unique<ChainTransport>(spec.url, std::move(parts)));
  }
  if (isDirectoryUrl(spec.url)) {
    std::string root = directoryOf(spec.url);
    if (!fsutil::isDirectory(root))
      return makeError(ErrorCode::NotFound,
                       "registry \"" + spec.name + "\": no such directory",
                       Location::inFile(spec.url),
                       "give the directory of a registry (one with "
                       "config.json and snapshot.json), or its URL");
    return std::unique_ptr<Transport>(
        std::make_unique<DirectoryTransport>(spec.url, root));
  }
  if (oci::isOciUrl(spec.url))
    return oci::openOciTransport(spec, options);
  if (!net::isHttpUrl(spec.url))
    return makeError(ErrorCode::Unsupported,
                     "registry \"" + spec.name + "\": unsupported URL \"" +
                         spec.url + "\"",
                     {},
                     "a registry is an https://, http://, oci:// or file:// "
                     "URL, or a directory");
  std::vector<std::string> bases{spec.url};
  for (const std::string &m : spec.mirrors) {
    if (!net::isHttpUrl(m))
      return makeError(ErrorCode::Unsupported,
                       "registry \"" + spec.name + "\": mirror \"" + m +
                           "\" is not an http:// or https:// URL",
                       {}, "list the mirrors' https:// URLs");
    bases.push_back(m);
  }
  auto cacheRoot = cache::cacheRootFor(options);
  if (!cacheRoot)
    return Unexpected(cacheRoot.error());
  net::FetchOptions fetch = options.fetch;
  fetch.offline = fetch.offline || options.offline;
  if (fetch.metadataCacheDir.empty())
    fetch.metadataCacheDir = cache::registryCacheDir(*cacheRoot, spec.url) + "/http";
  auto client = net::openHttpClient(fetch);
  if (!client)
    return Unexpected(client.error());
  return std::unique_ptr<Transport>(std::make_unique<HttpTransport>(
      std::move(bases), std::move(fetch), std::move(*client)));
}

} // namespace ireepkg::registry
