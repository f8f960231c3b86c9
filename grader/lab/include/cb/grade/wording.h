#pragma once
// Phrases more than one parser words the same way.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace cb::grade {

// "\"a\" is missing", "\"a\" and \"b\" are missing", "\"a\", \"b\" and \"c\" are missing": every
// missing key named at once, so a student fixes a file in one go, not one run per key.
inline std::string missing_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += "\"" + keys[i] + "\"";
  }
  return out + (keys.size() == 1 ? " is missing" : " are missing");
}

// Some editors on Windows start a UTF-8 file with a byte-order mark (EF BB BF). A line parser
// that does not expect it reads "\xef\xbb\xbfbefore=6" as an unknown key and then says "before=
// is missing", which sends the student after the wrong thing.
inline bool starts_with_byte_order_mark(std::string_view text) { return text.substr(0, 3) == "\xEF\xBB\xBF"; }
inline constexpr const char* kByteOrderMarkMessage =
    "the file starts with a byte-order mark (bytes EF BB BF); save it as UTF-8 without one";

// The last line a program wrote that is not blank: where a shell, a compiler or an interpreter
// says why it stopped ("sh: 0: cannot open runn.sh: No such file").
inline std::string last_line(std::string_view text) {
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return {};
  const std::size_t nl = text.find_last_of('\n', end);
  const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
  return std::string(text.substr(start, end + 1 - start));
}

// "1 trial", "3 trials": a count with its noun, in the form the count takes.
inline std::string how_many(long long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A time in milliseconds as the conformance protocol writes it and the reports show it: up to
// three decimals, no trailing zeros ("250", "0.125").
inline std::string ms_text(double t_ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t_ms);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace cb::grade
