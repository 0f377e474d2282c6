//===- ireepkg/registry/transport/fetch.h - HTTP(S) downloads ---*- C++ -*-===//
//
// The network client of the registry layer, built on libcurl:
//
//  - metadata (small JSON and signature files) with conditional requests:
//    the body and ETag of every 200 response are kept in a metadata cache,
//    the next request sends If-None-Match, and a 304 is answered from the
//    cache; several files may be fetched at once, each with its own result;
//  - archives, many at once (curl multi), each streamed straight into
//    SHA-256 hashing and a temporary file beside its destination, cut off
//    at the size the index declares, and renamed into place only once size
//    and hash match;
//  - retries with exponential backoff on connection errors, timeouts and
//    5xx responses; connect and read (low-speed) timeouts; a bounded number
//    of redirects; mirrors: every URL of a request is tried in turn;
//  - offline mode: no connection is ever opened; metadata comes from the
//    cache or the request fails saying what is missing.
//
// libcurl (and the TLS stack it loads) costs milliseconds of start-up, so it
// is not linked into the ireepkg binary: the client lives in a loadable
// module (libireepkg_http.so, next to the binary's lib/ directory) that
// openHttpClient() loads on first use. Commands that never touch the
// network (list, flags, exec) never load it.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_FETCH_H
#define IREEPKG_FETCH_H

#include "ireepkg/base/error.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ireepkg {
class Reporter;
}

namespace ireepkg::net {

struct FetchOptions {
  double connectTimeoutSeconds = 10;
  /// A transfer that moves less than `lowSpeedBytesPerSecond` for this
  /// long is cut off (the low-speed limit; then retry, then the next
  /// mirror). A server that drips a byte now and then cannot keep a
  /// command waiting.
  double readTimeoutSeconds = 30;
  uint64_t lowSpeedBytesPerSecond = 1024;
  /// One attempt at one file ends after this long, however fast it moves
  /// (0: no deadline).
  double fileDeadlineSeconds = 3600;
  /// A 429 or 503 answer's Retry-After is honoured up to this long: the
  /// same URL is tried again after the wait the server asks for. A longer
  /// wait is not made: the next mirror is tried instead. Either way the
  /// wait is reported.
  double maxRetryAfterSeconds = 60;
  /// Further attempts on one URL after a retryable failure (connection
  /// error, timeout, 5xx, truncated body), before moving to the next mirror.
  int retries = 3;
  /// Wait before the first retry; doubled for each further one.
  double backoffSeconds = 0.25;
  int maxRedirects = 5;
  /// Archive downloads (and metadata files of one fetchMetadataMany) in
  /// flight at once. 50, as uv: a lock of a few dozen packages downloads
  /// in about the time of its slowest archive (bench/parallel_download).
  int parallel = 50;
  /// Extra PEM CA bundle to trust (default: $IREEPKG_CA_FILE, else the
  /// system's).
  std::string caFile;
  /// Never open a connection.
  bool offline = false;
  /// Where metadata bodies and their ETags are kept; empty: no cache (and
  /// no conditional requests).
  std::string metadataCacheDir;
  /// Asked while any request is under way (at least every 100 ms, and from
  /// libcurl's progress callback): once it returns true, the request stops
  /// with ErrorCode::Interrupted and its partial files are removed. The
  /// CLI's Ctrl-C flag; nullptr: never.
  bool (*interrupted)() = nullptr;
  /// Told (a warning) of every wait a server asks for with Retry-After in
  /// request(), and of one longer than maxRetryAfterSeconds that is not
  /// made (downloadAll tells its own reporter). RegistryClient::open sets
  /// its reporter here; nullptr: nobody is told.
  Reporter *reporter = nullptr;
};

struct MetadataRequest {
  /// The same file at each mirror, tried in turn.
  std::vector<std::string> urls;
  /// A larger body is an error (Integrity), and is cut off there.
  uint64_t maxBytes = 4 << 20;
  /// Names the file in errors and in the cache ("snapshot.json").
  std::string label;
  /// False: the metadata cache is neither read (no conditional request;
  /// offline, the file is missing) nor written, for a file the caller
  /// keeps itself by its content's hash.
  bool useCache = true;
};

struct MetadataResponse {
  std::string body;
  std::string url;        ///< the URL that answered
  bool fromCache = false; ///< 304 Not Modified, or offline
};

struct DownloadRequest {
  std::vector<std::string> urls; ///< mirrors, tried in turn
  /// Written as <destPath>.part-<random>, renamed to destPath once
  /// verified; on failure nothing is left behind.
  std::string destPath;
  uint64_t size = 0;  ///< exact size the index declares
  std::string sha256; ///< lower-case hex the index declares
  std::string label;  ///< "simple-mul 1.2.0", for progress and errors
  /// Extra request headers ("Name: value") for urls[i] (may be shorter
  /// than urls). An Authorization header goes to that URL's host and port
  /// only: a redirect elsewhere (blob storage, a CDN) does not carry it.
  std::vector<std::vector<std::string>> urlHeaders;
};

/// One HTTP exchange, for protocols that need more than GET (the OCI
/// distribution API: HEAD, POST, PUT, PATCH, authentication challenges).
struct HttpRequest {
  std::string method = "GET"; ///< GET HEAD PUT POST PATCH DELETE
  std::string url;
  std::vector<std::string> headers; ///< "Name: value"
  /// The request body: `body`, or with `bodyFile` set, that file's bytes
  /// from `bodyOffset`, `bodySize` of them (streamed, never in memory).
  std::string body;
  std::string bodyFile;
  uint64_t bodyOffset = 0;
  uint64_t bodySize = 0;
  /// A response body larger than this is cut off (Integrity error).
  uint64_t maxResponseBytes = 4 << 20;
  /// Redirects are followed (up to FetchOptions::maxRedirects); the
  /// Authorization header is dropped when one leads to another scheme,
  /// host or port.
  bool followRedirects = true;
  std::string label; ///< for errors
};

struct HttpResponse {
  long status = 0;
  std::string url; ///< the URL that answered (after redirects)
  /// The final response's headers, names in lower case, in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// The first header of that name (lower case), or "".
  std::string header(const std::string &lowerName) const {
    for (const auto &[k, v] : headers)
      if (k == lowerName)
        return v;
    return "";
  }
};

class HttpClient {
public:
  virtual ~HttpClient();

