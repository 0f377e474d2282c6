//===- registry/src/transport/oci_client.cpp - The OCI distribution API ---===//
//
// Manifests and blobs (GET, HEAD, PUT; uploads by POST then a monolithic
// PUT ?digest=, or a cross-repository mount ?mount=&from=) over
// net::HttpClient::request, and the registry's authentication:
//
//   a request without credentials -> 401 with WWW-Authenticate:
//     Bearer realm="...",service="...",scope="..."  -> GET realm?service&scope
//       (with Basic credentials when there are some) -> {"token": ...}
//       -> the request again with "Authorization: Bearer <token>";
//     Basic realm="..."  -> the request again with the credentials.
//
// Tokens are kept per scope ("repository:<repo>:pull" or ":pull,push") for
// the life of the client. Every body fetched by digest is checked against
// that digest before it is returned.
//
//===----------------------------------------------------------------------===//
#include "oci.h"

#include "ireepkg/base/environment.h"
#include "ireepkg/base/hash.h"
#include "ireepkg/base/text.h"
#include "ireepkg/registry/client/registry_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ireepkg::registry::oci {

namespace {

std::string percentEncode(const std::string &s) {
  static const char *hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string base64(const std::string &in) {
  static const char *t =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v =
        (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

Location at(const std::string &where) {
  Location l;
  l.file = where;
  return l;
}

bool isDigest(const std::string &s) {
  return s.size() == 71 && s.rfind("sha256:", 0) == 0 &&
         s.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
}

/// WWW-Authenticate: <scheme> k="v",k2="v2"
std::optional<std::pair<std::string, std::map<std::string, std::string>>>
parseChallenge(const std::string &header) {
  size_t sp = header.find(' ');
  std::string scheme = lower(header.substr(0, sp));
  if (scheme.empty())
    return std::nullopt;
  std::map<std::string, std::string> params;
  size_t i = sp == std::string::npos ? header.size() : sp + 1;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ','))
      ++i;
    size_t eq = header.find('=', i);
    if (eq == std::string::npos)
      break;
    std::string key = lower(header.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < header.size() && header[i] == '"') {
      ++i;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size())
          ++i;
        value += header[i++];
      }
      ++i;
    } else {
      size_t end = header.find(',', i);
      if (end == std::string::npos)
        end = header.size();
      value = header.substr(i, end - i);
      i = end;
    }
    params[key] = value;
  }
  return std::make_pair(scheme, params);
}

/// scheme://host:port of an absolute URL, lower case, the port made
/// explicit: credentials go to the registry's origin only.
std::string originOf(const std::string &url) {
  size_t sep = url.find("://");
  if (sep == std::string::npos)
    return "";
  const std::string scheme = lower(url.substr(0, sep));
  size_t start = sep + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string authority =
      lower(url.substr(start, end == std::string::npos ? end : end - start));
  if (size_t at = authority.rfind('@'); at != std::string::npos)
    authority = authority.substr(at + 1);
  size_t colon = authority.rfind(':');
  if (colon == std::string::npos ||
      authority.find(']', colon) != std::string::npos)
    authority += scheme == "https" ? ":443" : scheme == "http" ? ":80" : ":";
  return scheme + "://" + authority;
}

std::string scopeFor(const std::string &repo, bool push) {
  return "repository:" + repo + (push ? ":pull,push" : ":pull");
}

} // namespace

bool isOciUrl(const std::string &url) {
  std::string l = lower(url.substr(0, 12));
  return l.rfind("oci://", 0) == 0 || l.rfind("oci+http://", 0) == 0;
}

