//===- registry/http/http_client.cpp --------------------------------------===//
//
// The libcurl client (libireepkg_http.so).
//
// Everything fetch.h promises, on one curl multi handle per client:
//
//  - A request is a Job: its mirror URLs, a sink (memory for metadata, a
//    temporary file plus SHA-256 for archives) and a byte limit beyond which
//    the transfer is cut off. One loop drives all jobs, at most `parallel`
//    at once; a job that must wait before its next attempt (backoff) does
//    not hold up the others. The archives of downloadAll succeed or fail
//    together; the metadata files of fetchMetadataMany (fetchMetadata is
//    its case of one) each have their own result.
//  - After each attempt the outcome decides: success; retry the same URL
//    after a backoff (connection errors, timeouts, 5xx, 408, 429, truncated
//    bodies); or move on to the next mirror (other 4xx, wrong hash, too
//    large, TLS failures, redirect loops, retries used up). When the last
//    mirror is used up the job fails with what every URL answered.
//  - Metadata bodies are cached with their ETags (metadata_cache.h).
//
// Archives are not fsync'ed before the rename: whoever reads one later
// (install) hashes it again as it reads.
//
// Only the factory at the end is exported (exports.map); the static
// libraries this module links stay private to it.
//
// Why one file of this size: the module exports one factory (exports.map)
// and keeps libcurl's types inside it; the transfer loop, retries and
// mirrors share the per-client multi handle.
//
//===----------------------------------------------------------------------===//
#include "../src/transport/http_module.h"
#include "http_request.h"
#include "metadata_cache.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/base/fault_point.h"
#include "ireepkg/base/os.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/partial_files.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#ifndef IREEPKG_VERSION
#define IREEPKG_VERSION "0.0.0"
#endif

namespace ireepkg::net {

// The host binary has its own copy (fetch_loader.cpp); this module resolves
// nothing from it, so it needs one too for HttpClient's vtable.
HttpClient::~HttpClient() = default;

std::string randomHex(size_t chars) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char digits[] = "0123456789abcdef";
  std::string out(chars, '0');
  for (char &c : out)
    c = digits[rng() & 15];
  return out;
}

