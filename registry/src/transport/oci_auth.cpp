//===- registry/src/transport/oci_auth.cpp --------------------------------===//
//
// Credentials for OCI registries.
//
// Found where docker, podman, skopeo, oras and helm find them, so that a
// `docker login` or `podman login` (or a CI's credential file) is all a
// publisher or a user behind an authenticated mirror needs:
//
//   1. $REGISTRY_AUTH_FILE;
//   2. $XDG_RUNTIME_DIR/containers/auth.json;
//   3. $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
//
// The first file with something for the host decides. In a file:
// `credHelpers: {"<host>": "<helper>"}`, then `auths: {"<host>": {"auth":
// base64(user:password)}}` (or "username"/"password", or an OAuth2 refresh
// token "identitytoken"), then `credsStore:
// "<helper>"`. A helper is the program docker-credential-<helper> on $PATH,
// run as `docker-credential-<helper> get` with the host on stdin; it prints
// {"Username": ..., "Secret": ...}.
//
// Docker Hub is the exception docker made: its credentials are stored
// under "https://index.docker.io/v1/" (in auths, credHelpers and helpers),
// while its registry is reached as registry-1.docker.io or docker.io; all
// of these name the same registry here, as in docker, oras and podman.
//
//===----------------------------------------------------------------------===//
#include "oci.h"

#include "ireepkg/base/base64.h"
#include "ireepkg/base/child_process.h"
#include "ireepkg/base/environment.h"
#include "ireepkg/base/file_util.h"
#include "ireepkg/base/text.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ireepkg::registry::oci {

