#include <array>

#include "cb/grade/artifacts.h"
#include "cb/grade/wording.h"
#include "cb/utc_time.h"

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

}  // namespace

Result<std::vector<TransitionLine>> parse_transitions(std::string_view text) {
  if (starts_with_byte_order_mark(text)) return Error{kByteOrderMarkMessage};
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
    // "CLOSED -> OPEN" would otherwise read as a bad time stamp ("CLOSED") or a bad state
    // ("CLOSED "), which sends the student after the wrong thing.
    if (const auto arrow = line.find("->"); arrow != std::string_view::npos) {
      const auto blank = [](char c) { return c == ' ' || c == '\t'; };
      std::size_t from_end = arrow;
      while (from_end > 0 && blank(line[from_end - 1])) --from_end;
      std::size_t to_start = arrow + 2;
      while (to_start < line.size() && blank(line[to_start])) ++to_start;
      if (from_end != arrow || to_start != arrow + 2) {
        std::size_t from_start = from_end;
        while (from_start > 0 && !blank(line[from_start - 1])) --from_start;
        std::size_t to_end = to_start;
        while (to_end < line.size() && !blank(line[to_end])) ++to_end;
        const std::string from(line.substr(from_start, std::min<std::size_t>(from_end - from_start, 20)));
        const std::string to(line.substr(to_start, std::min<std::size_t>(to_end - to_start, 20)));
        return Error{where + "'" +
                     std::string(line.substr(from_start, std::min<std::size_t>(to_end - from_start, 60))) +
                     "' has spaces round the arrow; write " + from + "->" + to};
      }
    }
    TransitionLine t;
    t.line = number;
    if (const auto space = line.find(' '); space != std::string_view::npos) {
      const auto at = parse_utc(line.substr(0, space));
      if (!at)
        return Error{where + "'" + std::string(line.substr(0, std::min<std::size_t>(space, 40))) +
                     "' is not an ISO-8601 UTC time like 2026-01-01T10:00:03.012Z"};
      t.at_us = at;
      // The stamp says nothing finer than its last digit: "10:00:03.012Z" is some moment in
      // [03.012, 03.013). The checks that compare stamps with the server's record allow that.
      const std::string_view stamp = line.substr(0, space);
      std::size_t digits = 0;
      if (const auto dot = stamp.find('.'); dot != std::string_view::npos)
        while (dot + 1 + digits < stamp.size() && stamp[dot + 1 + digits] >= '0' && stamp[dot + 1 + digits] <= '9')
          ++digits;
      t.resolution_us = 1;
      for (std::size_t d = digits; d < 6; ++d) t.resolution_us *= 10;
      line = line.substr(line.find_first_not_of(' ', space));
    }
    const auto arrow = line.find("->");
    if (arrow == std::string_view::npos)
      return Error{where + "expected FROM->TO (like CLOSED->OPEN), got '" + std::string(line.substr(0, 40)) + "'"};
    t.from = std::string(line.substr(0, arrow));
    t.to = std::string(line.substr(arrow + 2));
    for (const std::string* s : {&t.from, &t.to}) {
      if (is_state(*s)) continue;
      std::string hint =
          is_state(upper(*s)) ? "; states are upper case: " + upper(*s) : "; states are CLOSED, OPEN, HALF_OPEN";
      return Error{where + "'" + s->substr(0, 40) + "' is not a state" + hint};
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace cb::grade
