//===- registry/src/transport/fetch_loader.cpp - Loading the HTTP module --===//
//
// The host side of the network client: finds libireepkg_http.so, loads it
// once per process and asks its factory for a client. Links no libcurl.
//
//===----------------------------------------------------------------------===//
#include "http_module.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/os.h"
#include "ireepkg/base/text.h"
#include "ireepkg/base/programs.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace ireepkg::net {

HttpClient::~HttpClient() = default;

bool isHttpUrl(const std::string &url) {
  // The scheme and at least one more character.
  auto startsWithNoCase = [&](std::string_view prefix) {
    return url.size() > prefix.size() &&
           lower(std::string_view(url).substr(0, prefix.size())) == prefix;
  };
  return startsWithNoCase("http://") || startsWithNoCase("https://");
}

namespace {

constexpr const char *kModuleName = "libireepkg_http.so";

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

struct LoadedModule {
  IreepkgHttpFactory factory = nullptr;
  std::string path;
};

/// Where the module may be, in order, and why.
std::vector<std::string> candidatePaths(bool &fromEnvironment) {
  if (const char *env = environmentOverride("IREEPKG_HTTP_MODULE"); env && *env) {
    fromEnvironment = true;
    return {env};
  }
  fromEnvironment = false;
  std::string dir = executableDir();
  if (dir.empty())
    return {};
  return {dir + "/../lib/" + kModuleName,
          dir + "/../lib/ireepkg/" + kModuleName};
}

Expected<LoadedModule> loadModule() {
  bool fromEnvironment = false;
  std::vector<std::string> candidates = candidatePaths(fromEnvironment);
  std::vector<std::string> tried;
  for (const std::string &path : candidates) {
    if (!fileExists(path)) {
      tried.push_back(path + " (not found)");
      continue;
    }
    // Never unloaded: clients made by it may live until exit.
    std::string why;
    void *handle = os::openLibrary(path, {}, &why);
    if (!handle) {
      tried.push_back(path + " (cannot load: " +
                      (why.empty() ? "unknown error" : why) + ")");
      continue;
    }
    void *symbol = os::librarySymbol(handle, IREEPKG_HTTP_FACTORY_NAME);
    if (!symbol) {
      tried.push_back(path + " (does not export " IREEPKG_HTTP_FACTORY_NAME
                             ")");
      os::closeLibrary(handle);
      continue;
    }
    LoadedModule m;
    m.factory = reinterpret_cast<IreepkgHttpFactory>(symbol);
    m.path = path;
    return m;
  }
  std::string message =
      std::string("cannot load the HTTP module ") + kModuleName + "; ";
  if (candidates.empty())
    message += "cannot tell where this program is (/proc/self/exe)";
  else {
    message += fromEnvironment ? "IREEPKG_HTTP_MODULE names " : "looked at ";
    for (size_t i = 0; i < tried.size(); ++i)
      message += (i ? ", " : "") + tried[i];
  }
  return makeError(ErrorCode::Unsupported, message, {},
                   fromEnvironment
                       ? "point IREEPKG_HTTP_MODULE at libireepkg_http.so, or "
                         "unset it to use the one installed with ireepkg"
                       : "reinstall ireepkg (the module belongs in lib/ or "
                         "lib/ireepkg/ beside its bin/), or set "
                         "IREEPKG_HTTP_MODULE to its path");
}

} // namespace

Expected<std::unique_ptr<HttpClient>>
openHttpClient(const FetchOptions &options) {
  // Loaded once per process; a failure is remembered too (the answer
  // would not change).
  static std::once_flag once;
  static Expected<LoadedModule> module = makeError(ErrorCode::Internal, "");
  std::call_once(once, [] { module = loadModule(); });
  if (!module)
    return Unexpected(module.error());

  HttpModuleAbi abi;
  HttpClient *client = nullptr;
  int code = static_cast<int>(ErrorCode::Internal);
  char message[2048] = {};
  if (module->factory(&abi, &options, &client, &code, message,
                      sizeof message) != 0 ||
      !client) {
    std::string text = message[0] ? message : "the HTTP module made no client";
    std::string hint;
    if (size_t nl = text.find('\n'); nl != std::string::npos) {
      hint = text.substr(nl + 1);
      text.resize(nl);
    }
    if (code < 0 || code > static_cast<int>(ErrorCode::Internal))
      code = static_cast<int>(ErrorCode::Internal);
    return makeError(static_cast<ErrorCode>(code), text, {}, hint);
  }
  return std::unique_ptr<HttpClient>(client);
}

} // namespace ireepkg::net