namespace {

/// The bytes of a credential file's "auth" (base64 of user:password).
std::optional<std::string> unbase64(const std::string &in) {
  auto bytes = base64Decode(in, Base64Syntax::Lenient);
  if (!bytes)
    return std::nullopt;
  return std::string(bytes->begin(), bytes->end());
}

std::string env(const char *name) {
  const char *v = environmentOverride(name);
  return v ? v : "";
}

/// docker-credential-<helper> on $PATH, or "".
std::string findHelper(const std::string &helper) {
  std::string path = env("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/docker-credential-" + helper;
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
    start = end + 1;
  }
  return "";
}

Expected<std::optional<Credentials>> runHelper(const std::string &helper,
                                               const std::string &host,
                                               const std::string &file) {
  const std::string program = findHelper(helper);
  const std::string shown = "docker-credential-" + helper;
  if (program.empty())
    return makeError(ErrorCode::NotFound,
                     file + " names the credential helper \"" + helper +
                         "\" for " + host + ", but " + shown +
                         " is not on $PATH",
                     Location{file, 0, 0, "", "", ""},
                     "install the helper, or remove it from " + file);
  ChildOptions o;
  o.argv = {program, "get"};
  o.name = shown;
  o.input = host + "\n";
  o.timeoutSeconds = 60;
  o.maxOut = 1 << 20;
  o.maxErr = 64 << 10;
  auto r = runChild(o);
  if (!r)
    return Unexpected(r.error());
  if (r->spawnError)
    return makeError(ErrorCode::Io, "cannot run " + program,
                     Location{file, 0, 0, "", "", ""});
  if (!r->exited || r->exitCode != 0) {
    // "credentials not found in native keychain": none for this host.
    if (r->out.find("not found") != std::string::npos ||
        r->err.find("not found") != std::string::npos)
      return std::optional<Credentials>{};
    return makeError(ErrorCode::Io,
                     shown + " get failed for " + host + ": " +
                         firstOutputLine(r->err.empty() ? r->out : r->err),
                     Location{file, 0, 0, "", "", ""},
                     "check the credential helper (" + file + ")");
  }
  nlohmann::json j = nlohmann::json::parse(r->out, nullptr, false);
  if (!j.is_object() || !j.contains("Secret") || !j["Secret"].is_string())
    return makeError(ErrorCode::Invalid,
                     shown + " get printed no {\"Username\", \"Secret\"} for " +
                         host,
                     Location{file, 0, 0, "", "", ""});
  Credentials c;
  c.username = j.value("Username", std::string());
  c.password = j["Secret"];
  c.source = file + " (credential helper " + shown + ")";
  return std::optional<Credentials>{c};
}

/// Docker Hub's key. `docker login` stores Hub credentials under this
/// legacy URL, in `auths` and in credential helpers alike, and docker,
/// oras and helm look them up under it (docker/cli ResolveAuthConfig:
/// configKey = registry.IndexServer for the official index; oras-go
/// credentials.ServerAddressFromRegistry maps docker.io and
/// registry-1.docker.io to it); containers/image normalizes
/// registry-1.docker.io, docker.io and that URL all to index.docker.io.
constexpr const char *kDockerHubKey = "https://index.docker.io/v1/";

/// Docker Hub's host names, as one: its API host (registry-1.docker.io),
/// the name images use (docker.io) and the legacy index.
bool isDockerHub(const std::string &host) {
  return host == "docker.io" || host == "index.docker.io" ||
         host == "registry-1.docker.io";
}

/// The host a key of `auths` or `credHelpers` stands for: keys are written
/// as "host", "https://host", "http://host/v2/" ...; Docker Hub's names
/// are one.
std::string authsKeyHost(std::string key) {
  for (const char *p : {"https://", "http://"})
    if (key.rfind(p, 0) == 0)
      key = key.substr(std::string(p).size());
  if (size_t slash = key.find('/'); slash != std::string::npos)
    key = key.substr(0, slash);
  key = lower(key);
  return isDockerHub(key) ? "index.docker.io" : key;
}

/// What a credential helper is asked for: the host, and for Docker Hub the
/// key `docker login` stored its credentials under.
std::string helperServer(const std::string &host) {
  return isDockerHub(host) ? kDockerHubKey : host;
}

Expected<std::optional<std::optional<Credentials>>>
fromFile(const std::string &file, const std::string &hostGiven) {
  using R = std::optional<std::optional<Credentials>>;
  const std::string host = authsKeyHost(hostGiven);
  if (!fsutil::exists(file))
    return R{};
  auto text = fsutil::readFile(file);
  if (!text)
    return Unexpected(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object())
    return makeError(ErrorCode::Parse, file + " is not a JSON object",
                     Location{file, 0, 0, "", "", ""},
                     "fix the file, or point $REGISTRY_AUTH_FILE or "
                     "$DOCKER_CONFIG elsewhere");
  // The keys of an object that stand for the host: the one written
  // exactly as docker writes it first (for Docker Hub, its legacy URL).
  auto keysFor = [&](const nlohmann::json &obj) {
    std::vector<std::string> keys;
    for (const auto &[k, v] : obj.items())
      if (authsKeyHost(k) == host)
        keys.insert(k == helperServer(hostGiven) ? keys.begin() : keys.end(),
                    k);
    return keys;
  };
  if (j.contains("credHelpers") && j["credHelpers"].is_object())
    for (const std::string &k : keysFor(j["credHelpers"]))
      if (const auto &v = j["credHelpers"][k]; v.is_string()) {
        auto c = runHelper(v, helperServer(hostGiven), file);
        if (!c)
          return Unexpected(c.error());
        return R{*c};
      }
  if (j.contains("auths") && j["auths"].is_object())
    for (const std::string &k : keysFor(j["auths"])) {
      const auto &v = j["auths"][k];
      if (!v.is_object())
        continue;
      Credentials c;
      c.source = file + " (auths)";
      if (v.contains("identitytoken") && v["identitytoken"].is_string() &&
          !v["identitytoken"].get<std::string>().empty()) {
        c.identityToken = v["identitytoken"];
        if (v.contains("auth") && v["auth"].is_string())
          if (auto decoded = unbase64(v["auth"]))
            c.username = decoded->substr(0, decoded->find(':'));
        return R{std::optional<Credentials>{c}};
      }
      if (v.contains("auth") && v["auth"].is_string() &&
          !v["auth"].get<std::string>().empty()) {
        auto decoded = unbase64(v["auth"]);
        size_t colon = decoded ? decoded->find(':') : std::string::npos;
        if (colon == std::string::npos)
          return makeError(
              ErrorCode::Parse,
              file + ": auths[\"" + k +
                  "\"].auth is not base64 of user:password",
              Location{file, 0, 0, "/auths/" + k + "/auth", "", ""});
        c.username = decoded->substr(0, colon);
        c.password = decoded->substr(colon + 1);
        return R{std::optional<Credentials>{c}};
      }
      if (v.contains("username") && v["username"].is_string() &&
          v.contains("password") && v["password"].is_string()) {
        c.username = v["username"];
        c.password = v["password"];
        return R{std::optional<Credentials>{c}};
      }
    }
  if (j.contains("credsStore") && j["credsStore"].is_string() &&
      !j["credsStore"].get<std::string>().empty()) {
    auto c = runHelper(j["credsStore"], helperServer(hostGiven), file);
    if (!c)
      return Unexpected(c.error());
    if (*c)
      return R{*c};
  }
  return R{};
}

} // namespace

Expected<std::optional<Credentials>> findCredentials(const std::string &host) {
  std::vector<std::string> files;
  if (std::string f = env("REGISTRY_AUTH_FILE"); !f.empty())
    files.push_back(f);
  if (std::string d = env("XDG_RUNTIME_DIR"); !d.empty())
    files.push_back(d + "/containers/auth.json");
  if (std::string d = env("DOCKER_CONFIG"); !d.empty())
    files.push_back(d + "/config.json");
  else if (std::string h = env("HOME"); !h.empty())
    files.push_back(h + "/.docker/config.json");
  for (const std::string &f : files) {
    auto r = fromFile(f, host);
    if (!r)
      return Unexpected(r.error());
    if (*r)
      return **r;
  }
  return std::optional<Credentials>{};
}

} // namespace ireepkg::registry::oci
