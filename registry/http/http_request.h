//===- registry/http/http_request.h ---------------------------------------===//
//
// One HTTP exchange (inside the module).
//
// HttpClient::request: a single request with any method, headers and body,
// whose answer (status, headers, body) is returned as it is, for protocols
// that drive the exchange themselves (the OCI distribution API).
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_HTTP_REQUEST_H
#define IREEPKG_REGISTRY_HTTP_REQUEST_H

#include "ireepkg/registry/transport/fetch.h"

namespace ireepkg::net {

Expected<HttpResponse> performRequest(const FetchOptions &options,
                                      const std::string &caFile,
                                      const HttpRequest &request);

/// scheme://host:port of an absolute URL (the port made explicit), lower
/// case: two URLs with the same origin may share credentials.
std::string urlOrigin(const std::string &url);

/// What the user is told of a 429 or 503 with Retry-After: `seconds`
/// waited before retrying `url` (`honoured`), or not, and why.
std::string retryAfterNotice(const std::string &url, long status,
                             long long seconds, bool honoured,
                             double maxSeconds);

} // namespace ireepkg::net

#endif // IREEPKG_REGISTRY_HTTP_REQUEST_H
