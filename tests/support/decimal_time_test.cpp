#include <doctest/doctest.h>

#include "cb/decimal_time.h"

namespace cb {
namespace {

using namespace std::chrono_literals;

std::chrono::microseconds ok(std::string_view s) {
  auto r = parse_seconds(s);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

TEST_CASE("decimal seconds are read exactly to the microsecond") {
  CHECK(ok("0") == 0us);
  CHECK(ok("10") == 10s);
  CHECK(ok("0.1") == 100000us);
  CHECK(ok("0.1") + ok("0.2") == ok("0.3"));  // not so for doubles
  CHECK(ok("9.999") == 9999ms);
  CHECK(ok("9.999999") == 9999999us);
  CHECK(ok("1.5000000") == 1500ms);  // zeros past the microsecond are fine
  CHECK(ok("-2.5") == -2500ms);
  CHECK(ok("1e3") == 1000s);
  CHECK(ok("1.5E-3") == 1500us);
  CHECK(ok("25e-6") == 25us);
  CHECK(ok("0.000001") == 1us);
  CHECK(ok("9223372036854") == std::chrono::microseconds{9223372036854000000});
}

TEST_CASE("what is not an exact number of microseconds is refused - with the text") {
  auto error = [](std::string_view s) {
    auto r = parse_seconds(s);
    return r.ok() ? std::string("(accepted)") : r.error().message;
  };
  CHECK(error("0.0000001") == "'0.0000001' is finer than a microsecond; times are exact to 0.000001 s");
  CHECK(error("1e-7") == "'1e-7' is finer than a microsecond; times are exact to 0.000001 s");
  CHECK(error("abc") == "'abc' is not a number of seconds");
  CHECK(error("") == "'' is not a number of seconds");
  CHECK(error("1.2.3") == "'1.2.3' is not a number: two decimal points");
  CHECK(error("1e") == "'1e' is not a number: the exponent has no digits");
  CHECK(error("3s") == "'3s' is not a number of seconds");
  CHECK(error("9223372036855") == "'9223372036855' is out of range");
  CHECK(error("1e999999999") == "'1e999999999' is out of range");
}

TEST_CASE("durations carry a unit and are exact too") {
  auto d = [](std::string_view s) {
    auto r = parse_duration(s);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return *r;
  };
  CHECK(d("4s") == 4s);
  CHECK(d("250ms") == 250ms);
  CHECK(d("1.5ms") == 1500us);
  CHECK(d("90us") == 90us);
  CHECK(d("1.5m") == 90s);
  CHECK(d("2h") == 7200s);
  CHECK(d("3") == 3s);  // a bare number is seconds
  CHECK(d("0.1s") + d("0.2s") == d("0.3s"));
  CHECK(parse_duration("0.5us").error().message == "'0.5us' is finer than a microsecond");
  CHECK(parse_duration("fast").error().message == "'fast' is not a duration (a number with us, ms, s, m or h)");
  CHECK(parse_duration("s").error().message == "'s' is not a duration (a number with us, ms, s, m or h)");
  CHECK(parse_duration("4 s").error().message == "'4 s' is not a duration (a number with us, ms, s, m or h)");
  CHECK(parse_duration("1e10h").error().message == "'1e10h' is out of range");
}

TEST_CASE("format_seconds writes the shortest exact decimal") {
  CHECK(format_seconds(1500ms) == "1.5");
  CHECK(format_seconds(3s) == "3");
  CHECK(format_seconds(1us) == "0.000001");
  CHECK(format_seconds(-250ms) == "-0.25");
  for (const char* s : {"0", "0.1", "12.345678", "-7.05"}) CHECK(format_seconds(*parse_seconds(s)) == s);
}

}  // namespace
}  // namespace cb