Expected<OciLocation> parseOciUrl(const std::string &url) {
  OciLocation loc;
  loc.url = url;
  std::string rest;
  std::string l = lower(url.substr(0, 12));
  if (l.rfind("oci://", 0) == 0) {
    loc.scheme = "https";
    rest = url.substr(6);
  } else if (l.rfind("oci+http://", 0) == 0) {
    loc.scheme = "http";
    rest = url.substr(11);
  } else {
    return makeError(ErrorCode::Usage, "\"" + url + "\" is not an oci:// URL");
  }
  while (!rest.empty() && rest.back() == '/')
    rest.pop_back();
  size_t slash = rest.find('/');
  auto bad = [&](const std::string &why) {
    return makeError(
        ErrorCode::Usage,
        "\"" + url + "\" is not a registry in an OCI registry: " + why, {},
        "write oci://HOST[:PORT]/NAMESPACE (oci+http:// for a "
        "registry served over plain HTTP), e.g. "
        "oci://ghcr.io/my-org/iree-plugins");
  };
  if (slash == std::string::npos || slash == 0 || slash + 1 >= rest.size())
    return bad("it names no namespace");
  loc.host = lower(rest.substr(0, slash));
  loc.ns = rest.substr(slash + 1);
  // Repository names: lower-case components [a-z0-9]+ joined by . _ __ -
  // and separated by '/'.
  size_t start = 0;
  for (;;) {
    size_t end = loc.ns.find('/', start);
    std::string comp =
        loc.ns.substr(start, end == std::string::npos ? end : end - start);
    if (comp.empty() || !std::isalnum(static_cast<unsigned char>(comp[0])) ||
        !std::isalnum(static_cast<unsigned char>(comp.back())))
      return bad("\"" + loc.ns + "\" is not a repository name");
    for (char c : comp)
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
            c == '_' || c == '-'))
        return bad("\"" + loc.ns +
                   "\" is not a repository name (lower case letters, digits, "
                   "'.', '_', '-' and '/')");
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  if (loc.host.find_first_of("?#@") != std::string::npos ||
      loc.ns.find_first_of("?#@:") != std::string::npos)
    return bad("it has a query, user or tag");
  return loc;
}

std::string versionTag(const std::string &version) {
  std::string t = version;
  std::replace(t.begin(), t.end(), '+', '_');
  return t;
}

nlohmann::json Descriptor::toJson() const {
  nlohmann::json j = {
      {"mediaType", mediaType}, {"digest", digest}, {"size", size}};
  if (!annotations.empty())
    j["annotations"] = annotations;
  if (!artifactType.empty())
    j["artifactType"] = artifactType;
  return j;
}

const Descriptor *Manifest::layer(const std::string &mediaType,
                                  const std::string &title) const {
  for (const Descriptor &d : layers) {
    if (d.mediaType != mediaType)
      continue;
    if (!title.empty()) {
      auto it = d.annotations.find(kTitleAnnotation);
      if (it == d.annotations.end() || it->second != title)
        continue;
    }
    return &d;
  }
  return nullptr;
}

std::string makeManifest(const std::string &artifactType,
                         const Descriptor &config,
                         const std::vector<Descriptor> &layers,
                         const std::map<std::string, std::string> &annotations,
                         const Descriptor *subject) {
  nlohmann::json j = {{"schemaVersion", 2},
                      {"mediaType", kManifestMediaType},
                      {"artifactType", artifactType},
                      {"config", config.toJson()},
                      {"layers", nlohmann::json::array()}};
  for (const Descriptor &d : layers)
    j["layers"].push_back(d.toJson());
  if (!annotations.empty())
    j["annotations"] = annotations;
  if (subject)
    j["subject"] = subject->toJson();
  return j.dump(2) + "\n";
}

std::string referrersTag(const std::string &digest) {
  std::string t = digest;
  std::replace(t.begin(), t.end(), ':', '-');
  return t;
}