bool writeAll(int fd, const char *data, size_t size) {
  while (size) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

namespace {

using Clock = std::chrono::steady_clock;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

std::string bytesText(uint64_t n) {
  char buf[64];
  if (n >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%llu bytes (%.1f MiB)",
                  static_cast<unsigned long long>(n), n / 1048576.0);
  else if (n >= 1024)
    std::snprintf(buf, sizeof buf, "%llu bytes (%.1f KiB)",
                  static_cast<unsigned long long>(n), n / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu bytes",
                  static_cast<unsigned long long>(n));
  return buf;
}

/// The file name at the end of a URL, for messages when there is no label.
std::string lastSegment(const std::string &url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const char *httpReason(long code) {
  switch (code) {
  case 400:
    return "bad request";
  case 401:
    return "unauthorized";
  case 403:
    return "forbidden";
  case 404:
    return "not found";
  case 405:
    return "method not allowed";
  case 408:
    return "request timeout";
  case 410:
    return "gone";
  case 429:
    return "too many requests";
  case 500:
    return "internal server error";
  case 501:
    return "not implemented";
  case 502:
    return "bad gateway";
  case 503:
    return "service unavailable";
  case 504:
    return "gateway timeout";
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// Jobs
//===----------------------------------------------------------------------===//

/// What went wrong with one URL, by kind; decides the final error code and
/// hint.
enum class Problem { Network, NotFound, Http, Integrity, Tls };

struct UrlReport {
  std::string url;
  std::string what;
  int attempts = 0;
  Problem problem = Problem::Network;
};

struct Job {
  // The request.
  bool metadata = false;
  std::vector<std::string> urls;
  std::string label;
  uint64_t limit = 0; ///< metadata: maxBytes; archive: the exact size
  std::string destPath;
  std::string sha256;
  std::vector<std::vector<std::string>> urlHeaders; ///< per URL, may be short

  // Metadata: the cached entry of the URL being tried, and the answer.
  bool useCache = true; ///< MetadataRequest::useCache
  std::optional<CacheEntry> cached;
  std::string body;
  std::string answeredUrl;
  bool fromCache = false;

  // Archive: the temporary file, created at the first attempt.
  std::string tempPath;
  PartialFileGuard tempGuard; ///< removes tempPath on SIGINT/SIGTERM/SIGHUP
  int fd = -1;
  Sha256 hasher;

  // The attempt in flight.
  CURL *easy = nullptr;
  curl_slist *headers = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};
  uint64_t received = 0;
  bool overflow = false;
  int writeErrno = 0;

  // Where the job stands.
  enum class State { Waiting, Running, Done, Failed } state = State::Waiting;
  size_t urlIndex = 0;
  int attemptsOnUrl = 0;
  Clock::time_point notBefore{};
  std::vector<UrlReport> reports;
  std::optional<Error> error; ///< set when State::Failed

  Job() = default;
  Job(const Job &) = delete;
  Job &operator=(const Job &) = delete;

  const std::string &url() const { return urls[urlIndex]; }
  std::string name() const {
    return label.empty() ? lastSegment(urls.empty() ? destPath : urls[0])
                         : label;
  }

  void endAttempt(CURLM *multi) {
    if (easy) {
      curl_multi_remove_handle(multi, easy);
      curl_easy_cleanup(easy);
      easy = nullptr;
    }
    if (headers) {
      curl_slist_free_all(headers);
      headers = nullptr;
    }
  }

  /// Closes and removes the temporary file, if any.
  void discardTemp() {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
    if (!tempPath.empty()) {
      ::unlink(tempPath.c_str());
      tempPath.clear();
    }
    tempGuard.release();
  }
};

size_t onData(char *data, size_t size, size_t count, void *user) noexcept {
  Job &job = *static_cast<Job *>(user);
  size_t n = size * count;
  if (job.received + n > job.limit) {
    // Cut off: an oversized or endless body ends here.
    job.overflow = true;
    return CURL_WRITEFUNC_ERROR;
  }
  job.received += n;
  if (job.metadata) {
    try {
      job.body.append(data, n);
    } catch (...) {
      job.writeErrno = ENOMEM;
      return CURL_WRITEFUNC_ERROR;
    }
    return n;
  }
  job.hasher.update(data, n);
  if (!writeAll(job.fd, data, n)) {
    job.writeErrno = errno;
    return CURL_WRITEFUNC_ERROR;
  }
  return n;
}

/// Removes what downloads of `destPath` killed before they could clean up
/// left: `<destPath>.part-<pid>-<random>` whose process is gone. (Older
/// `.part-<random>` names carry no process id: those an hour old go.)
/// Partial files of live downloads, in this or another process, stay.
void removeAbandonedParts(const std::string &destPath) {
  std::filesystem::path dest(destPath);
  std::string prefix = dest.filename().string() + ".part-";
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(
           dest.parent_path().empty() ? "." : dest.parent_path(), ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix))
      continue;
    std::string rest = name.substr(prefix.size());
    size_t dash = rest.find('-');
    bool abandoned = false;
    if (dash != std::string::npos && dash > 0 &&
        rest.find_first_not_of("0123456789") == dash) {
      long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
      abandoned =
          pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    } else {
      struct stat st;
      abandoned = ::lstat(entry.path().c_str(), &st) == 0 &&
                  S_ISREG(st.st_mode) && ::time(nullptr) - st.st_mtime > 3600;
    }
    if (abandoned)
      ::unlink(entry.path().c_str());
  }
}

//===----------------------------------------------------------------------===//
// The client
//===----------------------------------------------------------------------===//

class HttpClientImpl final : public HttpClient {
public:
  HttpClientImpl(const FetchOptions &options, std::string caFile)
      : options_(options), caFile_(std::move(caFile)),
        cache_(options.metadataCacheDir), multi_(curl_multi_init()) {
    options_.parallel = std::max(1, options_.parallel);
    options_.retries = std::max(0, options_.retries);
    options_.maxRedirects = std::max(0, options_.maxRedirects);
    options_.backoffSeconds = std::max(0.0, options_.backoffSeconds);
  }
  ~HttpClientImpl() override {
    if (multi_)
      curl_multi_cleanup(multi_);
  }
  bool valid() const { return multi_ != nullptr; }

  Expected<MetadataResponse>
  fetchMetadata(const MetadataRequest &request) override {
    return std::move(fetchMetadataMany({request}).front());
  }
  std::vector<Expected<MetadataResponse>>
  fetchMetadataMany(const std::vector<MetadataRequest> &requests) override;
  Status downloadAll(const std::vector<DownloadRequest> &requests,
                     Reporter &reporter) override;
  Expected<HttpResponse> request(const HttpRequest &request) override {
    return performRequest(options_, caFile_, request);
  }

private:
  /// What run() does when a job fails on every mirror: Stop returns that
  /// job's error at once (and abandons the others: downloadAll's
  /// all-or-nothing); Continue records it in the job and goes on with the
  /// others (fetchMetadataMany, where each result is its own). With
  /// Continue, run() fails only on a bad request; an interruption or a
  /// failure of the whole multi handle ends each job still unfinished
  /// with that error.
  enum class OnFailure { Stop, Continue };
  Status run(std::vector<std::unique_ptr<Job>> &jobs, int parallel,
             Reporter *reporter, OnFailure onFailure);
  /// The offline answer to one metadata request: the cache's, or an error
  /// that says what is missing.
  Expected<MetadataResponse> offlineAnswer(const MetadataRequest &request,
                                           const std::string &name) const;
  Status startAttempt(Job &job);
  void finishAttempt(Job &job, CURLcode rc);
  void retryOrMoveOn(Job &job, std::string what, Problem problem,
                     bool retryable, double waitSeconds = -1);
  Error finalError(const Job &job) const;
  /// Tells the user something they should know about a transfer (a wait
  /// the server asked for), through the reporter of downloadAll.
  void notice(const std::string &message) {
    if (reporter_)
      reporter_->warning(Diagnostic{Severity::Warning, {}, message, ""});
  }

  Reporter *reporter_ = nullptr;
  FetchOptions options_;
  std::string caFile_;
  MetadataCache cache_;
  CURLM *multi_;
};

Expected<MetadataResponse>
HttpClientImpl::offlineAnswer(const MetadataRequest &request,
                              const std::string &name) const {
  for (const std::string &url : request.urls)
    if (std::optional<CacheEntry> entry =
            request.useCache ? cache_.load(url) : std::nullopt)
      return MetadataResponse{std::move(entry->body), url, true};
  std::string message =
      "offline, and " + name + " is not in the " + "metadata cache";
  if (cache_.enabled())
    message += " (" + cache_.dir() + ")";
  else
    message += " (no cache is configured)";
  message += "; looked for " + request.urls[0];
  for (size_t i = 1; i < request.urls.size(); ++i)
    message += ", " + request.urls[i];
  return makeError(ErrorCode::NotFound, message, {},
                   "run the command once online to fill the cache, then "
                   "it works offline");
}

std::vector<Expected<MetadataResponse>> HttpClientImpl::fetchMetadataMany(
    const std::vector<MetadataRequest> &requests) {
  // Answered without the network (a bad request, offline), or by jobs[i].
  std::vector<std::optional<Expected<MetadataResponse>>> answers(
      requests.size());
  std::vector<std::unique_ptr<Job>> jobs;
  std::vector<size_t> jobOf(requests.size(), SIZE_MAX);
  for (size_t i = 0; i < requests.size(); ++i) {
    const MetadataRequest &request = requests[i];
    std::string name = request.label.empty() && !request.urls.empty()
                           ? lastSegment(request.urls[0])
                           : request.label;
    if (request.urls.empty()) {
      answers[i] =
          makeError(ErrorCode::Invalid, "no URL to fetch " + name + " from");
      continue;
    }
    if (options_.offline) {
      answers[i] = offlineAnswer(request, name);
      continue;
    }
    jobOf[i] = jobs.size();
    jobs.push_back(std::make_unique<Job>());
    Job &job = *jobs.back();
    job.metadata = true;
    job.useCache = request.useCache;
    job.urls = request.urls;
    job.label = name;
    job.limit = request.maxBytes;
  }
  Status ran = ok();
  if (!jobs.empty())
    ran = run(jobs, options_.parallel, nullptr, OnFailure::Continue);

  std::vector<Expected<MetadataResponse>> out;
  out.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    if (answers[i]) {
      out.push_back(std::move(*answers[i]));
      continue;
    }
    Job &job = *jobs[jobOf[i]];
    if (job.state == Job::State::Done)
      out.push_back(MetadataResponse{std::move(job.body), job.answeredUrl,
                                     job.fromCache});
    else if (job.error)
      out.push_back(Unexpected(std::move(*job.error)));
    else
      out.push_back(Unexpected(
          ran ? Error(ErrorCode::Internal,
                      "the fetch of " + job.name() + " ended unfinished")
              : ran.error()));
  }
  return out;
}

Status HttpClientImpl::downloadAll(const std::vector<DownloadRequest> &requests,
                                   Reporter &reporter) {
  for (const DownloadRequest &r : requests) {
    std::string name = r.label.empty() ? r.destPath : r.label;
    if (r.urls.empty())
      return makeError(ErrorCode::Invalid,
                       "no URL to download " + name + " from");
    if (r.destPath.empty())
      return makeError(ErrorCode::Invalid, "no destination path for " + name);
    bool hex = r.sha256.size() == 64 &&
               std::all_of(r.sha256.begin(), r.sha256.end(), [](char c) {
                 return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
               });
    if (!hex)
      return makeError(ErrorCode::Invalid,
                       "the SHA-256 declared for " + name + " ('" + r.sha256 +
                           "') is not 64 lower-case hex digits");
  }
  if (requests.empty())
    return ok();

  if (options_.offline) {
    std::string message =
        "offline, and " + std::to_string(requests.size()) +
        (requests.size() == 1 ? " file needs" : " files need") +
        " downloading:";
    for (const DownloadRequest &r : requests)
      message += "\n  " + (r.label.empty() ? lastSegment(r.urls[0]) : r.label) +
                 " (" + r.urls[0] + ")";
    return makeError(ErrorCode::NotFound, message, {},
                     "run the command once online to download them into the "
                     "cache, then it works offline");
  }

  std::vector<std::unique_ptr<Job>> jobs;
  for (const DownloadRequest &r : requests) {
    jobs.push_back(std::make_unique<Job>());
    Job &job = *jobs.back();
    job.urls = r.urls;
    job.label = r.label.empty() ? lastSegment(r.urls[0]) : r.label;
    job.limit = r.size;
    job.destPath = r.destPath;
    job.sha256 = r.sha256;
    job.urlHeaders = r.urlHeaders;
  }
  return run(jobs, options_.parallel, &reporter, OnFailure::Stop);
}

Status HttpClientImpl::startAttempt(Job &job) {
  job.received = 0;
  job.overflow = false;
  job.writeErrno = 0;
  job.errbuf[0] = 0;
  ++job.attemptsOnUrl;

  if (job.metadata) {
    job.body.clear();
    if (job.attemptsOnUrl == 1 && job.useCache)
      job.cached = cache_.load(job.url());
  } else {
    job.hasher = Sha256();
    if (job.fd < 0) {
      removeAbandonedParts(job.destPath);
      job.tempPath = job.destPath + ".part-" + std::to_string(::getpid()) +
                     "-" + randomHex(8);
      job.tempGuard = PartialFileGuard(job.tempPath);
      job.fd = ::open(job.tempPath.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (job.fd < 0) {
        int e = errno;
        job.tempPath.clear();
        return makeError(ErrorCode::Io,
                         "cannot create a temporary file beside " +
                             job.destPath + ": " + std::strerror(e),
                         Location::inFile(job.destPath),
                         "check that the directory exists and is writable");
      }
    } else if (::ftruncate(job.fd, 0) != 0 ||
               ::lseek(job.fd, 0, SEEK_SET) != 0) {
      return makeError(ErrorCode::Io,
                       "cannot rewind " + job.tempPath + ": " +
                           std::strerror(errno),
                       Location::inFile(job.tempPath));
    }
  }

  CURL *easy = curl_easy_init();
  if (!easy)
    return makeError(ErrorCode::Internal, "curl_easy_init failed");
  job.easy = easy;
  curl_easy_setopt(easy, CURLOPT_URL, job.url().c_str());
  curl_easy_setopt(easy, CURLOPT_PRIVATE, &job);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &onData);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &job);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, job.errbuf);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "ireepkg/" IREEPKG_VERSION);
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https,file");
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS,
                   static_cast<long>(options_.maxRedirects));
  // A status >= 400 ends the transfer before its body.
  curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
  if (options_.connectTimeoutSeconds > 0)
    curl_easy_setopt(
        easy, CURLOPT_CONNECTTIMEOUT_MS,
        static_cast<long>(std::ceil(options_.connectTimeoutSeconds * 1000)));
  if (options_.readTimeoutSeconds > 0) {
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT,
                     static_cast<long>(std::max<uint64_t>(
                         1, options_.lowSpeedBytesPerSecond)));
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>(
                                      std::ceil(options_.readTimeoutSeconds))));
  }
  if (options_.fileDeadlineSeconds > 0)
    curl_easy_setopt(
        easy, CURLOPT_TIMEOUT_MS,
        static_cast<long>(std::ceil(options_.fileDeadlineSeconds * 1000)));
  // A body announced larger than the limit fails before it starts; one
  // that does not announce its length is cut off by onData.
  curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(std::min<uint64_t>(
                       job.limit, static_cast<uint64_t>(INT64_MAX))));
  if (!job.metadata)
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 256L * 1024);
  if (!caFile_.empty())
    curl_easy_setopt(easy, CURLOPT_CAINFO, caFile_.c_str());
  if (job.metadata && job.cached && !job.cached->etag.empty()) {
    std::string header = "If-None-Match: " + job.cached->etag;
    job.headers = curl_slist_append(nullptr, header.c_str());
  }
  // libcurl sends a custom Authorization header to the first host and port
  // only, never after a redirect elsewhere (CURLOPT_UNRESTRICTED_AUTH off).
  if (job.urlIndex < job.urlHeaders.size())
    for (const std::string &h : job.urlHeaders[job.urlIndex])
      job.headers = curl_slist_append(job.headers, h.c_str());
  if (job.headers)
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, job.headers);
  if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
    job.endAttempt(multi_);
    return makeError(ErrorCode::Internal, "curl_multi_add_handle failed");
  }
  job.state = Job::State::Running;
  return ok();
}

