// Wall-clock times as text, both ways.
#include <doctest/doctest.h>

#include "cb/utc_time.h"

namespace cb {
namespace {

TEST_CASE("ISO-8601 UTC times") {
  CHECK(parse_utc("1970-01-01T00:00:00Z") == 0);
  CHECK(parse_utc("1970-01-01T00:00:01.5Z") == 1'500'000);
  CHECK(parse_utc("2026-01-01T10:00:03.012+00:00") == parse_utc("2026-01-01T10:00:03.012Z"));
  CHECK(parse_utc("2026-01-01T10:00:03.123456789Z").value() % 1'000'000 == 123'456);
  CHECK_FALSE(parse_utc("2026-02-31T10:00:00Z"));
  CHECK_FALSE(parse_utc("2026-13-01T10:00:00Z"));
  CHECK_FALSE(parse_utc("2026-01-01T10:00:00"));        // no zone
  CHECK_FALSE(parse_utc("2026-01-01T10:00:00+02:00"));  // not UTC
  CHECK_FALSE(parse_utc("2026-01-01 10:00:00Z"));
}

TEST_CASE("UTC times are written in milliseconds or microseconds - cut, not rounded") {
  CHECK(format_utc(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_utc(1'000'123'999) == "1970-01-01T00:16:40.123Z");
  CHECK(format_utc(1'000'123'999, 6) == "1970-01-01T00:16:40.123999Z");
  CHECK(format_utc(-1) == "1969-12-31T23:59:59.999Z");  // before 1970: the earlier second
  CHECK(parse_utc(format_utc(1'764'442'383'012'345, 6)) == 1'764'442'383'012'345);
}

}  // namespace
}  // namespace cb