namespace {

Expected<Manifest> parseManifest(const std::string &text,
                                 const std::string &where) {
  Manifest m;
  m.text = text;
  m.digest = "sha256:" + Sha256::hex(text);
  auto bad = [&](const std::string &why) {
    return makeError(ErrorCode::Invalid,
                     "the OCI manifest " + where + " is not usable: " + why,
                     at(where),
                     "it was not written by ireepkg, or not with the media "
                     "types docs/registries.md gives");
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object())
    return bad("not a JSON object");
  auto desc = [&](const nlohmann::json &d) -> std::optional<Descriptor> {
    if (!d.is_object() || !d.contains("digest") || !d["digest"].is_string() ||
        !d.contains("size") || !d["size"].is_number_unsigned() ||
        !d.contains("mediaType") || !d["mediaType"].is_string())
      return std::nullopt;
    Descriptor out;
    out.mediaType = d["mediaType"];
    out.digest = d["digest"];
    out.size = d["size"];
    if (!isDigest(out.digest))
      return std::nullopt;
    if (d.contains("annotations") && d["annotations"].is_object())
      for (const auto &[k, v] : d["annotations"].items())
        if (v.is_string())
          out.annotations[k] = v;
    return out;
  };
  if (j.value("mediaType", std::string(kManifestMediaType)) !=
      kManifestMediaType)
    return bad("its mediaType is not " + std::string(kManifestMediaType));
  if (j.contains("artifactType") && j["artifactType"].is_string())
    m.artifactType = j["artifactType"];
  if (!j.contains("config"))
    return bad("it has no config");
  auto config = desc(j["config"]);
  if (!config)
    return bad("its config is not a descriptor");
  m.config = *config;
  if (!j.contains("layers") || !j["layers"].is_array())
    return bad("it has no layers");
  for (const auto &l : j["layers"]) {
    auto d = desc(l);
    if (!d)
      return bad("a layer is not a descriptor");
    m.layers.push_back(*d);
  }
  if (j.contains("annotations") && j["annotations"].is_object())
    for (const auto &[k, v] : j["annotations"].items())
      if (v.is_string())
        m.annotations[k] = v;
  return m;
}

} // namespace

Client::Client(OciLocation location, std::unique_ptr<net::HttpClient> http)
    : loc_(std::move(location)), http_(std::move(http)) {}

Expected<std::unique_ptr<Client>> Client::open(const OciLocation &location,
                                               const net::FetchOptions &o) {
  auto http = net::openHttpClient(o);
  if (!http)
    return Unexpected(http.error());
  return std::make_unique<Client>(location, std::move(*http));
}

Expected<std::optional<Credentials>> Client::credentials() {
  if (!creds_) {
    auto c = findCredentials(loc_.host);
    if (!c)
      return Unexpected(c.error());
    creds_ = *c;
  }
  return *creds_;
}

Error Client::httpError(const std::string &what,
                        const net::HttpResponse &r) const {
  std::string detail;
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("errors") && j["errors"].is_array())
    for (const auto &e : j["errors"])
      if (e.is_object()) {
        detail += detail.empty() ? ": " : "; ";
        detail += e.value("code", std::string()) + " " +
                  e.value("message", std::string());
      }
  ErrorCode code = ErrorCode::Io;
  std::string hint = "check the registry's URL and that it is up";
  if (r.status == 404) {
    code = ErrorCode::NotFound;
    hint = "check the registry's URL";
  } else if (r.status == 401 || r.status == 403) {
    code = ErrorCode::Io;
    hint = creds_ && *creds_
               ? "the credentials for " + loc_.host + " (from " +
                     (*creds_)->source +
                     ") are not accepted for this: check them and the "
                     "account's rights"
               : "no credentials are configured for " + loc_.host +
                     ": log in (`docker login " + loc_.host +
                     "` or `podman login`), or add them to "
                     "~/.docker/config.json (auths), $REGISTRY_AUTH_FILE or a "
                     "credential helper";
  }
  return Error(code, what + ": HTTP " + std::to_string(r.status) + detail,
               at(r.url), hint);
}

