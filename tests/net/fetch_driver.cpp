//===- fetch_driver.cpp - Drives the HTTP client from a test ------------===//
//
// ireepkg-fetch-driver '<request JSON>'   (or '-' to read it from stdin)
//
// Loads the HTTP module exactly as ireepkg does (net::openHttpClient), runs
// one request and prints the result as one JSON object on stdout, so that
// tests and benchmarks can exercise the real client against real servers.
//
// Request:
//   {"options":   {"connect_timeout": s, "read_timeout": s, "low_speed": B/s,
//                  "deadline": s, "retry_after_max": s,
//                  "retries": n, "backoff": s, "max_redirects": n,
//                  "parallel": n, "ca_file": path, "offline": bool,
//                  "metadata_cache_dir": path,
//                  "interrupt_after": s},      every key optional; the last
//                                              one answers
//                                              FetchOptions::interrupted
//                                              (Ctrl-C) from s seconds on
//    "metadata":  {"urls": [...], "max_bytes": n, "label": s},    optional
//    "metadata_many": [{"urls": [...], "max_bytes": n, "label": s}, ...],
//                                            optional: one fetchMetadataMany
//    "transport": {"url": u, "mirrors": [...], "paths": [...],
//                  "max_bytes": n, "cache_root": dir, "copies": n},
//                  optional: registry::openTransport, then `copies`
//                  concurrentCopy()s, each calling fetchMany(paths) on a
//                  thread of its own, all at once
//    "downloads": [{"urls": [...], "dest": path, "size": n,
//                   "sha256": hex, "label": s}, ...]}            optional
// Metadata is fetched first, then metadata_many, the transport's files and
// the downloads.
//
// Result (exit 0 when ok, 1 on an error from the client, 2 on a bad request):
//   {"ok": true|false,
//    "stage": "open"|"metadata"|"transport"|"downloads",   where it failed
//    "error": {"code", "message", "hint"},            when not ok
//    "metadata": {"body", "url", "from_cache", "size"},
//    "metadata_many": [{"ok": true, "body", "url", "from_cache", "size"} |
//                      {"ok": false, "error": {...}}, ...]  one per request,
//                      in order; a failed one does not make the whole not ok
//    "transport": [[result as in metadata_many, one per path], ...]  one
//                  list per copy
//    "progress": {"calls", "last_done", "last_total", "max_done"},
//    "warnings": [what the client told the user, ...],
//    "open_ms", "metadata_ms", "metadata_many_ms", "transport_ms",
//    "downloads_ms"}                                   times of each step
//
//===----------------------------------------------------------------------===//
#include "ireepkg/pkg/prefix/prefix.h"
#include "ireepkg/registry/transport/fetch.h"
#include "ireepkg/registry/client/client.h"
#include "ireepkg/pkg/prefix/reporter.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>

using namespace ireepkg;
using json = nlohmann::json;