void HttpClientImpl::retryOrMoveOn(Job &job, std::string what, Problem problem,
                                   bool retryable, double waitSeconds) {
  if (retryable && job.attemptsOnUrl <= options_.retries) {
    double wait =
        waitSeconds >= 0
            ? waitSeconds
            : options_.backoffSeconds *
                  std::pow(2.0, static_cast<double>(job.attemptsOnUrl - 1));
    job.notBefore = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(wait));
    job.state = Job::State::Waiting;
    return;
  }
  job.reports.push_back(
      UrlReport{job.url(), std::move(what), job.attemptsOnUrl, problem});
  ++job.urlIndex;
  job.attemptsOnUrl = 0;
  job.cached.reset();
  if (job.urlIndex < job.urls.size()) {
    job.notBefore = Clock::now();
    job.state = Job::State::Waiting;
    return;
  }
  job.error = finalError(job);
  job.state = Job::State::Failed;
}

Error HttpClientImpl::finalError(const Job &job) const {
  const char *verb = job.metadata ? "fetch" : "download";
  std::string message = std::string("cannot ") + verb + " " + job.name();
  auto line = [](const UrlReport &r) {
    std::string s = r.url + ": " + r.what;
    if (r.attempts > 1)
      s += " (" + std::to_string(r.attempts) + " attempts)";
    return s;
  };
  if (job.reports.size() == 1)
    message += " from " + line(job.reports[0]);
  else {
    message +=
        " from any of its " + std::to_string(job.reports.size()) + " URLs:";
    for (const UrlReport &r : job.reports)
      message += "\n  " + line(r);
  }
  bool integrity = false, tls = false, allNotFound = true;
  for (const UrlReport &r : job.reports) {
    integrity |= r.problem == Problem::Integrity;
    tls |= r.problem == Problem::Tls;
    allNotFound &= r.problem == Problem::NotFound;
  }
  if (integrity)
    return Error(ErrorCode::Integrity, message, {},
                 "the server sent something other than what was declared; "
                 "if this persists, tell the registry's maintainers");
  if (tls)
    return Error(ErrorCode::Io, message, {},
                 "if the server uses a private certificate authority, pass "
                 "its certificate with IREEPKG_CA_FILE=<pem file>");
  if (allNotFound)
    return Error(ErrorCode::NotFound, message, {},
                 "check the registry URL; the file may have been removed");
  return Error(ErrorCode::Io, message, {},
               "check the network connection and the registry URL; with "
               "the data already cached, --offline works without a network");
}