Expected<std::string>
Client::authorize(const Challenge &challenge,
                  const std::vector<std::string> &scopes) {
  std::string scope;
  for (const std::string &sc : scopes)
    scope += (scope.empty() ? "" : " ") + sc;
  auto creds = credentials();
  if (!creds)
    return Unexpected(creds.error());
  std::string basic;
  if (*creds)
    basic = "Authorization: Basic " +
            base64((*creds)->username + ":" + (*creds)->password);
  if (challenge.scheme == "basic") {
    if (basic.empty())
      return std::string();
    return basic;
  }
  if (challenge.scheme != "bearer")
    return makeError(ErrorCode::Unsupported,
                     loc_.url + ": the registry asks for \"" +
                         challenge.scheme + "\" authentication",
                     {}, "ireepkg speaks Bearer tokens and Basic");
  auto realm = challenge.params.find("realm");
  if (realm == challenge.params.end() || realm->second.empty())
    return makeError(ErrorCode::Invalid,
                     loc_.url + ": the registry's Bearer challenge names no "
                                "realm to ask for a token");
  // The token service gets the credentials, and its token is one: over
  // plain HTTP only for a registry that is itself plain HTTP.
  if (loc_.scheme == "https" && lower(realm->second.substr(0, 8)) != "https://")
    return makeError(
        ErrorCode::Invalid,
        loc_.url +
            ": the registry is served over HTTPS but sends for its "
            "tokens to " +
            realm->second +
            ", which is not HTTPS; no credentials or tokens are sent "
            "there",
        at(loc_.url),
        "the registry's token service (its Bearer realm) must be an "
        "https:// URL: tell the registry's maintainers; a registry served "
        "over plain HTTP altogether is written oci+http://" +
            loc_.host + "/" + loc_.ns);
  std::string url = realm->second;
  url += url.find('?') == std::string::npos ? "?" : "&";
  bool first = true;
  if (auto s = challenge.params.find("service"); s != challenge.params.end()) {
    url += "service=" + percentEncode(s->second);
    first = false;
  }
  for (const std::string &sc : scopes) {
    url += (first ? "" : "&") + std::string("scope=") + percentEncode(sc);
    first = false;
  }
  net::HttpRequest req;
  req.url = url;
  req.label = "get a token for " + scope + " from " + realm->second;
  req.maxResponseBytes = 1 << 20;
  if (*creds && !(*creds)->identityToken.empty()) {
    // OAuth2: the refresh token `docker login` stored, exchanged for an
    // access token (the form POST of the distribution token spec).
    req.method = "POST";
    req.url = realm->second;
    req.headers = {"Content-Type: application/x-www-form-urlencoded"};
    req.body = "grant_type=refresh_token&client_id=ireepkg&refresh_token=" +
               percentEncode((*creds)->identityToken) +
               "&scope=" + percentEncode(scope);
    if (auto sv = challenge.params.find("service");
        sv != challenge.params.end())
      req.body += "&service=" + percentEncode(sv->second);
  } else if (!basic.empty()) {
    req.headers.push_back(basic);
  }
  auto r = http_->request(req);
  if (!r)
    return Unexpected(r.error());
  if (r->status != 200)
    return Unexpected(httpError(
        "cannot get a token for " + scope + " from " + realm->second, *r));
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  std::string token;
  if (j.is_object()) {
    if (j.contains("token") && j["token"].is_string())
      token = j["token"];
    else if (j.contains("access_token") && j["access_token"].is_string())
      token = j["access_token"];
  }
  if (token.empty())
    return makeError(ErrorCode::Invalid,
                     "the token service " + realm->second +
                         " answered without a token",
                     at(realm->second));
  return "Authorization: Bearer " + token;
}