namespace {

/// Records what the client reports, for the result.
class RecordingReporter : public Reporter {
public:
  void progress(const std::string &label, uint64_t done,
                uint64_t total) override {
    ++calls;
    labels.insert(label);
    lastDone = done;
    lastTotal = total;
    maxDone = std::max(maxDone, done);
  }
  void warning(const Diagnostic &d) override { warnings.push_back(d.message); }
  uint64_t calls = 0, lastDone = 0, lastTotal = 0, maxDone = 0;
  std::set<std::string> labels;
  std::vector<std::string> warnings;
};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

json errorJson(const Error &e) {
  return {{"code", errorCodeName(e.code)},
          {"message", e.message},
          {"hint", e.hint}};
}

json responseJson(const net::MetadataResponse &r) {
  return {{"body", r.body},
          {"url", r.url},
          {"from_cache", r.fromCache},
          {"size", r.body.size()}};
}

/// One result of fetchMetadataMany or Transport::fetchMany.
json manyJson(const std::vector<Expected<net::MetadataResponse>> &results) {
  json out = json::array();
  for (const auto &r : results) {
    if (r) {
      json j = responseJson(*r);
      j["ok"] = true;
      out.push_back(std::move(j));
    } else {
      out.push_back({{"ok", false}, {"error", errorJson(r.error())}});
    }
  }
  return out;
}

net::MetadataRequest metadataRequest(const json &m) {
  net::MetadataRequest r;
  r.urls = m.at("urls").get<std::vector<std::string>>();
  r.maxBytes = m.value("max_bytes", r.maxBytes);
  r.label = m.value("label", r.label);
  return r;
}

/// "interrupt_after": FetchOptions::interrupted says yes from then on.
std::chrono::steady_clock::time_point gInterruptAt =
    std::chrono::steady_clock::time_point::max();
bool interruptedNow() {
  return std::chrono::steady_clock::now() >= gInterruptAt;
}

int print(const json &j, int code) {
  std::cout << j.dump(-1, ' ', false, json::error_handler_t::replace)
            << std::endl;
  return code;
}

int usage(const std::string &why) {
  return print({{"ok", false},
                {"stage", "request"},
                {"error", {{"code", "Usage"}, {"message", why}, {"hint", ""}}}},
               2);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2)
    return usage("usage: ireepkg-fetch-driver '<request JSON>' | -");
  std::string text = argv[1];
  if (text == "-")
    text.assign(std::istreambuf_iterator<char>(std::cin),
                std::istreambuf_iterator<char>());
  json request;
  net::FetchOptions options;
  net::MetadataRequest metadata;
  bool wantMetadata = false;
  std::vector<net::MetadataRequest> many;
  bool wantMany = false;
  std::vector<net::DownloadRequest> downloads;
  try {
    request = json::parse(text);
    json o = request.value("options", json::object());
    options.connectTimeoutSeconds =
        o.value("connect_timeout", options.connectTimeoutSeconds);
    options.readTimeoutSeconds =
        o.value("read_timeout", options.readTimeoutSeconds);
    options.lowSpeedBytesPerSecond =
        o.value("low_speed", options.lowSpeedBytesPerSecond);
    options.fileDeadlineSeconds =
        o.value("deadline", options.fileDeadlineSeconds);
    options.maxRetryAfterSeconds =
        o.value("retry_after_max", options.maxRetryAfterSeconds);
    options.retries = o.value("retries", options.retries);
    options.backoffSeconds = o.value("backoff", options.backoffSeconds);
    options.maxRedirects = o.value("max_redirects", options.maxRedirects);
    options.parallel = o.value("parallel", options.parallel);
    options.caFile = o.value("ca_file", options.caFile);
    options.offline = o.value("offline", options.offline);
    options.metadataCacheDir =
        o.value("metadata_cache_dir", options.metadataCacheDir);
    if (o.contains("interrupt_after")) {
      gInterruptAt =
          std::chrono::steady_clock::now() +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(
                  o.at("interrupt_after").get<double>()));
      options.interrupted = &interruptedNow;
    }
    if (request.contains("metadata")) {
      wantMetadata = true;
      metadata = metadataRequest(request["metadata"]);
    }
    if (request.contains("metadata_many")) {
      wantMany = true;
      for (const json &m : request["metadata_many"])
        many.push_back(metadataRequest(m));
    }
    if (request.contains("transport")) {
      const json &t = request["transport"];
      t.at("url").get<std::string>();
      t.at("paths").get<std::vector<std::string>>();
    }
    for (const json &d : request.value("downloads", json::array())) {
      net::DownloadRequest r;
      r.urls = d.at("urls").get<std::vector<std::string>>();
      r.destPath = d.at("dest").get<std::string>();
      r.size = d.at("size").get<uint64_t>();
      r.sha256 = d.at("sha256").get<std::string>();
      r.label = d.value("label", std::string());
      downloads.push_back(std::move(r));
    }
  } catch (const json::exception &e) {
    return usage(std::string("bad request: ") + e.what());
  }

  json result = {{"ok", true}};
  auto start = std::chrono::steady_clock::now();
  auto client = net::openHttpClient(options);
  result["open_ms"] = msSince(start);
  if (!client) {
    result["ok"] = false;
    result["stage"] = "open";
    result["error"] = errorJson(client.error());
    return print(result, 1);
  }

  if (wantMetadata) {
    start = std::chrono::steady_clock::now();
    auto response = (*client)->fetchMetadata(metadata);
    result["metadata_ms"] = msSince(start);
    if (!response) {
      result["ok"] = false;
      result["stage"] = "metadata";
      result["error"] = errorJson(response.error());
      return print(result, 1);
    }
    result["metadata"] = responseJson(*response);
  }

  if (wantMany) {
    start = std::chrono::steady_clock::now();
    auto responses = (*client)->fetchMetadataMany(many);
    result["metadata_many_ms"] = msSince(start);
    result["metadata_many"] = manyJson(responses);
  }

  if (request.contains("transport")) {
    // The registry's own transport over the same module: the first copy
    // is the transport itself, the others its concurrentCopy()s, all
    // fetching at once on threads of their own.
    const json &t = request["transport"];
    registry::RegistrySpec spec;
    spec.url = t.at("url").get<std::string>();
    spec.mirrors = t.value("mirrors", std::vector<std::string>());
    registry::ClientOptions clientOptions;
    clientOptions.cacheRoot = t.value("cache_root", std::string());
    clientOptions.fetch = options;
    std::vector<std::string> paths =
        t.at("paths").get<std::vector<std::string>>();
    uint64_t maxBytes = t.value("max_bytes", uint64_t{4} << 20);
    int copies = std::max(1, t.value("copies", 1));
    start = std::chrono::steady_clock::now();
    auto transport = registry::openTransport(spec, clientOptions);
    if (!transport) {
      result["ok"] = false;
      result["stage"] = "transport";
      result["error"] = errorJson(transport.error());
      return print(result, 1);
    }
    std::vector<std::unique_ptr<registry::Transport>> all;
    all.push_back(std::move(*transport));
    for (int i = 1; i < copies; ++i) {
      all.push_back(all.front()->concurrentCopy());
      if (!all.back()) {
        result["ok"] = false;
        result["stage"] = "transport";
        result["error"] = {{"code", "Internal"},
                           {"message", "concurrentCopy gave no transport"},
                           {"hint", ""}};
        return print(result, 1);
      }
    }
    std::vector<std::vector<Expected<net::MetadataResponse>>> results(
        all.size());
    {
      std::vector<std::jthread> threads;
      for (size_t i = 0; i < all.size(); ++i)
        threads.emplace_back(
            [&, i] { results[i] = all[i]->fetchMany(paths, maxBytes); });
    }
    result["transport_ms"] = msSince(start);
    json lists = json::array();
    for (const auto &r : results)
      lists.push_back(manyJson(r));
    result["transport"] = std::move(lists);
  }

  if (request.contains("downloads")) {
    RecordingReporter reporter;
    start = std::chrono::steady_clock::now();
    Status s = (*client)->downloadAll(downloads, reporter);
    result["downloads_ms"] = msSince(start);
    result["progress"] = {{"calls", reporter.calls},
                          {"labels", reporter.labels},
                          {"last_done", reporter.lastDone},
                          {"last_total", reporter.lastTotal},
                          {"max_done", reporter.maxDone}};
    result["warnings"] = reporter.warnings;
    if (!s) {
      result["ok"] = false;
      result["stage"] = "downloads";
      result["error"] = errorJson(s.error());
      return print(result, 1);
    }
  }
  return print(result, 0);
}
