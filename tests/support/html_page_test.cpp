// The page kit: a page that can fetch and run nothing, and text that cannot become markup.
#include <doctest/doctest.h>

#include <string>

#include "cb/html_page.h"
#include "cb/utf8_text.h"

namespace cb {
namespace {

TEST_CASE("html_page: self-contained, nothing fetched or run, the title escaped") {
  const std::string page = html_page("a <b> & c", "<p>body</p>", ".x{color:red}");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("default-src 'none'; style-src 'unsafe-inline'") != std::string::npos);
  CHECK(page.find("<title>a &lt;b&gt; &amp; c</title>") != std::string::npos);
  CHECK(page.find(".x{color:red}</style>") != std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
}

TEST_CASE("html_escape: markup, quotes, bad bytes and what XML cannot hold") {
  CHECK(html_escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;");
  CHECK(html_escape("a\x01"
                    "b\tc\n") == "a?b\tc\n");
  CHECK(html_escape("\xff ok") == "? ok");
  CHECK(html_escape("\xef\xbf\xbe") == "?");  // U+FFFE
  CHECK(html_number(12.345, 1) == "12.3");
  CHECK(printable("\x1b[2J") == "\\x1b[2J");
}

}  // namespace
}  // namespace cb