Expected<net::HttpResponse> Client::send(net::HttpRequest request,
                                         const std::string &repo, bool push,
                                         const std::string &alsoPull) {
  std::vector<std::string> scopes{scopeFor(repo, push)};
  if (!alsoPull.empty())
    scopes.push_back(scopeFor(alsoPull, false));
  std::string scope;
  for (const std::string &sc : scopes)
    scope += (scope.empty() ? "" : " ") + sc;
  const std::vector<std::string> base = request.headers;
  // Credentials and tokens go to the registry's own origin only: not to an
  // upload Location elsewhere, nor to a realm another origin's 401 names.
  const std::string origin = originOf(loc_.base());
  const bool ours = originOf(request.url) == origin;
  for (int round = 0;; ++round) {
    request.headers = base;
    if (auto it = auth_.find(scope);
        ours && it != auth_.end() && !it->second.empty())
      request.headers.push_back(it->second);
    auto r = http_->request(request);
    if (!r || r->status != 401 || round == 1)
      return r;
    if (!ours || originOf(r->url) != origin)
      return makeError(
          ErrorCode::Io,
          (request.label.rfind("cannot ", 0) == 0 ? request.label
                                                  : "cannot " + request.label) +
              ": HTTP 401 from " + r->url +
              ", which is not the registry's own " + origin +
              "; the credentials for " + loc_.host + " are not sent there",
          at(r->url),
          "the registry sends this request to another host "
          "or port that asks for credentials: tell the "
          "registry's maintainers");
    auto parsed = parseChallenge(r->header("www-authenticate"));
    if (!parsed)
      return r;
    challenge_ = Challenge{parsed->first, parsed->second};
    auto header = authorize(*challenge_, scopes);
    if (!header)
      return Unexpected(header.error());
    if (header->empty())
      return r; // Basic, and no credentials: the 401 is the answer
    auth_[scope] = *header;
  }
}

Expected<std::vector<std::string>>
Client::pullHeaders(const std::string &repo) {
  const std::string scope = scopeFor(repo, false);
  if (auto it = auth_.find(scope); it == auth_.end() && challenge_) {
    auto header = authorize(*challenge_, {scope});
    if (!header)
      return Unexpected(header.error());
    auth_[scope] = *header;
  }
  if (auto it = auth_.find(scope); it != auth_.end() && !it->second.empty())
    return std::vector<std::string>{it->second};
  return std::vector<std::string>{};
}

Expected<Manifest> Client::getManifest(const std::string &repo,
                                       const std::string &reference) {
  net::HttpRequest req;
  req.url = loc_.base() + "/v2/" + repo + "/manifests/" + reference;
  req.headers = {std::string("Accept: ") + kManifestMediaType};
  req.maxResponseBytes = 4 << 20;
  const std::string where = repo + ":" + reference;
  req.label = "get the manifest " + where + " from " + loc_.host;
  auto r = send(req, repo, false);
  if (!r)
    return Unexpected(r.error());
  if (r->status == 404)
    return makeError(ErrorCode::NotFound,
                     loc_.host + "/" + where + " does not exist", at(r->url));
  if (r->status != 200)
    return Unexpected(httpError("cannot get " + loc_.host + "/" + where, *r));
  auto m = parseManifest(r->body, loc_.host + "/" + where);
  if (!m)
    return Unexpected(m.error());
  if (isDigest(reference) && m->digest != reference)
    return makeError(ErrorCode::Integrity,
                     "the manifest " + loc_.host + "/" + where +
                         " has the digest " + m->digest,
                     at(r->url),
                     "the registry serves other bytes than it was asked "
                     "for: do not use it");
  return m;
}

Expected<std::string> Client::getBlob(const std::string &repo,
                                      const std::string &digest,
                                      uint64_t maxBytes) {
  net::HttpRequest req;
  req.url = loc_.base() + "/v2/" + repo + "/blobs/" + digest;
  req.maxResponseBytes = maxBytes;
  req.label = "get " + loc_.host + "/" + repo + "@" + digest;
  auto r = send(req, repo, false);
  if (!r)
    return Unexpected(r.error());
  if (r->status == 404)
    return makeError(ErrorCode::NotFound,
                     loc_.host + "/" + repo + "@" + digest + " does not exist",
                     at(r->url));
  if (r->status != 200)
    return Unexpected(httpError(req.label, *r));
  if ("sha256:" + Sha256::hex(r->body) != digest)
    return makeError(ErrorCode::Integrity,
                     loc_.host + "/" + repo + "@" + digest +
                         ": the blob served does not have that digest",
                     at(r->url),
                     "the registry serves other bytes than it was asked "
                     "for: do not use it");
  return std::move(r->body);
}

