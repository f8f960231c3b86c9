#include <array>
#include <ctime>

#include "cb/grade/artifacts.h"

namespace cb::grade {
namespace {

constexpr std::array<std::string_view, 3> kStates{"CLOSED", "OPEN", "HALF_OPEN"};

bool is_state(std::string_view s) {
  for (auto k : kStates)
    if (s == k) return true;
  return false;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

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

std::optional<std::int64_t> parse_iso8601_utc(std::string_view t) {
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

Result<std::vector<TransitionLine>> parse_transitions(std::string_view text) {
  std::vector<TransitionLine> out;
  int number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // blank lines carry nothing
    line = line.substr(first, line.find_last_not_of(" \t") - first + 1);

    const std::string where = "line " + std::to_string(number) + ": ";
    TransitionLine t;
    t.line = number;
    if (const auto space = line.find(' '); space != std::string_view::npos) {
      const auto at = parse_iso8601_utc(line.substr(0, space));
      if (!at)
        return Error{where + "'" + std::string(line.substr(0, std::min<std::size_t>(space, 40))) +
                     "' is not an ISO-8601 UTC time like 2026-01-01T10:00:03.012Z"};
      t.at_us = at;
      line = line.substr(line.find_first_not_of(' ', space));
    }
    const auto arrow = line.find("->");
    if (arrow == std::string_view::npos)
      return Error{where + "expected FROM->TO (like CLOSED->OPEN), got '" + std::string(line.substr(0, 40)) + "'"};
    t.from = std::string(line.substr(0, arrow));
    t.to = std::string(line.substr(arrow + 2));
    for (const std::string* s : {&t.from, &t.to}) {
      if (is_state(*s)) continue;
      std::string hint = is_state(upper(*s)) ? "; states are upper case: " + upper(*s) : "; states are CLOSED, OPEN, HALF_OPEN";
      return Error{where + "'" + s->substr(0, 40) + "' is not a state" + hint};
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace cb::grade
