//===- registry/http/http_request.cpp - One HTTP exchange -----------------===//
//
// HttpClient::request (fetch.h). Redirects are followed here, not by
// libcurl, so that the rule for credentials does not depend on libcurl's
// version: the Authorization header goes only to the origin (scheme, host,
// port) it was given for. A registry that redirects a blob to S3 or a CDN
// (a presigned URL that carries its own authorization) never sees the
// registry's token leave for another host.
//
//===----------------------------------------------------------------------===//
#include "http_request.h"

#include "ireepkg/base/text.h"
#include "ireepkg/pkg/prefix/prefix.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

namespace ireepkg::net {
namespace {

/// Header names and values lose spaces, tabs and line ends at either end.
std::string trimHeader(std::string_view s) { return trimmed(s, " \t\r\n"); }

struct Exchange {
  const HttpRequest *request = nullptr;
  HttpResponse response;
  uint64_t limit = 0;
  bool overflow = false;
  // The body being sent.
  int fd = -1;
  uint64_t sent = 0;
  uint64_t toSend = 0;
};

size_t onHeader(char *data, size_t size, size_t count, void *user) noexcept {
  auto &x = *static_cast<Exchange *>(user);
  size_t n = size * count;
  try {
    std::string line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {
      x.response.headers.clear(); // a new response (after 100 Continue)
      return n;
    }
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      x.response.headers.emplace_back(lower(trimHeader(line.substr(0, colon))),
                                      trimHeader(line.substr(colon + 1)));
  } catch (...) {
    return 0;
  }
  return n;
}

/// libcurl's progress callback: a non-zero answer aborts the transfer
/// (CURLE_ABORTED_BY_CALLBACK), so that Ctrl-C does not wait for a slow
/// server.
int onProgress(void *user, curl_off_t, curl_off_t, curl_off_t,
               curl_off_t) noexcept {
  const FetchOptions &options = *static_cast<const FetchOptions *>(user);
  return options.interrupted && options.interrupted() ? 1 : 0;
}

size_t onBody(char *data, size_t size, size_t count, void *user) noexcept {
  auto &x = *static_cast<Exchange *>(user);
  size_t n = size * count;
  if (x.response.body.size() + n > x.limit) {
    x.overflow = true;
    return CURL_WRITEFUNC_ERROR;
  }
  try {
    x.response.body.append(data, n);
  } catch (...) {
    return CURL_WRITEFUNC_ERROR;
  }
  return n;
}

size_t onRead(char *buffer, size_t size, size_t count, void *user) noexcept {
  auto &x = *static_cast<Exchange *>(user);
  size_t room = size * count;
  uint64_t left = x.toSend - x.sent;
  size_t want = static_cast<size_t>(std::min<uint64_t>(room, left));
  if (want == 0)
    return 0;
  if (x.fd >= 0) {
    ssize_t got;
    do
      got = ::pread(x.fd, buffer, want,
                    static_cast<off_t>(x.request->bodyOffset + x.sent));
    while (got < 0 && errno == EINTR);
    if (got <= 0)
      return CURL_READFUNC_ABORT;
    x.sent += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  std::memcpy(buffer, x.request->body.data() + x.sent, want);
  x.sent += want;
  return want;
}

bool idempotent(const std::string &method) {
  return method == "GET" || method == "HEAD" || method == "PUT" ||
         method == "DELETE";
}

/// Resolves a Location against the URL it came from.
std::string resolveLocation(const std::string &base, const std::string &loc) {
  if (loc.find("://") != std::string::npos)
    return loc;
  CURLU *u = curl_url();
  std::string out = loc;
  if (u && curl_url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
      curl_url_set(u, CURLUPART_URL, loc.c_str(), 0) == CURLUE_OK) {
    char *full = nullptr;
    if (curl_url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK && full) {
      out = full;
      curl_free(full);
    }
  }
  if (u)
    curl_url_cleanup(u);
  return out;
}

} // namespace

std::string urlOrigin(const std::string &url) {
  CURLU *u = curl_url();
  std::string out;
  if (u && curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char *scheme = nullptr, *host = nullptr, *port = nullptr;
    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    out = lower(std::string(scheme ? scheme : "") + "://" + (host ? host : "") +
                ":" + (port ? port : ""));
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  if (u)
    curl_url_cleanup(u);
  return out;
}

std::string retryAfterNotice(const std::string &url, long status,
                             long long seconds, bool honoured,
                             double maxSeconds) {
  std::string s = url + ": HTTP " + std::to_string(status);
  if (honoured)
    return s + ": waiting " + std::to_string(seconds) +
           " s before retrying, as the server asks (Retry-After)";
  s += ": the server asks to retry after " + std::to_string(seconds) + " s";
  if (static_cast<double>(seconds) > maxSeconds)
    s += ", longer than ireepkg waits (" +
         std::to_string(static_cast<long>(maxSeconds)) + " s); not retried";
  return s;
}

Expected<HttpResponse> performRequest(const FetchOptions &options,
                                      const std::string &caFile,
                                      const HttpRequest &request) {
  const std::string what = request.label.empty()
                               ? request.method + " " + request.url
                               : request.label;
  if (options.offline)
    return makeError(ErrorCode::NotFound,
                     "offline: cannot " + request.method + " " + request.url,
                     {}, "run the command once online");
  const bool hasBody = !request.bodyFile.empty() || !request.body.empty() ||
                       request.method == "POST" || request.method == "PUT" ||
                       request.method == "PATCH";
  int fd = -1;
  if (!request.bodyFile.empty()) {
    fd = ::open(request.bodyFile.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return makeError(ErrorCode::Io,
                       "cannot open " + request.bodyFile + ": " +
                           std::strerror(errno),
                       Location{request.bodyFile, 0, 0, "", "", ""});
  }
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd >= 0)
        ::close(fd);
    }
  } closeFd{fd};

