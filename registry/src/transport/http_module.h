//===- registry/src/transport/http_module.h -------------------------------===//
//
// The HTTP module's one entry point.
//
// Shared by fetch_loader.cpp (the host side, in every ireepkg binary) and
// http/http_client.cpp (libireepkg_http.so). The module exports exactly one
// symbol, the factory below. The host passes an ABI stamp that the module
// compares with its own: a module from another build (other layouts of the
// structs in fetch.h) refuses to make a client instead of misreading them.
//
//===----------------------------------------------------------------------===//
#ifndef IREEPKG_REGISTRY_HTTP_MODULE_H
#define IREEPKG_REGISTRY_HTTP_MODULE_H

#include "ireepkg/registry/transport/fetch.h"

#include <cstddef>
#include <cstdint>

namespace ireepkg::net {

/// Bumped on every change to the interface of fetch.h or to the factory.
inline constexpr uint32_t kHttpModuleAbiVersion = 3;

struct HttpModuleAbi {
  uint32_t version = kHttpModuleAbiVersion;
  /// The layouts both sides were compiled with.
  uint32_t sizeofFetchOptions = sizeof(FetchOptions);
  uint32_t sizeofMetadataRequest = sizeof(MetadataRequest);
  uint32_t sizeofMetadataResponse = sizeof(MetadataResponse);
  uint32_t sizeofDownloadRequest = sizeof(DownloadRequest);
  uint32_t sizeofError = sizeof(Error);
  uint32_t sizeofHttpRequest = sizeof(HttpRequest);
  uint32_t sizeofHttpResponse = sizeof(HttpResponse);

  bool operator==(const HttpModuleAbi &) const = default;
};

} // namespace ireepkg::net

/// The factory's exported name.
#define IREEPKG_HTTP_FACTORY_NAME "ireepkg_http_create_client"

extern "C" {
/// Makes a client. Returns 0 and sets *client on success; otherwise returns
/// 1, sets *errorCode to an ireepkg::ErrorCode and writes a NUL-terminated
/// message (and, after a '\n', a hint) into `message`. The client is
/// deleted through HttpClient's virtual destructor.
typedef int (*IreepkgHttpFactory)(const ireepkg::net::HttpModuleAbi *abi,
                                  const ireepkg::net::FetchOptions *options,
                                  ireepkg::net::HttpClient **client,
                                  int *errorCode, char *message,
                                  size_t messageSize);
}

#endif // IREEPKG_REGISTRY_HTTP_MODULE_H
