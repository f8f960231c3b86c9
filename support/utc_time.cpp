#include "cb/utc_time.h"

#include <cstdio>
#include <ctime>

namespace cb {
namespace {

bool digits(std::string_view s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return false;
  for (std::size_t i = at; i < at + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int num(std::string_view s, std::size_t at, std::size_t n) {
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

}  // namespace

std::string format_utc(std::int64_t unix_us, int fraction_digits) {
  const std::int64_t secs = unix_us >= 0 ? unix_us / 1'000'000 : -((-unix_us + 999'999) / 1'000'000);
  const std::int64_t micros = unix_us - secs * 1'000'000;
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  const bool six = fraction_digits == 6;
  char buf[96];
  std::snprintf(buf, sizeof buf, six ? "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" : "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(six ? micros : micros / 1000));
  return buf;
}

std::optional<std::int64_t> parse_utc(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00|-00:00)
  if (!(digits(t, 0, 4) && t.size() > 19 && t[4] == '-' && digits(t, 5, 2) && t[7] == '-' && digits(t, 8, 2) &&
        (t[10] == 'T' || t[10] == 't') && digits(t, 11, 2) && t[13] == ':' && digits(t, 14, 2) && t[16] == ':' &&
        digits(t, 17, 2)))
    return std::nullopt;
  std::size_t i = 19;
  std::int64_t micros = 0;
  if (i < t.size() && t[i] == '.') {
    ++i;
    std::size_t n = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      if (n < 6) micros = micros * 10 + (t[i] - '0');
      ++n;
      ++i;
    }
    if (n == 0 || n > 9) return std::nullopt;
    for (std::size_t k = n; k < 6; ++k) micros *= 10;
  }
  const std::string_view zone = t.substr(i);
  if (zone != "Z" && zone != "z" && zone != "+00:00" && zone != "-00:00") return std::nullopt;
  std::tm tm{};
  tm.tm_year = num(t, 0, 4) - 1900;
  tm.tm_mon = num(t, 5, 2) - 1;
  tm.tm_mday = num(t, 8, 2);
  tm.tm_hour = num(t, 11, 2);
  tm.tm_min = num(t, 14, 2);
  tm.tm_sec = num(t, 17, 2);
  if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60)
    return std::nullopt;
  std::tm check = tm;
  const std::time_t secs = ::timegm(&check);
  // timegm normalises 31 February into March; a date that moved was not a date.
  if (check.tm_mday != tm.tm_mday || check.tm_mon != tm.tm_mon) return std::nullopt;
  return static_cast<std::int64_t>(secs) * 1'000'000 + micros;
}

}  // namespace cb
