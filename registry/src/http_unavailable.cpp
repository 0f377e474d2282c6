//===- http_unavailable.cpp - A build without the HTTP client -------------===//
//
// Compiled only while registry/src/fetch_loader.cpp does not define the
// HTTP client (registry/CMakeLists.txt checks): opening an http(s) registry
// then fails with a clear error, and directory registries work as usual.
// Once fetch_loader.cpp defines openHttpClient, this file is left out of the
// build and can be deleted.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/fetch.h"

namespace ireepkg::net {

HttpClient::~HttpClient() = default;

bool isHttpUrl(const std::string &url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

Expected<std::unique_ptr<HttpClient>> openHttpClient(const FetchOptions &) {
  return makeError(ErrorCode::Unsupported,
                   "this build of ireepkg has no HTTP client", {},
                   "use a registry in a directory (a path or a file:// URL)");
}

} // namespace ireepkg::net