void HttpClientImpl::finishAttempt(Job &job, CURLcode rc) {
  long status = 0;
  curl_easy_getinfo(job.easy, CURLINFO_RESPONSE_CODE, &status);
  std::string etag;
  if (job.metadata && rc == CURLE_OK) {
    curl_header *h = nullptr;
    if (curl_easy_header(job.easy, "ETag", 0, CURLH_HEADER, -1, &h) ==
            CURLHE_OK &&
        h && h->value)
      etag = h->value;
  }
  curl_off_t retryAfter = 0;
  if (rc == CURLE_HTTP_RETURNED_ERROR && (status == 429 || status == 503))
    curl_easy_getinfo(job.easy, CURLINFO_RETRY_AFTER, &retryAfter);
  std::string detail = job.errbuf[0] ? job.errbuf : curl_easy_strerror(rc);
  job.endAttempt(multi_);

  auto localFailure = [&](Error e) {
    job.error = std::move(e);
    job.state = Job::State::Failed;
  };
  std::string got = job.metadata
                        ? ""
                        : " after " + std::to_string(job.received) + " of " +
                              std::to_string(job.limit) + " bytes";

  if (job.overflow || rc == CURLE_FILESIZE_EXCEEDED) {
    std::string what =
        job.metadata ? "larger than the limit of " + bytesText(job.limit) +
                           " for " + job.name() + "; cut off"
                     : "sent more than the " + bytesText(job.limit) +
                           " the index declares; cut off";
    return retryOrMoveOn(job, what, Problem::Integrity, false);
  }
  if (job.writeErrno)
    return localFailure(
        Error(ErrorCode::Io,
              std::string("cannot write ") +
                  (job.metadata ? "the response to memory" : job.tempPath) +
                  ": " + std::strerror(job.writeErrno),
              Location::inFile(job.metadata ? "" : job.destPath)));

  switch (rc) {
  case CURLE_OK:
    break;
  case CURLE_HTTP_RETURNED_ERROR: {
    std::string what = "HTTP " + std::to_string(status);
    if (const char *reason = httpReason(status))
      what += std::string(" (") + reason + ")";
    bool retryable = status >= 500 || status == 408 || status == 429;
    Problem p =
        (status == 404 || status == 410) ? Problem::NotFound : Problem::Http;
    if (retryAfter > 0) {
      // The server says when to come back: wait that long (reported), or,
      // past the limit, leave this URL for the next mirror.
      double asked = static_cast<double>(retryAfter);
      bool honoured = asked <= options_.maxRetryAfterSeconds &&
                      job.attemptsOnUrl <= options_.retries;
      what += "; it asked to retry after " + std::to_string(retryAfter) + " s" +
              (asked <= options_.maxRetryAfterSeconds
                   ? ""
                   : ", more than the " +
                         std::to_string(
                             static_cast<long>(options_.maxRetryAfterSeconds)) +
                         " s ireepkg waits");
      notice(retryAfterNotice(job.url(), status, retryAfter, honoured,
                              options_.maxRetryAfterSeconds));
      return retryOrMoveOn(job, what, p, honoured, asked);
    }
    return retryOrMoveOn(job, what, p, retryable);
  }
  case CURLE_TOO_MANY_REDIRECTS:
    return retryOrMoveOn(job,
                         "more than " + std::to_string(options_.maxRedirects) +
                             " redirects (a redirect loop?)",
                         Problem::Http, false);
  case CURLE_OPERATION_TIMEDOUT:
    if (detail.starts_with("Operation too slow"))
      return retryOrMoveOn(
          job,
          "read timeout: less than " +
              std::to_string(
                  std::max<uint64_t>(1, options_.lowSpeedBytesPerSecond)) +
              " bytes/s for " +
              std::to_string(std::max(1L, static_cast<long>(std::ceil(
                                              options_.readTimeoutSeconds)))) +
              " s" + got,
          Problem::Network, true);
    if (options_.fileDeadlineSeconds > 0 &&
        detail.find("Operation timed out after") != std::string::npos)
      return retryOrMoveOn(job,
                           "took longer than " +
                               std::to_string(static_cast<long>(
                                   std::ceil(options_.fileDeadlineSeconds))) +
                               " s" + got,
                           Problem::Network, true);
    return retryOrMoveOn(job, "timed out: " + detail, Problem::Network, true);
  case CURLE_PARTIAL_FILE:
    return retryOrMoveOn(job, "truncated: the connection closed" + got,
                         Problem::Network, true);
  case CURLE_COULDNT_CONNECT:
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_WEIRD_SERVER_REPLY:
    return retryOrMoveOn(job, detail + (rc == CURLE_RECV_ERROR ? got : ""),
                         Problem::Network, true);
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CACERT_BADFILE:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_ISSUER_ERROR:
  case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    return retryOrMoveOn(job, "TLS: " + detail, Problem::Tls, false);
  default:
    return retryOrMoveOn(job, detail, Problem::Network, false);
  }

  // CURLE_OK.
  if (job.metadata) {
    if (status == 304 && job.cached) {
      job.body = std::move(job.cached->body);
      job.answeredUrl = job.url();
      job.fromCache = true;
      job.state = Job::State::Done;
      return;
    }
    if (status != 0 && (status < 200 || status > 299))
      return retryOrMoveOn(job, "unexpected HTTP " + std::to_string(status),
                           Problem::Http, false);
    if (cache_.enabled() && job.useCache)
      if (Status s = cache_.store(job.url(), job.label, etag, job.body); !s)
        return localFailure(s.error());
    job.answeredUrl = job.url();
    job.fromCache = false;
    job.state = Job::State::Done;
    return;
  }

  if (status != 0 && (status < 200 || status > 299))
    return retryOrMoveOn(job, "unexpected HTTP " + std::to_string(status),
                         Problem::Http, false);
  if (job.received < job.limit)
    return retryOrMoveOn(job, "truncated: the body ended" + got,
                         Problem::Network, true);
  std::string digest = job.hasher.hexDigest();
  if (digest != job.sha256)
    return retryOrMoveOn(job,
                         "wrong SHA-256: got " + digest +
                             ", the index "
                             "declares " +
                             job.sha256,
                         Problem::Integrity, false);
  int fd = job.fd;
  job.fd = -1;
  if (::close(fd) != 0 ||
      ::rename(job.tempPath.c_str(), job.destPath.c_str()) != 0) {
    int e = errno;
    job.discardTemp();
    return localFailure(Error(ErrorCode::Io,
                              "cannot move the download into place: " +
                                  std::string(std::strerror(e)),
                              Location::inFile(job.destPath)));
  }
  job.tempPath.clear();
  job.tempGuard.release();
  job.answeredUrl = job.url();
  job.state = Job::State::Done;
}