  std::string url = request.url;
  const std::string origin = urlOrigin(request.url);
  int redirects = 0;
  int attempt = 0;
  const int maxRedirects = std::max(0, options.maxRedirects);
  for (;;) {
    ++attempt;
    Exchange x;
    x.request = &request;
    x.limit = request.maxResponseBytes;
    x.fd = fd;
    x.toSend = fd >= 0 ? request.bodySize : request.body.size();
    x.response.url = url;
    char errbuf[CURL_ERROR_SIZE] = {};

    CURL *easy = curl_easy_init();
    if (!easy)
      return makeError(ErrorCode::Internal, "curl_easy_init failed");
    curl_slist *headers = nullptr;
    const bool sameOrigin = urlOrigin(url) == origin;
    for (const std::string &h : request.headers) {
      if (!sameOrigin && lower(h).rfind("authorization:", 0) == 0)
        continue; // never to another host (blob storage, a CDN)
      headers = curl_slist_append(headers, h.c_str());
    }
    if (hasBody)
      headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "ireepkg/" IREEPKG_VERSION);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &onHeader);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &onBody);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &x);
    if (headers)
      curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    if (request.method == "HEAD") {
      curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    } else if (hasBody) {
      curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(easy, CURLOPT_READFUNCTION, &onRead);
      curl_easy_setopt(easy, CURLOPT_READDATA, &x);
      curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE,
                       static_cast<curl_off_t>(x.toSend));
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    } else if (request.method != "GET") {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (options.connectTimeoutSeconds > 0)
      curl_easy_setopt(
          easy, CURLOPT_CONNECTTIMEOUT_MS,
          static_cast<long>(std::ceil(options.connectTimeoutSeconds * 1000)));
    if (options.readTimeoutSeconds > 0) {
      curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT,
                       static_cast<long>(std::max<uint64_t>(
                           1, options.lowSpeedBytesPerSecond)));
      curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                       std::max(1L, static_cast<long>(std::ceil(
                                        options.readTimeoutSeconds))));
    }
    if (options.fileDeadlineSeconds > 0)
      curl_easy_setopt(
          easy, CURLOPT_TIMEOUT_MS,
          static_cast<long>(std::ceil(options.fileDeadlineSeconds * 1000)));
    // A body announced larger than the limit fails before it starts, as
    // for metadata and downloads (a HEAD's Content-Length is the size of
    // what a GET would send, not a body).
    if (request.method != "HEAD")
      curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
                       static_cast<curl_off_t>(std::min<uint64_t>(
                           x.limit, static_cast<uint64_t>(INT64_MAX))));
    if (!caFile.empty())
      curl_easy_setopt(easy, CURLOPT_CAINFO, caFile.c_str());
    if (options.interrupted) {
      curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &onProgress);
      curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &options);
    }

    CURLcode rc = curl_easy_perform(easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t retryAfter = -1;
    curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER, &retryAfter);
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);

    auto backoff = [&] {
      double wait = options.backoffSeconds *
                    std::pow(2.0, static_cast<double>(attempt - 1));
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    };
    if (x.overflow || rc == CURLE_FILESIZE_EXCEEDED)
      return makeError(ErrorCode::Integrity,
                       "cannot " + what +
                           ": the answer is larger than the "
                           "limit of " +
                           std::to_string(x.limit) + " bytes; cut off",
                       Location{url, 0, 0, "", "", ""},
                       "the server sends more than a registry's answer "
                       "needs: do not use it");
    if (rc == CURLE_ABORTED_BY_CALLBACK ||
        (options.interrupted && options.interrupted()))
      return makeError(ErrorCode::Interrupted,
                       "interrupted while trying to " + what,
                       Location{url, 0, 0, "", "", ""});
    if (rc != CURLE_OK) {
      if (idempotent(request.method) && attempt <= options.retries) {
        backoff();
        continue;
      }
      return makeError(
          ErrorCode::Io,
          "cannot " + what + ": " +
              (errbuf[0] ? std::string(errbuf) : curl_easy_strerror(rc)),
          Location{url, 0, 0, "", "", ""},
          "check the network and the registry's URL");
    }
    x.response.status = status;
    if ((status == 429 || status == 503) && retryAfter >= 0) {
      const bool honoured =
          static_cast<double>(retryAfter) <= options.maxRetryAfterSeconds &&
          attempt <= options.retries;
      if (options.reporter)
        options.reporter->warning(
            Diagnostic{Severity::Warning,
                       {},
                       retryAfterNotice(url, status, retryAfter, honoured,
                                        options.maxRetryAfterSeconds),
                       ""});
      if (!honoured)
        return x.response; // longer than the cap: not asked again
      std::this_thread::sleep_for(std::chrono::seconds(retryAfter));
      continue;
    }
    if (status >= 500 && idempotent(request.method) &&
        request.method != "PUT" && attempt <= options.retries) {
      backoff();
      continue;
    }
    if (request.followRedirects &&
        (status == 301 || status == 302 || status == 303 || status == 307 ||
         status == 308)) {
      std::string loc = x.response.header("location");
      if (loc.empty())
        return x.response;
      if (++redirects > maxRedirects)
        return makeError(ErrorCode::Io,
                         "cannot " + what + ": more than " +
                             std::to_string(maxRedirects) +
                             " redirects (a redirect loop?)",
                         Location{request.url, 0, 0, "", "", ""});
      std::string next = resolveLocation(url, loc);
      if (next.rfind("http://", 0) != 0 && next.rfind("https://", 0) != 0)
        return makeError(ErrorCode::Io,
                         "cannot " + what + ": redirected to " + next +
                             ", which is not http:// or https://",
                         Location{request.url, 0, 0, "", "", ""});
      url = next;
      attempt = 0;
      continue;
    }
    return x.response;
  }
}

} // namespace ireepkg::net
