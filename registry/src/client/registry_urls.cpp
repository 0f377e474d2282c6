//===- registry/src/client/registry_urls.cpp - Registry URLs --------------===//
#include "registry_urls.h"

#include "ireepkg/base/file_util.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/registry/client/client.h"

namespace ireepkg::registry {

namespace detail {

static int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string directoryOf(const std::string &url) {
  if (url.rfind("file://", 0) != 0)
    return url;
  std::string rest = url.substr(7);
  // file://localhost/path and file:///path name the same directory.
  if (rest.rfind("localhost/", 0) == 0)
    rest = rest.substr(9);
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    int hi, lo;
    if (rest[i] == '%' && i + 2 < rest.size() &&
        (hi = hexValue(rest[i + 1])) >= 0 &&
        (lo = hexValue(rest[i + 2])) >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

bool isDirectoryUrl(const std::string &url) {
  if (url.rfind("file://", 0) == 0)
    return true;
  return url.find("://") == std::string::npos;
}

std::string joinUrl(const std::string &base, const std::string &rel) {
  std::string b = base;
  while (!b.empty() && b.back() == '/')
    b.pop_back();
  size_t start = 0;
  while (start < rel.size() && rel[start] == '/')
    ++start;
  return b + "/" + rel.substr(start);
}

} // namespace detail

std::string normalizeRegistryUrl(const std::string &url) {
  std::string out;
  if (detail::isDirectoryUrl(url)) {
    out = "file://" + fsutil::absolutePath(detail::directoryOf(url));
  } else {
    size_t scheme = url.find("://");
    size_t hostEnd = url.find('/', scheme + 3);
    if (hostEnd == std::string::npos)
      hostEnd = url.size();
    out = url;
    for (size_t i = 0; i < hostEnd; ++i)
      if (out[i] >= 'A' && out[i] <= 'Z')
        out[i] = static_cast<char>(out[i] - 'A' + 'a');
  }
  while (out.size() > 1 && out.back() == '/' &&
         out.compare(out.size() - 3, 3, "://") != 0)
    out.pop_back();
  return out;
}

std::string registryId(const std::string &url) {
  return Sha256::hex(normalizeRegistryUrl(url)).substr(0, 16);
}


} // namespace ireepkg::registry