Status HttpClientImpl::run(std::vector<std::unique_ptr<Job>> &jobs,
                           int parallel, Reporter *reporter,
                           OnFailure onFailure) {
  reporter_ = reporter;
  // Whatever happens, nothing is left in flight or half-written.
  struct Cleanup {
    CURLM *multi;
    std::vector<std::unique_ptr<Job>> &jobs;
    ~Cleanup() {
      for (auto &job : jobs) {
        job->endAttempt(multi);
        if (job->state != Job::State::Done)
          job->discardTemp();
      }
    }
  } cleanup{multi_, jobs};

  uint64_t total = 0;
  for (auto &job : jobs)
    if (!job->metadata)
      total += job->limit;
  auto bytesDone = [&] {
    uint64_t done = 0;
    for (auto &job : jobs)
      done += job->state == Job::State::Done ? job->limit : job->received;
    return done;
  };
  Clock::time_point lastReport = Clock::now();
  if (reporter)
    reporter->progress("downloading", 0, total);
  // Each archive under way, and once more when it is complete.
  std::vector<bool> reportedDone(jobs.size(), false);
  auto reportItems = [&] {
    for (size_t i = 0; i < jobs.size(); ++i) {
      Job &job = *jobs[i];
      if (job.metadata || reportedDone[i])
        continue;
      if (job.state == Job::State::Done) {
        reporter->itemProgress(job.label, job.limit, job.limit);
        reportedDone[i] = true;
      } else if (job.state == Job::State::Running) {
        reporter->itemProgress(job.label, std::min(job.received, job.limit),
                               job.limit);
      }
    }
  };

  // With OnFailure::Continue, ends every job still unfinished with the
  // error `why` gives for it (and then run() is over).
  auto endUnfinished = [&](auto why) {
    for (auto &job : jobs)
      if (job->state == Job::State::Waiting ||
          job->state == Job::State::Running) {
        job->endAttempt(multi_);
        job->error = why(*job);
        job->state = Job::State::Failed;
      }
  };

  while (true) {
    // Ctrl-C: the partial files go with `cleanup`. Metadata requests have
    // no reporter: they ask the options' flag.
    if ((reporter && reporter->interrupted()) ||
        (options_.interrupted && options_.interrupted())) {
      if (onFailure == OnFailure::Stop)
        return Unexpected(interruptedError("downloading"));
      endUnfinished([](const Job &job) {
        return interruptedError((job.metadata ? "fetching " : "downloading ") +
                                job.name());
      });
      return ok();
    }
    Clock::time_point now = Clock::now();
    int running = 0;
    for (auto &job : jobs)
      running += job->state == Job::State::Running;
    std::optional<Clock::time_point> nextDue;
    for (auto &job : jobs) {
      if (job->state != Job::State::Waiting)
        continue;
      if (job->notBefore <= now && running < parallel) {
        if (Status s = startAttempt(*job); !s) {
          if (onFailure == OnFailure::Stop)
            return s;
          job->endAttempt(multi_);
          job->error = s.error();
          job->state = Job::State::Failed;
          continue;
        }
        ++running;
      } else if (job->notBefore > now) {
        nextDue = nextDue ? std::min(*nextDue, job->notBefore) : job->notBefore;
      }
    }
    if (running == 0 && !nextDue)
      break;

    int stillRunning = 0;
    if (CURLMcode mc = curl_multi_perform(multi_, &stillRunning);
        mc != CURLM_OK) {
      Error e(ErrorCode::Internal,
              std::string("curl_multi_perform: ") + curl_multi_strerror(mc));
      if (onFailure == OnFailure::Stop)
        return Unexpected(std::move(e));
      endUnfinished([&](const Job &) { return e; });
      return ok();
    }
    int queued = 0;
    while (CURLMsg *msg = curl_multi_info_read(multi_, &queued)) {
      if (msg->msg != CURLMSG_DONE)
        continue;
      Job *job = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &job);
      finishAttempt(*job, msg->data.result);
      if (job->state == Job::State::Failed && onFailure == OnFailure::Stop)
        return Unexpected(std::move(*job->error));
    }

    now = Clock::now();
    if (reporter && now - lastReport >= std::chrono::milliseconds(100)) {
      reportItems();
      reporter->progress("downloading", bytesDone(), total);
      lastReport = now;
    }

    // Sleep until there is data, a retry is due, or it is time to report.
    long timeoutMs = 100;
    int runningNow = 0, waitingNow = 0;
    for (auto &job : jobs) {
      runningNow += job->state == Job::State::Running;
      waitingNow += job->state == Job::State::Waiting;
    }
    if (runningNow == 0 && waitingNow == 0)
      break;
    for (auto &job : jobs) {
      if (job->state != Job::State::Waiting)
        continue;
      if (job->notBefore > now) {
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                        job->notBefore - now)
                        .count();
        timeoutMs = std::clamp<long>(wait + 1, 1, timeoutMs);
      } else if (runningNow < parallel) {
        timeoutMs = 0; // due, and there is room: start it right away
      }
    }
    bool anyRunning = runningNow > 0;
    if (anyRunning) {
      long curlTimeout = -1;
      curl_multi_timeout(multi_, &curlTimeout);
      if (curlTimeout >= 0)
        timeoutMs = std::min(timeoutMs, curlTimeout);
      if (timeoutMs > 0)
        curl_multi_poll(multi_, nullptr, 0, static_cast<int>(timeoutMs),
                        nullptr);
    } else if (timeoutMs > 0) {
      ::usleep(static_cast<useconds_t>(timeoutMs * 1000));
    }
  }
  if (reporter) {
    reportItems();
    reporter->progress("downloading", total, total);
  }
  return ok();
}