Expected<bool> Client::hasBlob(const std::string &repo,
                               const std::string &digest) {
  net::HttpRequest req;
  req.method = "HEAD";
  req.url = loc_.base() + "/v2/" + repo + "/blobs/" + digest;
  req.label = "HEAD " + loc_.host + "/" + repo + "@" + digest;
  // A redirect (to blob storage) already says the blob is there; a URL
  // presigned for GET may refuse a HEAD.
  req.followRedirects = false;
  auto r = send(req, repo, true);
  if (!r)
    return Unexpected(r.error());
  if (r->status == 200 || (r->status >= 301 && r->status <= 308))
    return true;
  if (r->status == 404)
    return false;
  return Unexpected(httpError(req.label, *r));
}

Status Client::pushBlob(const std::string &repo, const std::string &digest,
                        uint64_t size, const std::string *bytes,
                        const std::string &file, const std::string &mountFrom) {
  auto has = hasBlob(repo, digest);
  if (!has)
    return Unexpected(has.error());
  if (*has)
    return ok();
  const std::string what =
      "cannot upload " + digest + " to " + loc_.host + "/" + repo;
  net::HttpRequest post;
  post.method = "POST";
  post.url = loc_.base() + "/v2/" + repo + "/blobs/uploads/";
  if (!mountFrom.empty())
    post.url += "?mount=" + digest + "&from=" + mountFrom;
  post.label = what;
  auto r = send(post, repo, true, mountFrom);
  if (!r)
    return Unexpected(r.error());
  if (r->status == 201)
    return ok(); // mounted from the other repository
  if (r->status != 202)
    return Unexpected(httpError(what, *r));
  std::string location = r->header("location");
  if (location.empty())
    return makeError(ErrorCode::Invalid,
                     what + ": the registry gave no upload location",
                     at(post.url));
  auto absolute = [&](std::string l) {
    if (l.rfind("http://", 0) != 0 && l.rfind("https://", 0) != 0)
      l = loc_.base() + (l[0] == '/' ? "" : "/") + l;
    return l;
  };
  location = absolute(location);
  // Chunked: a file larger than IREEPKG_OCI_CHUNK_SIZE bytes goes up in
  // PATCHes of that size (at least the registry's OCI-Chunk-Min-Length),
  // each to the Location the previous one returned, then an empty PUT.
  uint64_t chunk = 0;
  if (const char *e = environmentOverride("IREEPKG_OCI_CHUNK_SIZE"); e && *e)
    chunk = std::strtoull(e, nullptr, 10);
  if (std::string min = r->header("oci-chunk-min-length"); !min.empty())
    chunk = std::max<uint64_t>(chunk, std::strtoull(min.c_str(), nullptr, 10));
  const bool chunked = !bytes && chunk > 0 && size > chunk;
  for (uint64_t offset = 0; chunked && offset < size; offset += chunk) {
    uint64_t n = std::min(chunk, size - offset);
    net::HttpRequest patch;
    patch.method = "PATCH";
    patch.url = location;
    patch.headers = {"Content-Type: application/octet-stream",
                     "Content-Range: " + std::to_string(offset) + "-" +
                         std::to_string(offset + n - 1)};
    patch.bodyFile = file;
    patch.bodyOffset = offset;
    patch.bodySize = n;
    patch.label = what;
    auto p = send(patch, repo, true);
    if (!p)
      return Unexpected(p.error());
    if (p->status != 202)
      return Unexpected(httpError(what, *p));
    if (std::string next = p->header("location"); !next.empty())
      location = absolute(next);
  }
  net::HttpRequest put;
  put.method = "PUT";
  put.url = location + (location.find('?') == std::string::npos ? "?" : "&") +
            "digest=" + percentEncode(digest);
  put.headers = {"Content-Type: application/octet-stream"};
  if (chunked) {
    // Everything was sent in the PATCHes.
  } else if (bytes) {
    put.body = *bytes;
  } else {
    put.bodyFile = file;
    put.bodySize = size;
  }
  put.label = what;
  auto done = send(put, repo, true);
  if (!done)
    return Unexpected(done.error());
  if (done->status != 201 && done->status != 204)
    return Unexpected(httpError(what, *done));
  return ok();
}

