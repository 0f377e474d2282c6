//===- test_fetch.cpp - The host side of the network client -------------===//
//
// The client itself runs against real servers in
// tests/cli/test_http_client.py.
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/transport/fetch.h"

#include <doctest/doctest.h>

using namespace ireepkg::net;

TEST_CASE("isHttpUrl: http and https only") {
  CHECK(isHttpUrl("http://example.org/registry"));
  CHECK(isHttpUrl("https://example.org/registry/snapshot.json"));
  CHECK(isHttpUrl("HTTPS://EXAMPLE.ORG/"));
  CHECK_FALSE(isHttpUrl("https://"));
  CHECK_FALSE(isHttpUrl("file:///srv/registry"));
  CHECK_FALSE(isHttpUrl("/srv/registry"));
  CHECK_FALSE(isHttpUrl("httpx://example.org"));
  CHECK_FALSE(isHttpUrl("ftp://example.org"));
  CHECK_FALSE(isHttpUrl(""));
}
