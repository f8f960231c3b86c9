// Text from elsewhere, made safe to show: where UTF-8 stops, repaired, and written out so it
// cannot steer the terminal.
#include "cb/utf8_text.h"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("utf8 text: the first byte that is not UTF-8, and every such byte replaced") {
  using namespace std::string_literals;
  CHECK(cb::invalid_utf8_at("caf\xc3\xa9 ok") == std::string::npos);
  CHECK(cb::invalid_utf8_at("ab\xff") == 2);
  CHECK(cb::invalid_utf8_at("ab\xc3") == 2);        // a character cut in half
  CHECK(cb::invalid_utf8_at("\xc0\xaf") == 0);      // an overlong '/'
  CHECK(cb::invalid_utf8_at("\xed\xa0\x80") == 0);  // a surrogate
  CHECK(cb::valid_utf8("ab\xff"
                       "cd\xc3") == "ab?cd?");
  CHECK(cb::valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
}

TEST_CASE("utf8 text: controls, C1 controls and bidirectional overrides are written out, newline and tab kept") {
  CHECK(cb::printable("red \x1b[31m!") == "red \\x1b[31m!");
  CHECK(cb::printable("a\rb") == "a\\rb");
  CHECK(cb::printable("line\n\tnext") == "line\n\tnext");
  CHECK(cb::printable("\xc2\x9b"
                      "2J") == "\\u009b2J");
  CHECK(cb::printable("abc\xe2\x80\xae"
                      "fed") == "abc\\u202efed");
  CHECK(cb::printable("bad \xff byte") == "bad ? byte");
  CHECK(cb::printable("caf\xc3\xa9") == "caf\xc3\xa9");
}