Expected<std::string> Client::putManifest(const std::string &repo,
                                          const std::string &tag,
                                          const std::string &text,
                                          const char *mediaType) {
  net::HttpRequest put;
  put.method = "PUT";
  put.url = loc_.base() + "/v2/" + repo + "/manifests/" + tag;
  put.headers = {std::string("Content-Type: ") + mediaType};
  put.body = text;
  put.label = "cannot push " + loc_.host + "/" + repo + ":" + tag;
  auto r = send(put, repo, true);
  if (!r)
    return Unexpected(r.error());
  if (r->status != 201 && r->status != 200)
    return Unexpected(httpError(put.label, *r));
  return "sha256:" + Sha256::hex(text);
}

} // namespace ireepkg::registry::oci

namespace ireepkg::registry::oci {

namespace {

/// The descriptors of an image index's `manifests` (of referrers).
Expected<std::vector<Descriptor>> indexEntries(const std::string &body,
                                               const std::string &where) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("manifests") || !j["manifests"].is_array())
    return makeError(ErrorCode::Invalid, where + " is not an OCI image index",
                     at(where),
                     "it was not written by ireepkg or an OCI 1.1 client");
  std::vector<Descriptor> out;
  for (const auto &m : j["manifests"]) {
    if (!m.is_object() || !m.contains("digest") || !m["digest"].is_string() ||
        !isDigest(m["digest"]))
      continue;
    Descriptor d;
    d.digest = m["digest"];
    d.mediaType = m.value("mediaType", std::string());
    d.artifactType = m.value("artifactType", std::string());
    d.size = m.value("size", uint64_t{0});
    if (m.contains("annotations") && m["annotations"].is_object())
      for (const auto &[k, v] : m["annotations"].items())
        if (v.is_string())
          d.annotations[k] = v;
    out.push_back(d);
  }
  return out;
}

} // namespace

Expected<std::vector<Descriptor>>
Client::referrers(const std::string &repo, const std::string &digest,
                  const std::string &artifactType) {
  // The referrers API first; a registry without it answers 404, and the
  // fallback tag holds the list instead (image-spec 1.1, distribution-spec
  // "Referrers tag schema").
  const std::string where = loc_.host + "/" + repo;
  net::HttpRequest req;
  req.url = loc_.base() + "/v2/" + repo + "/referrers/" + digest;
  req.headers = {std::string("Accept: ") + kIndexMediaType};
  req.label = "list the referrers of " + where + "@" + digest;
  auto r = send(req, repo, false);
  if (!r)
    return Unexpected(r.error());
  // 404 is what the specification asks of a registry without the API;
  // older ones answer 400, 405 or 501 as to any unknown route.
  if (r->status != 200) {
    req.url =
        loc_.base() + "/v2/" + repo + "/manifests/" + referrersTag(digest);
    r = send(req, repo, false);
    if (!r)
      return Unexpected(r.error());
    if (r->status == 404)
      return std::vector<Descriptor>{};
    if (r->status != 200)
      return Unexpected(httpError("cannot " + req.label, *r));
  }
  auto all = indexEntries(r->body, where + ":" + referrersTag(digest));
  if (!all)
    return Unexpected(all.error());
  std::vector<Descriptor> out;
  for (const Descriptor &d : *all)
    if (d.artifactType == artifactType)
      out.push_back(d);
  return out;
}

