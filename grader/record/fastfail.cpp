#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/artifacts.h"
#include "cb/grade/wording.h"

namespace cb::grade {
namespace {

constexpr std::string_view kSpace = " \t";

std::string shown(std::string_view s) {
  std::string out(s.substr(0, 30));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return "'" + out + (s.size() > 30 ? "...'" : "'");
}

std::optional<std::int64_t> whole(std::string_view s) {
  std::int64_t v = 0;
  if (s.empty() || s[0] == '+' || s[0] == '-') return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// A plain decimal: digits, optionally a point and more digits. No sign, exponent, inf or nan.
std::optional<double> decimal(std::string_view s) {
  bool digits = false;
  bool point = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      return std::nullopt;
    }
  }
  if (!digits || s.size() > 40) return std::nullopt;
  return std::strtod(std::string(s).c_str(), nullptr);
}

}  // namespace

Result<FastFail> parse_fastfail(std::string_view text) {
  if (starts_with_byte_order_mark(text)) return Error{kByteOrderMarkMessage};
  // One line: a final newline (LF or CRLF) is allowed, and blank lines after it; anything else
  // on a second line is not.
  std::string_view line = text;
  if (const auto nl = text.find('\n'); nl != std::string_view::npos) {
    line = text.substr(0, nl);
    if (text.substr(nl + 1).find_first_not_of(" \t\r\n") != std::string_view::npos)
      return Error{"expected one line; there is more after line 1"};
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

  static constexpr std::array<std::string_view, 4> kKeys{"before", "after", "blocked", "max_ms"};
  std::array<std::optional<std::string_view>, 4> values{};
  std::size_t pos = 0;
  while (true) {
    const auto start = line.find_first_not_of(kSpace, pos);
    if (start == std::string_view::npos) break;
    auto end = line.find_first_of(kSpace, start);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view token = line.substr(start, end - start);
    pos = end;
    const auto eq = token.find('=');
    if (eq == std::string_view::npos) return Error{shown(token) + " is not key=value"};
    const std::string_view key = token.substr(0, eq);
    for (std::size_t k = 0; k < kKeys.size(); ++k) {
      if (key != kKeys[k]) continue;
      if (values[k]) return Error{"\"" + std::string(key) + "\" appears twice"};
      values[k] = token.substr(eq + 1);
    }
  }
  std::vector<std::string> missing;
  for (std::size_t k = 0; k < kKeys.size(); ++k)
    if (!values[k]) missing.push_back(std::string(kKeys[k]) + "=");
  if (!missing.empty()) return Error{missing_keys(missing)};
  FastFail out;
  for (std::size_t k = 0; k < 3; ++k) {
    const auto v = whole(*values[k]);
    if (!v)
      return Error{std::string(kKeys[k]) + "=" + std::string(values[k]->substr(0, 30)) + " is not a whole number"};
    (k == 0 ? out.before : k == 1 ? out.after : out.blocked) = *v;
  }
  const auto ms = decimal(*values[3]);
  if (!ms || !std::isfinite(*ms))
    return Error{"max_ms=" + std::string(values[3]->substr(0, 30)) + " is not a number of milliseconds (like 0.012)"};
  out.max_ms = *ms;
  return out;
}

}  // namespace cb::grade