std::once_flag gCurlInit;
CURLcode gCurlInitResult = CURLE_OK;

std::string modulePath() {
  std::string path =
      os::libraryContaining(reinterpret_cast<const void *>(&modulePath));
  return path.empty() ? "libireepkg_http.so" : path;
}

int fail(int *errorCode, char *message, size_t messageSize, ErrorCode code,
         const std::string &text, const std::string &hint) {
  *errorCode = static_cast<int>(code);
  std::string all = hint.empty() ? text : text + "\n" + hint;
  if (messageSize) {
    size_t n = std::min(all.size(), messageSize - 1);
    std::memcpy(message, all.data(), n);
    message[n] = 0;
  }
  return 1;
}

} // namespace
} // namespace ireepkg::net

using namespace ireepkg;
using namespace ireepkg::net;

extern "C" __attribute__((visibility("default"))) int
ireepkg_http_create_client(const HttpModuleAbi *abi,
                           const FetchOptions *options, HttpClient **client,
                           int *errorCode, char *message, size_t messageSize) {
  try {
    *client = nullptr;
    if (!abi || !(*abi == HttpModuleAbi{}))
      return fail(errorCode, message, messageSize, ErrorCode::Unsupported,
                  "the HTTP module " + modulePath() +
                      " belongs to another build of ireepkg",
                  "reinstall ireepkg so that the program and its lib/ "
                  "directory match");
    std::string caFile = options->caFile;
    std::string caSource = "the CA file";
    if (caFile.empty())
      if (const char *env = environmentOverride("IREEPKG_CA_FILE");
          env && *env) {
        caFile = env;
        caSource = "IREEPKG_CA_FILE";
      }
    if (!caFile.empty() && ::access(caFile.c_str(), R_OK) != 0)
      return fail(errorCode, message, messageSize, ErrorCode::NotFound,
                  caSource + " " + caFile +
                      " cannot be read: " + std::strerror(errno),
                  "point it at a PEM file of the certificate authorities to "
                  "trust");
    std::call_once(gCurlInit, [] {
      gCurlInitResult = curl_global_init(CURL_GLOBAL_DEFAULT);
    });
    if (gCurlInitResult != CURLE_OK)
      return fail(errorCode, message, messageSize, ErrorCode::Internal,
                  std::string("cannot initialise libcurl: ") +
                      curl_easy_strerror(gCurlInitResult),
                  "");
    auto impl = std::make_unique<HttpClientImpl>(*options, caFile);
    if (!impl->valid())
      return fail(errorCode, message, messageSize, ErrorCode::Internal,
                  "curl_multi_init failed", "");
    *client = impl.release();
    return 0;
  } catch (const std::exception &e) {
    return fail(errorCode, message, messageSize, ErrorCode::Internal,
                std::string("the HTTP module failed: ") + e.what(), "");
  }
}