Status Client::pushReferrer(const std::string &repo, const std::string &text,
                            const std::string &artifactType,
                            const std::string &subjectDigest) {
  const std::string digest = "sha256:" + Sha256::hex(text);
  if (auto put = putManifest(repo, digest, text); !put)
    return Unexpected(put.error());
  // A registry with the referrers API lists it by its subject already.
  net::HttpRequest probe;
  probe.url = loc_.base() + "/v2/" + repo + "/referrers/" + subjectDigest;
  probe.headers = {std::string("Accept: ") + kIndexMediaType};
  probe.label = "list the referrers of " + loc_.host + "/" + repo;
  auto r = send(probe, repo, true);
  if (!r)
    return Unexpected(r.error());
  if (r->status == 200)
    return ok();
  // Otherwise the fallback tag's index, with this manifest added.
  const std::string tag = referrersTag(subjectDigest);
  net::HttpRequest get;
  get.url = loc_.base() + "/v2/" + repo + "/manifests/" + tag;
  get.headers = {std::string("Accept: ") + kIndexMediaType};
  get.label = "get " + loc_.host + "/" + repo + ":" + tag;
  auto current = send(get, repo, true);
  if (!current)
    return Unexpected(current.error());
  nlohmann::json index = {{"schemaVersion", 2},
                          {"mediaType", kIndexMediaType},
                          {"manifests", nlohmann::json::array()}};
  if (current->status == 200) {
    nlohmann::json j = nlohmann::json::parse(current->body, nullptr, false);
    if (j.is_object() && j.contains("manifests") && j["manifests"].is_array())
      index = j;
  } else if (current->status != 404) {
    return Unexpected(httpError("cannot " + get.label, *current));
  }
  for (const auto &m : index["manifests"])
    if (m.is_object() && m.value("digest", std::string()) == digest)
      return ok(); // listed already
  Descriptor d;
  d.mediaType = kManifestMediaType;
  d.digest = digest;
  d.size = text.size();
  d.artifactType = artifactType;
  index["manifests"].push_back(d.toJson());
  if (auto put = putManifest(repo, tag, index.dump(2) + "\n", kIndexMediaType);
      !put)
    return Unexpected(put.error());
  return ok();
}

Expected<std::vector<Expected<std::string>>>
Client::snapshotSignatures(const std::string &repo, const Manifest &m,
                           uint64_t maxBytes) {
  using Candidates = std::vector<Expected<std::string>>;
  if (const Descriptor *d = m.layer(kSignatureLayer))
    return Candidates{getBlob(repo, d->digest, maxBytes)};
  auto refs = referrers(repo, m.digest, kSnapshotSignatureArtifact);
  if (!refs)
    return Unexpected(refs.error());
  if (refs->empty())
    return makeError(ErrorCode::NotFound,
                     loc_.host + "/" + repo + "@" + m.digest +
                         " (the snapshot) has no signature layer and no "
                         "signature referrer (" +
                         kSnapshotSignatureArtifact + ")",
                     at(loc_.url),
                     "publish or re-sign the registry with ireepkg");
  // Anyone who may push to the repository may add a referrer: each is
  // read, and the client uses one that verifies.
  Candidates out;
  for (const Descriptor &ref : *refs) {
    const std::string what = loc_.host + "/" + repo + "@" + ref.digest +
                             " (a signature referrer of the snapshot)";
    auto sig = getManifest(repo, ref.digest);
    if (!sig) {
      out.push_back(Unexpected(sig.error()));
      continue;
    }
    const Descriptor *d = sig->layer(kSignatureLayer);
    if (!d)
      out.push_back(
          makeError(ErrorCode::Invalid,
                    what + " has no layer of media type " + kSignatureLayer,
                    at(loc_.url)));
    else if (d->size > maxBytes)
      out.push_back(makeError(ErrorCode::Integrity,
                              what + ": the signature is larger than the " +
                                  std::to_string(maxBytes) + " bytes allowed",
                              at(loc_.url)));
    else
      out.push_back(getBlob(repo, d->digest, maxBytes));
  }
  return out;
}

Expected<std::string> Client::snapshotSignature(const std::string &repo,
                                                const Manifest &m,
                                                uint64_t maxBytes) {
  auto all = snapshotSignatures(repo, m, maxBytes);
  if (!all)
    return Unexpected(all.error());
  for (auto &sig : *all)
    if (sig)
      return std::move(*sig);
  return Unexpected(all->front().error());
}

} // namespace ireepkg::registry::oci