  virtual Expected<MetadataResponse>
  fetchMetadata(const MetadataRequest &request) = 0;

  /// Several metadata files at once, up to FetchOptions::parallel in
  /// flight. Result i is what fetchMetadata(requests[i]) would return
  /// alone (the cache, conditional requests, mirrors in order, retries,
  /// the size limit, offline answers and errors alike); one request
  /// failing does not stop or fail the others. Once
  /// FetchOptions::interrupted says so, every request not yet answered
  /// ends with ErrorCode::Interrupted.
  virtual std::vector<Expected<MetadataResponse>>
  fetchMetadataMany(const std::vector<MetadataRequest> &requests) = 0;

  /// Downloads every request, up to FetchOptions::parallel at once.
  /// Reports progress as Reporter::progress("downloading", bytesDone,
  /// bytesTotal) over all of them. Fails with the first request that
  /// failed on every mirror (the others are finished or abandoned, and
  /// their partial files removed).
  virtual Status downloadAll(const std::vector<DownloadRequest> &requests,
                             Reporter &reporter) = 0;

  /// One exchange (with its redirects). Connection failures and timeouts
  /// of GET, HEAD and PUT are retried with the backoff, and a 429 or 503
  /// with a Retry-After within FetchOptions::maxRetryAfterSeconds is
  /// waited for (told to FetchOptions::reporter) and retried, one with a
  /// longer Retry-After is returned at once (and told); any other answer,
  /// 4xx and 5xx included, is returned as it is. Errors: the
  /// network (Io), a body over the limit, or announced over it by its
  /// Content-Length (Integrity, at once), offline (NotFound).
  virtual Expected<HttpResponse> request(const HttpRequest &request) = 0;
};

/// Loads the HTTP module and makes a client. Errors: Unsupported when the
/// module cannot be found or loaded (the message says where it looked).
Expected<std::unique_ptr<HttpClient>>
openHttpClient(const FetchOptions &options);

/// True for http:// and https:// URLs.
bool isHttpUrl(const std::string &url);

} // namespace ireepkg::net

#endif // IREEPKG_FETCH_H
