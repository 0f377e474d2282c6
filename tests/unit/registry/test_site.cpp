//===- test_site.cpp - Tests for the registry site's escaping -------------===//
//
// htmlEscape and renderMarkdown (ireepkg/registry/site/site.h): what reaches a page from a
// package. The site as a whole is tested in a browser
// (tests/cli/test_registry_site.py).
//
//===----------------------------------------------------------------------===//
#include "ireepkg/registry/site/site.h"

#include <doctest/doctest.h>

using namespace ireepkg::registry;

TEST_CASE("htmlEscape escapes every character that is markup") {
  CHECK(htmlEscape("") == "");
  CHECK(htmlEscape("plain text 1.2.0") == "plain text 1.2.0");
  CHECK(htmlEscape("<script>alert(\"x\" & 'y')</script>") ==
        "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;");
  // Attribute values cannot be left: both quotes are escaped.
  CHECK(htmlEscape("\" onmouseover='x'") == "&quot; onmouseover=&#39;x&#39;");
  // UTF-8 passes through unchanged.
  CHECK(htmlEscape("caf\xc3\xa9 \xe2\x80\xa8") == "caf\xc3\xa9 \xe2\x80\xa8");
}

TEST_CASE("renderMarkdown renders CommonMark") {
  CHECK(renderMarkdown("# Title\n\nSome *emphasis* and `a<b`.\n") ==
        "<h1>Title</h1>\n<p>Some <em>emphasis</em> and "
        "<code>a&lt;b</code>.</p>\n");
  CHECK(renderMarkdown("[docs](https://example.org/x?a=1&b=2)") ==
        "<p><a href=\"https://example.org/x?a=1&amp;b=2\">docs</a></p>\n");
}

TEST_CASE("renderMarkdown drops raw HTML and unsafe links") {
  CHECK(renderMarkdown("<script>alert(1)</script>\n") ==
        "<!-- raw HTML omitted -->\n");
  CHECK(renderMarkdown("<div onmouseover=\"x()\">hi</div>\n") ==
        "<!-- raw HTML omitted -->\n");
  CHECK(renderMarkdown("a <img src=x onerror=alert(1)> b\n") ==
        "<p>a <!-- raw HTML omitted --> b</p>\n");
  CHECK(renderMarkdown("[x](javascript:alert(1))\n") ==
        "<p><a href=\"\">x</a></p>\n");
  CHECK(renderMarkdown("[x](JavaScript:alert(1))\n") ==
        "<p><a href=\"\">x</a></p>\n");
  CHECK(renderMarkdown("[x](vbscript:msgbox)\n") ==
        "<p><a href=\"\">x</a></p>\n");
  CHECK(renderMarkdown("[x](file:///etc/passwd)\n") ==
        "<p><a href=\"\">x</a></p>\n");
  CHECK(renderMarkdown("![i](data:text/html;base64,PHNjcmlwdD4=)\n") ==
        "<p><img src=\"\" alt=\"i\" /></p>\n");
  // Text that looks like markup is escaped, not dropped.
  CHECK(renderMarkdown("1 < 2 & 3 > \"2\"\n") ==
        "<p>1 &lt; 2 &amp; 3 &gt; &quot;2&quot;</p>\n");
}
