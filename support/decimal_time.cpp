#include "cb/decimal_time.h"

#include <array>
#include <limits>
#include <utility>

#include <cstdint>
#include <limits>

namespace cb {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::chrono::microseconds> parse_seconds(std::string_view text) {
  const std::string quoted = "'" + std::string(text.substr(0, 40)) + (text.size() > 40 ? "...'" : "'");
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';

  // Digits of the number without its point, and where the point was: 12.5e1 -> "125", point 2,
  // exponent 1, so the value is 125 * 10^(2 + 1 - 3) seconds.
  std::string digits;
  int point = -1;
  for (; i < text.size() && (is_digit(text[i]) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (point >= 0) return Error{quoted + " is not a number: two decimal points"};
      point = static_cast<int>(digits.size());
    } else {
      digits += text[i];
    }
  }
  if (digits.empty()) return Error{quoted + " is not a number of seconds"};
  if (point < 0) point = static_cast<int>(digits.size());
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    if (i == text.size()) return Error{quoted + " is not a number: the exponent has no digits"};
    for (; i < text.size() && is_digit(text[i]); ++i) {
      if (exponent > 100000) return Error{quoted + " is out of range"};
      exponent = exponent * 10 + (text[i] - '0');
    }
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return Error{quoted + " is not a number of seconds"};

  // Microseconds = digits * 10^(point + exponent + 6 - digits.size()).
  const long shift = static_cast<long>(point) + exponent + 6 - static_cast<long>(digits.size());
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t us = 0;
  const long keep = static_cast<long>(digits.size()) + std::min(shift, 0L);  // digits at or above 1 us
  for (long k = 0; k < static_cast<long>(digits.size()); ++k) {
    const int d = digits[static_cast<std::size_t>(k)] - '0';
    if (k >= keep) {
      if (d != 0) return Error{quoted + " is finer than a microsecond; times are exact to 0.000001 s"};
      continue;
    }
    if (us > (kMax - d) / 10) return Error{quoted + " is out of range"};
    us = us * 10 + d;
  }
  for (long k = 0; k < shift; ++k) {
    if (us == 0) break;
    if (us > kMax / 10) return Error{quoted + " is out of range"};
    us *= 10;
  }
  return std::chrono::microseconds{negative ? -us : us};
}

Result<std::chrono::microseconds> parse_duration(std::string_view text) {
  // Longest suffixes first, so "ms" is not read as "m" and "s" is not read out of "us".
  static constexpr std::array kUnits{
      std::pair{std::string_view{"us"}, 1LL},
      std::pair{std::string_view{"ms"}, 1'000LL},
      std::pair{std::string_view{"s"}, 1'000'000LL},
      std::pair{std::string_view{"m"}, 60'000'000LL},
      std::pair{std::string_view{"h"}, 3'600'000'000LL},
  };
  long long scale = 1'000'000;
  std::string_view number = text;
  for (const auto& [suffix, us] : kUnits) {
    if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
      number = text.substr(0, text.size() - suffix.size());
      scale = us;
      break;
    }
  }
  // Read the number as if it were seconds (exact, in millionths), then rescale: units below a
  // second divide (exactly, or it is finer than a microsecond), units above multiply.
  auto value = parse_seconds(number);
  if (!value) return Error{"'" + std::string(text) + "' is not a duration (a number with us, ms, s, m or h)"};
  const long long v = value->count();
  if (scale < 1'000'000) {
    const long long divisor = 1'000'000 / scale;
    if (v % divisor != 0) return Error{"'" + std::string(text) + "' is finer than a microsecond"};
    return std::chrono::microseconds{v / divisor};
  }
  const long long factor = scale / 1'000'000;
  if (v > std::numeric_limits<long long>::max() / factor || v < std::numeric_limits<long long>::min() / factor)
    return Error{"'" + std::string(text) + "' is out of range"};
  return std::chrono::microseconds{v * factor};
}

std::string format_seconds(std::chrono::microseconds d) {
  auto us = d.count();
  std::string sign;
  if (us < 0) {
    sign = "-";
    us = -us;
  }
  std::string out = sign + std::to_string(us / 1'000'000);
  auto frac = us % 1'000'000;
  if (frac != 0) {
    std::string f = std::to_string(frac);
    f.insert(0, 6 - f.size(), '0');
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

}  // namespace cb
